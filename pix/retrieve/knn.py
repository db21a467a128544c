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
the snapshot's (about 110 ms a channel on a database of 41 sphinx snapshots, 17,600 of its
248,000 vectors in scope). A warm engine then chooses among the snapshot's rows only
(WarmVectors), and a path filter narrows them; the rows are again the scan's, scoped as the
scan is.

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
# The same for some chunks' rows (a JSON array of their ids); and how many rows a table has,
# and how many of them are those chunks'.
SOME = {
    "dense": (search_sql.DENSE_VECTORS_OF, search_sql.DENSE_STORED_OF),
    "static": (search_sql.STATIC_VECTORS_OF, search_sql.STATIC_STORED_OF),
}
ROWS = {"dense": search_sql.DENSE_ROWS, "static": search_sql.STATIC_ROWS}


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


def nearest(
    matrix: Matrix, query: np.ndarray, k: int, keep: np.ndarray | None = None
) -> list[tuple[int, float]]:
    """(chunk id, distance) of the k chunks nearest `query` (int8), in vec0's order: by
    distance; equal distances by block, and within a block the later offset first (vec0
    ranks each block on its own and keeps the earlier blocks' rows on a tie). `keep`: which
    rows may be chosen (a scope's, as a boolean mask), None: every row."""
    rows = np.arange(len(matrix.ids)) if keep is None else np.flatnonzero(keep)
    q = query.astype(np.float32)
    if len(rows) == 0 or k <= 0 or not q.any():
        return []
    # einsum, not BLAS: as fast for one vector, and OpenBLAS's thread pool, entered from two
    # shards' threads at once, serialised them (a question across 20 took 558 ms, not 306).
    # Every row, not the kept ones: selecting them first would copy the vectors each time.
    dots = np.einsum("ij,j->i", matrix.vectors, q).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        distance = (1.0 - dots / (matrix.magnitude * np.sqrt(float(q @ q)))).astype(np.float32)
    if k < len(rows):
        # Every chunk at the k-th distance may belong: take them all, then order exactly.
        kth = np.partition(distance[rows], k - 1)[k - 1]
        pick = rows[distance[rows] <= kth]
    else:
        pick = rows
    order = pick[np.lexsort((-matrix.offset[pick], matrix.block[pick], distance[pick]))[:k]]
    return list(zip(matrix.ids[order].tolist(), distance[order].tolist(), strict=True))


# Questions an engine answers with the scan about one state of the database before it loads
# the matrices. Loading costs as much as 5-15 scans (bench/knn_bench.py), so scanning until
# the scans have cost about what a load does keeps any run of questions within ~2.5x of the
# best choice made knowing the future (the ski-rental rule); a database being embedded
# commits every few seconds, and each commit starts the count again.
WARM_AFTER = 8
# Snapshots' parts an engine keeps a channel, the least recently asked given up first: a server
# asked at HEAD and at the work tree in turn keeps both warm.
PARTS_KEPT = 2


@dataclass(frozen=True)
class Scope:
    """The chunks a question's candidates may be: the snapshot `snapshot_id`'s, at `paths`
    (None: every path). `whole`: the snapshot holds the database's every vector, so a whole
    table is its part."""

    snapshot_id: int | None = None
    whole: bool = True
    paths: list[str] | None = None

    @property
    def part(self) -> int | None:
        """The snapshot whose own rows are kept; None: a whole table's."""
        return None if self.whole else self.snapshot_id


WHOLE = Scope()


def scope_chunk_ids(conn, snapshot_id: int, paths: list[str] | None) -> np.ndarray:
    """The chunk ids in a query's scope (the snapshot's, at `paths`; None: every path)."""
    scope = {"snapshot": snapshot_id, "paths": None if paths is None else json.dumps(paths)}
    rows = conn.execute(search_sql.SCOPE_CHUNK_IDS, scope).fetchall()
    return np.array([row[0] for row in rows], dtype=np.int64)


class WarmVectors:
    """An engine's matrices: a channel's table is loaded once the engine has scanned WARM_AFTER
    times for one state of the database and scope (only the tables its questions search). A
    snapshot that is not the whole database has its part: its chunks' rows, as a mask over the
    whole table when they are at least half of its rows (a few files' old blobs beside it: the
    table is shared with every other snapshot's mask, and a question reads at most twice the
    rows it keeps), else its own vectors read by key (older snapshots beside it: a row read by key
    costs about what a row of a whole load does, and the part holds only its own). PARTS_KEPT
    snapshots' parts a channel: a further snapshot's part takes the place of the least
    recently asked, and that snapshot scans WARM_AFTER times again before it is loaded again."""

    def __init__(self) -> None:
        self._version: object = None
        self._scans: dict[int | None, int] = {}  # scope.part -> scans for this version
        self._tables: dict[str, Matrix | None] = {}
        # (channel, scope.part) -> the matrix its candidates come from and its rows there
        self._parts: dict[tuple[str, int], tuple[Matrix, np.ndarray | None] | None] = {}
        self.answered = 0  # questions the matrices answered (not vec0): for benches and tests

    @property
    def loaded(self) -> bool:
        """Whether a matrix of the database's current state is in memory and in use."""
        return any(m is not None for m in [*self._tables.values(), *self._parts.values()])

    def drop(self) -> None:
        self._version, self._scans, self._tables, self._parts = None, {}, {}, {}

    def candidates(
        self, conn, version: object, queries: dict[str, np.ndarray | None], k: int,
        scope: Scope = WHOLE,
    ) -> dict[str, str] | None:  # fmt: skip
        """channel -> JSON array of its k nearest [chunk id, distance] in `scope` (a channel
        without a query vector: none), or None while the engine is not warm: then vec0 scans.
        `version`: what identifies the database's state (read inside the caller's read)."""
        if version != self._version:
            self.drop()
            self._version = version
        # counted by scope: a run of questions each at another snapshot would load a part
        # for every question (about half a scan's time for a part read by key, a whole load
        # for the mask's table) and use it once
        scans = self._scans.get(scope.part, 0)
        if scans < WARM_AFTER:
            self._scans[scope.part] = scans + 1
            return None
        within = None
        if scope.paths is not None:  # a path filter's chunks, once for every channel
            within = scope_chunk_ids(conn, scope.snapshot_id, scope.paths)
        out = {}
        for name, vector in queries.items():
            if vector is None:
                out[name] = "[]"
                continue
            found = self._rows(conn, name, scope)
            if found is None:  # a layout this does not know: the scan answers
                return None
            matrix, keep = found
            if within is not None:
                inside = np.isin(matrix.ids, within)
                keep = inside if keep is None else keep & inside
            out[name] = json.dumps(nearest(matrix, vector, k, keep))
        self.answered += 1
        return out

    def _table(self, conn, name: str) -> Matrix | None:
        if name not in self._tables:
            self._tables[name] = _load_or_none(conn, TABLES[name])
        return self._tables[name]

    def _rows(self, conn, name: str, scope: Scope) -> tuple[Matrix, np.ndarray | None] | None:
        """The matrix a scope's candidates are chosen from, and its rows there (None: all)."""
        if scope.part is None:
            table = self._table(conn, name)
            return None if table is None else (table, None)
        key = (name, scope.part)
        if key in self._parts:  # the dict's order is the order of use: this one is newest
            self._parts[key] = self._parts.pop(key)
        else:
            kept = [part for part in self._parts if part[0] == name]
            for other in kept[: max(0, len(kept) - PARTS_KEPT + 1)]:
                del self._parts[other]  # and that snapshot scans again before it reloads
                self._scans[other[1]] = 0
            self._parts[key] = self._part(conn, name, scope)
        return self._parts[key]

    def _part(self, conn, name: str, scope: Scope) -> tuple[Matrix, np.ndarray | None] | None:
        ids = scope_chunk_ids(conn, scope.snapshot_id, None)
        try:  # the scope's rows, not its chunks: a chunk may have no vector in this channel
            stored, inside = conn.execute(ROWS[name], (json.dumps(ids.tolist()),)).fetchone()
        except apsw.Error:
            return None
        if 2 * inside >= stored:
            table = self._table(conn, name)
            return None if table is None else (table, np.isin(table.ids, ids))
        part = _load_or_none(conn, SOME[name], ids.tolist())
        return None if part is None else (part, None)


def _load_or_none(conn, statements: tuple[str, str], ids: list[int] | None = None) -> Matrix | None:
    """load, or None if vec0's tables are not what it reads (another sqlite-vec's layout):
    kept, so the scan answers until the database changes, without trying again."""
    try:
        return load(conn, statements, ids)
    except (apsw.Error, TypeError, ValueError):
        return None
