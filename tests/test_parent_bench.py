"""bench/parent_bench.py: each commit subject is asked at its parent commit, of the code and
the log there, and a subject whose files its own commit added is left out."""

from __future__ import annotations

from conftest import commit, git, new_repo, write

from bench import parent_bench
from pix.store.db import open_store


def test_each_subject_is_asked_at_its_parent_and_a_new_file_is_left_out(tmp_path):
    root = new_repo(
        tmp_path / "repo",
        {"retry.py": "def retry(times):\n    return times\n", "cache.py": "CACHE = {}\n"},
    )
    write(root, {"retry.py": "def retry(times, backoff):\n    return times * backoff\n"})
    backoff = commit(root, "retry: wait longer between attempts")
    write(root, {"limits.py": "def limit(rate):\n    return rate\n"})
    added = commit(root, "add a rate limiter")
    git(root, "rm", "-q", "retry.py")
    gone = commit(root, "drop retry")
    qs = [
        {"query": "retry: wait longer between attempts", "commit": backoff,
         "gold_files": ["retry.py"]},
        {"query": "add a rate limiter", "commit": added, "gold_files": ["limits.py"]},
        {"query": "drop retry", "commit": gone, "gold_files": ["retry.py"]},
    ]  # fmt: skip
    db = tmp_path / "parents.db"
    runs, left_out = parent_bench.ask_at_parents(root, db, qs)
    assert left_out == 1  # limits.py did not exist before its commit
    assert [gold for _, gold in runs] == [["retry.py"], ["retry.py"]]
    assert all(ranked[0] == "retry.py" for ranked, _ in runs)  # asked where retry.py still is
    with open_store(db, create=False) as store:
        indexed = {sha for (sha,) in store.conn.execute("SELECT commit_sha FROM snapshot")}
    assert indexed == set(parent_bench.parents(root, [backoff, added, gone]))
    assert runs == parent_bench.ask_at_parents(root, db, qs)[0]  # kept: the same answers
