"""bench/spread_bench.py: each set's distance to the mean, and what remains of it on the
queries some other system finds."""

from __future__ import annotations

import json

from bench import spread_bench


def rows(name: str, pix_hits: list[bool], found_by_bm25: list[bool]) -> list[dict]:
    out = []
    for i, (hit, found) in enumerate(zip(pix_hits, found_by_bm25, strict=True)):
        qid, gold = f"{name}-{i:03d}", [f"{name}/gold.c"]
        out.append({"id": qid, "system": spread_bench.PIX, "gold": gold,
                    "ranked": gold if hit else ["other.c"]})  # fmt: skip
        out.append({"id": qid, "system": "bm25 alone", "gold": gold,
                    "ranked": ["x.c", *gold] if found else ["x.c"]})  # fmt: skip
    return out


def test_the_spread_and_what_remains_once_unfindable_queries_are_left_out(tmp_path, capsys):
    # easy: every query found. hard: half its queries nobody finds, and pix misses those only.
    dump = tmp_path / "dump.jsonl"
    lines = rows("easy-set", [True] * 4, [True] * 4)
    lines += rows("hard", [True, True, False, False], [True, True, False, False])
    dump.write_text("".join(json.dumps(r) + "\n" for r in lines))
    spread_bench.main([str(dump), "--samples", "200"])
    first, second = capsys.readouterr().out.split("\n\n")
    table = {line.split(" | ")[0].strip("| "): line.split(" | ") for line in
             first.splitlines()[2:]}  # fmt: skip
    assert table["easy-set"][1:3] == ["4", "1.000"] and table["hard"][2] == "0.500"
    assert table["easy-set"][3].startswith("+0.250") and table["hard"][3].startswith("-0.250")
    assert table["hard"][4] == "50%" and table["easy-set"][4] == "0%"
    # On the queries some other system finds, pix is as good on both sets: no spread left.
    assert table["hard"][5] == "1.000" and table["hard"][6].strip(" |") == "+0.000"
    # Every system of the dump: pix's sets and bm25's, each against its own mean.
    systems = {line.split(" | ")[0].strip("| "): line.split(" | ") for line in
               second.splitlines()[2:]}  # fmt: skip
    assert systems[spread_bench.PIX][1:4] == ["0.750", "0.250", "hard"]
    assert systems[spread_bench.PIX][4].strip(" |") == "1.00"
    # bm25 finds every gold file of easy-set at rank 2 and half of hard's: the same order.
    assert systems["bm25 alone"][3] == "hard" and systems["bm25 alone"][4].strip(" |") == "1.00"


def test_spearman_ranks_ties_together():
    assert spread_bench.ranks([3.0, 1.0, 3.0, 2.0]) == [3.5, 1.0, 3.5, 2.0]
    assert spread_bench.spearman([1.0, 2.0, 3.0], [30.0, 20.0, 10.0]) == -1.0
    assert spread_bench.spearman([1.0, 1.0], [1.0, 2.0]) is None


def test_parent_bench_rows_name_their_set(tmp_path):
    dump = tmp_path / "parents.jsonl"
    row = {"set": "tmux", "subject": 4, "commit": "abc", "query": "Fix it",
           "system": spread_bench.PIX, "gold": ["a.c"], "ranked": ["a.c"]}  # fmt: skip
    dump.write_text(json.dumps(row) + "\n")
    assert spread_bench.load(str(dump))["tmux"][spread_bench.PIX][4] == (["a.c"], ["a.c"])
