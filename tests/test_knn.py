"""A warm engine's nearest vectors (pix/retrieve/knn.py): chosen in numpy from the vector
tables held in memory, they must be exactly the rows, in exactly the order, that sqlite-vec's
scan returns (ties, deleted and re-inserted vectors included), and a warm engine must answer
byte for byte as a cold one, before and after the database changes under it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest

from pix.index import index_repository
from pix.query import QueryEngine, QueryRequest
from pix.retrieve import knn
from pix.store import search_sql, sql
from pix.store.db import open_store
from tests.conftest import commit, git, new_repo, where, write
from tests.test_query import FILES, QUERIES

SCAN = {"dense": search_sql.DENSE_SCAN, "static": search_sql.STATIC_SCAN}
GIVEN = search_sql.NEAR_FROM_JSON
# The scan of the chunks in a scope (a JSON array of ids), as the scoped statement runs it.
SCOPED_SCAN = {
    name: scan.replace("AND k = ?", "AND k = ? AND chunk_id IN (SELECT value FROM json_each(?))")
    for name, scan in SCAN.items()
}
INSERT = {"dense": sql.INSERT_VECTOR, "static": sql.INSERT_STATIC_VECTOR}
DELETE = {
    "dense": "DELETE FROM chunk_vec WHERE chunk_id = ?",
    "static": "DELETE FROM chunk_vec_static WHERE chunk_id = ?",
}
DIMS = {"dense": 384, "static": 256}


@contextmanager
def stored(tmp_path, channel: str, seed: int) -> Iterator[tuple]:
    """A read of 610 stored vectors: the connection, the channel's whole table as knn loads it,
    the generator and the 9 vectors they are drawn from. Few distinct vectors, so that most
    distances tie: which of equal chunks make the k-th place depends on where vec0 stores each
    (blocks of 128 in pix's schema). 700 rows of scattered ids, 150 deleted (holes in the
    blocks), then 60 more that fill holes again, so that storage order is not id order."""
    rng = np.random.default_rng(seed)
    pool = rng.integers(-127, 128, (9, DIMS[channel])).astype(np.int8)
    store = open_store(tmp_path / "vectors.db", create=True)
    ids = rng.permutation(np.arange(1, 2000))[:700]
    with store.write() as conn:
        for i in ids:
            conn.execute(INSERT[channel], (int(i), pool[rng.integers(9)].tobytes()))
    with store.write() as conn:
        for i in rng.choice(ids, 150, replace=False):
            conn.execute(DELETE[channel], (int(i),))
        for i in range(2000, 2060):
            conn.execute(INSERT[channel], (i, pool[rng.integers(9)].tobytes()))
    try:
        with store.read() as conn:
            yield conn, knn.load(conn, knn.TABLES[channel]), rng, pool
    finally:
        store.close()


def question(trial: int, rng, pool, channel: str) -> tuple[np.ndarray, int]:
    """A query vector (every other one a stored vector, tying with many) and a k."""
    query = pool[trial % 9] if trial % 2 else rng.integers(-127, 128, DIMS[channel])
    return query.astype(np.int8), int(rng.integers(1, 250))


@pytest.mark.parametrize("channel", ["dense", "static"])
def test_nearest_returns_the_scans_rows_in_the_scans_order(tmp_path, channel):
    with stored(tmp_path, channel, 11) as (conn, matrix, rng, pool):
        assert matrix is not None and len(matrix.ids) == 610
        for trial in range(40):
            query, k = question(trial, rng, pool, channel)
            scan = conn.execute(SCAN[channel], (query.tobytes(), k)).fetchall()
            near = knn.nearest(matrix, query, k)
            assert near == scan, (trial, k)
            assert conn.execute(GIVEN, (json.dumps(near),)).fetchall() == scan


@pytest.mark.parametrize("channel", ["dense", "static"])
def test_a_scopes_nearest_are_the_scoped_scans_rows(tmp_path, channel):
    # a snapshot's part of the table (read by key) and a path filter's part of either: the
    # rows vec0 returns when the scan keeps only the scope's chunks, ties included
    with stored(tmp_path, channel, 12) as (conn, table, rng, pool):
        for trial in range(30):
            # a scope of stored and unstored ids (a chunk may have the other tier's vector)
            scope = np.sort(rng.choice(np.arange(1, 2060), int(rng.integers(1, 900)), False))
            part = knn.load(conn, knn.SOME[channel], scope.tolist())
            assert part is not None and set(part.ids) <= set(scope)
            query, k = question(trial, rng, pool, channel)
            blob, within = query.tobytes(), json.dumps(scope.tolist())
            scan = conn.execute(SCOPED_SCAN[channel], (blob, k, within)).fetchall()
            assert knn.nearest(part, query, k) == scan, (trial, k)
            keep = np.isin(table.ids, scope)
            assert knn.nearest(table, query, k, keep) == scan, (trial, k)
            narrower = scope[: len(scope) // 2 + 1]
            scan = conn.execute(
                SCOPED_SCAN[channel], (blob, k, json.dumps(narrower.tolist()))
            ).fetchall()
            within = np.isin(part.ids, narrower)
            assert knn.nearest(part, query, k, within) == scan, (trial, k)
            both = keep & np.isin(table.ids, narrower)  # the mask and a path filter
            assert knn.nearest(table, query, k, both) == scan, (trial, k)


def part_kinds(engine: QueryEngine) -> dict:
    """How the warm engine holds each snapshot's part: a mask over the table, or keyed rows."""
    return {
        key: None if part is None else "keyed" if part[1] is None else "mask"
        for key, part in engine.warm._parts.items()
    }


@pytest.fixture(scope="module", params=["transformer", "static-only"])
def repo(request, tmp_path_factory, embedder):
    root = new_repo(tmp_path_factory.mktemp("knn") / request.param, FILES)
    if request.param == "transformer":
        index_repository(str(root), embedder=embedder)
    else:
        index_repository(str(root), embed=False)
    return root, request.param


def test_a_warm_engine_answers_as_a_cold_one(repo, embedder):
    root, _ = repo
    engine = QueryEngine(cwd=str(root), embedder=embedder)
    try:
        for text in QUERIES:
            for mode, fusion, only in (("file", "rrf", []), ("chunk", "dbsf", ["src/*"])):
                request = QueryRequest(
                    text, mode=mode, fusion=fusion, explain=True, only_paths=only
                )
                engine.warm.drop()
                cold = json.dumps(engine.query(request))  # a first question: the vec0 scan
                for _ in range(knn.WARM_AFTER):
                    assert not engine.warm.loaded
                    engine.query(request)
                assert engine.warm.loaded
                assert json.dumps(engine.query(request)) == cold, (text, mode)
    finally:
        engine.close()


def test_a_warm_engine_answers_as_a_cold_one_beside_other_snapshots(tmp_path, embedder):
    # every file edited and re-indexed: their old chunks stay until `pix gc`, as near to each
    # question as the new ones, so the snapshot's scope is not the whole database; at a depth
    # of 4 candidates, any old chunk let through would take a place (with a path filter too)
    root = new_repo(tmp_path / "repo", FILES)
    index_repository(str(root), embedder=embedder)
    write(root, {path: text + "\n# edited\n" for path, text in FILES.items()})
    index_repository(str(root), embedder=embedder)
    engine = QueryEngine(cwd=str(root), embedder=embedder)
    engine.depth = 4
    try:
        with engine.store.read():
            snapshot = engine.store.conn.execute("SELECT max(id) FROM snapshot").fetchone()[0]
            assert not engine.whole_scope(snapshot)
        for text in QUERIES:
            for only in ([], ["src/*"]):
                request = QueryRequest(text, mode="chunk", explain=True, only_paths=only)
                engine.warm.drop()
                cold = json.dumps(engine.query(request))
                for _ in range(knn.WARM_AFTER):
                    assert not engine.warm.loaded
                    engine.query(request)
                assert engine.warm.loaded
                assert set(part_kinds(engine).values()) == {"mask"}  # half the rows in scope
                assert json.dumps(engine.query(request)) == cold, (text, only)
    finally:
        engine.close()


def test_a_warm_engine_asked_at_two_snapshots_in_turn_answers_as_a_cold_one(tmp_path, embedder):
    # three versions of every file (two commits and the work tree), each a third of the
    # vectors: a snapshot's part is read by key; two asked in turn keep both parts, and a
    # third takes the place of the one asked least recently
    root = new_repo(tmp_path / "repo", FILES)
    first = git(root, "rev-parse", "HEAD")
    write(root, {path: text + "\n# edit 1\n" for path, text in FILES.items()})
    commit(root, "edit")
    write(root, {path: text + "\n# edit 2\n" for path, text in FILES.items()})
    for at in (first, "HEAD", None):
        index_repository(str(root), at=at, embedder=embedder)
    engine = QueryEngine(cwd=str(root), embedder=embedder)
    engine.depth = 4
    try:
        asks = [
            QueryRequest(text, mode="chunk", explain=True, at=at)
            for text in QUERIES[:2]
            for at in (first, None)
        ]
        cold = {id(a): json.dumps(engine.query(a)) for a in asks}
        for _ in range(knn.WARM_AFTER + 2):
            for ask in asks:
                assert json.dumps(engine.query(ask)) == cold[id(ask)]
        kinds = part_kinds(engine)  # both snapshots' parts kept: a third of the rows each
        assert set(kinds.values()) == {"keyed"}
        at_first, at_tree = (json.loads(cold[id(a)])["snapshot"]["id"] for a in asks[:2])
        assert {snapshot for _, snapshot in kinds} == {at_first, at_tree}
        # a third snapshot asked until warm: its part takes the least recently asked one's place
        third = QueryRequest(QUERIES[0], mode="chunk", explain=True, at="HEAD")
        cold_third = json.dumps(engine.query(third))
        for _ in range(knn.WARM_AFTER):
            assert json.dumps(engine.query(third)) == cold_third
        at_head = json.loads(cold_third)["snapshot"]["id"]
        assert len({at_first, at_tree, at_head}) == 3
        assert {snapshot for _, snapshot in part_kinds(engine)} == {at_tree, at_head}
        for ask in asks[1::2]:  # the newer kept part answers on
            assert json.dumps(engine.query(ask)) == cold[id(ask)]
    finally:
        engine.close()


def test_a_partly_embedded_snapshots_part_is_chosen_by_its_vectors(tmp_path, embedder):
    # every file embedded at the first commit, then most of them edited and indexed without
    # the transformer: the work tree's snapshot holds about as many chunks as the dense table
    # has rows, but fewer than half of them have a dense vector (its part is read by key, where
    # a mask would read the whole table for a few rows), while each has a static one (at least
    # half the static table: the mask)
    root = new_repo(tmp_path / "repo", FILES)
    index_repository(str(root), embedder=embedder)
    edited = sorted(FILES)[: 3 * len(FILES) // 4]
    write(root, {path: FILES[path] + "\n# edited\n" for path in edited})
    index_repository(str(root), embed=False)
    engine = QueryEngine(cwd=str(root), embedder=embedder)
    engine.depth = 4
    try:
        request = QueryRequest(QUERIES[0], mode="chunk", explain=True)
        cold = json.dumps(engine.query(request))
        for _ in range(knn.WARM_AFTER):
            assert json.dumps(engine.query(request)) == cold
        kinds = {channel: kind for (channel, _), kind in part_kinds(engine).items()}
        assert kinds == {"dense": "keyed", "static": "mask"}
    finally:
        engine.close()


def test_a_warm_engine_sees_what_another_connection_wrote(tmp_path, embedder):
    root = new_repo(tmp_path / "repo", FILES)
    index_repository(str(root), embed=False)
    engine = QueryEngine(cwd=str(root), embedder=embedder)
    try:
        ask = QueryRequest("boiling point of water in kelvin", mode="file", explain=True)
        for _ in range(knn.WARM_AFTER + 1):
            engine.query(ask)
        assert engine.warm.loaded
        write(root, {"src/kelvin.py": "def boiling_point_kelvin():\n    return 373.15\n"})
        index_repository(str(root), embed=False)  # another connection commits
        after = engine.query(ask)
        assert any(where(r) == "src/kelvin.py" for r in after["results"])
        fresh = QueryEngine(cwd=str(root), embedder=embedder)
        try:
            assert json.dumps(fresh.query(ask)) == json.dumps(after)
            for _ in range(knn.WARM_AFTER):  # the new state: scanned, then loaded again
                assert not engine.warm.loaded
                engine.query(ask)
            assert json.dumps(engine.query(ask)) == json.dumps(after)
            assert engine.warm.loaded
        finally:
            fresh.close()
    finally:
        engine.close()


def test_a_question_of_no_known_token_answers_alike_cold_and_warm(repo, embedder):
    root, _ = repo
    engine = QueryEngine(cwd=str(root), embedder=embedder)
    try:
        request = QueryRequest("🙂 \u200b", mode="file", explain=True)
        answers = {json.dumps(engine.query(request)) for _ in range(knn.WARM_AFTER + 2)}
        assert len(answers) == 1
        for result in json.loads(answers.pop())["results"]:
            for channel in result["explain"]["channels"].values():
                assert channel["score"] is not None  # no chunk at a NULL distance
    finally:
        engine.close()


def test_a_vector_layout_it_does_not_know_leaves_the_scan_in_charge(tmp_path):
    store = open_store(tmp_path / "plain.db", create=True)
    try:
        with store.write() as conn:
            conn.execute("DROP TABLE chunk_vec_static")  # no vec0 table, no _rowids
        with store.read() as conn:
            warm = knn.WarmVectors()
            query = np.ones(256, dtype=np.int8)
            for _ in range(knn.WARM_AFTER):
                assert warm.candidates(conn, "v1", {"static": query}, 10) is None
            assert warm.candidates(conn, "v1", {"static": query}, 10) is None
            assert not warm.loaded
    finally:
        store.close()
