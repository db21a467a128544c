"""bench/devbench.py --build-only: it builds the cached databases other benches read, so it
refuses to build into a folder that goes with the run, and builds nothing for the sets that
have no database of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import devbench


def test_build_only_needs_reuse(capsys):
    with pytest.raises(SystemExit) as exit_:
        devbench.main(["--sets", "cosqa", "--build-only"])
    assert exit_.value.code == 2
    assert "--build-only needs --reuse" in capsys.readouterr().err


def test_build_only_builds_nothing_for_sets_that_ask_other_sets_databases(tmp_path: Path):
    run = devbench.Run(tmp_path, True, False, set(), 0)
    assert devbench.build_only(["exact", "questions"], run) == []
