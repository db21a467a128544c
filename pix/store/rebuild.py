"""`pix index --rebuild`: a new database built beside the old one, then swapped in by one rename.

The path names a whole database at every moment: the old file until `os.replace`, the new one
after. What only the old file holds is carried over when it can still be read: the saved
aliases. Commit snapshots (`--at`) are not rebuilt; their commits are named so they can be
indexed again.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import apsw

from pix.errors import ConflictError
from pix.store.db import (
    DamagedDatabaseError,
    _inspect,
    open_store,
    read_only_error,
    read_only_place,
)
from pix.store.lock_wait import wait_for_locks

SUFFIX = ".rebuild"  # the fresh file: <db>.rebuild, beside the database
SIDECARS = ("-wal", "-shm", "-journal")
SAVED_ALIASES = "SELECT name, spec, created_at FROM alias ORDER BY name"
RESTORE_ALIAS = "INSERT INTO alias(name, spec, created_at) VALUES (?, ?, ?)"
COMMIT_SNAPSHOTS = "SELECT commit_sha FROM snapshot WHERE kind = 'commit' ORDER BY id"

T = TypeVar("T")


@dataclass
class Salvage:
    aliases: list[tuple] = field(default_factory=list)
    aliases_unreadable: str | None = None  # why the old file's aliases could not be read
    commits: list[str] = field(default_factory=list)  # commit snapshots not rebuilt

    def summary(self) -> dict:
        return {
            "aliasesKept": len(self.aliases),
            "aliasesUnreadable": self.aliases_unreadable,
            "commitsNotRebuilt": self.commits,
        }


def fresh_path(db: Path) -> Path:
    return db.with_name(db.name + SUFFIX)


def salvage(db: Path) -> Salvage:
    """What the old file can still give. A file that is not a pix database (or comes from a
    newer pix) is refused as on every open: --rebuild never replaces someone else's file. An
    SQLite file damaged past reading its tables cannot say whose it is; it is replaced (the
    README and the error's hint say so), its aliases lost."""
    found = Salvage()
    try:
        if not db.exists() or not _inspect(db):
            return found
    except DamagedDatabaseError as exc:  # damaged past reading whose it is: nothing to keep
        found.aliases_unreadable = exc.message
        return found
    ro = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    wait_for_locks(ro, db)
    try:
        try:
            found.aliases = ro.execute(SAVED_ALIASES).fetchall()
        except apsw.Error as exc:
            found.aliases_unreadable = str(exc) or type(exc).__name__
        with contextlib.suppress(apsw.Error):
            found.commits = [sha for (sha,) in ro.execute(COMMIT_SNAPSHOTS)]
    finally:
        ro.close()
    return found


def rebuild(db: Path, build: Callable[[Path], T]) -> tuple[T, Salvage]:
    """`build(fresh)` makes the new database; then the salvaged aliases go in and it replaces
    `db`. Interrupted or failed, the fresh file is removed and `db` is left as it was."""
    if read_only_place(db):
        raise read_only_error(db)
    with one_rebuild(db):
        return _rebuild(db, build)


def _rebuild(db: Path, build: Callable[[Path], T]) -> tuple[T, Salvage]:
    found = salvage(db)
    fresh = fresh_path(db)
    _remove(fresh)  # left by a killed rebuild (one_rebuild: no other is running)
    try:
        result = build(fresh)
        # Aliases saved or removed while the build ran are in the old file: read them again,
        # holding its write lock until the new file is in place. A write waiting for the lock
        # then goes to the replaced file, and its command says so (Store.check_not_moved).
        with _held(db) as latest:
            if latest is not None:
                found.aliases, found.aliases_unreadable = latest, None
            if found.aliases:
                store = open_store(fresh, create=False)
                try:
                    with store.write() as conn:
                        conn.executemany(RESTORE_ALIAS, found.aliases)
                finally:
                    store.close()
            # A -wal beside the path is read as part of whatever file the path names: the
            # old file's must not be applied to the new one.
            for suffix in SIDECARS:
                Path(str(db) + suffix).unlink(missing_ok=True)
            os.replace(fresh, db)
    except BaseException:
        _remove(fresh)
        raise
    return result, found


@contextlib.contextmanager
def one_rebuild(db: Path) -> Iterator[None]:
    """Held while this process rebuilds `db`: a second rebuild would delete the first's fresh
    file under it, and both would fail. An advisory lock on the database's folder (no file
    of its own to leave behind), which the system drops when the process ends, however it
    ends. Where there is no flock (Windows), rebuilds are not serialised."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    folder = os.open(db.parent, os.O_RDONLY)
    try:
        try:
            fcntl.flock(folder, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConflictError(
                f"another `pix index --rebuild` is running in {db.parent}",
                hint="one rebuild at a time in a folder: run this one again when it is done",
            ) from None
        except OSError:  # a file system without flock (some network mounts): unserialised
            pass
        yield
    finally:
        os.close(folder)  # (and with it the lock)


@contextlib.contextmanager
def _held(db: Path) -> Iterator[list[tuple] | None]:
    """The old file's aliases, read under its write lock, which is held until the block ends;
    None when they cannot be read now (the first read's stand, with its reason)."""
    if not db.exists():
        yield None
        return
    try:
        conn = apsw.Connection(str(db))
    except apsw.Error:
        yield None
        return
    try:
        wait_for_locks(conn, db)
        # Closing must neither checkpoint into nor delete the -wal the path may name by then.
        conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
        conn.execute("BEGIN IMMEDIATE")
        rows = conn.execute(SAVED_ALIASES).fetchall()
    except apsw.Error:
        conn.close()
        yield None
        return
    try:
        yield rows
    finally:
        with contextlib.suppress(apsw.Error):
            conn.execute("ROLLBACK")
        conn.close()


def _remove(path: Path) -> None:
    for suffix in ("", *SIDECARS):
        Path(str(path) + suffix).unlink(missing_ok=True)
