"""Which repository a command is about and which database holds its index.

A folder is resolved to its repository root (git's top level; a bare repository's git directory;
outside git, the nearest indexed folder whose index holds it) and the database path (--db,
$PIX_DB, else <root>/.pix.db), before anything is read or written.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from pix.errors import NotIndexedError, UsageError
from pix.ingest import scan
from pix.schemas import text_problem
from pix.store import Store, open_store
from pix.store.db import DATABASE_SUFFIXES, folder_covers
from pix.store.rebuild import SUFFIX as REBUILD_SUFFIX


@dataclass(frozen=True)
class Target:
    root: Path
    is_git: bool
    db: Path
    # A git directory with no work tree (a bare repository, or inside .git): its commits can
    # be indexed with --at, and nothing else, as nothing is checked out.
    bare: bool = False
    # Outside git: the nearest folder above with an index that does not hold this folder's
    # files (added since it was indexed, or left out), named when this folder has no index.
    enclosing: Path | None = None
    # Whether the folder may be the database's tree when its snapshot was made elsewhere (a
    # repository copied or moved with its database). Not for a workspace's bare `db` entry,
    # which runs in the database's folder: that folder is no tree of it.
    tree_here: bool = True


def locate(path: str | None = None, db: str | None = None) -> Target:
    """The repository root for `path` (git top level; outside git, the nearest indexed folder
    whose index holds it, or the folder itself; a bare repository's git directory) and its
    database: --db, else $PIX_DB, else <root>/.pix.db."""
    start = Path(path or os.getcwd()).expanduser()
    if not start.exists():
        raise UsageError(f"no such folder: {start}")
    if not start.is_dir():
        raise UsageError(f"not a folder: {start}")
    top = scan.git_toplevel(start)
    bare = _git_dir(start) if top is None else None
    given = db or os.environ.get("PIX_DB")
    enclosing = None
    if bare or top or given:
        root = (bare or top or start).resolve()
    else:
        root, enclosing = _indexed_folder(start)
    db_path = Path(given or root / ".pix.db").expanduser().resolve()
    if given and db_path.is_dir():  # a mistyped --db: bad input (exit 2), not a damaged file
        raise UsageError(
            f"the database path {db_path} names a folder, not a database file",
            hint=f"name a file, e.g. {db_path / '.pix.db'}",
        )
    for where, fix in (
        (root, "rename the folder: pix records its path as text"),
        (db_path, "pass --db with a path that is UTF-8"),
    ):
        # Snapshot roots and database paths are stored and compared as text: a name that is
        # not UTF-8 was "unexpected UnicodeEncodeError" at the first write.
        if problem := text_problem(str(where)):
            raise UsageError(f"the path {str(where)!r} cannot be used: {problem}", hint=fix)
    return Target(root, top is not None or bare is not None, db_path, bare is not None, enclosing)


def _indexed_folder(start: Path) -> tuple[Path, Path | None]:
    """A folder outside git, as git finds a top level from a subfolder: the nearest folder
    above it with a `.pix.db` when that index holds files under it, else the folder itself.
    An index that leaves the subfolder out (node_modules, .gitignore'd, added since) is not
    its index, and the search stops at the nearest one (returned second, for the hint)."""
    here = start.resolve()
    if (here / ".pix.db").exists():
        return here, None
    for folder in here.parents:
        db = folder / ".pix.db"
        if db.is_file():
            sub = here.relative_to(folder).as_posix()
            return (folder, None) if folder_covers(db, str(folder), sub) else (here, folder)
    return here, None


def open_index(target: Target, *, check: bool = False, write: bool = False) -> Store:
    """The target's database, to read: open_store(create=False), whose "no pix index" names
    the folder above whose index leaves this one out, when there is one (following the usual
    hint there would make a second index, nested in the first)."""
    try:
        return open_store(target.db, create=False, check=check, write=write)
    except NotIndexedError as exc:
        if target.enclosing is None:
            raise
        raise NotIndexedError(
            exc.message,
            hint=f"the index of {target.enclosing} does not hold this folder's files (added "
            f"since, or left out): `pix index` in {target.enclosing} adds new files; `pix "
            "index` here makes an index of this folder alone",
        ) from None


def _git_dir(folder: Path) -> Path | None:
    """The git directory `folder` is in when it has no work tree (a bare repository, or a
    .git folder), else None: indexed as a plain folder, it would be git's own files."""
    done = subprocess.run(
        ["git", "-C", str(folder), "rev-parse", "--is-inside-git-dir", "--absolute-git-dir"],
        capture_output=True,
        check=False,
    )
    lines = os.fsdecode(done.stdout).split("\n")  # a path: the file system's bytes
    if done.returncode != 0 or lines[0] != "true":
        return None
    return Path(lines[1])


def excluded_paths(target: Target) -> frozenset[str]:
    """The database's own files (and those of its --rebuild), when it lives inside the tree
    under a custom name."""
    try:
        rel = target.db.relative_to(target.root).as_posix()
    except ValueError:
        return frozenset()
    return frozenset(
        rel + extra + suffix for extra in ("", REBUILD_SUFFIX) for suffix in DATABASE_SUFFIXES
    )
