"""Opening a .pix.db: validate before touching, then WAL, sqlite-vec and migrations.

A database is looked at first through a connection that only reads it (_open_to_look), so a
file that is not ours, is corrupt, or comes from a newer pix is refused without a single byte
changed and no file left beside it. Migrations are the numbered files in migrations/, each
applied in one transaction and recorded in the `migration` table.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
import urllib.parse
from collections.abc import Iterator
from importlib.resources.abc import Traversable
from pathlib import Path

import apsw
import sqlite_vec

from pix import interrupt
from pix.errors import (
    REBUILD_HINT,
    ConflictError,
    DatabaseError,
    NotIndexedError,
    PixError,
)
from pix.paths import MIGRATIONS_DIR
from pix.store import codec, sql
from pix.store.lock_wait import lock_timeout, wait_for_locks

SCHEMA_RETRIES = 5
SQLITE_FAILURES = (apsw.NotADBError, apsw.CorruptError, apsw.CantOpenError, apsw.IOError)

MIGRATION_TABLE = """
CREATE TABLE IF NOT EXISTS migration (
    name       TEXT PRIMARY KEY,
    applied_at TEXT NOT NULL
)
"""
LIST_TABLES = "SELECT name FROM sqlite_master WHERE type = 'table'"
APPLIED_MIGRATIONS = "SELECT name FROM migration ORDER BY name"
MIGRATION_APPLIED = "SELECT 1 FROM migration WHERE name = ?"
RECORD_MIGRATION = "INSERT INTO migration(name, applied_at) VALUES (?, ?)"
GET_META = "SELECT value FROM meta WHERE key = ?"
SET_META = """
INSERT INTO meta(key, value) VALUES (?, ?)
ON CONFLICT(key) DO UPDATE SET value = excluded.value
"""


# A database is its file plus, while open or after a crash, these beside it.
DATABASE_SUFFIXES = ("", "-wal", "-shm", "-journal")
MIGRATION_FILE = re.compile(r"([0-9]{3}_.+)\.sql")


def remove_database(path: Path) -> None:
    """Delete a database file with its WAL, shared-memory and rollback-journal files (none
    there, or no folder to hold them: nothing to do)."""
    for suffix in DATABASE_SUFFIXES:
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            Path(f"{path}{suffix}").unlink()


def known_migrations() -> dict[str, Traversable]:
    """The migrations this pix ships, by name (the file name without .sql), in applying order."""
    found = {
        m.group(1): file
        for file in MIGRATIONS_DIR.iterdir()
        if (m := MIGRATION_FILE.fullmatch(file.name))
    }
    if not found:  # else every database would look like it came from a newer pix
        raise PixError("this pix installation has no migrations", hint="reinstall pix")
    return dict(sorted(found.items()))


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def file_identity(path: Path, content: bool = False) -> tuple[int, ...] | None:
    """(st_dev, st_ino) of the file at `path`, None if there is none; with `content`, its
    size and mtime too (a file written in place), and its -wal's when there is one: the
    owner of a file read `immutable` commits into a -wal, which the file shows only once
    checkpointed."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    if not content:
        return (st.st_dev, st.st_ino)
    try:
        wal = os.stat(path.with_name(path.name + "-wal"))
        beside: tuple[int, ...] = (wal.st_size, wal.st_mtime_ns)
    except FileNotFoundError:
        beside = ()
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, *beside)


class Store:
    """One open connection to a pix database."""

    def __init__(
        self,
        conn: apsw.Connection,
        path: Path,
        read_only: bool = False,
        watch: bool = False,
        checked: bool = False,
    ) -> None:
        self.conn = conn
        self.path = path
        # pix cannot write the file or its folder (read_only_place): nothing is refreshed or
        # recorded, and a write is refused.
        self.read_only = read_only
        # Opened immutable (opens_immutable): a change written in place reads as a
        # replaced file, so that a long-lived server opens it again.
        self.watch = watch
        # Which file this connection has open: the path may later name another one (deleted,
        # or replaced by `pix index --rebuild`), and a long-lived server must notice.
        self.identity = file_identity(path, watch)
        # Ctrl-C interrupts a running statement (pix.interrupt).
        self._cancel = interrupt.register(conn.interrupt)
        # SQLite's quick_check passed on this file since it was opened (ready_to_write).
        self.checked = checked

    def moved(self) -> str | None:
        """Whether the path still names the file this connection has open: None if so, else
        "deleted" or "replaced"."""
        now = file_identity(self.path, self.watch)
        if now == self.identity:
            return None
        return "deleted" if now is None else "replaced"

    def check_not_moved(self, doing: str) -> None:
        """Refuse to report success for a write that went to a file no longer at the path."""
        moved = self.moved()
        if moved == "deleted":
            raise NotIndexedError(
                f"no pix index at {self.path}: the database was deleted while {doing}, "
                "so nothing was saved",
                hint="run `pix index` in the repository",
            )
        if moved == "replaced":
            raise ConflictError(
                f"the database {self.path} was replaced while {doing}; the change went to the "
                "file it replaced, not to the one there now",
                hint="run it again",
            )

    def close(self) -> None:
        interrupt.unregister(self._cancel)
        if self.moved():
            # The -wal and -shm beside the path may belong to the file there now: closing must
            # not checkpoint into them or delete them (SQLite does both by name on close).
            with contextlib.suppress(apsw.Error):
                self.conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def shrink(self) -> None:
        """Give the file's free pages back to the file system (auto_vacuum = INCREMENTAL)."""
        if self.conn.execute("PRAGMA freelist_count").fetchone()[0]:
            with self.write():
                # one page per step: the statement must run to its end
                self.conn.execute("PRAGMA incremental_vacuum").fetchall()

    @contextlib.contextmanager
    def write(self) -> Iterator[apsw.Connection]:
        """One write transaction. IMMEDIATE takes the write lock up front, so two writers queue
        instead of failing halfway when one upgrades from reading."""
        if self.read_only:
            raise read_only_error(self.path)
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            # A Ctrl-C between BEGIN and the `with` leaves this generator to the garbage
            # collector, after the connection was closed (closing rolled back): nothing to do,
            # and an error here would print a traceback after pix's "interrupted" line.
            with contextlib.suppress(apsw.ConnectionClosedError):
                if not self.conn.getautocommit():  # an interrupted statement rolls back itself
                    self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")

    @contextlib.contextmanager
    def read(self) -> Iterator[apsw.Connection]:
        """A read transaction: every statement inside sees one committed state."""
        self.conn.execute("BEGIN")
        try:
            yield self.conn
        finally:
            with contextlib.suppress(apsw.ConnectionClosedError):  # (as in write)
                if not self.conn.getautocommit():
                    self.conn.execute("COMMIT")

    def check_integrity(self) -> None:
        """Raise DatabaseError if SQLite finds the file damaged."""
        quick_check(self.conn, self.path)

    def ready_to_write(self) -> None:
        """Refuse, before a byte is written, what a write would fail on or spread: a file
        pix cannot write, a read-only -wal or -shm beside it, a damaged file (quick_check,
        once per opened file: 0.1 s on pytest's 9 MiB, 0.5 s on astropy's 37). What the alias
        writes ask first (an MCP server's store was opened to read)."""
        if self.read_only:
            raise read_only_error(self.path)
        if beside := _read_only_beside(self.path):
            raise beside
        if not self.checked:
            self.check_integrity()
            self.checked = True

    def meta(self, key: str) -> str | None:
        row = self.conn.execute(GET_META, (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute(SET_META, (key, value))


def quick_check(conn: apsw.Connection, path: Path) -> None:
    """SQLite's quick_check (every page of every b-tree read once: ~5 ms per MB): raise
    DatabaseError, with the fix, if it finds the file damaged."""
    try:
        verdict = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
    except SQLITE_FAILURES + (apsw.SQLError,) as exc:
        verdict = str(exc)
    if verdict != "ok":
        detail = " ".join(verdict.replace("*** in database main ***", "").split())
        raise DatabaseError(f"the database {path} is damaged ({detail})", hint=REBUILD_HINT)


def read_only_place(path: Path) -> bool:
    """Whether pix cannot write the database (an existing file) or the folder SQLite keeps
    its -wal and -shm files in: a read-only mount, another user's checkout, a copy on
    read-only media."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # folders yet to be made: the nearest that is must be writable
    if not os.access(folder, os.W_OK):
        return True
    return path.exists() and not os.access(path, os.W_OK)


def read_only_error(path: Path) -> DatabaseError:
    if not path.exists():
        return DatabaseError(
            f"cannot create {path}: pix cannot write its folder (read-only)",
            hint="pass --db with a file in a writable folder",
        )
    return DatabaseError(
        f"cannot write {path}: pix cannot write it or its folder (read-only)",
        hint="reading works where it is: query, pack, status and discover; to index it or save "
        "aliases, copy it to a writable folder and pass the copy with --db",
    )


def opens_immutable(path: Path) -> bool:
    """Whether a read-only connection must open the file `immutable`: SQLite cannot make the
    -shm file a WAL database is read through (its folder cannot be written), or would make
    it and the -wal with the file's read-only mode (the file cannot be written: they would
    outlive the read and fail its owner's next write), and no -wal is beside it, so no
    connection has it open and the file holds every commit. Someone who can write it (the
    checkout's owner, the host behind a read-only mount) may still change it later: a Store
    opened so watches its size and mtime (file_identity) and is reopened, as a replaced file
    is, when they change."""
    wal = path.with_name(path.name + "-wal")
    writable = os.access(path.parent, os.W_OK) and os.access(path, os.W_OK)
    return not writable and not wal.exists()


def _read_only_beside(path: Path) -> DatabaseError | None:
    """A -wal or -shm beside a writable database that pix cannot write (left by a read of the
    file while it was read-only, by an older pix or another program): SQLite's first write
    would fail with "attempt to write a readonly database"."""
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists() and not os.access(side, os.W_OK):
            fix = (
                f"remove {side}" if suffix == "-shm" else f"make {side} writable (it holds commits)"
            )
            return DatabaseError(
                f"cannot write {path}: {side} beside it is read-only",
                hint=f"when no process has the database open, {fix}",
            )
    return None


def _open_read_only(path: Path, immutable: bool) -> apsw.Connection:
    if immutable:
        uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?immutable=1"
        return apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    return apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)


def _open_to_look(path: Path, immutable: bool) -> apsw.Connection:
    """A connection that only reads an existing file, to judge it before it is used. Read-only,
    SQLite makes the -wal and -shm a WAL file is read through and leaves them behind on close
    (a refused file's folder gained two files): with nothing beside the file and a place pix
    can write, the look is read-write, held to reading by query_only, and its close removes
    what it made. Beside a -journal (a read-write look would roll back its interrupted
    transaction) or a -wal (its close would checkpoint the commits in it into the file), the
    look stays read-only and leaves them as they are. SQLite keeps those files beside the
    link's target, so the target is what is checked and opened. (A foreign writer that leaves
    a -journal between the check and the look's last read would see it rolled back: query_only
    stops statements, not recovery. pix's own databases are never in rollback mode.)"""
    real = path.resolve()
    beside = any(Path(f"{real}{suffix}").exists() for suffix in DATABASE_SUFFIXES[1:])
    if immutable or beside or read_only_place(real):
        return _open_read_only(path, immutable)
    conn = apsw.Connection(str(real), flags=apsw.SQLITE_OPEN_READWRITE)
    conn.execute("PRAGMA query_only = ON")
    return conn


def folder_covers(path: Path, root: str, sub: str) -> bool:
    """Whether the database at `path` indexes the plain folder `root` with files under its
    subfolder `sub` (relative, '/'-separated). A file that cannot be read as such says no."""
    try:
        conn = _open_to_look(path, opens_immutable(path))
        try:
            params = {"root": root, "prefix": sub + "/", "after": sub + "0"}
            return bool(conn.execute(sql.FOLDER_COVERS, params).fetchone()[0])
        finally:
            conn.close()
    except apsw.Error:
        return False


def _inspect(path: Path, check: bool = False, immutable: bool | None = None) -> list[str]:
    """A look that only reads an existing file (_open_to_look): its applied migrations, or a
    refusal; with `check`, SQLite's quick_check too. `immutable`: opens_immutable, if the
    caller knows. Looked at again, on a fresh connection, while another pix changes the schema
    under it (two first `pix index` at once: "vtable constructor failed: blob_trigram" from
    the quick_check, 2 of 80 runs in the audit's loop)."""
    for attempt in range(SCHEMA_RETRIES):
        try:
            return _inspect_once(path, check, immutable)
        except apsw.SchemaChangeError:
            if attempt == SCHEMA_RETRIES - 1:
                raise _unsettled(path) from None
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")


def _unsettled(path: Path) -> DatabaseError:
    """Another pix kept changing the file's schema through every look (SCHEMA_RETRIES)."""
    return DatabaseError(
        f"cannot use {path}: its schema kept changing while pix opened it",
        hint="run the command again",
    )


def _inspect_once(path: Path, check: bool, immutable: bool | None) -> list[str]:
    if immutable is None:
        immutable = opens_immutable(path)
    try:
        ro = _open_to_look(path, immutable)
    except SQLITE_FAILURES as exc:
        raise DatabaseError(f"cannot open {path}: {exc}") from None
    try:
        # Another pix may be creating the file (switching it to WAL) or recovering its WAL.
        wait_for_locks(ro, path)
        tables = {row[0] for row in ro.execute(LIST_TABLES)}
        if not tables:
            if path.stat().st_size and not _sqlite_header(path):
                # SQLite reads a file shorter than its header as an empty database, which pix
                # would then take over: a one-byte note is not a new index.
                raise DatabaseError(
                    f"{path} is not a pix database (not SQLite)",
                    hint="pass --db with another file name",
                )
            return []
        if "migration" not in tables:
            raise DatabaseError(
                f"{path} is an SQLite database but not a pix database",
                hint="pass --db with another file name",
            )
        applied = [row[0] for row in ro.execute(APPLIED_MIGRATIONS)]
        known = known_migrations()
        unknown = [name for name in applied if name not in known]
        if unknown:
            raise DatabaseError(
                f"{path} was written by a newer pix (migration {unknown[0]} is unknown here)",
                hint="upgrade pix, or index into another --db",
            )
        if check:
            quick_check(ro, path)
        return applied
    except apsw.SQLError as exc:
        raise DatabaseError(f"{path} is not a usable pix database: {exc}") from None
    except apsw.CantOpenError:
        # A database in WAL mode is read through a -shm file beside it, which a read-only
        # folder cannot hold: the file itself may be fine, and must not be called corrupt.
        raise DatabaseError(
            f"cannot open {path}: SQLite cannot open it or the -wal and -shm files it keeps "
            "beside it",
            hint="pix reads the database and writes in its folder: check their permissions, "
            "or copy the database to a writable folder",
        ) from None
    except apsw.ReadOnlyError as exc:
        if exc.extendedresult == apsw.SQLITE_READONLY_ROLLBACK:
            # Reading a file beside a hot -journal means rolling back the transaction it holds,
            # which the look may not do (the file is not known to be pix's): its owner decides.
            raise DatabaseError(
                f"{path} holds an interrupted transaction (a -journal beside it) that pix does "
                "not roll back",
                hint="open it once with the program that wrote it (or sqlite3) to recover it, "
                "or pass --db with another file name",
            ) from None
        raise DatabaseError(f"cannot read {path}: {exc}") from None
    except SQLITE_FAILURES as exc:
        # Only SQLite's own verdict on the file: an I/O error may pass, and says nothing
        # about what the file holds.
        if isinstance(exc, apsw.CorruptError | apsw.NotADBError) and _sqlite_header(path):
            # An SQLite file whose schema cannot be read (cut short by a full disk or a copy
            # that stopped): damaged, and --rebuild may replace it (pix.store.rebuild).
            raise DamagedDatabaseError(
                f"the database {path} is damaged ({exc}; its tables cannot be read)",
                hint="if it is pix's, `pix index --rebuild` builds it anew (its saved aliases "
                "are lost); if not, pass --db with another file name",
            ) from None
        raise DatabaseError(
            f"{path} is not a pix database (corrupt or not SQLite)",
            # pix never deletes it (it may be anyone's file): the user decides.
            hint="pass --db with another file name; if it is a pix database that broke, "
            "delete it and run pix index again",
        ) from None
    finally:
        ro.close()


def refuse_unusable(path: Path) -> None:
    """DatabaseError if an existing file at `path` can never be pix's database here (not
    SQLite, another program's, from a newer pix, damaged), looked at without a write; nothing
    for no file."""
    if path.is_file():
        _inspect(path)


class DamagedDatabaseError(DatabaseError):
    """An SQLite file too damaged to tell whose it is (pix.store.rebuild may replace it)."""


def _sqlite_header(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def _connect(path: Path, new: bool = False, immutable: bool | None = None) -> apsw.Connection:
    """A connection to write through, or with `immutable` set (True or False) a read-only
    one (_open_read_only)."""
    read_only = immutable is not None
    conn = _open_read_only(path, immutable) if read_only else apsw.Connection(str(path))
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    conn.enable_load_extension(False)
    wait_for_locks(conn, path)
    # The views blob_text and chunk_text read stored text through it, as the sqlite3 shell does.
    conn.create_scalar_function("sqlar_uncompress", codec.sqlar_uncompress, 2, deterministic=True)
    # Pages freed by deletes (a static vector replaced by the transformer's, a changed file's
    # chunks) go back to the file system at the end of `pix index` (Store.shrink) rather than
    # staying in the file: the static tier alone left 15% of a fresh index free. It takes
    # effect on a new file (before its first table); pix gc's VACUUM turns it on in an older
    # one. Only for a new file: on an existing one the pragma waits for the write lock.
    if read_only:
        return conn
    if new:
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    # Deleted rows are overwritten, not left in free pages: a text masked again (a newer
    # secret detector) must not leave the older unmasked copy readable in the file.
    conn.execute("PRAGMA secure_delete = ON")
    return conn


def _migrate(conn: apsw.Connection, applied: list[str]) -> None:
    for name, file in known_migrations().items():
        if name in applied:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(MIGRATION_TABLE)
            # Asked again under the write lock: another pix may have applied it meanwhile
            # (two first `pix index` runs at once).
            if conn.execute(MIGRATION_APPLIED, (name,)).fetchone() is None:
                conn.execute(file.read_text(encoding="utf-8"))
                conn.execute(RECORD_MIGRATION, (name, now_iso()))
        except BaseException:
            if not conn.getautocommit():
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")


def _read_only_store(path: Path, applied: list[str], immutable: bool, checked: bool) -> Store:
    """A store pix can only read: it answers as it stands, and Store.write refuses."""
    if any(name not in applied for name in known_migrations()):
        raise DatabaseError(
            f"{path} was written by an older pix and cannot be upgraded where it is: pix "
            "cannot write it or its folder",
            hint="copy it to a writable folder and pass that copy with --db",
        )
    try:
        conn = _connect(path, immutable=immutable)
        return Store(conn, path, read_only=True, watch=immutable, checked=checked)
    except SQLITE_FAILURES as exc:
        raise DatabaseError(f"cannot read {path}: {exc}") from None


def open_store(path: Path, *, create: bool, check: bool = False, write: bool = False) -> Store:
    """Open (and with `create`, make) the database at `path`, refusing what is not ours;
    with `check`, refusing a damaged file too (quick_check, before a byte is written). To
    `write` (implied by `create`), refusing before any migration what a write would fail on:
    a place pix cannot write, a read-only -wal or -shm beside the file."""
    write = write or create
    path = Path(path)
    if not path.exists():
        if not create:
            raise NotIndexedError(
                f"no pix index at {path}", hint="run `pix index` in the repository first"
            )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a file in the way, a read-only or virtual file system
            why = (
                "a file is in the way"
                if isinstance(exc, (FileExistsError, NotADirectoryError))
                else exc.strerror or str(exc)
            )
            raise DatabaseError(
                f"cannot create {path}: its folder {path.parent} cannot be made ({why})",
                hint="pass --db with a path in a writable folder",
            ) from None
        applied: list[str] = []
    elif path.is_dir():  # (a --db naming a folder is bad input: pix.locate.locate)
        raise DatabaseError(f"{path} is a directory, not a pix database")
    else:
        read_only = read_only_place(path)
        immutable = read_only and opens_immutable(path)
        applied = _inspect(path, check, immutable)
        if not applied and not create:
            raise NotIndexedError(
                f"no pix index at {path}", hint="run `pix index` in the repository first"
            )
        if read_only:
            if write:
                raise read_only_error(path)
            return _read_only_store(path, applied, immutable, check)
        if write and (beside := _read_only_beside(path)):
            raise beside
    for attempt in range(SCHEMA_RETRIES):
        began = time.monotonic()
        try:
            conn = _connect(path, new=not applied)
            try:
                _migrate(conn, applied)
            except BaseException:
                conn.close()
                raise
            return Store(conn, path, checked=check)
        except apsw.SchemaChangeError:
            # Another pix migrated the file between this one's look and its first statement
            # (six first indexes at once, on a loaded machine: "vtable constructor failed:
            # blob_trigram"). A fresh connection reads the new schema.
            if attempt == SCHEMA_RETRIES - 1:
                raise _unsettled(path) from None
            applied = _inspect(path, check) if path.exists() else []
        except (apsw.IOError, apsw.BusyError) as exc:
            # Two pix making the same new file at once: one's `PRAGMA auto_vacuum` or
            # journal_mode switch can meet the other's half-made file ("disk I/O error", or a
            # busy lock the wait never saw: 2 of 240 first indexes in pairs). A fresh look
            # finds the file the other made; an existing file's errors are real, and so is a
            # lock held past the whole wait (it is not waited for five times over).
            waited = time.monotonic() - began >= lock_timeout()
            if applied or waited or attempt == SCHEMA_RETRIES - 1:
                if isinstance(exc, apsw.BusyError):
                    raise
                raise DatabaseError(f"cannot use {path}: {exc}") from None
            time.sleep(0.05 * (attempt + 1))
            applied = _inspect(path, check) if path.exists() else []
        except SQLITE_FAILURES as exc:
            raise DatabaseError(f"cannot use {path}: {exc}") from None
    raise AssertionError("unreachable")
