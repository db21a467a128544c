"""Byte-identical files at several paths take one place (pix/retrieve/rank.py `fold_copies`).

A real git repository in a temp folder, indexed with the real model into real SQLite; answers
through pix.query.query and the real command line, validated against
schema/query-response.v2.json. (Across a workspace's repositories nothing is folded:
tests/test_shards.py's test_file_mode_dedupes_per_repository keeps both repositories' copies.)

Corpus:
- certs/valid/retry.py, certs/expired/retry.py, certs/revoked/retry.py   one text, three paths
- net/backoff.py     a different file on the same subject
- shapes.py, mail.py unrelated
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from conftest import GEOMETRY, MAILER, indexed_in_place, new_repo, pix, pix_json, where

from pix.index import index_repository
from pix.output.render import header
from pix.output.result import Result
from pix.query import QueryEngine, QueryRequest, query, retrieve
from pix.retrieve import rank

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[1] / "schema" / "query-response.v2.json").read_text()
)

RETRY = '''def retry_with_jitter(call, attempts=5, base=0.2):
    """Call again after a failure, waiting longer each attempt, with random jitter."""
    import random
    import time

    for attempt in range(attempts):
        try:
            return call()
        except ConnectionError:
            time.sleep(base * 2**attempt + random.random() * base)
    return call()
'''
BACKOFF = '''def exponential_backoff_delays(base, limit):
    """The waits between attempts to reconnect: doubling from base up to limit."""
    delay = base
    while delay < limit:
        yield delay
        delay *= 2
'''
QUESTION = "retry a failed call with jitter, waiting longer each attempt"
COPIES = ["certs/expired/retry.py", "certs/revoked/retry.py", "certs/valid/retry.py"]
FILES = dict.fromkeys(COPIES, RETRY) | {
    "net/backoff.py": BACKOFF,
    "shapes.py": GEOMETRY,
    "mail.py": MAILER,
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory, embedder) -> Path:
    return indexed_in_place(tmp_path_factory.mktemp("copies"), FILES, embedder)


def ask(repo: Path, **options) -> dict:
    response = query(QueryRequest(QUESTION, **options), cwd=str(repo))
    jsonschema.validate(response, SCHEMA)
    return response


def test_identical_files_take_one_place_and_name_the_others(repo):
    results = ask(repo, mode="file", top=10)["results"]
    files = [r["file"] for r in results]
    # One of the three copies leads and stands for them all; each path is named exactly once.
    first = results[0]
    assert first["file"] in COPIES
    assert sorted([first["file"], *first["copies"]]) == COPIES
    assert not set(files[1:]) & set(COPIES)
    # The freed places go to the other files, each of them without copies.
    assert "net/backoff.py" in files[1:3]
    assert len(files) == len(FILES) - 2
    assert all("copies" not in r for r in results[1:])


def test_the_copies_are_the_ones_a_plain_ranking_puts_next(repo):
    """The folded paths are those that by_file ranks right after the kept one (same chunks,
    same scores), in that order: folding removes places and changes no other order."""
    engine = QueryEngine(cwd=str(repo))
    try:
        with engine.store.read():
            hits = retrieve(engine, QueryRequest(QUESTION, mode="file"), []).hits
    finally:
        engine.close()
    plain = [h.path for h in rank.by_file(hits)]
    folded = rank.arrange(hits, files=True)
    assert [h.path for h in folded] == [p for p in plain if p not in folded[0].copies]
    assert list(folded[0].copies) == [p for p in plain if p in COPIES][1:]


def test_a_chunk_held_by_several_files_is_shown_once(repo):
    results = ask(repo, top=10)["results"]
    leading = [r for r in results if where(r) in COPIES]
    assert len(leading) == 1
    assert sorted([where(leading[0]), *leading[0]["copies"]]) == COPIES
    # No content is shown twice: each (blob, lines) appears once.
    shown = [(r["citation"]["blob"], r["startLine"], r["endLine"]) for r in results]
    assert len(shown) == len(set(shown))


def test_the_text_is_shown_once(repo):
    full = ask(repo, mode="file", top=2)
    assert full["results"][0]["text"] == RETRY
    assert full["results"][1]["file"] == "net/backoff.py"


def test_a_file_the_budget_cuts_is_named_with_its_copies(repo):
    """What did not fit is still named, so it can be asked for: every copy of it."""
    question = "exponential backoff delays doubling up to a limit"
    ranked = query(QueryRequest(question, mode="file", no_content=True), cwd=str(repo))["results"]
    assert ranked[0]["file"] == "net/backoff.py" and ranked[1]["file"] in COPIES
    response = query(
        QueryRequest(question, mode="file", max_characters=len(BACKOFF) + 50), cwd=str(repo)
    )
    jsonschema.validate(response, SCHEMA)
    assert [r["file"] for r in response["results"]] == ["net/backoff.py"]
    cut = response["omitted"]["budgetFiles"]
    assert cut[:3] == [ranked[1]["file"], *ranked[1]["copies"]]
    assert sorted(cut[:3]) == COPIES


def test_a_workspace_folds_within_each_repository(repo, tmp_path, embedder):
    other = new_repo(tmp_path / "mirror", {"certs/valid/retry.py": RETRY, "shapes.py": GEOMETRY})
    index_repository(str(other), embedder=embedder)
    code, out, err = pix_json(
        "query", QUESTION, "--file", "--no-content", "--json",
        "--db", str(repo / ".pix.db"), "--db", str(other / ".pix.db"),
    )  # fmt: skip
    assert code == 0, err
    jsonschema.validate(out, SCHEMA)
    held = {(r["repo"], r["file"]): r.get("copies", []) for r in out["results"]}
    mine = [(name, path) for name, path in held if path in COPIES]
    # One result per repository holding the text: three paths folded in one, none in the other.
    assert sorted(name for name, _ in mine) == sorted({name for name, _ in held})
    assert sorted(len(held[k]) for k in mine) == [0, 2]


def test_the_terminal_header_names_the_copies(repo):
    code, out, err = pix("query", QUESTION, "--file", "--top", "2", "--no-content", cwd=repo)
    assert code == 0, err
    header = out.splitlines()[0]
    assert header.startswith("── certs/")
    others = [p for p in COPIES if p not in header.split()[1]]
    assert header.endswith(f"(same text at {', '.join(others)})")


def test_the_header_names_three_copies_at_most():
    copies = tuple(f"vendor/v{i}/retry.py" for i in range(2, 7))
    line = header(Result("file", "vendor/v1/retry.py", "0" * 40, 1.0, 1.0, "source", copies=copies))
    assert line.endswith(
        "(same text at vendor/v2/retry.py, vendor/v3/retry.py, vendor/v4/retry.py and 2 more)"
    )
