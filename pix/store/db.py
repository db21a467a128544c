"""Opening a .pix.db: validate before touching, then WAL, sqlite-vec and migrations.

A database is checked read-only first, so a file that is not ours, is corrupt, or comes from a
newer pix is refused without a single byte changed. Migrations are the numbered files in
migrations/, each applied in one transaction and recorded in the `migration` table.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from importlib.resources.abc import Traversable
from pathlib import Path

import apsw
import sqlite_vec

from pix.errors import DatabaseError, NotIndexedError, PixError
from pix.paths import MIGRATIONS_DIR
from pix.store import codec

SQLITE_FAILURES = (apsw.NotADBError, apsw.CorruptError, apsw.CantOpenError, apsw.IOError)

MIGRATION_TABLE = """
CREATE TABLE IF NOT EXISTS migration (
    name       TEXT PRIMARY KEY,
    applied_at TEXT NOT NULL
)
"""
LIST_TABLES = "SELECT name FROM sqlite_master WHERE type = 'table'"
APPLIED_MIGRATIONS = "SELECT name FROM migration ORDER BY name"
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
    """Delete a database file with its WAL, shared-memory and rollback-journal files."""
    for suffix in DATABASE_SUFFIXES:
        Path(f"{path}{suffix}").unlink(missing_ok=True)


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


class Store:
    """One open connection to a pix database."""

    def __init__(self, conn: apsw.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def write(self) -> Iterator[apsw.Connection]:
        """One write transaction. IMMEDIATE takes the write lock up front, so two writers queue
        instead of failing halfway when one upgrades from reading."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
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
            self.conn.execute("COMMIT")

    def check_integrity(self) -> None:
        """Raise DatabaseError if SQLite finds the file damaged."""
        try:
            verdict = self.conn.execute("PRAGMA quick_check(1)").fetchone()[0]
        except SQLITE_FAILURES + (apsw.SQLError,) as exc:
            verdict = str(exc)
        if verdict != "ok":
            detail = " ".join(verdict.replace("*** in database main ***", "").split())
            raise DatabaseError(
                f"the database {self.path} is damaged ({detail})",
                hint="delete it and run pix index again",
            )

    def meta(self, key: str) -> str | None:
        row = self.conn.execute(GET_META, (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute(SET_META, (key, value))


def _inspect(path: Path) -> list[str]:
    """Read-only look at an existing file: its applied migrations, or a refusal."""
    try:
        ro = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    except SQLITE_FAILURES as exc:
        raise DatabaseError(f"cannot open {path}: {exc}") from None
    try:
        tables = {row[0] for row in ro.execute(LIST_TABLES)}
        if not tables:
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
        return applied
    except apsw.SQLError as exc:
        raise DatabaseError(f"{path} is not a usable pix database: {exc}") from None
    except SQLITE_FAILURES:
        raise DatabaseError(
            f"{path} is not a pix database (corrupt or not SQLite)",
            hint="delete it and run pix index again, or pass --db with another file name",
        ) from None
    finally:
        ro.close()


def _connect(path: Path) -> apsw.Connection:
    conn = apsw.Connection(str(path))
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    conn.enable_load_extension(False)
    conn.setbusytimeout(10_000)
    # The views blob_text and chunk_text read stored text through it, as the sqlite3 shell does.
    conn.create_scalar_function("sqlar_uncompress", codec.sqlar_uncompress, 2, deterministic=True)
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
            conn.execute(file.read_text(encoding="utf-8"))
            conn.execute(RECORD_MIGRATION, (name, now_iso()))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")


def open_store(path: Path, *, create: bool) -> Store:
    """Open (and with `create`, make) the database at `path`, refusing what is not ours."""
    path = Path(path)
    if not path.exists():
        if not create:
            raise NotIndexedError(
                f"no pix index at {path}", hint="run `pix index` in the repository first"
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        applied: list[str] = []
    elif path.is_dir():
        raise DatabaseError(f"{path} is a directory, not a pix database")
    else:
        applied = _inspect(path)
        if not applied and not create:
            raise NotIndexedError(
                f"no pix index at {path}", hint="run `pix index` in the repository first"
            )
    try:
        conn = _connect(path)
        _migrate(conn, applied)
    except SQLITE_FAILURES as exc:
        raise DatabaseError(f"cannot use {path}: {exc}") from None
    return Store(conn, path)
