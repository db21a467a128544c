"""bench/log_bench.py: a commit subject is asked with the log of its commit's parent (never its
own commit or a later one), each question's log is the only one in the database, a variant's
weight is undone after it is asked, and a log cut to smaller commits is the one read so."""

from __future__ import annotations

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


def test_a_set_split_by_age_is_split_at_its_median_year_and_placed_against_each_half(
    monkeypatch,
):
    """--halves: a set's subjects from its median year on are the newer half; each half is
    set against the mean of the same half over the sets."""
    dated = {"a": ["2010", "2011", "2020", "2021"], "b": ["2024", "2024", "2024"]}
    monkeypatch.setattr(
        log_bench,
        "queries_of",
        lambda name: (name, [{"date": f"{y}-01-01T00:00:00+00:00"} for y in dated[name]]),
    )
    hit, miss = (["x.py"], ["x.py"]), (["y.py"], ["x.py"])
    a = log_bench.by_age("a", [miss, miss, hit, hit])
    assert a[1] == "2020" and a[2]["ndcg@10"] == 1.0 and a[3]["ndcg@10"] == 0.0
    b = log_bench.by_age("b", [hit, hit, miss])
    assert b[1] == "2024" and b[3] == {}  # every subject of one year: no older half
    table = log_bench.age_table([a, b], "static-only")
    rows = dict(table.rows)
    newer_mean = (1.0 + 2 / 3) / 2
    assert rows["a (newer from 2020)"]["newer half"] == f"1.000 / 1.000 ({1.0 - newer_mean:+.3f})"
    assert rows["a (newer from 2020)"]["older half"] == "0.000 / 0.000 (+0.000)"
    assert "older half" not in rows["b (newer from 2024)"]
    assert rows["**mean of 2 commit sets** (nDCG@10)"] == {
        "newer half": f"{newer_mean:.3f}",
        "older half": "0.000",
    }
