"""The JSON contract of `pix query`: schema/query-request.v1.json, query-response.v2.json and
error.v1.json, checked with jsonschema against real responses from a real indexed repository."""

from __future__ import annotations

import copy
import itertools
import json
import re
from pathlib import Path

import apsw
import jsonschema
import pytest
from conftest import TABLES, WEATHER, git, new_repo, where

from pix import errors
from pix.errors import UsageError
from pix.index import index_repository
from pix.query import QueryRequest, query

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schema"


def load(name: str) -> dict:
    return json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))


REQUEST_SCHEMA = load("query-request.v1.json")
RESPONSE_SCHEMA = load("query-response.v2.json")
ERROR_SCHEMA = load("error.v1.json")
Validator = jsonschema.Draft202012Validator


def part(name: str) -> Validator:
    """A validator for one $defs entry of the response schema (chunkResult, fileResult, ...)."""
    return Validator({"$defs": RESPONSE_SCHEMA["$defs"], "$ref": f"#/$defs/{name}"})


CHUNK_RESULT, FILE_RESULT, CITATION = part("chunkResult"), part("fileResult"), part("citation")
RESPONSE = Validator(RESPONSE_SCHEMA)
REQUEST = Validator(REQUEST_SCHEMA)
HEX40 = re.compile(r"^[0-9a-f]{40}$")


FILES = {
    "src/tables.py": TABLES,
    "src/weather.py": WEATHER,
    "tests/test_weather.py": "from src.weather import average_temperature\n\n\n"
    "def test_average_temperature():\n    assert average_temperature([10, 20]) == 15\n",
    "docs/guide.md": "# Guide\n\n"
    "Convert a temperature from Celsius with `convert_celsius_to_fahrenheit`.\n",
}
QUESTION = "convert celsius temperature"


@pytest.fixture(scope="module")
def repo(tmp_path_factory, embedder) -> Path:
    root = new_repo(tmp_path_factory.mktemp("contract") / "repo", FILES)
    index_repository(str(root), embedder=embedder)
    return root


def ask(repo: Path, **options) -> dict:
    return query(QueryRequest(options.pop("text", QUESTION), **options), cwd=str(repo))


def problems(validator: Validator, instance: object) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator.iter_errors(instance)
    ]


VARIANTS = list(
    itertools.product(
        ["chunk", "file"], ["minimal", "default", "full"], [False, True], [False, True]
    )
)


@pytest.mark.parametrize(
    ("mode", "view", "explain", "no_content"),
    VARIANTS,
    ids=["-".join(map(str, v)) for v in VARIANTS],
)
def test_every_response_validates(repo, mode, view, explain, no_content):
    response = ask(
        repo, mode=mode, view=view, explain=explain, no_content=no_content, top=4, context_lines=1
    )
    assert problems(RESPONSE, response) == []
    assert response["schemaVersion"] == 2
    assert response["mode"] == mode
    assert len(response["results"]) == 4
    assert ("explain" in response) is explain
    own, other = (CHUNK_RESULT, FILE_RESULT) if mode == "chunk" else (FILE_RESULT, CHUNK_RESULT)
    for result in response["results"]:
        assert problems(own, result) == []
        assert problems(other, result), f"a {mode} result also validates as the other shape"
        assert ("text" in result) is (not no_content)
        assert ("explain" in result) is explain
        assert "truncated" not in result
        if view == "minimal" and mode == "chunk":
            assert "rel" not in result and "role" not in result
        else:  # seed 000: a file result is {file, score, rel, text?, truncated?} in every view
            assert isinstance(result["rel"], float)
        assert ("role" in result) is (view == "full")
        if mode == "file":
            assert "path" not in result and {"file", "score", "rel"} <= result.keys()
            if not no_content:
                assert result["text"] == (repo / result["file"]).read_text(encoding="utf-8")


@pytest.mark.parametrize("mode", ["chunk", "file"])
@pytest.mark.parametrize("view", ["minimal", "default", "full"])
def test_truncated_responses_validate(repo, mode, view):
    response = ask(repo, mode=mode, view=view, top=3, max_characters=350)
    assert problems(RESPONSE, response) == []
    flagged = [r for r in response["results"] if "truncated" in r]
    assert len(flagged) == 1
    assert flagged[0] is response["results"][-1]
    assert flagged[0]["truncated"] is True
    assert flagged[0]["text"].endswith("[...]")
    assert response["omitted"]["budget"] == 3 - len(response["results"])
    # The flag is `true` or absent: a complete result saying `truncated: false` is off-contract.
    complete = copy.deepcopy(response)
    complete["results"][-1]["truncated"] = False
    assert problems(RESPONSE, complete)


def test_file_mode_names_the_files_the_budget_left_out(repo):
    """Issue 10 (15): when maxCharacters cuts files, their paths are still listed."""
    whole = ask(repo, mode="file", top=4, no_content=True)
    cut = ask(repo, mode="file", top=4, max_characters=350)
    assert problems(RESPONSE, cut) == []
    shown = [r["file"] for r in cut["results"]]
    assert 1 <= len(shown) < 4
    assert cut["omitted"]["budget"] == 4 - len(shown)
    assert cut["omitted"]["budgetFiles"] == [r["file"] for r in whole["results"]][len(shown) :]
    assert whole["omitted"]["budgetFiles"] == []
    chunks = ask(repo, mode="chunk", top=4, max_characters=350)
    assert "budgetFiles" not in chunks["omitted"]  # chunk results keep version 1's omitted
    listed = {**copy.deepcopy(chunks), "omitted": {**chunks["omitted"], "budgetFiles": []}}
    assert problems(RESPONSE, listed)


@pytest.mark.parametrize("mode", ["chunk", "file"])
@pytest.mark.parametrize("view", ["minimal", "default", "full"])
def test_every_result_carries_a_citation_with_blob_and_commit(repo, mode, view):
    """Issue 3: 'Every result carries a citation: a stable id, the path, the blob id and the
    commit.' Seed 003: 'Every hit in every view includes citation'."""
    head = git(repo, "rev-parse", "HEAD")
    response = ask(repo, mode=mode, view=view, top=4, no_content=True)
    assert response["snapshot"]["commit"] == head
    for result in response["results"]:
        assert "citation" in result, f"{view} view: no citation for {where(result)}"
        citation = result["citation"]
        assert problems(CITATION, citation) == []
        assert HEX40.match(citation["blob"])
        assert citation["blob"] == git(repo, "rev-parse", f"HEAD:{where(result)}")
        assert citation["commit"] == head
        assert citation["path"] == where(result)
        assert citation["id"]


def test_citation_ids_are_stable(repo):
    once = ask(repo, mode="chunk", top=4, no_content=True)
    twice = ask(repo, mode="chunk", top=4, no_content=True)
    assert [r["citation"] for r in once["results"]] == [r["citation"] for r in twice["results"]]
    ids = [r["citation"]["id"] for r in once["results"]]
    assert len(set(ids)) == len(ids)  # distinct chunks, distinct ids


def test_mode_and_result_shape_must_agree(repo):
    chunks = ask(repo, mode="chunk", top=2)
    files = ask(repo, mode="file", top=2)
    assert problems(RESPONSE, chunks) == [] and problems(RESPONSE, files) == []

    chunks_as_files = {**copy.deepcopy(chunks), "mode": "file"}
    files_as_chunks = {**copy.deepcopy(files), "mode": "chunk"}
    assert problems(RESPONSE, chunks_as_files)
    assert problems(RESPONSE, files_as_chunks)

    # A file result never carries chunk fields.
    for key, value in [
        ("startLine", 1),
        ("endLine", 3),
        ("kind", "function"),
        ("symbol", "x"),
        ("context", {"before": "", "after": ""}),
        ("path", "src/tables.py"),  # version 1's name for it
    ]:
        bad = copy.deepcopy(files)
        bad["results"][0][key] = value
        assert problems(RESPONSE, bad), key
    # A chunk result always carries its lines.
    bad = copy.deepcopy(chunks)
    del bad["results"][0]["startLine"]
    assert problems(RESPONSE, bad)


@pytest.mark.parametrize("mode", ["chunk", "file"])
def test_explain_block_validates_and_names_known_channels(repo, mode):
    response = ask(repo, mode=mode, explain=True, top=4, no_content=True)
    assert problems(RESPONSE, response) == []
    summary = response["explain"]
    assert set(summary["weights"]) == {
        "dense",
        "static",
        "bm25",
        "ident",
        "path",
        "component",
        "log",
    }
    for result in response["results"]:
        channels = result["explain"]["channels"]
        assert channels and set(channels) <= {"dense", "static", "bm25", "ident", "path"}
    everything = ask(repo, mode="file", view="full", explain=True, top=10, no_content=True)
    roles = {r["file"]: (r["role"], r["explain"]["role"]) for r in everything["results"]}
    assert roles == {
        "src/tables.py": ("source", "source"),
        "src/weather.py": ("source", "source"),
        "tests/test_weather.py": ("test", "test"),
        "docs/guide.md": ("docs", "docs"),
    }


def test_snapshot_block_says_how_it_was_selected(repo):
    head = git(repo, "rev-parse", "HEAD")
    newest = ask(repo, top=1, no_content=True)["snapshot"]
    assert newest["selection"] == "newest" and newest["requestedRef"] is None
    assert newest["commit"] == head and newest["kind"] == "worktree"
    assert newest["branch"] == "main" and newest["dirty"] is False
    exact = ask(repo, top=1, no_content=True, at="HEAD")["snapshot"]
    assert exact["selection"] == "exact" and exact["requestedRef"] == "HEAD"
    assert exact["commit"] == head
    assert problems(part("snapshot"), exact) == []


# -- requests ----------------------------------------------------------------------------------

REQUEST_EXAMPLES = [
    {"query": "restore auth context"},
    {"query": "restore auth context", "top": 5, "at": "HEAD", "explain": True},
    {"query": "Session.request", "mode": "file", "top": 3, "noContent": True},
    {
        "query": "retry backoff",
        "mode": "chunk",
        "contextLines": 3,
        "maxCharacters": 4000,
        "view": "minimal",
        "onlyPaths": ["src/", "*.py"],
        "ignorePaths": ["tests/**"],
    },
    {"query": "cookies", "fusion": "dbsf", "priors": False, "channels": ["bm25", "ident"]},
    {
        "query": "x",
        "at": "0123abcd",
        "refresh": True,
        "view": "full",
        "maxCharacters": None,
        "channels": None,
    },
    {"query": "x", "top": 1000},  # out of range is clamped at run time, not refused
]


@pytest.mark.parametrize("payload", REQUEST_EXAMPLES, ids=range(len(REQUEST_EXAMPLES)))
def test_request_examples_validate_and_load(payload):
    assert problems(REQUEST, payload) == []
    request = QueryRequest.from_json(copy.deepcopy(payload))
    assert request.query == payload["query"]
    assert request.mode == payload.get("mode", "chunk")
    assert request.top == payload.get("top", 10)
    assert request.no_content is payload.get("noContent", False)
    assert request.only_paths == payload.get("onlyPaths", [])
    # What the request object writes back is itself a valid request with the same meaning.
    written = request.to_json()
    assert problems(REQUEST, written) == []
    assert {k: written[k] for k in payload} == payload
    assert QueryRequest.from_json(written) == request


def test_request_defaults_match_the_schema():
    written = QueryRequest("x").to_json()
    for name, spec in REQUEST_SCHEMA["properties"].items():
        if "default" in spec:
            assert written[name] == spec["default"], name
    assert set(written) == set(REQUEST_SCHEMA["properties"])


BAD_REQUESTS = [
    ({}, "query"),
    ({"query": ""}, "query"),
    ({"query": 3}, "query"),
    ({"query": "x", "bogus": True}, "bogus"),
    ({"query": "x", "mode": "files"}, "mode"),
    ({"query": "x", "top": "10"}, "top"),
    ({"query": "x", "top": 2.5}, "top"),
    ({"query": "x", "noContent": "true"}, "noContent"),
    ({"query": "x", "contextLines": -1}, "contextLines"),
    ({"query": "x", "maxCharacters": 0}, "maxCharacters"),
    ({"query": "x", "view": "huge"}, "view"),
    ({"query": "x", "onlyPaths": "src/"}, "onlyPaths"),
    ({"query": "x", "ignorePaths": [""]}, "ignorePaths"),
    ({"query": "x", "channels": ["dense", "dense"]}, "channels"),
    ({"query": "x", "channels": []}, "channels"),
    ({"query": "x", "channels": ["regex"]}, "channels"),
    ({"query": "x", "at": ""}, "at"),
    ({"query": "x", "fusion": "sum"}, "fusion"),
    (["x"], "top level"),
]


@pytest.mark.parametrize(("payload", "field"), BAD_REQUESTS, ids=[f for _, f in BAD_REQUESTS])
def test_invalid_requests_are_refused_naming_the_field(payload, field):
    assert problems(REQUEST, payload)
    with pytest.raises(UsageError) as caught:
        QueryRequest.from_json(payload)
    assert caught.value.exit_code == 2
    assert field in caught.value.message


# -- the error envelope ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "code", "exit_code"),
    [
        (errors.PixError("boom"), "unexpected", 1),
        (errors.UsageError("bad", hint="try this"), "bad_input", 2),
        (errors.NotIndexedError("missing", hint="pix index"), "not_indexed", 3),
        (errors.DatabaseError("corrupt"), "unusable_database", 4),
        (errors.ConflictError("busy"), "conflict", 5),
    ],
)
def test_error_envelopes_validate(error, code, exit_code):
    envelope = error.envelope()
    assert problems(Validator(ERROR_SCHEMA), envelope) == []
    assert envelope["error"]["code"] == code
    assert error.exit_code == exit_code
    assert ("hint" in envelope["error"]) is (error.hint is not None)


def test_a_failing_query_raises_an_error_whose_envelope_validates(repo):
    with pytest.raises(UsageError) as caught:
        ask(repo, at="main")
    assert problems(Validator(ERROR_SCHEMA), caught.value.envelope()) == []


def test_a_write_lock_held_past_the_wait_is_a_conflict_not_unexpected():
    error = errors.as_pix_error(apsw.BusyError("database is locked"))
    assert (error.code, error.exit_code) == ("conflict", 5)
    assert error.message.startswith("the database is busy: another process held its lock")
    assert "PIX_LOCK_TIMEOUT" in error.hint


def test_a_query_past_the_limit_is_read_up_to_it_and_says_so():
    # A pasted megabyte of log took a minute (every term looked up, every window embedded).
    from pix.request import MAX_QUERY_CHARS, check_request

    request = QueryRequest("word " * (MAX_QUERY_CHARS // 5 + 100), mode="file")
    warnings = check_request(request)
    assert len(request.query) == MAX_QUERY_CHARS
    assert warnings == [
        f"the query is {MAX_QUERY_CHARS + 500:,} characters; pix reads its first "
        f"{MAX_QUERY_CHARS:,}"
    ]
    short = QueryRequest("word " * 10, mode="file")
    assert check_request(short) == [] and short.query == "word " * 10


def test_a_query_empty_within_the_limit_is_empty():
    from pix.request import MAX_QUERY_CHARS, check_request

    with pytest.raises(errors.UsageError, match="the query is empty"):
        check_request(QueryRequest(" " * (MAX_QUERY_CHARS + 1) + "retry", mode="file"))
