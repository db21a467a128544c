"""bench/history_bench.py: a commit subject is weighed by the history before its own commit
(never its own or later ones), and a variant of the prior is undone after it is asked."""

from __future__ import annotations

import datetime
import os
import subprocess
from pathlib import Path

from conftest import GIT_ENV, write

from bench import history_bench
from pix.retrieve import history

DAY = 86_400
NOW = 1_780_000_000


def commit_at(repo: Path, days_ago: int) -> None:
    stamp = f"@{NOW - days_ago * DAY} +0000"
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    for args in (["add", "-A"], ["commit", "-q", "-m", f"day {days_ago}"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)


def test_the_counts_of_a_day_hold_only_the_year_before_it(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    for n, days in enumerate((500, 300, 200, 100)):
        write(repo, {"a.py": f"A = {n}\n", **({"b.py": f"B = {n}\n"} if days == 100 else {})})
        commit_at(repo, days)
    log = history_bench.Log(repo / ".git", "HEAD")
    assert log.counts(NOW - 100 * DAY) == {"a.py": 2}  # 300 and 200; not 100 itself, not 500
    assert log.counts(NOW - 100 * DAY + 1) == {"a.py": 3, "b.py": 1}
    assert log.counts(NOW + 400 * DAY) == {}
    # A question is asked with the year before its own commit; undated, the pinned commit's.
    day100 = datetime.datetime.fromtimestamp(NOW - 100 * DAY, datetime.UTC).isoformat()
    assert log.asked({"date": day100}) == {"a.py": 2}
    assert log.asked({}) == {"a.py": 3, "b.py": 1}


def test_a_variant_is_undone_after_it_is_asked():
    shipped = history.POWER, history.CAP, history.applies, history.KEEPS_FIRST
    change, question = "Fix the retry delay", "how is the retry delay computed"
    with history_bench.prior(None):
        assert not history.applies(change, "question")
        assert not history.applies("a long report", "issue")
    with history_bench.prior(0.3, 7, first=True):
        assert (history.POWER, history.CAP, history.KEEPS_FIRST) == (0.3, 7, frozenset())
        assert history.applies("a long report", "issue") and history.applies(change, "question")
        assert not history.applies(question, "question")
    assert (history.POWER, history.CAP, history.applies, history.KEEPS_FIRST) == shipped
    labels = [label for label, *_ in history_bench.variants("0.1", "20", True)]
    assert labels == ["with", "power 0.1 cap 20", "with, an issue's first file too"]
