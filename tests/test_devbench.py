"""bench/devbench.py --build-only: it builds the cached databases other benches read, so it
refuses to build into a folder that goes with the run, and for the sets that have no database of
their own it builds those of the repositories they ask."""

from __future__ import annotations

import pytest

from bench import devbench, devsets


def test_build_only_needs_reuse(capsys):
    with pytest.raises(SystemExit) as exit_:
        devbench.main(["--sets", "cosqa", "--build-only"])
    assert exit_.value.code == 2
    assert "--build-only needs --reuse" in capsys.readouterr().err


def test_sets_without_a_database_need_those_of_the_repositories_they_ask():
    """--build-only and --costs read `needed`: the questions' own repositories (pytest,
    seaborn) are built too, and a database that two sets ask is named once."""
    questions = devbench.needed(["questions"])
    assert {"pytest", "seaborn", "tmux"} <= set(questions)
    assert "questions" not in questions and len(questions) == len(set(questions))
    lang = devsets.committed_sets("commitloc")
    assert set(devbench.needed(["exact"])) <= set(lang)
    both = devbench.needed(["tmux", "exact", "questions", "cosqa"])
    assert both[0] == "tmux" and both[-1] == "cosqa"
    assert both.count("tmux") == 1 and set(questions) <= set(both)
