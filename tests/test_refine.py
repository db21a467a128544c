"""Refinement (pix/retrieve/refine.py): before the transformer has reached them, a question's
best candidates are embedded on the spot and searched in the dense channel, at the distances
the full index would give them; nothing is written, nothing changes once every chunk has its
vector, and the same question gets the same bytes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import GEOMETRY, GREETING, MAILER, TABLES, WEATHER, new_repo, pix

from pix.index import index_repository
from pix.ingest import embed
from pix.ingest.vectors import embed_pending
from pix.query import QueryEngine, QueryRequest, retrieve
from pix.retrieve import refine, route
from pix.retrieve.refine import coverage_warning
from pix.store import open_store

FILES = {
    "geometry.py": GEOMETRY, "greeting.py": GREETING, "mail.py": MAILER,
    "tables.py": TABLES, "weather.py": WEATHER, "docs/notes.md": "# Notes\n\nShapes and mail.\n",
}  # fmt: skip
QUESTION = "is it warm today"


@pytest.fixture(scope="module")
def half(tmp_path_factory, embedder, repos) -> Path:
    """The static-only repository again, with its first few inputs embedded by the transformer."""
    static, _ = repos
    root = tmp_path_factory.mktemp("half") / "repo"
    shutil.copytree(static, root)
    store = open_store(root / ".pix.db", create=False)
    try:
        snapshot = store.conn.execute("SELECT max(id) FROM snapshot").fetchone()[0]
        embed_pending(store, snapshot, embedder=embedder, limit=4)
    finally:
        store.close()
    return root


@pytest.fixture(scope="module")
def repos(tmp_path_factory, embedder) -> tuple[Path, Path]:
    """The same repository twice: indexed static-only, and with every chunk embedded."""
    base = tmp_path_factory.mktemp("refine")
    static = new_repo(base / "static", FILES)
    index_repository(str(static), embed=False)
    full = base / "full"
    shutil.copytree(static, full, ignore=shutil.ignore_patterns(".pix.db*"))
    index_repository(str(full), embedder=embedder)
    return static, full


def hits_of(root: Path, question: str, top: int | None = None, **options):
    warnings: list[str] = []
    found = retrieval(root, question, top, warnings, **options)
    return found.hits, warnings


def retrieval(root: Path, question: str, top: int | None = None, warnings=None, **options):
    engine = QueryEngine(cwd=str(root))
    if top is not None:
        engine.refine_top = top
    try:
        request = QueryRequest(question, mode="chunk", **options)
        with engine.store.read():
            return retrieve(engine, request, [] if warnings is None else warnings)
    finally:
        engine.close()


def by_place(hits) -> dict[tuple[str, int], dict]:
    return {(h.path, h.start_line): h.channels for h in hits}


def table_counts(root: Path) -> tuple[int, int]:
    engine = QueryEngine(cwd=str(root))
    try:
        return engine.store.conn.execute(
            "SELECT (SELECT count(*) FROM chunk_vec), (SELECT count(*) FROM chunk_vec_static)"
        ).fetchone()
    finally:
        engine.close()


def test_refined_chunks_get_the_distances_the_full_index_gives_them(repos):
    static, full = repos
    refined, warnings = hits_of(static, QUESTION, top=4)  # fewer than the chunks
    plain, _ = hits_of(full, QUESTION)
    ours, theirs = by_place(refined), by_place(plain)
    dense = {place: parts["dense"] for place, parts in ours.items() if "dense" in parts}
    assert dense, "the best candidates were read by the transformer"
    for place, part in dense.items():
        assert part["score"] == theirs[place]["dense"]["score"], place
    # a chunk is searched by one tier: read by the transformer, it leaves the static channel
    assert not any("dense" in parts and "static" in parts for parts in ours.values())
    assert any("static" in parts for parts in ours.values())
    assert any("on the spot" in w for w in warnings)
    assert refined[0].path == "weather.py"
    # nothing was written: the database still has static vectors only
    assert table_counts(static)[0] == 0


@pytest.mark.parametrize("fusion", ["rrf", "dbsf"])
def test_embedded_and_refined_chunks_mix_at_the_full_index_distances(half, repos, fusion):
    _, full = repos
    assert 0 < table_counts(half)[0] < table_counts(full)[0]
    mixed, warnings = hits_of(half, QUESTION, top=6, fusion=fusion)
    plain, _ = hits_of(full, QUESTION, fusion=fusion)
    ours, theirs = by_place(mixed), by_place(plain)
    dense = {place: parts["dense"] for place, parts in ours.items() if "dense" in parts}
    # the chunks embedded before and the ones read on the spot: one channel, one scale
    assert len(dense) > 4
    for place, part in dense.items():
        assert part["score"] == theirs[place]["dense"]["score"], place
    rank = sorted(dense, key=lambda place: dense[place]["rank"])
    assert rank == sorted(dense, key=lambda place: -theirs[place]["dense"]["score"])
    assert any("on the spot" in w for w in warnings)


def test_the_transformer_weighs_more_as_a_reader_of_the_first_pass(half, repos):
    """Its nearest chunks of the whole corpus weigh route.DENSE; read on the spot, the first
    pass's best candidates weigh READING (the embedded chunks among them too)."""
    static, full = repos
    assert route.DENSE < route.READING["question"] == route.READING["keywords"]
    for root, weight in (
        (full, route.DENSE),
        (static, route.READING["question"]),
        (half, route.READING["question"]),
    ):
        found = retrieval(root, QUESTION)
        assert dense_weights(found.hits) == {weight}, root
        # the lifts' ceiling and --explain read the route the hits were scored by
        assert found.route.weights["dense"] == weight, root


@pytest.mark.parametrize(
    ("query", "channels", "dense"),
    [
        (QUESTION, None, 1.0),
        ("warm today", None, 1.0),  # keywords
        (QUESTION, ["bm25"], 0.0),  # a channel the query turned off stays off
        ("how to send mail in python", None, None),  # a how-to keeps its own weight
        ("send_mail", None, None),  # so does an identifier
    ],
)
def test_the_reading_route(query, channels, dense):
    first = route.route(query, channels)
    second = route.reading(first)
    expected = first.weights["dense"] if dense is None else dense
    assert second.weights == {**first.weights, "dense": expected}
    assert second.shape == first.shape


def dense_weights(hits) -> set[float]:
    return {h.channels["dense"]["weight"] for h in hits if "dense" in h.channels}


def test_only_the_best_candidates_are_read(repos):
    static, _ = repos
    hits, warnings = hits_of(static, QUESTION, top=2)
    assert sum("dense" in h.channels for h in hits) == 2
    assert any("read 2 of this question's best candidates" in w for w in warnings)
    off, warnings = hits_of(static, QUESTION, top=0)
    assert not any("dense" in h.channels for h in off)
    assert not any("on the spot" in w for w in warnings)


def test_the_candidates_read_are_held_to_a_token_budget(repos, monkeypatch):
    static, _ = repos
    monkeypatch.setattr(refine, "REFINE_TOKENS", 1)  # the best candidate always fits
    hits, warnings = hits_of(static, QUESTION)
    assert sum("dense" in h.channels for h in hits) == 1
    assert any("read 1 of this question's best candidates" in w for w in warnings)
    monkeypatch.setattr(refine, "REFINE_TOKENS", 300)
    few, _ = hits_of(static, QUESTION)
    read = sum("dense" in h.channels for h in few)
    assert 1 < read < len({h.chunk_id for h in few})
    # which candidates fit depends on their texts, not on what an engine kept before
    engine = QueryEngine(cwd=str(static))
    try:
        request = QueryRequest(QUESTION, mode="chunk")
        with engine.store.read():
            engine.refine_top = 100
            monkeypatch.setattr(refine, "REFINE_TOKENS", 100_000)
            retrieve(engine, request, [])  # every candidate read and kept
            monkeypatch.setattr(refine, "REFINE_TOKENS", 300)
            again = retrieve(engine, request, []).hits
    finally:
        engine.close()
    assert [(h.chunk_id, h.score) for h in again] == [(h.chunk_id, h.score) for h in few]
    # and the other way round: what a small budget left unread is read when a larger one
    # (or another question) reaches it
    engine = QueryEngine(cwd=str(static))
    try:
        with engine.store.read():
            monkeypatch.setattr(refine, "REFINE_TOKENS", 300)
            first = retrieve(engine, request, []).hits
            retrieve(engine, QueryRequest("send a welcome email", mode="chunk"), [])
            monkeypatch.setattr(refine, "REFINE_TOKENS", 100_000)
            wide = retrieve(engine, request, []).hits
    finally:
        engine.close()
    assert [(h.chunk_id, h.score) for h in first] == [(h.chunk_id, h.score) for h in few]
    assert sum("dense" in h.channels for h in wide) > read


def test_one_file_lends_the_reader_at_most_per_file_chunks(repos, monkeypatch):
    """A file whose every chunk ranks high (one an issue report names) leaves the other files'
    best chunks a place among those the transformer reads; the limit is the query shape's."""
    static, _ = repos
    question = "shapes and their area and perimeter"

    def read_per_file(limits: dict[str, int]) -> dict[str, int]:
        monkeypatch.setattr(refine, "PER_FILE", limits)
        hits, _ = hits_of(static, question)
        counts: dict[str, int] = {}
        for hit in hits:
            if "dense" in hit.channels:
                counts[hit.path] = counts.get(hit.path, 0) + 1
        return counts

    anyhow = read_per_file({})
    assert max(anyhow.values()) > 1  # geometry.py's chunks, without a limit
    one = read_per_file({route.shape_of(question): 1})
    assert set(one.values()) == {1}
    assert set(one) >= set(anyhow)  # the places its chunks took went to other files
    assert read_per_file({"issue": 1}) == anyhow  # another shape's limit


def test_nothing_changes_once_every_chunk_is_embedded(repos):
    _, full = repos
    on, on_warnings = hits_of(full, QUESTION)
    off, off_warnings = hits_of(full, QUESTION, top=0)
    assert [(h.path, h.chunk_id, h.score, h.channels) for h in on] == [
        (h.path, h.chunk_id, h.score, h.channels) for h in off
    ]
    assert on_warnings == off_warnings == []


def test_the_static_channel_alone_reads_nothing(repos):
    static, _ = repos
    hits, warnings = hits_of(static, QUESTION, channels=["static"])
    assert hits and not any("dense" in h.channels for h in hits)
    assert not any("on the spot" in w for w in warnings)


def test_a_path_filter_keeps_the_second_pass_in_scope(repos):
    static, _ = repos
    hits, _ = hits_of(static, "send an email or compute an area", only_paths=["g*.py"])
    assert hits and {h.path for h in hits} <= {"geometry.py", "greeting.py"}
    assert any("dense" in h.channels for h in hits)


def test_the_same_question_gets_the_same_bytes_cold_and_warm(repos):
    static, _ = repos
    args = ("query", QUESTION, "--json", "--explain", "--top", "5")
    first = pix(*args, cwd=static)
    again = pix(*args, cwd=static)
    assert first[0] == 0, first[2]
    assert first[1] == again[1]
    # an engine that kept the vectors it made answers as a new one does
    engine = QueryEngine(cwd=str(static))
    try:
        answers = [engine.query(QueryRequest(QUESTION, explain=True, top=5)) for _ in range(3)]
    finally:
        engine.close()
    assert answers[0] == answers[1] == answers[2]
    assert answers[0]["results"] and len(engine.refined) > 0


@pytest.mark.parametrize(
    ("embedded", "static", "says"),
    [
        (0, 10, "static tier for the other 10 (the transformer read 4 of this question's best"),
        (0, 0, "covers only 4 of this question's best candidates"),
        (5, 0, "(5 of 10 embedded) (the transformer read 4 of this question's best"),
    ],
)
def test_the_warning_says_what_was_read(embedded, static, says):
    (warning,) = coverage_warning(10, embedded, static, refined=4)
    assert says in warning


def test_a_workspace_question_reads_nothing_on_the_spot(repos, tmp_path):
    # 40 candidates in each of 20 shards would take seconds: shards answer from their tiers
    static, full = repos
    code, out, err = pix(
        "query", QUESTION, "--db", str(static / ".pix.db"), "--db", str(full / ".pix.db"),
        "--json", "--explain", "--top", "20", cwd=tmp_path,
    )  # fmt: skip
    assert code == 0, err
    response = json.loads(out)
    by_repo: dict[str, set[str]] = {}
    for r in response["results"]:
        by_repo.setdefault(r["repo"], set()).update(r["explain"]["channels"])
    assert set(by_repo) == {"static", "full"}, by_repo
    assert "static" in by_repo["static"] and "dense" not in by_repo["static"]
    assert "dense" in by_repo["full"]
    assert not any("on the spot" in w for w in response["warnings"])


def test_without_the_model_file_the_static_tier_still_answers(repos, monkeypatch, tmp_path):
    static, _ = repos
    monkeypatch.setattr(embed, "model_path", lambda: tmp_path / "missing.onnx")
    hits, warnings = hits_of(static, QUESTION)
    assert hits and not any("dense" in h.channels for h in hits)
    assert any("could not read the best candidates" in w and "missing" in w for w in warnings)
