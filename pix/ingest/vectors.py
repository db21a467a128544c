"""The transformer's vectors for a snapshot's chunks (the last phase of `pix index`).

Each distinct input runs through the model once per database: an input some chunk already has
a vector for is copied (copy_known_vectors), and pix processes sharing a database split the
rest through leases (pix/store/lease.py). Vectors are committed every EMBED_COMMIT_SECONDS,
so a killed run loses little. pix.cluster runs the same steps with the model on Ray.
"""

from __future__ import annotations

import contextlib
import time

import apsw

from pix.ingest.embed import Embedder, length_batches, quantize
from pix.progress import Progress
from pix.store import Store, content, sql
from pix.store.lease import Leases

EMBED_COMMIT_SECONDS = 2.0
# Inputs one process claims at a time (pix/store/lease.py): several batches, a few seconds of
# work, so processes sharing a database interleave without many claims.
CLAIM_INPUTS = 128
LEASE_WAIT_SECONDS = 0.5  # how often a process with nothing left to claim looks again


def embed_pending(
    store: Store,
    snapshot_id: int,
    progress: Progress | None = None,
    embedder: Embedder | None = None,
    limit: int | None = None,
) -> int:
    """Give every chunk of the snapshot a vector. Returns how many distinct inputs this
    process ran through the model. Commits every couple of seconds, so a kill loses little.
    Other pix processes on the same database share the work through leases
    (pix/store/lease.py): this one claims blocks of inputs nobody holds, shortest first, and
    once all that is left is held by others, waits for them to finish it."""
    progress = progress or Progress(enabled=False)
    conn = store.conn
    copy_known_vectors(store, snapshot_id)
    pending = conn.execute(sql.PENDING_EMBEDDINGS, {"snapshot": snapshot_id}).fetchall()
    if limit is not None:
        pending = pending[:limit]
    if not pending:
        return 0
    embedder = embedder or Embedder()
    encodings = embedder.encode(content.embed_inputs(conn, pending))
    row_of = {row[0]: i for i, row in enumerate(pending)}
    tokens = [len(e.ids) for e in encodings]
    todo = [pending[i][0] for i in length_order(tokens)]
    # The model's time follows the tokens it reads (each text runs alone, unpadded), not the
    # chunk count: inputs run shortest first, so a rate in chunks would promise far too
    # little time left.
    cost = tokens
    leases = Leases(store)
    progress.start("embedding chunks", len(pending), work=sum(cost))
    embedded = 0
    # Each is said once a run: two indexers taking turns toggled between them, 35 lines (audit).
    said: set[str] = set()
    try:
        while todo:
            claim = leases.claim(todo, CLAIM_INPUTS)
            taken = set(claim.mine) | set(claim.settled)
            todo = [key for key in todo if key not in taken]
            if claim.settled:  # embedded by another pix meanwhile
                settled = [row_of[key] for key in claim.settled]
                progress.advance(len(settled), work=sum(cost[row] for row in settled))
            if claim.mine:
                if claim.held and "sharing" not in said:
                    said.add("sharing")
                    progress.note(
                        f"another pix is embedding {claim.held} chunks; "
                        "embedding chunks the other indexer has not taken"
                    )
                rows = [row_of[key] for key in claim.mine]
                _embed_rows(store, leases, embedder, pending, encodings, rows, cost, progress)
                embedded += len(rows)
            elif claim.held:
                if "waiting" not in said:
                    said.add("waiting")
                    progress.note(f"another pix is embedding {claim.held} chunks; waiting")
                time.sleep(LEASE_WAIT_SECONDS)
    finally:
        with contextlib.suppress(apsw.Error):
            leases.release_all()  # an interrupted run leaves nothing for others to wait out
    progress.finish()
    return embedded


def copy_known_vectors(store: Store, snapshot_id: int) -> int:
    """Give the snapshot's chunks lacking a vector the one an identical input already has in
    this database (one transaction). Returns how many chunks got one."""
    conn = store.conn
    with store.write():
        known = conn.execute(sql.KNOWN_VECTORS_FOR_PENDING, {"snapshot": snapshot_id}).fetchall()
        conn.executemany(sql.INSERT_VECTOR, known)
        conn.executemany(sql.DELETE_STATIC_VECTOR, ((chunk_id,) for chunk_id, _ in known))
    return len(known)


def write_vectors(store: Store, leases: Leases, done: list[tuple[int, bytes]]) -> None:
    """One transaction: each (embed_key, int8 vector) to every chunk of that input still
    lacking one (replacing its static vector), and the release of those inputs' leases."""
    conn = store.conn
    with store.write():
        for key, vector in done:
            for (chunk_id,) in conn.execute(sql.CHUNKS_FOR_EMBED_KEY, (key,)).fetchall():
                conn.execute(sql.INSERT_VECTOR, (chunk_id, vector))
                conn.execute(sql.DELETE_STATIC_VECTOR, (chunk_id,))
        leases.settle(conn, [key for key, _ in done])


def length_order(token_counts: list[int]) -> list[int]:
    """Indices shortest first, the order inputs are claimed and run in."""
    return sorted(range(len(token_counts)), key=lambda i: (token_counts[i], i))


def _embed_rows(
    store: Store,
    leases: Leases,
    embedder: Embedder,
    pending: list[tuple],
    encodings: list,
    rows: list[int],
    cost: list[int],
    progress: Progress,
) -> None:
    """Embed the claimed `rows` of `pending`, committing their vectors (and releasing their
    leases) every EMBED_COMMIT_SECONDS and at the end."""
    done: list[tuple[int, bytes]] = []
    last_commit = time.monotonic()

    def commit() -> None:
        write_vectors(store, leases, done)
        done.clear()

    for batch in length_batches([len(encodings[row].ids) for row in rows]):
        chosen = [rows[i] for i in batch]
        vectors = quantize(embedder.embed_encoded([encodings[row] for row in chosen]))
        done.extend((pending[row][0], vectors[k].tobytes()) for k, row in enumerate(chosen))
        progress.advance(len(chosen), work=sum(cost[row] for row in chosen))
        if time.monotonic() - last_commit >= EMBED_COMMIT_SECONDS:
            commit()
            last_commit = time.monotonic()
    if done:
        commit()
