"""Embedding progress: the ETA is measured in tokens, and answers say how much of the index
meaning search covers while embedding is unfinished (issue 10, point 14)."""

from __future__ import annotations

import io
import json

import pytest
from conftest import GEOMETRY, GREETING, MAILER, TABLES, WEATHER, new_repo, pix

from pix.index import index_repository
from pix.ingest.vectors import embed_pending
from pix.progress import Progress
from pix.retrieve.refine import coverage_warning
from pix.store import open_store, sql


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_eta_follows_the_tokens_when_short_items_come_first():
    """Items run shortest first, each taking time in proportion to its tokens: half of the
    items done is a quarter of the work, and the ETA must say three quarters remain."""
    costs = list(range(1, 101))  # tokens per item, ascending as embed_pending runs them
    clock = Clock()
    stream = io.StringIO()
    progress = Progress(enabled=True, stream=stream, clock=clock)
    progress.start("embedding chunks", len(costs), work=sum(costs))
    for cost in costs[:50]:
        clock.now += cost * 0.01  # 100 tokens per second
        progress.advance(1, work=cost)
    real_left = sum(costs[50:]) * 0.01
    assert progress.eta() == pytest.approx(real_left)  # 37.75 s
    counted = Progress(enabled=False, clock=clock)  # what a rate in items promised
    counted._start, counted._done, counted._total = 0.0, 50, 100
    assert counted.eta() == pytest.approx(sum(costs[:50]) * 0.01)  # 12.75 s: far too little
    assert "ETA 38s" in stream.getvalue().rsplit("\r", 1)[-1]
    assert progress.rate() == pytest.approx(50 / (sum(costs[:50]) * 0.01))  # items per second


def test_without_work_the_eta_counts_items_and_is_zero_before_any():
    clock = Clock()
    progress = Progress(enabled=False, clock=clock)
    progress.start("reading files", 10)
    assert progress.eta() == 0.0
    clock.now = 2.0
    progress.advance(4)
    assert progress.eta() == pytest.approx(3.0)


class Recorder(Progress):
    def __init__(self) -> None:
        super().__init__(enabled=False)
        self.work_total: int | None = None
        self.items: list[tuple[int, int]] = []

    def start(self, label: str, total: int, work: int | None = None) -> None:
        super().start(label, total, work)
        if label == "embedding chunks":
            self.work_total = work

    def advance(self, n: int = 1, work: int = 0) -> None:
        super().advance(n, work)
        self.items.append((n, work))


def test_embedding_reports_its_work_in_padded_tokens(tmp_path, embedder):
    root = new_repo(tmp_path / "repo", {"tables.py": TABLES, "weather.py": WEATHER})
    db = tmp_path / "index.db"
    report = index_repository(str(root), str(db), embed=False, embedder=embedder)
    recorder = Recorder()
    store = open_store(db, create=False)
    try:
        embedded = embed_pending(store, report.snapshot_id, recorder, embedder)
    finally:
        store.close()
    assert embedded == report.embed_pending > 1
    assert sum(n for n, _ in recorder.items) == embedded
    # Every batch says what it cost; the costs add up to the total the ETA is measured in,
    # and a chunk costs its tokens (several each), not 1.
    assert all(work > n for n, work in recorder.items)
    assert sum(work for _, work in recorder.items) == recorder.work_total


@pytest.mark.parametrize(
    ("chunks", "embedded", "says"),
    [
        (0, 0, None),  # an empty repository waits for nothing
        (10, 10, None),
        (10, 0, "no chunk is embedded yet"),
        (1000, 1, "covers 1% of chunks (1 of 1,000 embedded)"),
        (200, 101, "covers 50% of chunks (101 of 200 embedded)"),
        (1000, 999, "covers 99% of chunks (999 of 1,000 embedded)"),
    ],
)
def test_coverage_warning(chunks, embedded, says):
    warnings = coverage_warning(chunks, embedded)
    if says is None:
        assert warnings == []
    else:
        assert len(warnings) == 1 and says in warnings[0]


@pytest.fixture(scope="module")
def half_embedded(tmp_path_factory, embedder):
    """A repository indexed by `pix index --no-embed`, then embedded part of the way."""
    files = {"tables.py": TABLES, "weather.py": WEATHER, "mail.py": MAILER, "geo.py": GEOMETRY}
    root = new_repo(tmp_path_factory.mktemp("progress") / "repo", files)
    code, out, err = pix("index", "--no-embed", "--json", "--quiet", cwd=root)
    assert code == 0, err
    report = json.loads(out)
    store = open_store(root / ".pix.db", create=False)
    try:
        embed_pending(store, report["snapshotId"], embedder=embedder, limit=3)
        counts = store.conn.execute(sql.SNAPSHOT_COUNTS, {"snapshot": report["snapshotId"]})
        chunks, embedded, _ = counts.fetchone()
    finally:
        store.close()
    assert 0 < embedded < chunks
    return root, round(100 * embedded / chunks)


@pytest.mark.parametrize(
    "args",
    [["query", "convert a temperature"], ["pack", "convert a temperature", "--budget", "300"]],
    ids=["query", "pack"],
)
def test_answers_say_how_much_meaning_search_covers(half_embedded, args):
    root, share = half_embedded
    code, out, err = pix(*args, cwd=root)
    assert code == 0, err
    # the chunks the transformer has not reached are searched through the static tier
    assert f"warning: the transformer has embedded {share}% of chunks" in err
    assert "static tier" in err
    code, out, err = pix(*args, "--json", cwd=root)
    assert code == 0, err
    warnings = json.loads(out)["warnings"]
    assert [w for w in warnings if f"embedded {share}% of chunks" in w], warnings


def test_a_bm25_only_query_does_not_warn_about_embedding(half_embedded):
    root, _ = half_embedded
    code, out, err = pix("query", "temperature", "--channel", "bm25", "--json", cwd=root)
    assert code == 0, err
    assert not [w for w in json.loads(out)["warnings"] if "embed" in w]


def test_an_empty_repository_does_not_claim_embedding_is_unfinished(tmp_path):
    root = new_repo(tmp_path / "repo", {"logo.png": b"\x89PNG\r\n\x1a\n\0\0\0"})
    code, _, err = pix("index", "--quiet", cwd=root)
    assert code == 0, err
    for args in (["query", "anything"], ["pack", "anything", "--budget", "100"]):
        code, out, err = pix(*args, "--json", cwd=root)
        assert code == 0, err
        assert not [w for w in json.loads(out)["warnings"] if "embed" in w], args


def test_a_fully_embedded_index_gives_no_coverage_warning(tmp_path, embedder):
    root = new_repo(tmp_path / "repo", {"greet.py": GREETING})
    index_repository(str(root), embedder=embedder)
    code, out, err = pix("query", "say hello", "--json", cwd=root)
    assert code == 0, err
    assert json.loads(out)["warnings"] == []


def test_content_at_two_paths_counts_its_chunks_once(tmp_path, embedder):
    """The same blob at two paths is chunked and embedded once: fully embedded, not half."""
    root = new_repo(tmp_path / "repo", {"a/greet.py": GREETING, "b/greet.py": GREETING})
    index_repository(str(root), embedder=embedder)
    code, out, err = pix("status", "--json", cwd=root)
    assert code == 0, err
    assert json.loads(out)["snapshots"][0]["embeddedShare"] == 1.0
    code, out, err = pix("query", "say hello", "--json", cwd=root)
    assert json.loads(out)["warnings"] == []


def test_a_question_the_static_tier_cannot_read_is_told_so(make_repo):
    # Nothing embedded yet, the static tier searching the rest: a question of words it knows
    # is searched by it; one it has no word of (an emoji) is not, and the warning says why
    # rather than that meaning search waits for the transformer alone.
    repo = make_repo({"a.py": "def parse_config(path):\n    return path\n"})
    code, _, err = pix("index", "--static-only", cwd=repo)
    assert code == 0, err
    code, out, err = pix("query", "\U0001f642", cwd=repo)
    assert code == 0 and out == "no results\n"
    assert "the static tier knows none of this question's words" in err
    code, out, err = pix("query", "parse the configuration", cwd=repo)
    assert code == 0 and "a.py" in out
    assert "meaning search uses the static tier" in err and "knows none" not in err
