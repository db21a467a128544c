"""bench/peer_bench.py: the peer's public benchmark read from its own layout (repos.json and
annotations/), each repository's folder indexed at its pinned revision at its place in the
tree, gold files outside it left out, a repository whose pin the mirror lacks named."""

from __future__ import annotations

import json
import math
import subprocess

import pytest
from conftest import git, new_repo

from bench import devcorpora, metrics, peer_bench

RETRY = "def retry_with_backoff(times, backoff):\n    return times * backoff\n"
CACHE = "class ResponseCache:\n    def lookup(self, key):\n        return None\n"


def test_the_folder_at_its_pin_is_asked_and_what_cannot_be_is_left_out(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("PIX_BENCH_CACHE", str(tmp_path / "cache"))
    root = new_repo(
        tmp_path / "demo",
        {
            "src/pkg/retry.py": RETRY,
            "src/pkg/cache.py": CACHE,
            "src/other/noise.py": "NOISE = 1\n",
            "tools/retry_tool.py": RETRY,
        },
    )
    pin = git(root, "rev-parse", "HEAD")
    mirrors = tmp_path / "mirrors"
    bare = mirrors / "acme+demo" / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(root), str(bare)], check=True)
    bench = tmp_path / "semble" / "benchmarks"
    (bench / "annotations").mkdir(parents=True)
    spec = {"language": "python", "url": "https://github.com/acme/demo.git", "revision": pin}
    (bench / "repos.json").write_text(
        json.dumps(
            [
                {"name": "demo", **spec, "benchmark_root": "src/pkg"},
                {"name": "later", **spec, "revision": "f" * 40, "benchmark_root": None},
                {"name": "other", **spec, "benchmark_root": "src/other"},
                {"name": "moved", **spec, "benchmark_root": "src/gone"},
                {"name": "unannotated", **spec},
            ]
        )
    )
    questions = [
        {"query": "retry with backoff", "relevant": ["src/pkg/retry.py"],
         "secondary": ["src/pkg/cache.py"], "category": "semantic"},
        {"query": "ResponseCache", "relevant": ["src/pkg/cache.py"]},  # category inferred
        {"query": "the retry tool", "relevant": ["tools/retry_tool.py"], "category": "semantic"},
    ]  # fmt: skip
    for name in ("demo", "later", "other", "moved"):
        (bench / "annotations" / f"{name}.json").write_text(json.dumps(questions))

    assert set(peer_bench.load_specs(bench)) == {"demo", "later", "other", "moved"}
    loaded = peer_bench.load_questions(bench, "demo")
    assert [q["category"] for q in loaded] == ["semantic", "symbol", "semantic"]
    assert loaded[0]["targets"] == [
        ["src/pkg/retry.py", None, None],
        ["src/pkg/cache.py", None, None],
    ]

    dump = tmp_path / "d.jsonl"
    published = tmp_path / "semble-hybrid.json"
    published.write_text(json.dumps({"repos": [{"repo": "demo", "ndcg10": 0.9}]}))
    peer_bench.main(
        ["--semble", str(tmp_path / "semble"), "--mirrors", str(mirrors), "--static-only",
         "--jobs", "1", "--dump", str(dump), "--published", str(published)]
    )  # fmt: skip
    out = capsys.readouterr()
    assert "later: acme/demo has no commit ffffffffffff" in out.err
    assert "moved: acme/demo has no src/gone at its pin in its mirror" in out.err
    assert "Left out, not in the mirror at its pin: later, moved" in out.out
    assert "Not asked, no gold file of theirs indexed by pix: other" in out.out
    assert "| other |" not in out.out
    row = next(line for line in out.out.splitlines() if line.startswith("| demo |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[-4:-2] == ["2", "1"]  # asked, left out: tools/ is outside the folder
    dumped = [json.loads(line) for line in dump.read_text().splitlines()]
    pix = {d["query"]: d for d in dumped if d["system"] == peer_bench.PIX_STATIC}
    assert pix["retry with backoff"]["ranked"] == ["src/pkg/retry.py", "src/pkg/cache.py"]
    assert pix["ResponseCache"]["ranked"][0] == "src/pkg/cache.py"
    assert {d["system"] for d in dumped} == {
        peer_bench.PIX_STATIC, peer_bench.PIX_STATIC + peer_bench.CHUNKS,
        peer_bench.BASELINE, peer_bench.SEMBLE,
        peer_bench.PIX_STATIC + peer_bench.AS_SEMBLE, peer_bench.SEMBLE + peer_bench.AS_SEMBLE,
    }  # fmt: skip
    spans = [d for d in dumped if d["system"] == peer_bench.PIX_STATIC + peer_bench.AS_SEMBLE]
    assert [d["query"] for d in spans] == [q["query"] for q in questions]  # every question
    path, first, last = spans[1]["ranked"][0]
    assert (path, first) == ("src/pkg/cache.py", 1) and last >= 3
    assert spans[2]["gold"] == []  # outside the folder: 0 as semble's runner scores it
    assert "| **all 2 categories, each question once** |" in out.out

    assert "| 0.900 (1) |" in out.out  # the published figure of the one repository asked
    assert "beside its published hybrid (1 repositories)" in out.out
    devcorpora.set_mirrors(str(mirrors))
    tree = devcorpora.snapshot("acme/demo", pin, "src/pkg")
    files = git(tree, "ls-files").splitlines()
    assert files == ["src/pkg/cache.py", "src/pkg/retry.py"]


def test_semble_scoring_counts_a_file_at_its_first_chunk_among_the_first_ten():
    # a.py at the 1st place, b.py first at the 3rd (a second chunk of a.py before it)
    spans = [["a.py", 1, 9], ["a.py", 10, 20], ["b.py", 1, 5], ["c.py", 1, 5]]
    whole = [["b.py", None, None], ["a.py", None, None]]
    scores = peer_bench.as_semble(spans, whole)
    ideal = 1 + 1 / math.log2(3)
    assert scores["ndcg@10"] == pytest.approx((1 + 1 / math.log2(4)) / ideal)
    assert scores["mrr@10"] == 1.0
    # the file-level metric would put b.py second
    assert metrics.ndcg_at(["a.py", "a.py", "b.py"], ["b.py", "a.py"]) == pytest.approx(1.0)
    # a target with lines counts at the first chunk of its file that overlaps them
    assert peer_bench.as_semble(spans, [["a.py", 12, 14]])["mrr@10"] == 0.5
    assert peer_bench.as_semble(spans, [["a.py", 30, 40]])["mrr@10"] == 0.0
    far = [["x.py", 1, 2]] * 10 + [["b.py", 1, 5]]
    assert peer_bench.as_semble(far, [["b.py", None, None]]) == {"ndcg@10": 0.0, "mrr@10": 0.0}
    # a question whose targets the index does not hold counts, as 0
    assert peer_bench.as_semble(spans, []) == {"ndcg@10": 0.0, "mrr@10": 0.0}


def test_a_question_without_a_category_is_read_as_sembles_runner_reads_it():
    assert peer_bench.infer_category("RouteContext") == "symbol"
    assert peer_bench.infer_category("how are routes matched") == "architecture"
    assert peer_bench.infer_category("radix tree path matching") == "semantic"
