"""bench/log_bench.py: a commit subject is asked with the log of its commit's parent (never its
own commit or a later one), each question's log is the only one in the database, a variant's
weight is undone after it is asked, and a log cut to smaller commits is the one read so."""

from __future__ import annotations

import math

import apsw
from conftest import commit, git, write

from bench import log_bench
from pix.retrieve import commit_log, route
from pix.store import sql
from pix.store.db import open_store


def test_a_subject_is_asked_with_the_log_before_its_own_commit(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    shas = []
    for n in range(3):
        write(repo, {f"f{n}.py": f"N = {n}\n"})
        shas.append(commit(repo, f"add module {n}"))
    subjects = [c[2] for c in log_bench.parent_log(repo, f"{shas[2]}^").commits]
    assert subjects == ["add module 1", "add module 0"]  # newest first; not module 2 itself
    assert log_bench.parent_log(repo, f"{shas[0]}^").commits == ()  # a root commit: no past

    store = open_store(tmp_path / "index.db", create=True)
    store.conn.execute(sql.INSERT_SNAPSHOT, ("commit", "/", shas[2], None, 0, "0", ""))
    store.close()
    conn = apsw.Connection(str(tmp_path / "index.db"))
    conn.execute("PRAGMA foreign_keys = ON")
    log_bench.write_log(conn, 1, log_bench.parent_log(repo, shas[2]))
    log_bench.write_log(conn, 1, log_bench.parent_log(repo, shas[1]))
    # the second question's log replaced the first's, subjects and their search rows alike
    assert conn.execute("SELECT subject FROM log_commit ORDER BY subject").fetchall() == [
        ("add module 0",),
        ("add module 1",),
    ]
    fts = "SELECT count(*) FROM log_commit_fts WHERE log_commit_fts MATCH 'module'"
    assert conn.execute(fts).fetchall() == [(2,)]
    files = commit_log.log_files(conn, 1, '"module"', None)
    assert files == []  # the snapshot holds none of the files (no snapshot_file rows)
    assert conn.execute("SELECT log_commits FROM snapshot").fetchall() == [(2,)]
    conn.close()


def test_a_variant_weight_is_undone_after_it_is_asked():
    shipped = {shape: dict(w) for shape, w in route.WEIGHTS.items()}
    with log_bench.log_weight(2.0):
        assert route.WEIGHTS["question"]["log"] == 2.0
    assert route.WEIGHTS == shipped


def test_a_smaller_log_keeps_only_the_commits_of_as_few_files(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {"a.py": "A = 1\n"})
    commit(repo, "add a")
    write(repo, {"b.py": "B = 1\n", "c.py": "C = 1\n", "d.py": "D = 1\n"})
    head = commit(repo, "add b, c and d")
    read = log_bench.parent_log(repo, head, max_files=3)
    assert [c[2] for c in read.commits] == ["add b, c and d", "add a"]
    assert log_bench.at_most(read, 3) == read  # a commit of exactly that many files stays
    smaller = log_bench.at_most(read, 2)
    assert [c[2] for c in smaller.commits] == ["add a"]
    assert smaller == log_bench.parent_log(repo, head, max_files=2)  # as if read so


def test_a_set_split_by_age_is_split_at_its_median_year_and_placed_against_each_column():
    """--halves: a set's subjects from its median year on are the newer half; each cell is
    set against its column's mean over the sets that have that half."""
    hit, second, miss = (["x.py"], ["x.py"]), (["y.py", "x.py"], ["x.py"]), (["y.py"], ["x.py"])
    years = ["2010", "2011", "2020", "2021"]
    a = log_bench.by_age("a", years, [miss, miss, hit, second], [miss, hit, miss, miss])
    assert a.cut == "2020" and a.sizes == (2, 2)
    assert a.scores["newer half"]["mrr@10"] == 0.75  # (1 + 1/2) / 2
    assert a.scores["older half"]["ndcg@10"] == 0.0
    assert a.scores["older half, no log"]["mrr@10"] == 0.5  # the run without the channel
    b = log_bench.by_age("b", ["2024"] * 3, [hit, hit, miss], [hit, hit, miss])
    assert b.cut == "2024" and b.sizes == (3, 0) and b.scores["older half"] == {}
    rows = dict(log_bench.age_table([a, b], "static-only").rows)
    ndcg_second = 1 / math.log2(3)
    newer_a = (1 + ndcg_second) / 2
    newer_mean = (newer_a + 2 / 3) / 2
    assert rows["a (newer from 2020: 2 / 2)"]["newer half"] == (
        f"{newer_a:.3f} / 0.750 ({newer_a - newer_mean:+.3f})"
    )
    assert rows["a (newer from 2020: 2 / 2)"]["older half"] == "0.000 / 0.000 (+0.000)"
    assert "older half" not in rows["b (newer from 2024: 3 / 0)"]
    means = rows["**mean over the sets** (nDCG@10)"]
    assert means["newer half"] == f"{newer_mean:.3f} (2 sets)"
    assert means["older half"] == "0.000 (1 sets)"


def test_sets_of_one_year_each_leave_the_older_columns_out():
    hit = (["x.py"], ["x.py"])
    only = log_bench.by_age("c", ["2024", "2024"], [hit, hit], [hit, hit])
    table = log_bench.age_table([only], "transformer")
    assert set(dict(table.rows)["**mean over the sets** (nDCG@10)"]) == {
        "newer half",
        "newer half, no log",
    }
    assert "| c (newer from 2024: 2 / 0) | 1.000 / 1.000 (+0.000) |  |" in table.render()
