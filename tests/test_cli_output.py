"""CLI output edges: explain in text, failures under --format both, a failing clipboard,
context lines around form feeds, text that is not UTF-8."""

from __future__ import annotations

import json

import pytest
from conftest import pix

FILLER = "\n".join(f"filler_{i} = {i}" for i in range(5, 30))
SOURCE = (
    "line1 = 1\n\x0c\nline3 = 3\n" + FILLER + "\n\n\n"
    "def zebra_unicorn_target():\n    return 'found'\n\n\n"
    + "\n".join(f"after_{i} = {i}" for i in range(5))
    + "\n"
)


@pytest.fixture(scope="module")
def repo(tmp_path_factory, embedder):
    from conftest import commit, git, write

    from pix.index import index_repository

    root = tmp_path_factory.mktemp("cliout") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, {"ff.py": SOURCE, "latin.txt": b"caf\xe9 zebra\n"})
    commit(root)
    index_repository(str(root), embedder=embedder)
    return root


def test_explain_shows_in_text_output(repo):
    code, out, err = pix("query", "zebra unicorn target", "--top", "1", "--explain", cwd=repo)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("── ff.py:")
    assert lines[1].startswith("   explain: fused ") and " x prior 1 (source)" in lines[1]
    assert "bm25 #" in lines[1] and "dense #" in lines[1]
    plain = pix("query", "zebra unicorn target", "--top", "1", cwd=repo)[1]
    assert "explain:" not in plain


def test_format_both_failure_prints_envelope_and_line(repo):
    code, out, err = pix("query", "", "--format", "both", cwd=repo)
    assert code == 2
    assert json.loads(out)["error"]["code"] == "bad_input"
    assert err.startswith("pix: error: the query is empty")


def test_failing_clipboard_leaves_one_json_document(repo):
    code, out, err = pix(
        "query", "zebra", "--copy", "--json", cwd=repo, env={"PIX_CLIPBOARD": "false"}
    )
    assert code == 1
    assert list(json.loads(out)) == ["error"]  # one document: the error, no answer before it


def test_context_lines_count_lines_as_the_chunker_does(repo):
    code, out, err = pix(
        "query", "zebra_unicorn_target", "--top", "1", "--context-lines", "2", "--json", cwd=repo
    )
    assert code == 0, err
    (hit,) = out and json.loads(out)["results"]
    lines = SOURCE.split("\n")
    assert hit["text"].split("\n")[0] == lines[hit["startLine"] - 1]
    before = lines[max(hit["startLine"] - 3, 0) : hit["startLine"] - 1]
    assert hit.get("context", {}).get("before", "") == "".join(line + "\n" for line in before)


def test_text_that_is_not_utf8_is_skipped_as_not_text(repo):
    code, out, err = pix("status", "--json", cwd=repo)
    assert code == 0
    assert json.loads(out)["snapshots"][0]["skipped"] == {"not_text": 1}
