"""The static tier: every chunk's token-table vector, made in the keyword phase of `pix index`.

Static vectors are cheap (a weighted mean of token rows, about the cost of tokenising), so they
are made for every chunk that has no transformer vector yet, and dropped whenever the database
was filled from another token table (models/manifest.json `static`).
"""

from __future__ import annotations

import json

from pix.ingest.embed import quantize
from pix.ingest.static import StaticEmbedder, static_identity
from pix.progress import Progress
from pix.store import Store, content, sql

STATIC_BATCH = 2048  # chunks per static transaction: a few hundred ms of work


def forget_other_static_table(store: Store) -> bool:
    """Inside the caller's write transaction: static vectors made with another token table are
    dropped (they are cheap to make again; embed_static remakes them) and the current table is
    recorded. True if any were."""
    statics = static_identity()
    if all(store.meta(key) == value for key, value in statics.items()):
        return False
    store.conn.execute(sql.DELETE_ALL_STATIC_VECTORS)
    for key, value in statics.items():
        store.set_meta(key, value)
    return True


def embed_static(store: Store, snapshot_id: int, progress: Progress | None = None) -> int:
    """Give every chunk of the snapshot that has no vector a static one (the token table's
    weighted mean: about as cheap as tokenising), so meaning search works before the
    transformer has run. Returns how many chunks got one; one transaction per batch."""
    progress = progress or Progress(enabled=False)
    conn = store.conn
    pending = conn.execute(sql.STATIC_PENDING, {"snapshot": snapshot_id}).fetchall()
    if not pending:
        return 0
    static = StaticEmbedder()
    progress.start("static vectors", len(pending))
    for first in range(0, len(pending), STATIC_BATCH):
        rows = pending[first : first + STATIC_BATCH]
        vectors = quantize(static.embed_batch(content.embed_inputs(conn, rows)))
        ids = json.dumps([row[0] for row in rows])
        with store.write():
            # Another pix may have been here meanwhile (static vectors are cheap: no lease).
            have = {i for (i,) in conn.execute(sql.HAVE_A_VECTOR, (ids,))}
            conn.executemany(
                sql.INSERT_STATIC_VECTOR,
                (
                    (row[0], v.tobytes())
                    for row, v in zip(rows, vectors, strict=True)
                    if v.any() and row[0] not in have  # no tokens, no direction: no vector
                ),
            )
        progress.advance(len(rows))
    progress.finish()
    return len(pending)
