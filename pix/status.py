"""`pix status`: what a database holds, and whether the work tree moved on since."""

from __future__ import annotations

import contextlib
from dataclasses import replace

from pix.errors import PixError
from pix.ingest.embed import model_identity
from pix.locate import locate, open_index
from pix.schemas import json_name
from pix.snapshot import changed_files, judged_snapshot, other_tree
from pix.store import sql

SCHEMA_VERSION = 1  # schema/status-response.v1.json
NUMBERS = ("dims", "maxTokens")  # `meta` holds text; the answer gives numbers as numbers


def _model(recorded: dict[str, str | None]) -> dict:
    """The model identity recorded in `meta` (model.max_tokens -> maxTokens, "384" -> 384)."""
    out: dict = {}
    for key, value in recorded.items():
        name = json_name(key.removeprefix("model."))
        out[name] = int(value) if name in NUMBERS and value is not None else value
    return out


def status(db: str | None = None, cwd: str | None = None, tree_here: bool = True) -> dict:
    """What `pix status --json` prints and the MCP status tool returns
    (schema/status-response.v1.json). `tree_here`: False for a workspace's bare `db` entry
    (pix.locate.Target.tree_here)."""
    target = replace(locate(cwd, db), tree_here=tree_here)
    store = open_index(target, check=True)
    try:
        with store.read():
            # `--db` naming another folder's database (its tree on this machine): its work
            # tree is judged, not the folder pix was run in, as a query does (pix.snapshot).
            if (elsewhere := other_tree(store, target)) is not None:
                with contextlib.suppress(PixError):
                    target = locate(elsewhere, str(target.db))
            conn = store.conn
            snapshots = []
            for sid, kind, root, commit, branch, dirty, created, files, _skipped in conn.execute(
                sql.SNAPSHOTS
            ).fetchall():
                chunks, embedded, static = conn.execute(
                    sql.SNAPSHOT_COUNTS, {"snapshot": sid}
                ).fetchone()
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
                        "staticOnly": static,
                        "skipped": dict(conn.execute(sql.SKIPPED_BY_REASON, (sid,)).fetchall()),
                    }
                )
            blobs, source_bytes, chunks, vectors = conn.execute(sql.TOTALS).fetchone()
            # The tree a query would judge: this folder's snapshot, or the one a repository
            # copied or moved with its database brought along.
            newest_tree = judged_snapshot(store, target)
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
        "schemaVersion": SCHEMA_VERSION,
        "db": str(target.db),
        "root": str(target.root),
        "model": _model(recorded),
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
