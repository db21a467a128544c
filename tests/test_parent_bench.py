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
    asked = parent_bench.ask_at_parents(root, db, qs)
    assert list(asked.runs) == [parent_bench.PIX]
    runs = asked.runs[parent_bench.PIX]
    # the root commit has no parent; limits.py did not exist before its own commit
    assert asked.left_out == 2
    assert [s["subject"] for s in asked.subjects] == [1, 3, 4]
    assert [gold for _, gold in runs] == [["retry.py"], ["retry.py"], ["limits.py"]]
    # each asked where its file still is: retry.py is gone when the burst is asked about
    assert [ranked[0] for ranked, _ in runs] == ["retry.py", "retry.py", "limits.py"]
    assert "retry.py" not in runs[2][0]
    with open_store(db, create=False) as store:
        indexed = {sha for (sha,) in store.conn.execute("SELECT commit_sha FROM snapshot")}
    assert indexed == {start, backoff, added, gone}
    assert parent_bench.parents(root, [burst, start]) == [gone, None]
    assert runs == parent_bench.ask_at_parents(root, db, qs).runs[parent_bench.PIX]  # the same


def test_wide_asks_every_system_at_each_parents_own_tree(tmp_path):
    root = new_repo(
        tmp_path / "repo",
        {"retry.py": "def retry(times):\n    return times\n", "cache.py": "CACHE = {}\n"},
        "start",
    )
    (root / "hosts").symlink_to("/etc/hosts")  # an absolute link in every parent's tree
    git(root, "rm", "-q", "retry.py")
    write(root, {"backoff.py": "def backoff(times):\n    return times * 2\n"})
    commit(root, "retry becomes backoff")
    write(root, {"backoff.py": "def backoff(times, cap):\n    return min(times * 2, cap)\n"})
    capped = commit(root, "backoff: cap the retry wait")
    write(root, {"jitter.py": "def jitter(times):\n    return times + 1\n"})
    commit(root, "add jitter")
    write(root, {"jitter.py": "def jitter(times, spread):\n    return times + spread\n"})
    spread = commit(root, "jitter: spread the retry waits")
    git(root, "rm", "-q", "backoff.py", "jitter.py")  # the work tree holds neither gold file
    write(root, {"retry.py": "def retry(times, cap):\n    return min(times, cap)\n"})
    commit(root, "back to retry, capped")
    qs = [
        {"query": "backoff: cap the retry wait", "commit": capped, "gold_files": ["backoff.py"]},
        {"query": "jitter: spread the waits", "commit": spread, "gold_files": ["jitter.py"]},
    ]
    asked = parent_bench.ask_at_parents(root, tmp_path / "p.db", qs, wide=True)
    assert asked.left_out == 0
    assert list(asked.runs) == [*parent_bench.SYSTEMS, *parent_bench.PEERS]
    for label, [(first, gold1), (second, gold2)] in asked.runs.items():
        assert (gold1, gold2) == (["backoff.py"], ["jitter.py"]), label
        # every system sees each parent's tree, not HEAD's (retry.py) nor another parent's
        assert "retry.py" not in first + second, label
        assert "jitter.py" not in first, label
    for label in ("bm25 alone", *parent_bench.PEERS):
        [(first, _), (second, _)] = asked.runs[label]
        assert (first[0], second[0]) == ("backoff.py", "jitter.py"), label
    rows = list(parent_bench.dump_rows("demo", asked))
    assert len(rows) == 2 * len(asked.runs)
    ranked = asked.runs[parent_bench.PIX][1][0]
    assert rows[1] == {
        "set": "demo", "subject": 1, "commit": spread, "query": "jitter: spread the waits",
        "system": parent_bench.PIX, "gold": ["jitter.py"], "ranked": ranked,
    }  # fmt: skip


def e(ndcg: float, mrr: float) -> dict[str, float]:
    return {"ndcg@10": ndcg, "mrr@10": mrr}


def test_the_table_names_the_rivals_pix_is_not_above():
    scores = {label: e(0.2, 0.2) for label in [*parent_bench.SYSTEMS, *parent_bench.PEERS]}
    scores[parent_bench.PIX] = e(0.6, 0.5)
    scores["bm25 alone"] = e(0.6, 0.4)  # a tie counts as not above
    scores[parent_bench.SEMBLE] = e(0.5, 0.7)
    scores["without refinement"] = e(0.9, 0.9)  # pix's own variant is no rival
    assert parent_bench.below(scores) == ["bm25 alone (nDCG@10)", f"{parent_bench.SEMBLE} (MRR@10)"]
    other = {label: e(0.1, 0.1) for label in scores} | {parent_bench.PIX: e(0.8, 0.7)}
    text = parent_bench.table({"a": (scores, 3, 1, 2.0), "b": (other, 4, 0, 1.0)}).render()
    assert "| a | 0.600 / 0.500 |" in text
    rivals = f"bm25 alone (nDCG@10); {parent_bench.SEMBLE} (MRR@10)"
    assert f"| -0.100 | {rivals} | 3 | 1 | 2 |" in text
    assert "| +0.100 | - | 4 | 0 | 1 |" in text
    assert "| **mean of 2 sets** | 0.700 / 0.600 |" in text


def test_the_table_of_pix_alone_has_no_rivals_column():
    text = parent_bench.table({"a": ({parent_bench.PIX: e(0.5, 0.4)}, 7, 0, 3.0)}).render()
    assert "| set | pix static-only | distance to the mean | asked | left out | s |" in text
    assert "| a | 0.500 / 0.400 | +0.000 | 7 | 0 | 3 |" in text
