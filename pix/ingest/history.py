"""How often each file changed lately: the history prior's counts (pix/retrieve/history.py).

A file that changed often in the year before the indexed commit is more likely to be the one a
change description is about: defects and features cluster where work is under way (change
frequency is among the oldest predictors of where the next fix lands, and a prior for
information-retrieval bug localization since Sisman and Kak, 2012). Counted at index time
per snapshot, from the commits reachable from the snapshot's commit and committed in the
WINDOW_DAYS before it, so asking at an old commit (`pix index --at`) counts that commit's past,
not today's.

Merges count nothing (`git log` lists no files for them unless asked for a diff, as the log
channel's reading asks, pix/ingest/commit_log.py: a merge's files are its branch's, counted
already by the branch's own commits), a rename starts a new count (no
rename detection: it costs a diff per commit), and at most MAX_COMMITS commits are read, so a
repository with tens of thousands of commits a year is counted over its newest ones. A shallow
clone counts what it holds: its boundary commit lists every file once, which shifts every file
alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import apsw

from pix.errors import PixError
from pix.ingest import scan
from pix.store import sql

WINDOW_DAYS = 365
MAX_COMMITS = 20_000
# Files a re-index counts by name (a `git log -- paths`); more, and the whole history is read.
MISSING_BY_PATH = 200


def commits(root: Path, *args: str, paths: Iterable[str] = ()) -> list[tuple[int, list[str]]]:
    """`git log` of `args` (revisions, limits) as (committer time, changed paths) per commit,
    newest first; with `paths`, only the commits that changed them, and only those paths."""
    return [(int(head), changed) for head, changed in log(root, "%ct", *args, paths=paths)]


def log(
    root: Path, form: str, *args: str, paths: Iterable[str] = ()
) -> list[tuple[str, list[str]]]:
    """`git log` of `args` as (`form` of the commit, e.g. "%ct", changed paths) per commit,
    newest first; with `paths`, only the commits that changed them, and only those paths.
    `form` must print no NUL (no git placeholder does)."""
    # Each commit prints NUL, its form, NUL, then its paths each ended by NUL, the first after
    # a newline (a merge prints none, unless `args` ask for its diff). A path is never empty
    # and may hold any other byte, so an empty field is what starts a commit.
    # With paths, --full-history: git's default simplification would drop a side branch's
    # commits when a merge kept the other parent's version, which the whole-tree pass counts.
    paths = list(paths)
    limited = ("--full-history",) if paths else ()
    fields = scan.git(
        root, "--literal-pathspecs", "log", "--no-renames", "--name-only", "-z",
        f"--format=%x00{form}", *limited, *args, "--", *paths,
    ).split(b"\0")  # fmt: skip
    out: list[tuple[str, list[str]]] = []
    first = False  # the next field is a commit's first path
    for i, raw in enumerate(fields):
        if not raw:
            continue
        if i > 0 and not fields[i - 1]:  # the field after an empty one: a commit's form
            out.append((raw.decode("utf-8", "replace"), []))
            first = True
            continue
        path = raw[1:] if first and raw.startswith(b"\n") else raw
        first = False
        out[-1][1].append(path.decode("utf-8", "surrogateescape"))
    return out


def recent_changes(root: Path, commit_sha: str, paths: Iterable[str] = ()) -> Counter[str]:
    """Path -> how many commits reachable from `commit_sha` changed it in the WINDOW_DAYS
    before that commit's own commit time (of `paths` only, if given)."""
    committed = int(scan.git(root, "show", "-s", "--format=%ct", commit_sha).decode().strip())
    since = committed - WINDOW_DAYS * 86_400
    counts: Counter[str] = Counter()
    for stamp, changed in commits(
        root, f"--since=@{since}", f"--max-count={MAX_COMMITS}", commit_sha, paths=paths
    ):
        if stamp >= since:  # --since stops at the first older commit, not before it
            counts.update(changed)
    return counts


def store_counts(conn: apsw.Connection, snapshot_id: int, counts: Counter[str]) -> None:
    """Write a snapshot's counts (every file of it: 0 where no commit counted), inside the
    caller's transaction."""
    conn.execute(sql.ZERO_RECENT_COMMITS, {"snapshot": snapshot_id})
    conn.executemany(
        sql.COUNT_RECENT_COMMITS,
        ({"commits": n, "snapshot": snapshot_id, "path": p} for p, n in counts.items()),
    )


def uncounted(conn: apsw.Connection, snapshot_id: int) -> bool:
    """A snapshot written before migration 008 (or of a folder without git)."""
    return bool(conn.execute(sql.SNAPSHOT_UNCOUNTED, (snapshot_id,)).fetchone()[0])


def snapshot_counts(
    conn: apsw.Connection,
    listing: scan.Listing,
    previous: tuple | None = None,
    paths: Iterable[str] = (),
) -> Counter[str] | None:
    """The counts for a listing's commit (None: no commit to count from, or git could not read
    its history; the prior then leaves the snapshot alone). `previous` (id, commit, ...): the
    work tree's last snapshot, whose counts stand if it is of the same commit (a re-index
    after an edit). Of `paths`, the new snapshot's files, those it did not count (skipped
    then: too large before `--max-bytes` was raised, or deleted and restored since) are
    counted from the history of those paths alone; an untracked new file counts 0."""
    if listing.kind == "folder" or not listing.commit_sha:
        return None
    try:
        if previous and previous[1] == listing.commit_sha and not uncounted(conn, previous[0]):
            kept = Counter(dict(conn.execute(sql.SNAPSHOT_RECENT_COMMITS, (previous[0],))))
            missing = sorted(set(paths) - kept.keys())
            if len(missing) <= MISSING_BY_PATH:
                if missing:
                    kept.update(recent_changes(listing.root, listing.commit_sha, missing))
                return kept
        return recent_changes(listing.root, listing.commit_sha)
    except (PixError, ValueError):  # no usable history: no counts, never a failed index
        return None


def count_kept(conn: apsw.Connection, snapshot_id: int, counts: Counter[str] | None) -> None:
    """Give a kept snapshot written before migration 008 its counts."""
    if counts is not None and uncounted(conn, snapshot_id):
        store_counts(conn, snapshot_id, counts)
