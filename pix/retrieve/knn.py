"""Nearest vectors for a warm engine: the meaning channels' candidates found in memory.

sqlite-vec's vec0 finds a channel's nearest chunks by scanning every stored vector, 3 us a
vector for int8 cosine (12 ms on pylint's 11,000 chunks, 45% of a question across 20
repositories). An engine that answers again (a server, a workspace's shards) keeps each vector
table as one numpy matrix instead and finds the same chunks, at the same distances, in a
fraction of that (bench/knn_bench.py); the fused statement reads them from a JSON parameter.

The rows are the scan's to the bit. int8 dot products and magnitudes are integers that float32
holds exactly (|sum| < 2^24 for 384 dimensions), so they are summed in any order without error;
the distance is then taken in double precision and rounded to float32, as sqlite-vec computes
it (1 - dot / (sqrt(|a|^2) sqrt(|b|^2))). Equal distances (chunks of the same text) are
ordered as the scan orders them, by where vec0 stores each vector (its _rowids table: block,
offset), which decides which of several equal chunks take the k-th place. A float32 distance
goes through JSON exactly (Python writes the shortest text that reads back as the same
double, and SQLite reads it back so: 1.1 million checked). tests/test_knn.py checks rows,
order and distances against the scan, ties, deletions and re-insertions included; a layout
it does not know (the two statements disagree) leaves the scan in charge.

A one-shot `pix query` never loads a matrix (reading the vectors costs 3 us a row, more than a
scan): an engine loads them once it has scanned WARM_AFTER times for one state of the
database, and again after the database changed (PRAGMA data_version moves when another
connection commits; `QueryEngine.reopen` drops them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import apsw
import numpy as np

from pix.store import search_sql

TABLES = {
    "dense": (search_sql.DENSE_VECTORS, search_sql.DENSE_STORED),
    "static": (search_sql.STATIC_VECTORS, search_sql.STATIC_STORED),
}


@dataclass(frozen=True)
class Matrix:
    """One vector table in memory: chunk ids, vectors, magnitudes, and where vec0 stores each
    (block, offset in block)."""

    ids: np.ndarray  # int64, n
    vectors: np.ndarray  # float32, n x dims (the int8 values, exact)
    magnitude: np.ndarray  # float64, n: sqrt(|v|^2)
    block: np.ndarray  # int64, n
    offset: np.ndarray  # int64, n


def load(conn, statements: tuple[str, str]) -> Matrix | None:
    """A vector table as a matrix (`statements`: its rows by chunk id, and where each is
    stored by chunk id); None if the two disagree (not the vec0 layout this knows)."""
    vectors_of, stored = statements
    rows = conn.execute(vectors_of).fetchall()
    places = np.array(conn.execute(stored).fetchall(), dtype=np.int64).reshape(-1, 3)
    ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
    if not np.array_equal(ids, places[:, 0]):
        return None
    dims = len(rows[0][1]) if rows else 0
    raw = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.int8)
    return matrix_of(ids, raw.reshape(len(rows), dims), places[:, 1], places[:, 2])


def matrix_of(
    ids: np.ndarray, vectors: np.ndarray, block: np.ndarray, offset: np.ndarray
) -> Matrix:
    """A Matrix of int8 vectors (n x dims) and where each is stored."""
    exact = vectors.astype(np.float32)
    magnitude = np.sqrt(np.einsum("ij,ij->i", exact, exact, dtype=np.float64))
    return Matrix(np.asarray(ids, dtype=np.int64), exact, magnitude, block, offset)


def nearest(matrix: Matrix, query: np.ndarray, k: int) -> list[tuple[int, float]]:
    """(chunk id, distance) of the k chunks nearest `query` (int8), in vec0's order: by
    distance; equal distances by block, and within a block the later offset first (vec0
    ranks each block on its own and keeps the earlier blocks' rows on a tie)."""
    n = len(matrix.ids)
    q = query.astype(np.float32)
    if n == 0 or k <= 0 or not q.any():
        return []
    # einsum, not BLAS: as fast for one vector, and OpenBLAS's thread pool, entered from two
    # shards' threads at once, serialised them (a question across 20 took 558 ms, not 306).
    dots = np.einsum("ij,j->i", matrix.vectors, q).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        distance = (1.0 - dots / (matrix.magnitude * np.sqrt(float(q @ q)))).astype(np.float32)
    if k < n:
        # Every chunk at the k-th distance may belong: take them all, then order exactly.
        kth = np.partition(distance, k - 1)[k - 1]
        pick = np.flatnonzero(distance <= kth)
    else:
        pick = np.arange(n)
    order = pick[np.lexsort((-matrix.offset[pick], matrix.block[pick], distance[pick]))[:k]]
    return list(zip(matrix.ids[order].tolist(), distance[order].tolist(), strict=True))


# Questions an engine answers with the scan about one state of the database before it loads
# the matrices. Loading costs as much as 5-15 scans (bench/knn_bench.py), so scanning until
# the scans have cost about what a load does keeps any run of questions within ~2.5x of the
# best choice made knowing the future (the ski-rental rule); a database being embedded
# commits every few seconds, and each commit starts the count again.
WARM_AFTER = 8


class WarmVectors:
    """An engine's matrices: a channel's table is loaded once the engine has scanned WARM_AFTER
    times for one state of the database (only the tables its questions search)."""

    def __init__(self) -> None:
        self._version: object = None
        self._scans = 0
        self._matrices: dict[str, Matrix | None] = {}

    @property
    def loaded(self) -> bool:
        """Whether a matrix of the database's current state is in memory and in use."""
        return any(m is not None for m in self._matrices.values())

    def drop(self) -> None:
        self._version, self._scans, self._matrices = None, 0, {}

    def candidates(
        self, conn, version: object, queries: dict[str, np.ndarray | None], k: int
    ) -> dict[str, str] | None:
        """channel -> JSON array of its k nearest [chunk id, distance] (a channel without a
        query vector: none), or None while the engine is not warm: then vec0 scans.
        `version`: what identifies the database's state (read inside the caller's read)."""
        if version != self._version:
            self._version, self._scans, self._matrices = version, 0, {}
        if self._scans < WARM_AFTER:
            self._scans += 1
            return None
        out = {}
        for name, vector in queries.items():
            if vector is None:
                out[name] = "[]"
                continue
            if name not in self._matrices:
                self._matrices[name] = _load_or_none(conn, TABLES[name])
            matrix = self._matrices[name]
            if matrix is None:  # a layout this does not know: the scan answers
                return None
            out[name] = json.dumps(nearest(matrix, vector, k))
        return out


def _load_or_none(conn, statements: tuple[str, str]) -> Matrix | None:
    """load, or None if vec0's tables are not what it reads (another sqlite-vec's layout):
    kept, so the scan answers until the database changes, without trying again."""
    try:
        return load(conn, statements)
    except (apsw.Error, TypeError, ValueError):
        return None
