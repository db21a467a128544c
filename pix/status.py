"""`pix status`: what a database holds, and whether the work tree moved on since."""

from __future__ import annotations

from pix.index import locate
from pix.ingest.embed import model_identity
from pix.snapshot import Snapshot, changed_files
from pix.store import open_store, sql


def status(db: str | None = None, cwd: str | None = None) -> dict:
    target = locate(cwd, db)
    store = open_store(target.db, create=False)
    try:
        with store.read():
            conn = store.conn
            snapshots = []
            newest_tree: Snapshot | None = None
            for sid, kind, root, commit, branch, dirty, created, files, _skipped in conn.execute(
                sql.SNAPSHOTS
            ).fetchall():
                chunks, embedded = conn.execute(sql.SNAPSHOT_COUNTS, {"snapshot": sid}).fetchone()
                snapshots.append(
                    {
                        "id": sid,
                        "kind": kind,
                        "root": root,
                        "commit": commit,
                        "branch": branch,
                        "dirty": bool(dirty),
                        "indexedAt": created,
                        "files": files,
                        "chunks": chunks,
                        "embedded": embedded,
                        "embeddedShare": round(embedded / chunks, 4) if chunks else 1.0,
                        "skipped": dict(conn.execute(sql.SKIPPED_BY_REASON, (sid,)).fetchall()),
                    }
                )
                if kind != "commit" and root == str(target.root):
                    newest_tree = Snapshot(
                        sid, kind, root, commit, branch, bool(dirty), created, None
                    )
            blobs, source_bytes, chunks, vectors = conn.execute(sql.TOTALS).fetchone()
            changed = changed_files(store, target, newest_tree) if newest_tree else []
            recorded = {key: store.meta(key) for key in model_identity()}
    finally:
        store.close()
    size = sum(
        p.stat().st_size
        for p in (target.db, target.db.with_name(target.db.name + "-wal"))
        if p.exists()
    )
    return {
        "db": str(target.db),
        "root": str(target.root),
        "model": {key.removeprefix("model."): value for key, value in recorded.items()},
        "snapshots": snapshots,
        "blobs": blobs,
        "sourceBytes": source_bytes,
        "chunks": chunks,
        "vectors": vectors,
        "databaseBytes": size,
        "workTree": {
            "indexed": newest_tree is not None,
            "changed": len(changed),
            "changedPaths": changed[:20],
        },
    }
