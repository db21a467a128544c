"""The transformer's reading of a query's best candidates, before `pix index` has reached them.

Until the transformer phase has embedded every chunk, the chunks it has not reached are
searched by meaning through the static tier only, which ranks a good deal worse (issue 12:
0.18 nDCG@10 below the transformer on CoSQA's questions). A question needs the transformer's
view of only the few chunks it might be answered by, so after the first fused pass its best
candidates without a transformer vector, up to REFINE_TOKENS tokens of them, are embedded on
the spot (each text alone, as `pix index` embeds it, so the vectors are the ones it will
store) and the statement runs again with them in the dense channel, beside the chunks that
have their vectors already, at distances computed as vec0 computes them
(pix/retrieve/knn.py). A refined chunk leaves the static channel: a chunk is searched by one
tier, as in the database.

On static-only databases of the development sets this brought pix to within a few hundredths
of what it answers with every chunk embedded, above it on most (bench/README.md,
"Refinement"). It costs about a second a question on 2 cores; an engine keeps the vectors it
made (by embed key), so a server pays once per chunk. Nothing is written: the database stays
what `pix index` made it, and the answer depends only on the database and the question.
"""

from __future__ import annotations

import json

import numpy as np

from pix.ingest.embed import quantize
from pix.retrieve.evidence import embed_query
from pix.retrieve.knn import Matrix, nearest
from pix.retrieve.search import search
from pix.store import content, sql

# What a question may have the transformer read: its best candidates without a vector, in
# rank order, until their tokens reach REFINE_TOKENS (the model's time follows tokens: about
# 1 s here), at most REFINE_TOP of them. Code chunks run ~200 tokens (40 chunks), CoSQA's small
# functions ~90 (80 chunks). Measured in bench/README.md ("Refinement").
REFINE_TOKENS = 8_000
REFINE_TOP = 100
KEPT = 50_000  # vectors an engine keeps (384 bytes each)


class RefinedVectors:
    """An engine's transformer vectors of chunks the database holds none for, and their
    token counts, by embed key."""

    def __init__(self) -> None:
        self._vectors: dict[int, np.ndarray] = {}
        self._tokens: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._vectors)

    def clear(self) -> None:
        self._vectors.clear()
        self._tokens.clear()

    def read(self, conn, rows: list[tuple], embedder, budget: int) -> tuple[list[int], np.ndarray]:
        """The chunk ids of `rows` (id, embed key, context, blob id, start, end; best first)
        whose tokens fit in `budget` (the first always does), and their int8 vectors. Which
        fit depends only on the texts, never on what was kept before."""
        if len(self._vectors) > KEPT:
            self.clear()
        new = [row for row in dict((row[1], row) for row in rows).values()]
        new = [row for row in new if row[1] not in self._tokens]
        encodings = dict(
            zip(
                (row[1] for row in new),
                embedder.encode(content.embed_inputs(conn, [row[1:] for row in new])),
                strict=True,
            )
        )
        self._tokens.update((key, len(e.ids)) for key, e in encodings.items())
        chosen, spent = [], 0
        for row in rows:
            tokens = self._tokens[row[1]]
            if chosen and spent + tokens > budget:
                break
            chosen.append(row)
            spent += tokens
        todo = list(dict.fromkeys(row[1] for row in chosen if row[1] not in self._vectors))
        if todo:
            made = quantize(embedder.embed_encoded([encodings[key] for key in todo]))
            self._vectors.update(zip(todo, made, strict=True))
        return [row[0] for row in chosen], np.stack([self._vectors[row[1]] for row in chosen])


def channel_rows(hits, channel: str) -> dict[int, float]:
    """chunk id -> distance of the first pass's candidates in a meaning channel (its score is
    1 - distance)."""
    out: dict[int, float] = {}
    for hit in hits:
        part = hit.channels.get(channel)
        if part is not None:
            out[hit.chunk_id] = 1.0 - part["score"]
    return out


def near_lists(
    conn, hits, query_vector: np.ndarray, refined: RefinedVectors, embedder, depth: int,
    top: int = REFINE_TOP, budget: int = REFINE_TOKENS,
) -> tuple[dict[str, str], int] | None:  # fmt: skip
    """The meaning channels' candidates for the second pass ({"dense", "static"}: JSON arrays
    of [chunk id, distance]) and how many chunks the transformer read for them, or None when
    every one of the best `top` candidates has its transformer vector already."""
    best = list(dict.fromkeys(hit.chunk_id for hit in hits))[:top]
    if not best:
        return None
    place = {chunk_id: i for i, chunk_id in enumerate(best)}
    rows = conn.execute(sql.CHUNKS_WITHOUT_VECTOR, (json.dumps(best),)).fetchall()
    if not rows:
        return None
    rows.sort(key=lambda row: place[row[0]])
    ids, vectors = refined.read(conn, rows, embedder, budget)
    as_float = vectors.astype(np.float32)
    matrix = Matrix(
        ids=np.array(ids, dtype=np.int64),
        vectors=as_float,
        magnitude=np.sqrt(np.einsum("ij,ij->i", as_float, as_float, dtype=np.float64)),
        block=np.zeros(len(ids), dtype=np.int64),
        offset=np.zeros(len(ids), dtype=np.int64),
    )
    dense = channel_rows(hits, "dense")
    dense.update(nearest(matrix, query_vector, len(ids)))
    ordered = sorted(dense.items(), key=lambda row: (row[1], row[0]))[:depth]
    gone = set(ids)
    static = [(i, d) for i, d in channel_rows(hits, "static").items() if i not in gone]
    static.sort(key=lambda row: (row[1], row[0]))
    return {"dense": json.dumps(ordered), "static": json.dumps(static)}, len(ids)


def second_pass(
    engine, request, route, snapshot_id: int, hits, vector, static_vector, paths, whole: bool
):
    """The fused hits again with the best candidates' transformer vectors in the dense
    channel, and how many the transformer read; the first pass's hits and 0 when none lacked
    one. `vector`: the query's transformer vector, if the first pass had it."""
    if vector is None:  # nothing embedded yet: the first pass had no transformer query
        vector = quantize(embed_query(engine.embedder(), request.query, route.shape))[0]
        if not vector.any():
            return hits, 0
    store = engine.store
    found = near_lists(
        store.conn, hits, vector, engine.refined, engine.embedder(), engine.depth,
        engine.refine_top, REFINE_TOKENS,
    )  # fmt: skip
    if found is None:
        return hits, 0
    near, refined = found
    again = search(
        store, snapshot_id, request.query, route, vector, paths, request.fusion, request.priors,
        static_vector, whole, engine.depth, near,
    )  # fmt: skip
    return again, refined
