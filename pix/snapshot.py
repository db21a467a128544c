"""Which snapshot a query reads, and whether the work tree moved on since it was indexed."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from pix.errors import NotIndexedError, PixError, UsageError
from pix.ingest import scan
from pix.locate import Target, excluded_paths, locate
from pix.output.pathtext import path_sample
from pix.store import codec, search_sql, sql
from pix.store.db import Store


@dataclass(frozen=True)
class Snapshot:
    id: int
    kind: str
    root: str
    commit: str | None
    branch: str | None
    dirty: bool
    indexed_at: str
    requested: str | None  # the --at as given; None for "the newest work tree snapshot"

    def describe(self) -> dict:
        return {
            "id": self.id,
            "kind": self.kind,
            "commit": self.commit,
            "branch": self.branch,
            "dirty": self.dirty,
            "indexedAt": self.indexed_at,
            "requestedRef": self.requested,
            "selection": "exact" if self.requested else "newest",
        }


def _snapshot(row: tuple, requested: str | None) -> Snapshot:
    sid, kind, root, commit, branch, dirty, created = row
    return Snapshot(sid, kind, root, commit, branch, bool(dirty), created, requested)


def select_snapshot(store: Store, target: Target, at: str | None) -> Snapshot:
    conn = store.conn
    if at is None:
        row = conn.execute(search_sql.NEWEST_WORKTREE_SNAPSHOT, (str(target.root),)).fetchone()
        if row is None:  # a database copied from elsewhere: its newest work-tree snapshot
            row = conn.execute(search_sql.NEWEST_ANY_WORKTREE_SNAPSHOT).fetchone()
        if row is None:
            if target.bare:
                hint = "pass --at with an indexed commit: a bare repository has no work tree"
            elif not conn.execute(sql.ANY_SNAPSHOT).fetchone()[0]:  # a first index running?
                hint = (
                    "run `pix index`; if one is running, ask again once it has read the files "
                    "(its first snapshot is written then, seconds before the transformer starts)"
                )
            else:
                hint = "run `pix index`, or pass --at with an indexed commit"
            raise NotIndexedError(f"{target.db} holds no work-tree snapshot", hint=hint)
        return _snapshot(row, None)
    sha = _resolve_at(store, target, at)
    row = conn.execute(search_sql.SNAPSHOT_FOR_COMMIT, (sha,)).fetchone()
    if row is None:
        hint = "index it with `pix index --at " + at + "`"
        ancestor = _nearest_indexed_ancestor(store, target, sha)
        if ancestor:
            hint += f"; the nearest indexed ancestor is {ancestor} (not queried)"
        why = ""
        if conn.execute(search_sql.DIRTY_SNAPSHOT_AT, (sha,)).fetchone():  # (pix status lists it)
            why = (
                " (the work tree's snapshot at it is not its content: uncommitted changes, a"
                " sparse checkout, files marked assume-unchanged, or HEAD moved while pix read"
                " the files)"
            )
        raise NotIndexedError(f"commit {sha} is not indexed{why}", hint=hint)
    return _snapshot(row, at)


def _resolve_at(store: Store, target: Target, at: str) -> str:
    """HEAD, a full sha or a unique prefix, through git when the repository is here, else
    among the commits the database knows (a copied database works without the repository)."""
    if target.is_git:
        return scan.resolve_commit(target.root, at)
    scan.check_ref(at)
    if at == "HEAD":
        raise UsageError(
            f"--at HEAD needs a git repository, and {target.root} is not one",
            hint="pass the sha (or a prefix) of a commit the database holds: pix status lists them",
        )
    known = [r[0] for r in store.conn.execute(search_sql.INDEXED_COMMITS)]
    matches = [sha for sha in known if sha.startswith(at.lower())]
    if len(matches) > 1:
        raise UsageError(f"--at {at} is ambiguous: it matches {len(matches)} indexed commits")
    if not matches:
        raise NotIndexedError(f"commit {at} is not indexed in {target.db}")
    return matches[0]


def _nearest_indexed_ancestor(store: Store, target: Target, sha: str) -> str | None:
    if not target.is_git:
        return None
    known = {r[0] for r in store.conn.execute(search_sql.QUERYABLE_COMMITS)}
    done = subprocess.run(
        ["git", "-C", str(target.root), "rev-list", "--max-count=2000", sha],
        capture_output=True,
        check=False,
    )
    for line in done.stdout.decode().split():
        if line != sha and line in known:
            return line
    return None


def same_folder(root: str, folder: Path) -> bool:
    """Whether a snapshot's root is `folder` (resolved), under its name or through a link."""
    return root == str(folder) or Path(root).resolve() == folder


def tree_elsewhere(snapshot: Snapshot, target: Target) -> str | None:
    """The folder of the work tree `snapshot` indexes when the database is another folder's
    (`--db` names a database outside this one) and that folder is on this machine; else None.
    A database inside this folder is this folder's, wherever its snapshots were made: a
    repository copied with its .pix.db (`cp -r proj proj-experiment`) refreshes into it.
    Unless it lies inside the very subfolder it indexes (`--db sub/.pix.db` run from sub's
    parent): that subfolder is its tree."""
    if snapshot.kind == "commit":
        return None
    return _elsewhere(snapshot.root, target)


def other_tree(store: Store, target: Target) -> str | None:
    """tree_elsewhere of the snapshot a query would read, or, for a database of commits only,
    the folder they were indexed in. Call it inside `store.read()`."""
    try:
        return tree_elsewhere(select_snapshot(store, target, None), target)
    except NotIndexedError:
        row = store.conn.execute(search_sql.NEWEST_SNAPSHOT_ROOT).fetchone()
        return _elsewhere(row[0], target) if row else None


def searched_tree(snapshot: Snapshot, target: Target) -> Path:
    """The folder a snapshot's paths are relative to, on this machine: this folder when the
    snapshot stands for it (judges_this_tree), else the folder it was indexed in when that
    is still a folder here (another folder's database named by `--db`, kept inside this
    folder or not; a workspace's bare `db` entry), else this folder."""
    if judges_this_tree(snapshot, target) or not Path(snapshot.root).is_dir():
        return target.root
    return Path(snapshot.root)


def originals_roots(store: Store, target: Target) -> list[Path]:
    """The folders whose files or git objects may hold a file's original text (the database
    holds it masked), in the order --show-secrets tries them: this folder, then every other
    folder on this machine the database's snapshots were indexed in, the newest first (a
    `--db` naming another folder's database, a workspace's bare `db` entry, a bare
    repository's commits). scan.read_original checks the blob id, so a folder holding other
    content is never taken for the original."""
    roots = [target.root]
    for (root,) in store.conn.execute(search_sql.SNAPSHOT_ROOTS):
        if not any(same_folder(root, seen) for seen in roots) and Path(root).is_dir():
            roots.append(Path(root))
    return roots


class Originals:
    """--show-secrets' reader of a file's original text: scan.read_original over
    originals_roots, which are looked up once, at the first file that needs them. Use it
    inside `store.read()`."""

    def __init__(self, store: Store, target: Target) -> None:
        self.store, self.target = store, target
        self._roots: list[Path] | None = None

    def read(self, path: str, sha: str) -> str | None:
        if self._roots is None:
            self._roots = originals_roots(self.store, self.target)
        return scan.read_original(self._roots, path, sha)


def _elsewhere(root: str, target: Target) -> str | None:
    if same_folder(root, target.root):
        return None
    inside = Path(root).is_relative_to(target.root) and target.db.is_relative_to(root)
    if target.db.is_relative_to(target.root) and not inside:
        return None
    return root if Path(root).is_dir() else None


def reindex_command(folder: str, db: Path) -> str:
    """What brings `db`'s snapshot of `folder` up to date, to be run in `folder`."""
    return "pix index" if db == Path(folder) / ".pix.db" else f"pix index --db {db}"


def stale_elsewhere(store: Store, target: Target, snapshot: Snapshot) -> list[str]:
    """Warnings for a database that is another folder's (tree_elsewhere): its own tree may
    have moved on, and only an index there brings it up to date. Advice only: a tree git
    cannot read stays unsaid rather than failing the query."""
    elsewhere = tree_elsewhere(snapshot, target)
    if elsewhere is None:
        return []
    try:
        stale = changed_files(store, locate(elsewhere, str(target.db)), snapshot)
    except PixError:
        return []
    if not stale:
        return []
    return [
        f"{len(stale)} file(s) changed in {elsewhere} since this snapshot was indexed "
        f"({path_sample(stale)}); run `{reindex_command(elsewhere, target.db)}` in {elsewhere} to "
        "include them"
    ]


# The most bytes one check reads to tell a touched file from an edited one (about 35 ms);
# past it, a file whose mtime moved counts as changed, as it did before files were read, and
# a refresh then records its new mtime. A query reads a file again on every check until an
# index records it: a checkout there and back of a large tree costs each query this much.
READ_BUDGET = 16 * 2**20

# Skip reasons that do not depend on a file's bytes (pix.index): for such a file the same
# size is the same state.
SIZE_DECIDES = frozenset({"too_large", "symlink"})


def changed_files(store: Store, target: Target, snapshot: Snapshot) -> list[str]:
    """Paths added, removed or modified in the work tree since the snapshot was indexed. A
    file whose size and mtime are as indexed is unchanged (no file is read); one whose mtime
    alone differs is read, and unchanged if its git blob id is the one indexed: a `touch`, a
    checkout there and back, or a repository copied or moved with its .pix.db (whose
    snapshot is of the old folder, and every mtime differs). Empty for a commit's snapshot
    and for another folder's tree (tree_elsewhere: stale_elsewhere judges that one)."""
    if snapshot.kind == "commit" or not judges_this_tree(snapshot, target):
        return []
    root = target.root
    excluded = excluded_paths(target)
    then: dict[str, tuple[int, int, str | None]] = {
        path: (size, mtime, sha)
        for path, sha, size, mtime in store.conn.execute(sql.SNAPSHOT_FILES, (snapshot.id,))
    }
    # A submodule or nested repository is no content of this index: never a change (and a
    # snapshot written before they were recorded, migration 009, must not read as stale). A
    # skipped file has no blob id: one skipped for its size or for being a link is the same
    # file at the same size (`by_size`); one skipped for its content (binary, minified,
    # generated, ...) may have become text, so a new mtime is a change.
    by_size: dict[str, str] = {}  # path -> its reason
    for path, reason, size, mtime, sha in store.conn.execute(sql.SNAPSHOT_SKIPPED, (snapshot.id,)):
        if reason != "submodule":
            then[path] = (size, mtime, sha)  # sha: skipped for its bytes (migration 010)
            if reason in SIZE_DECIDES:
                by_size[path] = reason
    if target.is_git:
        now = scan.worktree_stats(root, then, excluded)
    else:
        listed = scan.list_folder(root, excluded).entries
        now = {e.path: (e.size, e.mtime_ns) for e in listed if not e.submodule}
    now = _as_stored(now)
    differ = sorted(p for p in now.keys() | then.keys() if now.get(p) != then.get(p, ())[:2])
    changed, budget = [], READ_BUDGET
    for path in differ:
        was, size = then.get(path), now.get(path, (None,))[0]
        if was is None or size != was[0]:  # added, deleted, or another size
            changed.append(path)
        elif was[2] is None:  # skipped, no blob id
            # (a link replaced by a file of the link's size is a change: audit)
            reason = by_size.get(path)
            if reason is None or (reason == "symlink" and not (root / path).is_symlink()):
                changed.append(path)
        elif size > budget:
            changed.append(path)
        else:
            budget -= size
            if not _holds(root / path, was[2]):
                changed.append(path)
    return changed


def judged_snapshot(store: Store, target: Target) -> Snapshot | None:
    """The work-tree snapshot a query reads, when it stands for this folder's tree
    (judges_this_tree); None when there is none, or it is another tree's. Inside
    `store.read()`."""
    try:
        snapshot = select_snapshot(store, target, None)
    except NotIndexedError:
        return None
    return snapshot if judges_this_tree(snapshot, target) else None


def judges_this_tree(snapshot: Snapshot, target: Target) -> bool:
    """Whether the snapshot stands for this folder's work tree: it was made here, or the
    database lies inside this folder, copied or moved with it: its `.pix.db`, or under
    another name where the snapshot's folder is gone (moved) or holds the same file (copied).
    Not a database `--db` names from outside the folder, nor another repository's kept
    inside it, nor a workspace's bare `db` entry (Target.tree_here): their trees are not the
    folder pix runs in, which a refresh would index into them."""
    if same_folder(snapshot.root, target.root):
        return True
    if not target.tree_here or not target.db.is_relative_to(target.root):
        return False
    if tree_elsewhere(snapshot, target) is not None:
        return False
    if target.db == target.root / ".pix.db":
        return True
    old = Path(snapshot.root)
    return not old.is_dir() or (old / target.db.relative_to(target.root)).is_file()


def _holds(path: Path, sha: str) -> bool:
    """Whether the file at `path` holds the blob `sha` (a file that became a symlink does
    not, and its target is not read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as f:
        return scan.blob_id(f.read()) == sha


def _as_stored(stats: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """The work tree's stats under the names the database stores (pix.store.codec.stored_path). A
    name that is not UTF-8 is stored escaped (`caf\\xe9.py`), which a real file may be named
    too: two files behind one stored name cannot be told apart, so it reads as changed. This
    runs before every query: one encode of all the names (0.1 ms for 5,000) says that they
    are all UTF-8, as they nearly always are, where a name at a time took 2.7 ms."""
    try:
        "\0".join(stats).encode("utf-8")
        return stats
    except UnicodeEncodeError:
        pass
    stored: dict[str, tuple[int, int]] = {}
    for path, stat in stats.items():
        key = codec.stored_path(path)
        stored[key] = (-1, -1) if key in stored else stat  # no file's stat: always changed
    return stored
