"""`pix status`: what a database holds, and whether the work tree moved on since."""

from __future__ import annotations

import contextlib
from dataclasses import replace

from pix.errors import NotIndexedError, PixError
from pix.index import Target, locate, open_index
from pix.ingest.embed import model_identity
from pix.schemas import json_name
from pix.snapshot import (
    Snapshot,
    changed_files,
    judges_this_tree,
    other_tree,
    select_snapshot,
)
from pix.store import Store, sql

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
    (pix.index.Target.tree_here)."""
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
            newest_tree: Snapshot | None = None
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
                if kind != "commit" and root == str(target.root):
                    newest_tree = Snapshot(
                        sid, kind, root, commit, branch, bool(dirty), created, None
                    )
            blobs, source_bytes, chunks, vectors = conn.execute(sql.TOTALS).fetchone()
            if newest_tree is None:  # a database copied or moved with its repository
                newest_tree = _copied_tree(store, target)
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


def _copied_tree(store: Store, target: Target) -> Snapshot | None:
    """The snapshot a query reads here when none is of this folder: the newest of another
    work tree, when the database is this folder's own .pix.db, copied or moved with it
    (pix.snapshot.judges_this_tree)."""
    try:
        snapshot = select_snapshot(store, target, None)
    except NotIndexedError:
        return None
    return snapshot if judges_this_tree(snapshot, target) else None
