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
tier, as in the database. In this pass a question's dense channel weighs route.READING, more
than over the whole corpus: here it mostly orders what the first pass found.

On static-only databases of the development sets this brought pix to within a few hundredths
of what it answers with every chunk embedded, above it on most (bench/README.md,
"Refinement"). It costs about a second a question on 2 cores; an engine keeps the vectors it
made (by embed key), so a server pays once per chunk. Nothing is written: the database stays
what `pix index` made it, and the answer depends only on the database and the question.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import apsw
import numpy as np

from pix.errors import PixError
from pix.ingest.embed import Embedder, quantize
from pix.retrieve.hits import Hit
from pix.retrieve.knn import matrix_of, nearest
from pix.retrieve.route import Route
from pix.retrieve.search import search
from pix.retrieve.windows import embed_query
from pix.store import content, sql

if TYPE_CHECKING:
    from pix.query import QueryEngine, QueryRequest

# What a question may have the transformer read: its best candidates without a vector, in
# rank order, until their tokens reach REFINE_TOKENS (the model's time follows tokens: about
# 1 s here), at most REFINE_TOP of them. Code chunks run ~200 tokens (40 chunks), CoSQA's small
# functions ~90 (80 chunks). Measured in bench/README.md ("Refinement").
REFINE_TOKENS = 8_000
REFINE_TOP = 100
# At most this many chunks of one file among the candidates, by query shape (any number for
# the others; a chunk that has its vector already counts too).
# A file an issue report names (its evidence channel credits every chunk of the file) filled
# the budget with its own chunks: sphinx's cpp.py, linked by a report, left c.py to the static
# tier, which put it 184th. Over the other shapes a limit of 5 cost requests' commit subjects
# 0.014 MRR@10 and changed the language sets' mean by 0.001 (bench/README.md, "forty-seventh
# session").
PER_FILE = {"issue": 5}
KEPT = 50_000  # vectors an engine keeps (384 bytes each)


class RefinedVectors:
    """An engine's transformer vectors of chunks the database holds none for, each with its
    text's token count, by embed key."""

    def __init__(self) -> None:
        self._kept: dict[int, tuple[np.ndarray, int]] = {}

    def __len__(self) -> int:
        return len(self._kept)

    def clear(self) -> None:
        self._kept.clear()

    def read(
        self, conn: apsw.Connection, rows: list[tuple], embedder: Embedder, budget: int
    ) -> tuple[list[int], np.ndarray]:
        """The chunk ids of `rows` (id, embed key, context, blob id, start, end; best first)
        whose tokens fit in `budget` (the first always does), and their int8 vectors. Which
        fit depends only on the texts, never on what was kept before; a vector is kept with
        its count once made, so an interrupted read keeps nothing half done."""
        if len(self._kept) > KEPT:
            self.clear()
        new = list({row[1]: row for row in rows if row[1] not in self._kept}.values())
        texts = content.embed_inputs(conn, [row[1:] for row in new])
        encodings = dict(zip((row[1] for row in new), embedder.encode(texts), strict=True))
        chosen, spent = [], 0
        for row in rows:
            key = row[1]
            tokens = self._kept[key][1] if key in self._kept else len(encodings[key].ids)
            if chosen and spent + tokens > budget:
                break
            chosen.append(row)
            spent += tokens
        todo = list(dict.fromkeys(row[1] for row in chosen if row[1] not in self._kept))
        if todo:
            made = quantize(embedder.embed_encoded([encodings[key] for key in todo]))
            for key, vector in zip(todo, made, strict=True):
                self._kept[key] = (vector, len(encodings[key].ids))
        return [row[0] for row in chosen], np.stack([self._kept[row[1]][0] for row in chosen])


def channel_rows(hits: list[Hit], channel: str) -> dict[int, float]:
    """chunk id -> distance of the first pass's candidates in a meaning channel (its score is
    1 - distance)."""
    out: dict[int, float] = {}
    for hit in hits:
        part = hit.channels.get(channel)
        if part is not None:
            out[hit.chunk_id] = 1.0 - part["score"]
    return out


def candidates(hits: list[Hit], top: int, per_file: int) -> list[int]:
    """The chunk ids the transformer may read, best first: each chunk once (copies of a
    file share their chunks), at most `per_file` of one path (0: any number), `top` in all."""
    taken: dict[str, int] = {}
    out: dict[int, None] = {}
    for hit in hits:
        if len(out) >= top:
            break
        if hit.chunk_id in out or (per_file and taken.get(hit.path, 0) >= per_file):
            continue
        taken[hit.path] = taken.get(hit.path, 0) + 1
        out[hit.chunk_id] = None
    return list(out)


def near_lists(
    conn: apsw.Connection, hits: list[Hit], query_vector: np.ndarray, refined: RefinedVectors,
    embedder: Embedder, depth: int, top: int = REFINE_TOP, budget: int = REFINE_TOKENS,
    per_file: int = 0,
) -> tuple[dict[str, str], int] | None:  # fmt: skip
    """The meaning channels' candidates for the second pass ({"dense", "static"}: JSON arrays
    of [chunk id, distance]) and how many chunks the transformer read for them, or None when
    every one of the best `top` candidates (at most `per_file` of a file, 0: any number) has
    its transformer vector already."""
    best = candidates(hits, top, per_file)
    if not best:
        return None
    rows = conn.execute(sql.CHUNKS_WITHOUT_VECTOR, (json.dumps(best),)).fetchall()
    if not rows:
        return None
    ids, vectors = refined.read(conn, rows, embedder, budget)
    unstored = np.zeros(len(ids), dtype=np.int64)  # in no vec0 block: the sort below orders ties
    matrix = matrix_of(np.array(ids, dtype=np.int64), vectors, unstored, unstored)
    dense = channel_rows(hits, "dense")
    dense.update(nearest(matrix, query_vector, len(ids)))
    ordered = sorted(dense.items(), key=lambda row: (row[1], row[0]))[:depth]
    gone = set(ids)
    static = [(i, d) for i, d in channel_rows(hits, "static").items() if i not in gone]
    static.sort(key=lambda row: (row[1], row[0]))
    return {"dense": json.dumps(ordered), "static": json.dumps(static)}, len(ids)


def second_pass(
    engine: QueryEngine, request: QueryRequest, route: Route, snapshot_id: int, hits: list[Hit],
    vector: np.ndarray | None, static_vector: np.ndarray | None, paths: list[str] | None,
    whole: bool, warnings: list[str],
) -> tuple[list[Hit], int]:  # fmt: skip
    """The fused hits again with the best candidates' transformer vectors in the dense
    channel, ranked by `route` (the second pass's: route.reading), and how many the transformer
    read; the first pass's hits and 0 when none lacked one. `vector`: the query's transformer
    vector, None if the first pass had none (nothing was embedded)."""
    try:
        embedder = engine.embedder()
    except PixError as exc:  # a static-only database answered without the model before
        warnings.append(f"the transformer could not read the best candidates: {exc}")
        return hits, 0
    if vector is None:
        vector = quantize(embed_query(embedder, request.query, route.shape))[0]
        if not vector.any():
            return hits, 0
    store = engine.store
    found = near_lists(
        store.conn, hits, vector, engine.refined, embedder, engine.depth, engine.refine_top,
        REFINE_TOKENS, PER_FILE.get(route.shape, 0),
    )  # fmt: skip
    if found is None:
        return hits, 0
    near, refined = found
    again = search(
        store, snapshot_id, request.query, route, vector, paths, request.fusion, request.priors,
        static_vector, whole, engine.depth, near,
    )  # fmt: skip
    return again, refined


def coverage_warning(
    chunks: int, embedded: int, static: int = 0, refined: int = 0, unknown_words: bool = False
) -> list[str]:
    """What to say while embedding is unfinished (nothing when every chunk has a transformer
    vector, or when there are no chunks: an empty repository waits for nothing). `static`:
    the chunks the static tier searches meanwhile; `refined`: the question's candidates the
    transformer read on the spot (pix/retrieve/refine.py); `unknown_words`: the static tier
    holds vectors but knows none of the question's words (an emoji), so it searches nothing."""
    if embedded >= chunks:
        return []
    share = min(max(round(100 * embedded / chunks), 1), 99) if embedded else 0
    spot = (
        f" (the transformer read {refined:,} of this question's best candidates on the spot)"
        if refined
        else ""
    )
    if static:
        said = (
            f"the transformer has embedded {share}% of chunks ({embedded:,} of {chunks:,}); "
            f"meaning search uses the static tier for the other {static:,}{spot} until "
            "`pix index` finishes embedding"
        )
    elif not embedded:
        if refined:
            reach = (
                f"covers only {refined:,} of this question's best candidates, which the "
                "transformer read on the spot,"
            )
        else:
            reach = "is off for this question" if unknown_words else "is off"
        tier = ", and the static tier knows none of this question's words" if unknown_words else ""
        said = (
            f"no chunk is embedded yet{tier}; meaning-based search {reach} until `pix index` "
            "finishes embedding"
        )
    else:
        said = (
            f"meaning-based search covers {share}% of chunks ({embedded:,} of {chunks:,} "
            f"embedded){spot}; run `pix index` to finish embedding"
        )
    return [said]
