"""The static tier: meaning search from the keyword phase on, before the transformer has run.

Every chunk gets a static vector as it is indexed; the transformer's vector replaces it when
it comes; queries search both tiers as two channels; the MCP server's first query on a
repository that was never indexed indexes it (static tier) inside the call."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
from conftest import (
    AREA,
    GEOMETRY,
    GIT_ENV,
    GREETING,
    MAILER,
    TABLES,
    WEATHER,
    commit,
    new_repo,
    write,
)
from mcp import Client, StdioServerParameters

from pix.index import index_repository
from pix.ingest.static import static_identity
from pix.ingest.vectors import embed_pending
from pix.query import QueryEngine, QueryRequest, query
from pix.store import open_store, sql

FILES = {
    "geometry.py": GEOMETRY, "greeting.py": GREETING, "mail.py": MAILER,
    "tables.py": TABLES, "weather.py": WEATHER,
}  # fmt: skip


def counts(db: Path) -> tuple[int, int, int]:
    """(chunks, transformer vectors, static vectors)"""
    store = open_store(db, create=False)
    try:
        return store.conn.execute(
            "SELECT (SELECT count(*) FROM chunk), (SELECT count(*) FROM chunk_vec),"
            " (SELECT count(*) FROM chunk_vec_static)"
        ).fetchone()
    finally:
        store.close()


def tier_query(request: QueryRequest, repo: Path) -> dict:
    """`query` with the static tier's own answer: no candidate read by the transformer on
    the spot (pix/retrieve/refine.py; tests/test_refine.py)."""
    engine = QueryEngine(cwd=str(repo))
    engine.refine_top = 0
    try:
        return engine.query(request)
    finally:
        engine.close()


def channels(response: dict) -> set[str]:
    return {name for r in response["results"] for name in r["explain"]["channels"]}


def test_static_only_index_searches_by_meaning_at_once(tmp_path):
    repo = new_repo(tmp_path / "repo", FILES)
    report = index_repository(str(repo), embed=False)
    chunks, transformer, static = counts(repo / ".pix.db")
    assert report.static_vectors == static == chunks > 0 and transformer == 0
    assert report.embed_pending == chunks
    # a question that shares no word with its answer: only meaning finds it (its strongest
    # chunk: tables.py's four chunks add up against weather.py's one as a file's evidence)
    response = query(
        QueryRequest("is it warm today", mode="chunk", explain=True, channels=["static"]),
        cwd=str(repo),
    )
    strongest = max(
        response["results"], key=lambda r: r["score"] - r["explain"]["rank"].get("evidence", 0)
    )
    assert strongest["path"] == "weather.py"
    assert "weather.py" in [r["path"] for r in response["results"][:2]]
    response = tier_query(QueryRequest(AREA, explain=True), repo)
    assert response["results"][0]["path"] == "geometry.py"
    assert "static" in channels(response) and "dense" not in channels(response)
    assert any("static tier" in w for w in response["warnings"])


def test_the_transformer_replaces_static_vectors_as_it_goes(tmp_path, embedder):
    repo = new_repo(tmp_path / "repo", FILES)
    db = repo / ".pix.db"
    report = index_repository(str(repo), embed=False)
    store = open_store(db, create=False)
    try:
        embed_pending(store, report.snapshot_id, embedder=embedder, limit=3)
    finally:
        store.close()
    chunks, transformer, static = counts(db)
    assert transformer == 3 and static == chunks - 3  # a chunk has one of the two, never both
    response = tier_query(QueryRequest(AREA, explain=True, top=20), repo)
    assert {"dense", "static"} <= channels(response)
    assert any("the transformer has embedded" in w for w in response["warnings"])
    index_repository(str(repo), embedder=embedder)
    chunks, transformer, static = counts(db)
    assert transformer == chunks and static == 0
    response = query(QueryRequest(AREA, explain=True), cwd=str(repo))
    assert "static" not in channels(response) and response["warnings"] == []
    assert response["results"][0]["path"] == "geometry.py"


def test_static_vectors_of_another_table_are_made_again(tmp_path):
    repo = new_repo(tmp_path / "repo", FILES)
    db = repo / ".pix.db"
    index_repository(str(repo), embed=False)
    store = open_store(db, create=False)
    try:
        before = store.conn.execute(
            "SELECT chunk_id, vec_to_json(embedding) FROM chunk_vec_static ORDER BY chunk_id"
        ).fetchall()
        with store.write():
            store.set_meta("static.sha256", "an older table")
    finally:
        store.close()
    # a query does not trust them: static is off, and says nothing false
    response = query(QueryRequest(AREA, explain=True), cwd=str(repo))
    assert "static" not in channels(response)
    report = index_repository(str(repo), embed=False)
    assert report.static_vectors == len(before)
    store = open_store(db, create=False)
    try:
        after = store.conn.execute(
            "SELECT chunk_id, vec_to_json(embedding) FROM chunk_vec_static ORDER BY chunk_id"
        ).fetchall()
        assert store.meta("static.sha256") == static_identity()["static.sha256"]
    finally:
        store.close()
    assert after == before  # the same table makes the same vectors


def test_a_refresh_leaves_the_transformer_backlog_to_pix_index(tmp_path, embedder):
    """A refresh re-reads the changed files; on an index the transformer has not finished it
    gives them static vectors and embeds nothing (the backlog is `pix index`'s: a refresh
    took 90 s on tmux), while a finished index stays finished."""
    repo = new_repo(tmp_path / "repo", FILES)
    index_repository(str(repo), embed=False)
    write(repo, {"mail.py": MAILER + "\n\ndef unsubscribe(address):\n    return address\n"})
    answer = query(QueryRequest("unsubscribe", top=1, refresh=True), cwd=str(repo))
    assert answer["refreshed"]["newBlobs"] == 1
    assert "def unsubscribe" in answer["results"][0]["text"]
    chunks, transformer, static = counts(repo / ".pix.db")
    assert transformer == 0 and static == chunks

    index_repository(str(repo), embedder=embedder)  # the transformer finishes
    write(repo, {"mail.py": MAILER + "\n\ndef resubscribe(address):\n    return address\n"})
    answer = query(QueryRequest("resubscribe", top=1, refresh=True), cwd=str(repo))
    assert answer["refreshed"]["newBlobs"] == 1 and answer["warnings"] == []
    with open_store(repo / ".pix.db", create=False) as store:
        assert store.conn.execute(PENDING_IN_NEWEST).fetchone()[0] == 0


# Chunks of the newest snapshot without a transformer vector.
PENDING_IN_NEWEST = """
SELECT count(*) FROM chunk c JOIN blob b ON b.id = c.blob_id
JOIN snapshot_file f ON f.blob_sha = b.sha
WHERE f.snapshot_id = (SELECT max(id) FROM snapshot)
  AND NOT EXISTS (SELECT 1 FROM chunk_vec v WHERE v.chunk_id = c.id)
"""


async def _first_query(root: Path) -> tuple[dict, dict]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "pix.cli", "mcp"], cwd=str(root), env=GIT_ENV
    )
    async with Client(params, read_timeout_seconds=120) as client:
        first = await client.call_tool("query", {"query": AREA, "mode": "chunk"})
        second = await client.call_tool("query", {"query": AREA, "mode": "chunk"})
        assert not first.is_error and not second.is_error, first.content[0].text
        return json.loads(first.content[0].text), json.loads(second.content[0].text)


def test_mcp_indexes_a_repository_for_its_first_query(tmp_path):
    root = new_repo(tmp_path / "repo", FILES)
    assert not (root / ".pix.db").exists()
    first, second = anyio.run(_first_query, root)
    assert first["refreshed"]["firstIndex"] is True
    assert first["refreshed"]["files"] == len(FILES)
    assert first["refreshed"]["staticVectors"] > 0
    assert first["results"][0]["path"] == "geometry.py"
    assert "indexed for this call" in first["warnings"][0]
    assert "refreshed" not in second  # once
    assert (root / ".pix.db").exists()


# A snapshot's counts as vec0 itself answers them (by reading every vector): what
# sql.SNAPSHOT_COUNTS and sql.CHUNK_TOTALS, which count vec0's _rowids tables, must equal.
_BLOBS = "SELECT b.id FROM snapshot_file f JOIN blob b ON b.sha = f.blob_sha WHERE snapshot_id = :s"
VEC0_SNAPSHOT_COUNTS = f"""
SELECT (SELECT count(*) FROM chunk WHERE blob_id IN ({_BLOBS})),
       (SELECT count(*) FROM chunk_vec WHERE chunk_id IN (
            SELECT id FROM chunk WHERE blob_id IN ({_BLOBS}))),
       (SELECT count(*) FROM chunk_vec_static WHERE chunk_id IN (
            SELECT id FROM chunk WHERE blob_id IN ({_BLOBS})))
"""
VEC0_TOTALS = """
SELECT (SELECT count(*) FROM chunk), (SELECT count(*) FROM chunk_vec),
       (SELECT count(*) FROM chunk_vec_static)
"""


def test_counts_read_from_the_rowids_tables_are_vec0s_own(tmp_path, embedder):
    # the first commit wholly embedded; the second's two new chunks static, one of them then
    # embedded: the two snapshots' counts differ
    repo = new_repo(tmp_path / "repo", FILES)
    index_repository(str(repo), at="HEAD", embedder=embedder)
    write(repo, {"mail.py": MAILER + "\n\ndef bounce(message):\n    return message.sender\n"})
    write(repo, {"tides.py": "def high_tide(port):\n    return port.tide_table[0]\n"})
    (repo / "weather.py").unlink()
    commit(repo, "bounce")
    report = index_repository(str(repo), embed=False)
    store = open_store(repo / ".pix.db", create=False)
    try:
        embed_pending(store, report.snapshot_id, embedder=embedder, limit=1)
        conn = store.conn
        snapshots = [sid for (sid,) in conn.execute("SELECT id FROM snapshot ORDER BY id")]
        counts = [
            conn.execute(sql.SNAPSHOT_COUNTS, {"snapshot": sid}).fetchone() for sid in snapshots
        ]
        assert counts == [
            conn.execute(VEC0_SNAPSHOT_COUNTS, {"s": sid}).fetchone() for sid in snapshots
        ]
        (old_chunks, old_embedded, old_static), (chunks, embedded, static) = counts
        assert old_embedded == old_chunks and old_static == 0
        assert static == 1 and embedded == chunks - 1
        assert conn.execute(sql.CHUNK_TOTALS).fetchone() == conn.execute(VEC0_TOTALS).fetchone()
    finally:
        store.close()
