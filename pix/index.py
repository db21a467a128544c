"""`pix index`: a repository into the database, keyword-searchable first, embedded after.

Phase 1 stores new blobs with their chunks, FTS rows and symbols in batches (each batch one
transaction, so an interrupted run keeps what it finished), then records the snapshot in one
transaction. Phase 2 embeds whatever chunks of the snapshot lack a vector, committing as it
goes; the next run continues where a killed one stopped.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

import apsw

from pix.errors import UsageError
from pix.ingest import commit_log, history, scan
from pix.ingest.embed import Embedder, check_identity, model_identity
from pix.ingest.terms import path_terms
from pix.ingest.vectors import embed_pending
from pix.locate import Target, excluded_paths, locate
from pix.progress import Progress
from pix.schemas import json_name
from pix.static_tier import embed_static, forget_other_static_table
from pix.store import Store, codec, content, open_store, sql
from pix.store.db import now_iso, read_only_error, read_only_place, remove_database
from pix.store.rebuild import rebuild as rebuilt

BATCH_FILES = 400
BATCH_BYTES = 8 << 20
SCHEMA_VERSION = 1  # of the report (schema/index-response.v1.json)


@dataclass
class IndexReport:
    snapshot_id: int
    kind: str
    root: str
    commit: str | None
    branch: str | None
    dirty: bool
    files: int
    new_blobs: int
    reused_files: int
    chunks_added: int
    skipped: dict[str, int]
    embedded: int
    embed_pending: int
    static_vectors: int = 0  # chunks given a static vector by this run
    seconds: dict[str, float] = field(default_factory=dict)
    db: str = ""
    rebuilt: dict | None = None  # with --rebuild: what was carried over from the old file

    def describe(self) -> dict:
        """What `pix index --json` prints and the MCP index tool returns, in the contracts'
        camelCase (schema/index-response.v1.json)."""
        fields = asdict(self)
        if fields["rebuilt"] is None:  # only `--rebuild` answers carry it
            del fields["rebuilt"]
        return {"schemaVersion": SCHEMA_VERSION, **{json_name(k): v for k, v in fields.items()}}


def _record_identity(store: Store) -> None:
    identity = model_identity()
    check_identity({key: store.meta(key) for key in identity})
    with store.write():  # the model's identity and the static table's, in one transaction
        if store.meta("model.name") is None:
            for key, value in identity.items():
                store.set_meta(key, value)
        forget_other_static_table(store)


def _listing(target: Target, at: str | None) -> scan.Listing:
    excluded = excluded_paths(target)
    if at is not None:
        if not target.is_git:
            raise UsageError(f"--at needs a git repository; {target.root} is not one")
        return scan.list_commit(target.root, scan.resolve_commit(target.root, at))
    if target.bare:
        raise UsageError(
            f"{target.root} is a git repository with no work tree (bare): nothing is checked "
            "out to index",
            hint="index one of its commits with --at REV (HEAD, a sha)",
        )
    if target.is_git:
        return scan.list_worktree(target.root, excluded)
    return scan.list_folder(target.root, excluded)


def exclude_from_git(target: Target) -> None:
    """Name the database in the repository's .git/info/exclude, so `git status` never shows
    it (nor its -wal and -shm files). Nothing is written when it is there already, or when
    the database lives outside the work tree."""
    if not target.is_git:
        return
    try:
        rel = target.db.relative_to(target.root).as_posix()
    except ValueError:
        return
    pattern = "/" + "".join("[" + c + "]" if c in "*?[\\!#" else c for c in rel) + "*"
    path = Path(scan.git(target.root, "rev-parse", "--git-path", "info/exclude").decode().strip())
    if not path.is_absolute():
        path = target.root / path
    try:
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        if pattern in lines:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            if lines and lines[-1] != "":
                fh.write("\n")
            fh.write(f"# the pix index of this repository\n{pattern}\n")
    except OSError:
        pass  # a read-only .git: the database still works, git status just shows it


def _dirty(target: Target, listing: scan.Listing) -> bool:
    """Whether a work-tree snapshot holds other than its commit's content: changes git status
    sees; HEAD moved while the files were read (a checkout mid-index: what was read is no one
    commit's tree, whatever git status says by now); or entries git does not compare with the
    work tree (Listing.unvouched), which `--at` must not take for the commit."""
    if listing.kind != "worktree":
        return False
    if listing.unvouched or scan.head_sha(target.root) != listing.commit_sha:
        return True
    out = scan.git(target.root, "status", "--porcelain", "-z", "--untracked-files=all")
    excluded = excluded_paths(target)
    for record in out.decode("utf-8", "surrogateescape").split("\0"):
        path = record[3:]
        if record and not scan.is_own_file(path, excluded):
            return True
    return False


def index_repository(
    path: str | None = None,
    db: str | None = None,
    at: str | None = None,
    max_bytes: int = scan.DEFAULT_MAX_BYTES,
    embed: bool = True,
    progress: Progress | None = None,
    embedder: Embedder | None = None,
    check: bool = True,
    rebuild: bool = False,
) -> IndexReport:
    """Index into the target's database. `check`: SQLite's quick_check on an existing file
    before writing (a long-lived engine refreshing itself skips it: it checks on SQL errors).
    `rebuild`: build a fresh file beside it and swap it in (pix/store/rebuild.py)."""
    progress = progress or Progress(enabled=False)
    target = locate(path, db)
    t0 = time.perf_counter()
    listing = _listing(target, at)  # (reads only: a bad --at is said first)
    if read_only_place(target.db):  # before anything is written (.git/info/exclude, the file)
        raise read_only_error(target.db)
    exclude_from_git(target)

    def build(db_path: Path, check: bool) -> IndexReport:
        created = not db_path.exists()
        store: Store | None = None
        try:
            store = open_store(db_path, create=True, check=check)
            _record_identity(store)
            content.remask_outdated(store)
            content.rechunk_outdated(store, progress)
            report = _keyword_phase(store, target, listing, max_bytes, progress)
        except BaseException:
            _abandon(store, db_path, created)
            raise
        try:
            report.seconds["keyword"] = round(time.perf_counter() - t0, 3)
            t1 = time.perf_counter()
            report.static_vectors = embed_static(store, report.snapshot_id, progress)
            report.seconds["static"] = round(time.perf_counter() - t1, 3)
            if embed:  # runs to the end, so nothing is left pending afterwards
                t2 = time.perf_counter()
                report.embedded = embed_pending(store, report.snapshot_id, progress, embedder)
                report.seconds["embed"] = round(time.perf_counter() - t2, 3)
            else:
                pending = store.conn.execute(
                    sql.PENDING_EMBEDDINGS, {"snapshot": report.snapshot_id}
                )
                report.embed_pending = len(pending.fetchall())
            store.shrink()
            store.check_not_moved("indexing")
            report.db = str(target.db)
            return report
        finally:
            store.close()

    if not rebuild:
        return build(target.db, check)
    report, found = rebuilt(target.db, lambda fresh: build(fresh, False))
    report.rebuilt = found.summary()
    if found.aliases_unreadable:  # not "kept: 0" first, as if there had been none
        progress.note(
            f"rebuilt {target.db}; the saved aliases could not be read from the damaged "
            f"database ({found.aliases_unreadable}); they are lost"
        )
    else:
        progress.note(f"rebuilt {target.db}; saved aliases kept: {len(found.aliases)}")
    if found.commits:
        shas = ", ".join(sha[:12] for sha in found.commits)
        progress.note(f"commit snapshots not rebuilt (index them again with --at): {shas}")
    return report


def _abandon(store: Store | None, db: Path, created: bool) -> None:
    """Close after a failed or interrupted keyword phase. A database this run created is deleted
    again (with its -wal and -shm) unless a snapshot got recorded in it or another process has
    it open, so a failed first index leaves no stub behind; a database that existed before is
    never touched."""
    recorded = False
    if store is not None:
        with contextlib.suppress(apsw.Error):
            recorded = bool(store.conn.execute(sql.ANY_SNAPSHOT).fetchone()[0])
        with contextlib.suppress(apsw.Error):
            store.close()
    if created and not recorded and not _open_elsewhere(db):
        remove_database(db)


def _open_elsewhere(db: Path) -> bool:
    """Whether another connection still has the database open (a second `pix index` that
    joined this first one): SQLite removes the -wal when the last connection closes, so one
    left after this run's close is another's. Deleting the file under it lost its work."""
    return Path(f"{db}-wal").exists()


def _complete_history(store: Store, snapshot_id: int, listing: scan.Listing) -> None:
    """A kept commit snapshot written before migration 008 (its counts) or 011 (its log), or
    whose log an older pix read by another rule, gains what it lacks; git is read only for
    that."""
    conn = store.conn
    recent = (
        history.snapshot_counts(conn, listing) if history.uncounted(conn, snapshot_id) else None
    )
    past = None if commit_log.is_current(conn, snapshot_id) else commit_log.read(conn, listing)
    if recent is not None or past is not None:
        with store.write():
            history.count_kept(conn, snapshot_id, recent)
            commit_log.write(conn, snapshot_id, past)


def _keyword_phase(
    store: Store, target: Target, listing: scan.Listing, max_bytes: int, progress: Progress
) -> IndexReport:
    conn = store.conn
    root_key = str(target.root)
    previous: dict[str, tuple[str, int, int]] = {}
    previous_skipped: list[tuple] = []
    row = None
    if listing.kind == "commit":
        existing = conn.execute(sql.COMMIT_SNAPSHOT, (listing.commit_sha,)).fetchone()
        if existing:  # a commit's tree never changes: its snapshot is already complete
            _complete_history(store, existing[0], listing)
            return _report_existing(store, existing[0], listing)
    else:
        row = conn.execute(sql.LATEST_SNAPSHOT_OF_ROOT, (root_key,)).fetchone()
        if row:
            previous = {p: (b, s, m) for p, b, s, m in conn.execute(sql.SNAPSHOT_FILES, (row[0],))}
            previous_skipped = sorted(conn.execute(sql.SNAPSHOT_SKIPPED, (row[0],)).fetchall())

    files: list[tuple[str, str, int, int]] = []  # path, blob, size, mtime
    skipped: list[tuple[str, str, int, int, str | None]] = []  # path, reason, size, mtime, blob
    to_read: list[scan.Entry] = []
    # Known content at a new path: (blob, stored language, path), masked again if that path's
    # language counts more secrets (pix.store.content.remask_for_path).
    widened: list[tuple[str, str, str]] = []
    reused = 0

    def stored(sha: str) -> str | None:
        row = conn.execute(sql.BLOB_LANGUAGE, (sha,)).fetchone()
        return row[0] if row else None

    for entry in listing.entries:
        if (shown := codec.stored_path(entry.path)) != entry.path:
            skipped.append((shown, "unreadable", entry.size, entry.mtime_ns, None))
        elif entry.submodule:
            skipped.append((entry.path, "submodule", 0, 0, None))
        elif entry.symlink:
            skipped.append((entry.path, "symlink", entry.size, entry.mtime_ns, None))
        elif entry.size > max_bytes:
            skipped.append((entry.path, "too_large", entry.size, entry.mtime_ns, None))
        elif entry.blob_sha and (known := stored(entry.blob_sha)):
            files.append((entry.path, entry.blob_sha, entry.size, entry.mtime_ns))
            widened.append((entry.blob_sha, known, entry.path))
            reused += 1
        elif (prev := previous.get(entry.path)) and prev[1:] == (entry.size, entry.mtime_ns):
            files.append((entry.path, prev[0], entry.size, entry.mtime_ns))
            reused += 1
        else:
            to_read.append(entry)

    progress.start("reading files", len(to_read))
    new_blobs = chunks_added = 0
    pending_bytes = 0
    batch: list[tuple[str, str, bytes]] = []

    def flush() -> None:
        nonlocal new_blobs, chunks_added, pending_bytes
        with store.write():
            for sha, p, data in batch:
                if (known := stored(sha)) is None:
                    chunks_added += content.store_blob(conn, sha, p, data)
                    new_blobs += 1
                else:
                    widened.append((sha, known, p))
        batch.clear()
        pending_bytes = 0

    seen_in_run: set[str] = set()
    for entry, data in _contents(target.root, listing, to_read):
        progress.advance()
        if data is None:
            skipped.append((entry.path, "unreadable", entry.size, entry.mtime_ns, None))
            continue
        sha = entry.blob_sha or scan.blob_id(data)
        reason = scan.skip_reason(entry.path, data)
        if reason:
            # the blob id lets a touch be judged by content (migration 010); a secret file's
            # content leaves nothing in the database, not even its hash
            blob = None if reason == "secret" else sha
            skipped.append((entry.path, reason, entry.size, entry.mtime_ns, blob))
            continue
        files.append((entry.path, sha, entry.size, entry.mtime_ns))
        if sha in seen_in_run:
            continue
        seen_in_run.add(sha)
        batch.append((sha, entry.path, data))
        pending_bytes += len(data)
        if len(batch) >= BATCH_FILES or pending_bytes >= BATCH_BYTES:
            flush()
    if batch:
        flush()
    progress.finish()
    if widened:
        with store.write():
            for sha, language, p in widened:
                content.remask_for_path(conn, sha, language, p)

    dirty = _dirty(target, listing)
    files.sort()
    fingerprint = hashlib.sha1(
        "\n".join(f"{p}\0{b}" for p, b, _, _ in files).encode("utf-8", "surrogateescape")
    ).hexdigest()
    reasons: dict[str, int] = {}
    for _, reason, *_ in skipped:
        reasons[reason] = reasons.get(reason, 0) + 1
    reasons = dict(sorted(reasons.items()))

    identity = (listing.commit_sha, listing.branch, int(dirty), fingerprint)
    current = {p: (b, s, m) for p, b, s, m in files}

    def unchanged(latest: tuple | None) -> bool:
        """Nothing moved since `latest`: keep it (and its id) rather than write a copy."""
        if not latest or latest[1:] != identity:
            return False
        if latest != row:  # written by another pix since this one looked
            return current == {
                p: (b, s, m) for p, b, s, m in conn.execute(sql.SNAPSHOT_FILES, (latest[0],))
            } and sorted(skipped) == sorted(conn.execute(sql.SNAPSHOT_SKIPPED, (latest[0],)))
        return current == previous and sorted(skipped) == previous_skipped

    # The history counts (a git log, or the last snapshot's at the same commit) are read
    # before the write, and only for a snapshot that will need them: a re-index that keeps its
    # counted snapshot (nothing changed: every MCP refresh) reads nothing. Should another pix
    # change that picture meanwhile, the snapshot stays uncounted until the next index.
    kept = bool(row) and unchanged(row)
    keeps_counted = kept and not history.uncounted(conn, row[0])
    recent = (
        None
        if keeps_counted
        else history.snapshot_counts(conn, listing, row, (f[0] for f in files))
    )
    keeps_log = kept and commit_log.is_current(conn, row[0])
    past = None if keeps_log else commit_log.read(conn, listing, row)

    with store.write():
        # Decided inside the write: another pix indexing the same tree at once may have just
        # written this very snapshot, and a second copy would delete the first as an older
        # work-tree snapshot, leaving that process pointing at nothing.
        if listing.kind == "commit":
            latest = conn.execute(sql.COMMIT_SNAPSHOT, (listing.commit_sha,)).fetchone()
            reuse = latest is not None
        else:
            latest = conn.execute(sql.LATEST_SNAPSHOT_OF_ROOT, (root_key,)).fetchone()
            reuse = unchanged(latest)
        if reuse:
            snapshot_id = latest[0]
            history.count_kept(conn, snapshot_id, recent)
            commit_log.write(conn, snapshot_id, past)
        else:
            snapshot_id = _insert_snapshot(
                conn, listing, root_key, dirty, fingerprint, files, recent
            )
            commit_log.write(conn, snapshot_id, past)
            conn.executemany(sql.INSERT_SKIPPED, ((snapshot_id, *s) for s in skipped))
            if listing.kind != "commit":
                conn.execute(sql.DELETE_OLDER_WORKTREE_SNAPSHOTS, (root_key, snapshot_id))

    return IndexReport(
        snapshot_id,
        listing.kind,
        root_key,
        listing.commit_sha,
        listing.branch,
        dirty,
        len(files),
        new_blobs,
        reused,
        chunks_added,
        reasons,
        0,
        0,
    )


def _insert_snapshot(
    conn,
    listing: scan.Listing,
    root_key: str,
    dirty: bool,
    fingerprint: str,
    files: list,
    recent: Counter[str] | None,
) -> int:
    conn.execute(
        sql.INSERT_SNAPSHOT,
        (
            listing.kind,
            root_key,
            listing.commit_sha,
            listing.branch,
            int(dirty),
            now_iso(),
            fingerprint,
        ),
    )
    snapshot_id = conn.last_insert_rowid()
    conn.executemany(
        sql.INSERT_SNAPSHOT_FILE,
        ((snapshot_id, *f, None if recent is None else recent[f[0]]) for f in files),
    )
    for p, *_ in files:
        for (path_id,) in conn.execute(sql.INSERT_PATH, (p,)).fetchall():
            conn.executemany(sql.INSERT_PATH_TERM, ((t, path_id) for t in path_terms(p)))
    return snapshot_id


def _report_existing(store: Store, snapshot_id: int, listing: scan.Listing) -> IndexReport:
    conn = store.conn
    files = conn.execute(sql.SNAPSHOT_FILES, (snapshot_id,)).fetchall()
    reasons = dict(conn.execute(sql.SKIPPED_BY_REASON, (snapshot_id,)).fetchall())
    return IndexReport(
        snapshot_id,
        listing.kind,
        str(listing.root),
        listing.commit_sha,
        listing.branch,
        False,
        len(files),
        0,
        len(files),
        0,
        reasons,
        0,
        0,
    )


def _contents(root: Path, listing: scan.Listing, entries: list[scan.Entry]):
    """(entry, bytes or None) for each entry: from git objects for a commit, else from disk."""
    if listing.kind == "commit":
        by_sha: dict[str, list[scan.Entry]] = {}
        for entry in entries:
            by_sha.setdefault(entry.blob_sha, []).append(entry)
        for sha, data in scan.read_blobs(root, list(by_sha)):
            for entry in by_sha[sha]:
                yield entry, data
        return
    for entry in entries:
        try:
            yield entry, (root / entry.path).read_bytes()
        except OSError:
            yield entry, None
