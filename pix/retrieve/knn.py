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

When the database holds more than the question's snapshot (older snapshots, or the blobs a
file had before its last edit, until `pix gc`), vec0 still reads every stored vector to keep
the snapshot's (110 ms a question on a database of 41 sphinx snapshots, 17,600 of its 248,000
vectors in scope). A warm engine then holds the snapshot's own vectors, read by their keys, and
a path filter picks its rows from them; the rows are again the scan's, scoped as the scan is.

A one-shot `pix query` never loads a matrix (reading the vectors costs 3 us a row, more than a
scan): an engine loads them once it has scanned WARM_AFTER times for one state of the
database, and again after the database changed (PRAGMA data_version moves when another
connection commits; `QueryEngine.reopen` drops them).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import apsw
import numpy as np

from pix.store import search_sql

TABLES = {
    "dense": (search_sql.DENSE_VECTORS, search_sql.DENSE_STORED),
    "static": (search_sql.STATIC_VECTORS, search_sql.STATIC_STORED),
}
# The same for some chunks' rows (a JSON array of their ids).
SOME = {
    "dense": (search_sql.DENSE_VECTORS_OF, search_sql.DENSE_STORED_OF),
    "static": (search_sql.STATIC_VECTORS_OF, search_sql.STATIC_STORED_OF),
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


def load(conn, statements: tuple[str, str], ids: list[int] | None = None) -> Matrix | None:
    """A vector table as a matrix (`statements`: its rows by chunk id, and where each is
    stored by chunk id; with `ids`, SOME's statements for those chunks' rows only); None if
    the two disagree (not the vec0 layout this knows)."""
    vectors_of, stored = statements
    bound = () if ids is None else (json.dumps(ids),)
    rows = conn.execute(vectors_of, bound).fetchall()
    places = np.array(conn.execute(stored, bound).fetchall(), dtype=np.int64).reshape(-1, 3)
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


def restrict(matrix: Matrix, ids: np.ndarray) -> Matrix:
    """The matrix's rows of the chunks `ids` names (a path filter's scope)."""
    keep = np.isin(matrix.ids, ids)
    return Matrix(
        matrix.ids[keep], matrix.vectors[keep], matrix.magnitude[keep], matrix.block[keep],
        matrix.offset[keep],
    )  # fmt: skip


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


@dataclass(frozen=True)
class Scope:
    """The chunks a question's candidates may be. `snapshot`: None when its snapshot holds the
    database's every vector (the whole table is kept), else the snapshot's id, whose own rows
    are kept (`chunk_ids` lists them); `within`: a path filter's chunk ids, or None."""

    snapshot: int | None = None
    chunk_ids: Callable[[], np.ndarray] | None = None
    within: Callable[[], np.ndarray] | None = None


WHOLE = Scope()


def scope_chunk_ids(conn, snapshot_id: int, paths: list[str] | None) -> np.ndarray:
    """The chunk ids in a query's scope (the snapshot's, at `paths`; None: every path)."""
    scope = {"snapshot": snapshot_id, "paths": None if paths is None else json.dumps(paths)}
    rows = conn.execute(search_sql.SCOPE_CHUNK_IDS, scope).fetchall()
    return np.array([row[0] for row in rows], dtype=np.int64)


class WarmVectors:
    """An engine's matrices: a channel's table (or one snapshot's part of it) is loaded once
    the engine has scanned WARM_AFTER times for one state of the database (only the tables
    its questions search); one snapshot's part at a time, besides the whole table."""

    def __init__(self) -> None:
        self._version: object = None
        self._scans: dict[int | None, int] = {}  # scope.snapshot -> scans for this version
        self._matrices: dict[tuple[str, int | None], Matrix | None] = {}

    @property
    def loaded(self) -> bool:
        """Whether a matrix of the database's current state is in memory and in use."""
        return any(m is not None for m in self._matrices.values())

    def drop(self) -> None:
        self._version, self._scans, self._matrices = None, {}, {}

    def candidates(
        self, conn, version: object, queries: dict[str, np.ndarray | None], k: int,
        scope: Scope = WHOLE,
    ) -> dict[str, str] | None:  # fmt: skip
        """channel -> JSON array of its k nearest [chunk id, distance] in `scope` (a channel
        without a query vector: none), or None while the engine is not warm: then vec0 scans.
        `version`: what identifies the database's state (read inside the caller's read)."""
        if version != self._version:
            self._version, self._scans, self._matrices = version, {}, {}
        # counted by scope: a run of questions each at another snapshot would load a part
        # for every question, at the cost of a scan each
        scans = self._scans.get(scope.snapshot, 0)
        if scans < WARM_AFTER:
            self._scans[scope.snapshot] = scans + 1
            return None
        within = scope.within() if scope.within is not None else None
        out = {}
        for name, vector in queries.items():
            if vector is None:
                out[name] = "[]"
                continue
            matrix = self._matrix(conn, name, scope)
            if matrix is None:  # a layout this does not know: the scan answers
                return None
            if within is not None:
                matrix = restrict(matrix, within)
            out[name] = json.dumps(nearest(matrix, vector, k))
        return out

    def _matrix(self, conn, name: str, scope: Scope) -> Matrix | None:
        key = (name, scope.snapshot)
        if key not in self._matrices:
            if scope.snapshot is None:
                self._matrices[key] = _load_or_none(conn, TABLES[name])
            else:  # another snapshot's rows give way: a server asks at one snapshot
                for other in [
                    kept for kept in self._matrices if kept[0] == name and kept[1] is not None
                ]:
                    del self._matrices[other]
                ids = scope.chunk_ids() if scope.chunk_ids is not None else np.array([])
                self._matrices[key] = _load_or_none(conn, SOME[name], ids.tolist())
        return self._matrices[key]


def _load_or_none(conn, statements: tuple[str, str], ids: list[int] | None = None) -> Matrix | None:
    """load, or None if vec0's tables are not what it reads (another sqlite-vec's layout):
    kept, so the scan answers until the database changes, without trying again."""
    try:
        return load(conn, statements, ids)
    except (apsw.Error, TypeError, ValueError):
        return None
