"""`pix gc`: drop what no snapshot needs and give the space back to the file system.

`--keep N` first drops commit snapshots (`pix index --at`) beyond the N indexed last; the work-tree
snapshot is never dropped. In a folder's own .pix.db, the work trees of other folders go once
this folder has its own (a repository copied or moved with its database leaves its old
folder's behind). Then blobs no snapshot references go, with their chunks, vectors,
FTS and trigram rows and secrets, in one transaction. Deleting frees pages inside the file
only, so VACUUM then rewrites the file without them and the WAL is truncated.
"""

from __future__ import annotations

from pix.errors import UsageError
from pix.locate import locate, open_index
from pix.store import sql

SCHEMA_VERSION = 1  # schema/gc-response.v1.json


def database_bytes(db) -> int:
    """The database file and its WAL, as they take space on disk."""
    return sum(p.stat().st_size for p in (db, db.with_name(db.name + "-wal")) if p.exists())


KEEP_ALL = 2**63 - 1


def gc(path: str | None = None, db: str | None = None, keep: int | None = None) -> dict:
    if keep is not None and keep < 0:
        raise UsageError("--keep must be 0 or more")
    if keep is not None:
        keep = min(keep, KEEP_ALL)  # more than SQLite's integers hold keeps every snapshot
    target = locate(path, db)
    store = open_index(target, check=True, write=True)
    try:
        before = database_bytes(target.db)
        conn = store.conn
        removed = {"snapshots": 0}
        with store.write():
            if keep is not None:
                conn.execute(sql.GC_OLD_COMMIT_SNAPSHOTS, (keep,))
                removed["snapshots"] = conn.changes()
            if target.db == target.root / ".pix.db":  # (another folder's --db: its trees)
                conn.execute(sql.GC_OTHER_TREES, {"root": str(target.root)})
                removed["snapshots"] += conn.changes()
            for name, statement in (
                ("vectors", sql.GC_VECTORS),
                ("staticVectors", sql.GC_STATIC_VECTORS),
                ("chunks", sql.GC_CHUNKS),
                ("symbols", sql.GC_SYMBOLS),
                ("blobs", sql.GC_BLOBS),
                ("paths", sql.GC_PATHS),
                ("pathTerms", sql.GC_PATH_TERMS),
                ("logCommits", sql.GC_LOG_COMMITS),
            ):
                conn.execute(statement)
                removed[name] = conn.changes()
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")  # a file made before pix set it
        conn.execute("VACUUM")
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        report = {
            "schemaVersion": SCHEMA_VERSION,
            "db": str(target.db),
            "removed": removed,
            "bytesBefore": before,
            "bytesAfter": database_bytes(target.db),
        }
        if busy:  # a reader's snapshot holds the old pages: the rewrite waits in the WAL
            report["warnings"] = [
                "another process is reading the database, so the space is not given back "
                "yet (the rewritten file waits in its -wal); run `pix gc` again once it is done"
            ]
        return report
    finally:
        store.close()
