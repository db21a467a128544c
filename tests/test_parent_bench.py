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
        "start with retries and a cache",
    )
    start = git(root, "rev-parse", "HEAD")
    write(root, {"retry.py": "def retry(times, backoff):\n    return times * backoff\n"})
    backoff = commit(root, "retry: wait longer between attempts")
    write(root, {"limits.py": "def limit(rate):\n    return rate\n"})
    added = commit(root, "add a rate limiter")
    git(root, "rm", "-q", "retry.py")
    gone = commit(root, "drop retry")
    write(root, {"limits.py": "def limit(rate, burst):\n    return rate + burst\n"})
    burst = commit(root, "limits: allow a burst")
    qs = [
        {"query": "start with retries and a cache", "commit": start,
         "gold_files": ["retry.py"]},
        {"query": "retry: wait longer between attempts", "commit": backoff,
         "gold_files": ["retry.py"]},
        {"query": "add a rate limiter", "commit": added, "gold_files": ["limits.py"]},
        {"query": "drop retry", "commit": gone, "gold_files": ["retry.py"]},
        {"query": "limits: allow a burst", "commit": burst, "gold_files": ["limits.py"]},
    ]  # fmt: skip
    db = tmp_path / "parents.db"
    runs, left_out = parent_bench.ask_at_parents(root, db, qs)
    # the root commit has no parent; limits.py did not exist before its own commit
    assert left_out == 2
    assert [gold for _, gold in runs] == [["retry.py"], ["retry.py"], ["limits.py"]]
    # each asked where its file still is: retry.py is gone when the burst is asked about
    assert [ranked[0] for ranked, _ in runs] == ["retry.py", "retry.py", "limits.py"]
    assert "retry.py" not in runs[2][0]
    with open_store(db, create=False) as store:
        indexed = {sha for (sha,) in store.conn.execute("SELECT commit_sha FROM snapshot")}
    assert indexed == {start, backoff, added, gone}
    assert parent_bench.parents(root, [burst, start]) == [gone, None]
    assert runs == parent_bench.ask_at_parents(root, db, qs)[0]  # kept: the same answers
