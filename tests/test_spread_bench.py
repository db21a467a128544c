"""bench/spread_bench.py: each language set's distance to the mean, and what remains of it on
the queries some other system finds."""

from __future__ import annotations

import json
import random

import pytest

from bench import spread_bench


def rows(name: str, pix_hits: list[bool], found_by_bm25: list[bool] | None) -> list[dict]:
    out = []
    for i, hit in enumerate(pix_hits):
        qid, gold = f"{name}-{i:03d}", [f"{name}/gold.c"]
        out.append({"id": qid, "system": spread_bench.PIX, "gold": gold,
                    "ranked": gold if hit else ["other.c"]})  # fmt: skip
        if found_by_bm25 is not None:
            out.append({"id": qid, "system": "bm25 alone", "gold": gold,
                        "ranked": ["x.c", *gold] if found_by_bm25[i] else ["x.c"]})  # fmt: skip
    return out


def run(tmp_path, capsys, lines: list[dict], *args: str) -> tuple[dict, dict]:
    dump = tmp_path / "dump.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in lines))
    spread_bench.main([str(dump), "--samples", "200", *args])
    first, second = capsys.readouterr().out.split("\n\n")

    def table(text: str) -> dict:
        return {line.split(" | ")[0].strip("| "): line.split(" | ") for line in
                text.splitlines()[2:]}  # fmt: skip

    return table(first), table(second)


def test_the_spread_and_what_remains_once_unfindable_queries_are_left_out(tmp_path, capsys):
    # oban: every query found. tmux: half its queries nobody finds, and pix misses those only.
    lines = rows("oban", [True] * 4, [True] * 4)
    lines += rows("tmux", [True, True, False, False], [True, True, False, False])
    table, systems = run(tmp_path, capsys, lines)
    assert table["oban"][1:3] == ["4", "1.000"] and table["tmux"][2] == "0.500"
    assert table["oban"][3] == "+0.250 (+0.250 to +0.250)"  # nothing to resample
    point, bounds = table["tmux"][3].split(" (")
    low, high = (float(x) for x in bounds.rstrip(")").split(" to "))
    assert point == "-0.250" and low <= -0.25 <= high and low < high
    assert table["tmux"][4] == "50%" and table["oban"][4] == "0%"
    # On the queries some other system finds, pix is as good on both sets: no spread left.
    assert table["tmux"][5] == "1.000" and table["tmux"][6].strip(" |") == "+0.000"
    # Every system of the dump: pix's sets and bm25's, each against its own mean.
    assert systems[spread_bench.PIX][1:4] == ["0.750", "0.250", "tmux"]
    assert systems[spread_bench.PIX][4].strip(" |") == "1.00"
    assert systems["bm25 alone"][3] == "tmux" and systems["bm25 alone"][4].strip(" |") == "1.00"


def test_only_the_language_commit_sets_are_read(tmp_path, capsys):
    lines = rows("oban", [True] * 2, [True] * 2) + rows("tmux", [False] * 2, [True] * 2)
    # devbench --sets all: tmux's developers' questions and the exact strings share the dump
    lines += [{**r, "id": r["id"].replace("tmux-", "tmux-q")} for r in rows("tmux", [True], None)]
    lines += rows("exact", [True], None)
    table, _ = run(tmp_path, capsys, lines)
    assert set(table) == {"oban", "tmux", "**mean of 2 sets**"}
    assert table["tmux"][1:3] == ["2", "0.000"]


def test_without_other_systems_the_found_columns_are_empty(tmp_path, capsys):
    table, _ = run(tmp_path, capsys, rows("oban", [True], None) + rows("tmux", [False], None))
    assert [c.strip(" |") for c in table["tmux"][4:]] == ["-", "-", "-"]


def test_one_set_has_no_spread(tmp_path):
    dump = tmp_path / "dump.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in rows("oban", [True], None)))
    with pytest.raises(SystemExit, match="a spread needs two or more"):
        spread_bench.main([str(dump)])


def test_parent_bench_rows_name_their_set(tmp_path):
    dump = tmp_path / "parents.jsonl"
    row = {"set": "tmux", "subject": 4, "commit": "abc", "query": "Fix it",
           "system": spread_bench.PIX, "gold": ["a.c"], "ranked": ["a.c"]}  # fmt: skip
    dump.write_text(json.dumps(row) + "\n")
    assert spread_bench.load(str(dump))["tmux"][spread_bench.PIX][4] == (["a.c"], ["a.c"])


def test_spearman_ranks_ties_together():
    assert spread_bench.ranks([3.0, 1.0, 3.0, 2.0]) == [3.5, 1.0, 3.5, 2.0]
    assert spread_bench.spearman([1.0, 2.0, 3.0], [30.0, 20.0, 10.0]) == -1.0
    assert spread_bench.spearman([1.0, 1.0], [1.0, 2.0]) is None


def test_a_language_of_two_sets_is_judged_on_their_mean(tmp_path, capsys):
    # C: tmux misses everything, htop finds everything; Elixir: oban and absinthe find everything.
    lines = rows("tmux", [False] * 2, [True] * 2) + rows("htop", [True] * 4, [True] * 4)
    lines += rows("oban", [True] * 2, [True] * 2) + rows("absinthe", [True] * 2, [True] * 2)
    dump = tmp_path / "dump.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in lines))
    spread_bench.main([str(dump), "--samples", "200"])
    tables = capsys.readouterr().out.strip().split("\n\n")
    assert len(tables) == 4  # sets, systems by set, languages, systems by language

    def cells(text: str) -> dict:
        return {line.split(" | ")[0].strip("| "): line.split(" | ") for line in
                text.splitlines()[2:]}  # fmt: skip

    by_set, _, by_language, systems = (cells(t) for t in tables)
    assert by_set["tmux"][2] == "0.000" and "**mean of 4 sets**" in by_set
    # Each set weighs the same inside its language, whatever its number of queries.
    c = by_language["C (htop, tmux)"]
    assert c[1:3] == ["6", "0.500"] and c[3].startswith("-0.250 (")
    assert by_language["Elixir (absinthe, oban)"][2] == "1.000"
    assert "| **mean of 2 languages** | | 0.750 |" in tables[2]
    assert systems[spread_bench.PIX][3] == "C"
    # What bm25 finds, it finds everywhere: nothing left out, no language of it below.
    assert systems["bm25 alone"][3] == "none"


def test_several_dumps_are_read_as_one(tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text("".join(json.dumps(r) + "\n" for r in rows("tmux", [True], None)))
    second.write_text("".join(json.dumps(r) + "\n" for r in rows("htop", [False], None)))
    data = spread_bench.load(str(first), str(second))
    assert set(data) == {"tmux", "htop"}


def test_a_language_interval_draws_every_set_of_it_again():
    # The first set cannot vary; only the second one's draws can widen the interval.
    steady, spread = [1.0] * 4, [0.0, 1.0, 0.0, 1.0]
    low, high = spread_bench.interval([steady, spread], 0.5, 2, 400, random.Random(0))
    assert low < high
    assert spread_bench.interval([steady], 0.5, 2, 400, random.Random(0)) == (0.25, 0.25)


def test_sets_of_one_language_have_no_language_view(tmp_path, capsys):
    lines = rows("tmux", [True, False], [True, True]) + rows("htop", [True] * 2, [True] * 2)
    table, _ = run(tmp_path, capsys, lines)  # two tables only: sets, systems by set
    assert set(table) == {"tmux", "htop", "**mean of 2 sets**"}


def test_a_set_asked_without_other_systems_has_no_share(tmp_path, capsys):
    # one dump from a --wide run, one without: htop's unfindable share is unknown, not 100%
    lines = rows("tmux", [True, False], [True, False]) + rows("htop", [True] * 2, None)
    table, _ = run(tmp_path, capsys, lines)
    assert table["tmux"][4] == "50%" and table["htop"][4] == "-"
