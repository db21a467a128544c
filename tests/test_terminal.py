"""What a person at a terminal gets: text answers have a default budget there (issue 10,
point 15), stated in --help; pipes, JSON and MCP keep their documented defaults. The terminal
is a real pseudo-terminal around the real `pix` process."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from conftest import TABLES, indexed_repo, on_pty, pix

from pix.cli_io import TERMINAL_MAX_CHARACTERS

LOG = "".join(
    f"line {i}: the rain gauge read {i % 17} millimetres of rainfall\n" for i in range(900)
)
ANSI = re.compile(r"\x1b\[[0-9;]*m")
RAIN = "rain gauge millimetres of rainfall"


@pytest.fixture(scope="module")
def repo(tmp_path_factory, embedder) -> Path:
    assert len(LOG) > 2 * TERMINAL_MAX_CHARACTERS
    files = {"docs/rain_log.md": LOG, "docs/rain_copy.md": LOG + "copy\n", "src/tables.py": TABLES}
    root, db = indexed_repo(tmp_path_factory.mktemp("terminal"), files, embedder)
    os.replace(db, root / ".pix.db")
    return root


def on_terminal(*args: str, cwd: Path) -> tuple[int, str]:
    """Run pix with stdout on a pseudo-terminal: (exit code, what it showed, colours removed)."""
    code, shown = on_pty(*args, cwd=cwd)
    return code, ANSI.sub("", shown)


def test_file_mode_text_on_a_terminal_is_held_to_the_default_budget(repo):
    code, shown = on_terminal("query", RAIN, "--file", "--top", "3", cwd=repo)
    assert code == 0
    body, footer = shown.rstrip("\n").rsplit("\n", 1)
    assert len(body) <= TERMINAL_MAX_CHARACTERS < len(LOG)
    assert "[truncated]" in body and "[...]" in body
    assert "raise --max-characters (0: no limit) to see all" in footer
    assert "cut by the budget: " in footer  # the files that did not fit are named


def test_a_budget_that_cuts_every_result_says_so(repo):
    # Not a bare "no results": a tiny --max-characters cut them, and the footer says how to lift
    # it, on a terminal (coloured) and in a pipe (plain), in both modes.
    for mode in ([], ["--file"]):
        code, shown = on_terminal("query", RAIN, *mode, "--max-characters", "5", cwd=repo)
        assert code == 0
        (line,) = shown.rstrip("\n").split("\n")
        # One line that does not contradict itself ("no results", then "0 more below top,
        # 6 cut by the budget": audit).
        assert line.startswith("no results shown: all ") and " cut by the budget" in line
        assert line.endswith("raise --max-characters (0: no limit) to see them")
        code, out, _ = pix("query", RAIN, *mode, "--max-characters", "5", cwd=repo)
        assert code == 0 and out == line + "\n"
    # What top left out is still said (a reviewer: the one line dropped it).
    code, out, _ = pix("query", RAIN, "--top", "1", "--max-characters", "5", cwd=repo)
    assert code == 0 and out.startswith("no results shown: all 1 cut by the budget")
    assert "more below top)" in out
    code, out, _ = pix("query", "zzqqxxvvjjkk", "--channel", "bm25", cwd=repo)
    assert code == 0 and out == "no results\n"  # nothing found: nothing more to say


def test_the_terminal_budget_is_lifted_by_max_characters(repo):
    code, shown = on_terminal(
        "query", RAIN, "--file", "--top", "1", "--max-characters", "0", cwd=repo
    )
    assert code == 0
    assert LOG in shown and "[truncated]" not in shown
    code, shown = on_terminal(
        "query", RAIN, "--file", "--top", "1", "--max-characters", "30000", cwd=repo
    )
    assert code == 0 and "[truncated]" in shown and len(shown) > TERMINAL_MAX_CHARACTERS


def test_pipes_and_json_keep_their_documented_defaults(repo):
    code, out, err = pix("query", RAIN, "--file", "--top", "2", cwd=repo)
    assert code == 0, err
    assert out.count(LOG) == 2 and "[truncated]" not in out  # a pipe: no budget
    code, shown = on_terminal("query", RAIN, "--file", "--top", "2", "--json", cwd=repo)
    assert code == 0
    response = json.loads(shown)
    assert all("truncated" not in r for r in response["results"])
    assert response["omitted"] == {"top": 1, "budget": 0, "budgetFiles": []}


def test_a_saved_file_alias_run_on_a_terminal_gets_the_same_budget(repo):
    code, _, err = pix("alias", "add", "rain", RAIN, "--file", "--top", "2", cwd=repo)
    assert code == 0, err
    code, shown = on_terminal("run", "rain", cwd=repo)
    assert code == 0
    assert "[truncated]" in shown and "raise --max-characters" in shown
    code, shown = on_terminal("run", "rain", "--max-characters", "0", cwd=repo)
    assert code == 0 and shown.count(LOG) == 2


def test_help_states_the_terminal_budget_and_how_to_lift_it(repo):
    code, out, _ = pix("query", "--help", cwd=repo)
    assert code == 0
    flat = " ".join(out.split())
    assert "Text on a terminal gets 20,000 unless given; 0: no limit." in flat


COMMANDS = [
    [], ["index"], ["query"], ["pack"], ["status"], ["gc"], ["mcp"], ["discover"], ["run"],
    ["alias"], ["alias", "add"], ["alias", "list"], ["alias", "show"], ["alias", "rm"],
]  # fmt: skip


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) or "pix" for c in COMMANDS])
def test_help_shows_no_placeholder_after_a_flag(command, tmp_path):
    """Issue 10 (18): a boolean flag takes no value, so help shows none (it showed `<bool>`)."""
    code, out, err = pix(*command, "--help", cwd=tmp_path)
    assert code == 0, err
    assert "<bool>" not in out
    flags = [line.split() for line in out.splitlines() if line.strip().startswith("--")]
    for words in flags:
        if words[0] in ("--help", "--file", "--json", "--copy", "--no-content", "--quiet"):
            assert not words[1:2] or not words[1].startswith("<"), words
