"""The whole-database statements (pix/store/search_sql.py *_WHOLE): when the snapshot holds
every chunk and vector of the database, the fused statement runs without restricting the
vector scans and the FTS matches to the scope, and must return exactly what the restricted
statement returns. When the database holds chunks of another snapshot, the restriction is
needed (the unrestricted statement answers differently) and the engine keeps it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pix.index import index_repository
from pix.ingest.embed import quantize
from pix.query import QueryEngine, QueryRequest, query, retrieve
from pix.retrieve.route import Route
from pix.retrieve.search import search
from pix.retrieve.windows import embed_query, embed_static
from pix.snapshot import select_snapshot
from tests.conftest import commit, new_repo, write
from tests.test_query import FILES, QUERIES

# A file that only the first commit has: its chunks stay in the database beside the work
# tree's snapshot once that commit is indexed with --at.
GONE = '''def drain_message_queue(worker):
    """Drain the message queue of a worker before it restarts."""
    while worker.queue:
        worker.queue.pop()
'''
ASKED = (*QUERIES, "drain_message_queue", "src/tables.py", "rows of a parsed table")


def _search_both(engine: QueryEngine, text: str, fusion: str):
    """(restricted, whole) hit lists of one query: the same search with each statement."""
    request = QueryRequest(text, fusion=fusion)
    with engine.store.read():
        found = retrieve(engine, request, [])  # the engine's own choice, for the vectors
        snapshot = select_snapshot(engine.store, engine.target, None)
        vector, static_vector = _vectors(engine, text, found)
        out = [
            search(
                engine.store,
                snapshot.id,
                text,
                found.route,
                vector,
                fusion=fusion,
                static_vector=static_vector,
                whole=whole,
            )  # fmt: skip
            for whole in (False, True)
        ]
        return out, engine.whole_scope(snapshot.id)


def _vectors(engine: QueryEngine, text: str, found) -> tuple:
    """The query's transformer and static vectors as retrieve computes them (None when the
    snapshot has none of that kind)."""
    shape = found.route.shape
    _, embedded, static = engine.snapshot_counts(found.snapshot.id)
    vector = quantize(embed_query(engine.embedder(), text, shape))[0] if embedded else None
    static_vector = (
        quantize(embed_static(engine.static_embedder(), text, shape))[0] if static else None
    )
    return vector, static_vector


@pytest.fixture(scope="module", params=["transformer", "static-only"])
def whole_repo(request, tmp_path_factory, embedder) -> Path:
    root = new_repo(tmp_path_factory.mktemp("whole") / request.param, FILES)
    if request.param == "transformer":
        index_repository(str(root), embedder=embedder)
    else:
        index_repository(str(root), embed=False)
    return root


@pytest.mark.parametrize("fusion", ["rrf", "dbsf"])
def test_a_whole_database_scope_answers_as_the_restricted_statement(whole_repo, fusion):
    engine = QueryEngine(cwd=str(whole_repo))
    try:
        for text in ASKED:
            (restricted, whole), is_whole = _search_both(engine, text, fusion)
            assert is_whole
            assert restricted, text
            assert whole == restricted, text
    finally:
        engine.close()


def test_chunks_of_another_snapshot_keep_the_restriction(tmp_path, embedder):
    root = new_repo(tmp_path / "repo", {**FILES, "src/worker.py": GONE})
    index_repository(str(root), at="HEAD", embedder=embedder)
    (root / "src" / "worker.py").unlink()
    write(root, {"src/tables.py": FILES["src/tables.py"] + "\n# rows\n"})
    commit(root, "drop the worker")
    index_repository(str(root), embedder=embedder)
    engine = QueryEngine(cwd=str(root))
    try:
        differs = False
        for text in ASKED:
            (restricted, whole), is_whole = _search_both(engine, text, "rrf")
            assert not is_whole
            assert all(h.path != "src/worker.py" for h in restricted)
            differs |= whole != restricted
        # The unrestricted statement ranks the other snapshot's chunks too (they hold the
        # nearest vectors), so here it answers otherwise: the engine must not choose it.
        assert differs
        answer = query(QueryRequest("drain the message queue of a worker"), cwd=str(root))
        assert all(r["path"] != "src/worker.py" for r in answer["results"])
    finally:
        engine.close()


# A file that says "spool" often, which only the first commit has.
SPOOLS = "".join(
    f'''def spool_{n}(spool):
    """Spool the spool's spooled pages to the spool."""
    return spool.spool(spool.spooled)


'''
    for n in range(3)
)


def test_matches_of_another_snapshot_take_no_place_among_the_candidates(tmp_path):
    root = new_repo(tmp_path / "repo", {"old/spools.py": SPOOLS, **FILES})
    index_repository(str(root), at="HEAD", embed=False)
    (root / "old" / "spools.py").unlink()
    write(root, {"src/jobs.py": "def run(jobs):\n    # print the next job from the spool\n"})
    commit(root, "jobs")
    index_repository(str(root), embed=False)
    engine = QueryEngine(cwd=str(root))
    try:
        with engine.store.read():
            snapshot = select_snapshot(engine.store, engine.target, None)
            assert not engine.whole_scope(snapshot.id)
            words = Route("keywords", {"dense": 0, "static": 0, "bm25": 1, "ident": 0, "path": 0})
            # the old file's chunks match better: taking the one place and then dropped as
            # out of scope, they would leave the channel nothing
            hits = search(engine.store, snapshot.id, "spool", words, None, depth=1)
    finally:
        engine.close()
    assert [h.path for h in hits] == ["src/jobs.py"]
