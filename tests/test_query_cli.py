"""`pix query` on the command line: the real process, its stdout, stderr, exit code and clipboard.

One small repository is indexed once per module with the real model; every command runs as a
child process (`pix()` / `pix_json()` from conftest). The clipboard is a fake backend:
PIX_CLIPBOARD is a shell command that writes stdin to a file.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import jsonschema
import pytest
from conftest import MAILER, TABLES, WEATHER, clipboard, new_repo, pix, pix_json

from pix.index import index_repository

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schema"
RESPONSE_SCHEMA = json.loads((SCHEMA_DIR / "query-response.v2.json").read_text(encoding="utf-8"))
ERROR_SCHEMA = json.loads((SCHEMA_DIR / "error.v1.json").read_text(encoding="utf-8"))
EXIT_FOR_CODE = {"unexpected": 1, "bad_input": 2, "not_indexed": 3, "unusable_database": 4}


FILES = {"src/tables.py": TABLES, "src/weather.py": WEATHER, "src/mailer.py": MAILER}
CELSIUS = "convert celsius to fahrenheit"
HEADER = re.compile(r"^── (?P<path>[^\s:]+)(?::(?P<start>\d+)-(?P<end>\d+))?  score \d+\.\d+")


@pytest.fixture(scope="module")
def repo(tmp_path_factory, embedder) -> Path:
    root = new_repo(tmp_path_factory.mktemp("cli") / "repo", FILES)
    index_repository(str(root), embedder=embedder)
    return root


@pytest.fixture(scope="module")
def unindexed(tmp_path_factory) -> Path:
    return new_repo(
        tmp_path_factory.mktemp("cli") / "unindexed", {"a.py": "def a():\n    return 1\n"}
    )


def run(*args: str, cwd: Path, stdin: str | None = None, env: dict | None = None):
    code, out, err = pix("query", *args, cwd=cwd, stdin=stdin, env=env)
    assert "Traceback" not in err, err
    assert "Traceback" not in out, out
    return code, out, err


def run_json(*args: str, cwd: Path, stdin: str | None = None, env: dict | None = None) -> dict:
    code, out, err = run(*args, "--json", cwd=cwd, stdin=stdin, env=env)
    assert code == 0, (out, err)
    response = json.loads(out)
    jsonschema.validate(response, RESPONSE_SCHEMA)
    return response


def headers(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("── ")]


def expected_header_prefix(result: dict, mode: str) -> str:
    if mode == "file":
        return f"── {result['path']}  score "
    return f"── {result['path']}:{result['startLine']}-{result['endLine']}  score "


# -- human output ------------------------------------------------------------------------------


def test_text_output_has_a_path_and_line_header_per_chunk(repo):
    code, out, err = run(CELSIUS, "--top", "2", cwd=repo)
    assert code == 0, err
    response = run_json(CELSIUS, "--top", "2", cwd=repo)
    lines = headers(out)
    assert len(lines) == 2
    for line, result in zip(lines, response["results"], strict=True):
        assert line.startswith(expected_header_prefix(result, "chunk")), line
        assert HEADER.match(line)
    first = response["results"][0]
    start = TABLES.split("\n").index("def convert_celsius_to_fahrenheit(celsius):") + 1
    assert (first["path"], first["startLine"], first["endLine"]) == (
        "src/tables.py",
        start,
        start + 5,
    )
    assert lines[0].startswith(f"── src/tables.py:{start}-{start + 5}  score ")
    # The chunk text follows its header, verbatim.
    assert first["text"] in out
    assert out.index(lines[0]) < out.index(first["text"]) < out.index(lines[1])
    assert not out.lstrip().startswith("{")
    assert "warning" not in err


def test_file_flag_prints_whole_files_under_path_headers(repo):
    code, out, err = run(CELSIUS, "--file", "--top", "2", cwd=repo)
    assert code == 0, err
    lines = headers(out)
    assert len(lines) == 2
    assert lines[0].startswith("── src/tables.py  score ")
    assert all(HEADER.match(line) and HEADER.match(line)["start"] is None for line in lines)
    assert TABLES in out  # the complete file, lines outside the matching chunk included
    response = run_json(CELSIUS, "--file", "--top", "2", cwd=repo)
    assert response["mode"] == "file"
    assert [r["file"] for r in response["results"]] == [
        HEADER.match(line)["path"] for line in lines
    ]
    assert response["results"][0]["text"] == TABLES


def test_file_text_comes_with_the_line_ends_the_index_holds(tmp_path, embedder):
    # README: a CRLF file is stored with its line ends folded (BM25, lines and offsets see one
    # form), so --file hands back `\n` ends, and a BOM is dropped; `git show` has the bytes.
    crlf = "\ufeffdef kelvin_to_celsius(k):\r\n    return k - 273.15\r\n"
    root = new_repo(tmp_path / "crlf", {"temps.py": crlf})
    index_repository(str(root), embedder=embedder)
    response = run_json("kelvin to celsius", "--file", "--top", "1", cwd=root)
    assert response["results"][0]["file"] == "temps.py"
    assert response["results"][0]["text"] == "def kelvin_to_celsius(k):\n    return k - 273.15\n"


def test_no_content_text_output_is_headers_only(repo):
    code, out, _ = run(CELSIUS, "--file", "--no-content", "--top", "3", cwd=repo)
    assert code == 0
    assert len(headers(out)) == 3
    assert "def " not in out


def test_json_output(repo):
    response = run_json(CELSIUS, "--top", "3", cwd=repo)
    assert response["mode"] == "chunk"
    assert response["query"] == CELSIUS
    assert response["results"][0]["symbol"] == "convert_celsius_to_fahrenheit"
    assert len(response["results"]) == 3
    assert response["omitted"]["budget"] == 0
    assert response["warnings"] == []
    # --format json is the same as --json.
    code, out, err = run(CELSIUS, "--top", "3", "--format", "json", cwd=repo)
    assert code == 0
    assert json.loads(out) == response


def test_format_both_puts_json_on_stdout_and_text_on_stderr(repo):
    code, out, err = run(CELSIUS, "--top", "2", "--format", "both", cwd=repo)
    assert code == 0
    response = json.loads(out)  # stdout is JSON and nothing else
    jsonschema.validate(response, RESPONSE_SCHEMA)
    assert headers(out) == []
    lines = headers(err)
    assert len(lines) == 2
    for line, result in zip(lines, response["results"], strict=True):
        assert line.startswith(expected_header_prefix(result, "chunk"))


def test_cwd_and_db_options_reach_the_same_index(repo, tmp_path):
    here = run_json(CELSIUS, "--top", "2", cwd=repo)
    elsewhere = run_json(CELSIUS, "--top", "2", "--cwd", str(repo), cwd=tmp_path)
    assert elsewhere == here
    by_db = run_json(CELSIUS, "--top", "2", "--db", str(repo / ".pix.db"), cwd=repo)
    assert by_db["results"] == here["results"]


def test_max_characters_on_the_command_line(repo):
    code, out, _ = run(
        "temperature readings", "--file", "--top", "3", "--max-characters", "300", cwd=repo
    )
    assert code == 0
    response = run_json(
        "temperature readings", "--file", "--top", "3", "--max-characters", "300", cwd=repo
    )
    assert len(response["results"]) == 1
    assert response["results"][0]["truncated"] is True
    assert response["results"][0]["text"].endswith("[...]")
    assert response["omitted"]["budget"] == 2
    # The rendered results fit the budget (a closing summary line may follow them).
    lines = out.splitlines(keepends=True)
    body = "".join(lines[:-1]) if lines[-1].startswith("(") else out
    assert len(headers(out)) == 1
    assert "[...]" in body
    assert len(body) <= 300, len(body)


# -- clipboard ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode_args", [[], ["--file"]], ids=["chunk", "file"])
def test_copy_puts_the_formatted_text_on_the_clipboard(repo, tmp_path, mode_args):
    env, target = clipboard(tmp_path)
    code, printed, _ = run(CELSIUS, "--top", "2", *mode_args, cwd=repo)
    assert code == 0
    code, out, err = run(CELSIUS, "--top", "2", *mode_args, "--copy", cwd=repo, env=env)
    assert code == 0, err
    copied = target.read_text(encoding="utf-8")
    assert copied == printed == out
    assert len(headers(copied)) == 2
    if mode_args:
        assert TABLES in copied
    with pytest.raises(json.JSONDecodeError):
        json.loads(copied)


@pytest.mark.parametrize("mode_args", [[], ["--file"]], ids=["chunk", "file"])
def test_copy_with_json_output_still_copies_text(repo, tmp_path, mode_args):
    env, target = clipboard(tmp_path)
    code, printed, _ = run(CELSIUS, "--top", "2", *mode_args, cwd=repo)
    code, out, err = run(CELSIUS, "--top", "2", *mode_args, "--copy", "--json", cwd=repo, env=env)
    assert code == 0, err
    json.loads(out)  # stdout stays JSON
    copied = target.read_text(encoding="utf-8")
    assert copied == printed
    assert not copied.lstrip().startswith("{")


def test_a_failing_clipboard_command_is_a_one_line_error_after_the_answer(repo):
    code, out, err = run(
        CELSIUS, "--top", "1", "--copy", cwd=repo, env={"PIX_CLIPBOARD": "sh -c 'exit 7'"}
    )
    assert code == 2
    assert out.startswith("── src/tables.py:")  # the answer, as without --copy
    assert err == "pix: error: clipboard command 'sh' exited 7\n"


# -- --input -----------------------------------------------------------------------------------


REQUEST = {"query": CELSIUS, "mode": "file", "top": 2, "noContent": True}


def test_input_from_a_file_equals_the_same_flags(repo, tmp_path):
    path = tmp_path / "request.json"
    path.write_text(json.dumps(REQUEST), encoding="utf-8")
    from_file = run_json("--input", str(path), cwd=repo)
    from_flags = run_json(CELSIUS, "--file", "--top", "2", "--no-content", cwd=repo)
    assert from_file == from_flags
    assert from_file["mode"] == "file"
    assert [r["file"] for r in from_file["results"]][0] == "src/tables.py"
    assert all("text" not in r for r in from_file["results"])


def test_input_from_stdin(repo):
    from_stdin = run_json("--input", "-", cwd=repo, stdin=json.dumps(REQUEST))
    from_flags = run_json(CELSIUS, "--file", "--top", "2", "--no-content", cwd=repo)
    assert from_stdin == from_flags


def test_input_text_output_and_output_only_flags_are_allowed(repo):
    code, out, err = run(
        "--input", "-", "--format", "text", "--view", "full", cwd=repo, stdin=json.dumps(REQUEST)
    )
    assert code == 0, err
    assert len(headers(out)) == 2
    response = run_json("--input", "-", "--view", "full", cwd=repo, stdin=json.dumps(REQUEST))
    assert all(r["role"] == "source" for r in response["results"])


def test_input_keeps_the_view_of_the_request(repo):
    """The request schema has `view`; without --view on the command line it must be honoured."""
    request = {"query": CELSIUS, "top": 2, "view": "minimal"}
    response = run_json("--input", "-", cwd=repo, stdin=json.dumps(request))
    for result in response["results"]:
        assert "rel" not in result, result.keys()
        assert "kind" not in result, result.keys()


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        ([CELSIUS], "TEXT"),
        (["--top", "3"], "--top"),
        (["--file"], "--file"),
        (["--no-content"], "--no-content"),
        (["--explain"], "--explain"),
        (["--at", "HEAD"], "--at"),
        (["--only-path", "src/"], "--only-path"),
        (["--ignore-path", "src/"], "--ignore-path"),
        (["--max-characters", "100"], "--max-characters"),
        (["--context-lines", "2"], "--context-lines"),
        (["--refresh"], "--refresh"),
    ],
)
def test_input_with_a_query_changing_flag_is_refused(repo, extra, named):
    code, out, err = run("--input", "-", *extra, cwd=repo, stdin=json.dumps(REQUEST))
    assert code == 2
    assert out == ""
    assert err.startswith("pix: error:")
    assert err.count("\n") == 1
    assert named in err


# -- failures: exit codes, one line, the envelope ----------------------------------------------

FAILURES = [
    # id, args, stdin, where, exit code, text the message must contain
    ("malformed-json", ["--input", "-"], '{"query": "x", ', "repo", 2, "JSON"),
    ("not-json-at-all", ["--input", "-"], "query=x", "repo", 2, "JSON"),
    ("unknown-field", ["--input", "-"], '{"query": "x", "bogus": 1}', "repo", 2, "bogus"),
    ("wrong-type-top", ["--input", "-"], '{"query": "x", "top": "ten"}', "repo", 2, "top"),
    (
        "wrong-type-nocontent",
        ["--input", "-"],
        '{"query": "x", "noContent": "yes"}',
        "repo",
        2,
        "noContent",
    ),
    ("bad-mode", ["--input", "-"], '{"query": "x", "mode": "files"}', "repo", 2, "mode"),
    (
        "paths-not-a-list",
        ["--input", "-"],
        '{"query": "x", "onlyPaths": "src/"}',
        "repo",
        2,
        "onlyPaths",
    ),
    ("missing-query", ["--input", "-"], '{"top": 3}', "repo", 2, "query"),
    ("empty-query-in-input", ["--input", "-"], '{"query": ""}', "repo", 2, "query"),
    ("request-not-an-object", ["--input", "-"], "[1, 2]", "repo", 2, "object"),
    (
        "missing-input-file",
        ["--input", "no-such-request.json"],
        None,
        "repo",
        2,
        "no-such-request.json",
    ),
    ("empty-query", [""], None, "repo", 2, "empty"),
    ("blank-query", ["   "], None, "repo", 2, "empty"),
    ("no-query", [], None, "repo", 2, "query"),
    # Bytes that are not UTF-8 on the command line, an unpaired surrogate in JSON: bad input,
    # not "unexpected TypeError" from the tokenizer (audit).
    ("query-not-utf8", ["retry \udcff policy"], None, "repo", 2, "not valid UTF-8 (the byte 0xff)"),
    ("glob-not-utf8", ["x", "--only-path", "src/\udcfe"], None, "repo", 2, "onlyPaths/0"),
    ("surrogate-in-input", ["--input", "-"], '{"query": "x\\ud800"}', "repo", 2, "U+D800"),
    ("bad-format", ["x", "--format", "yaml"], None, "repo", 2, "--format"),
    ("bad-view", ["x", "--view", "huge"], None, "repo", 2, "--view"),
    ("bad-fusion", ["x", "--fusion", "sum"], None, "repo", 2, "--fusion"),
    ("bad-top", ["x", "--top", "ten"], None, "repo", 2, "--top"),
    ("negative-context", ["x", "--context-lines", "-1"], None, "repo", 2, "--context-lines"),
    ("negative-budget", ["x", "--max-characters", "-1"], None, "repo", 2, "--max-characters"),
    ("unknown-channel", ["x", "--channel", "regex"], None, "repo", 2, "regex"),
    ("branch-name", ["x", "--at", "main"], None, "repo", 2, "main"),
    ("revision-expression", ["x", "--at", "HEAD~1"], None, "repo", 2, "HEAD~1"),
    # A hex prefix shorter than git's shortest is refused saying how long one must be (audit).
    ("short-prefix", ["x", "--at", "ec4"], None, "repo", 2, "prefix of 4 digits or more"),
    (
        "unknown-commit",
        ["x", "--at", "0123456789abcdef0123"],
        None,
        "repo",
        3,
        "0123456789abcdef0123",
    ),
    ("before-any-index", ["x"], None, "unindexed", 3, "pix index"),
    ("garbage-database", ["x"], None, "garbage", 4, ".pix.db"),
    ("zeroed-database", ["x"], None, "zeroed", 4, ".pix.db"),
    ("database-is-a-folder", ["x"], None, "folder", 4, ".pix.db"),
    ("damaged-database", ["x"], None, "damaged", 4, "database"),
]


@pytest.fixture(scope="module")
def places(repo, unindexed, tmp_path_factory) -> dict[str, Path]:
    """Where each failure runs: the indexed repo, an unindexed one and broken databases."""
    base = tmp_path_factory.mktemp("broken")
    out = {"repo": repo, "unindexed": unindexed}

    def repo_with_db(name: str) -> Path:
        out[name] = new_repo(base / name, {"a.py": "def a():\n    return 1\n"})
        return out[name]

    (repo_with_db("garbage") / ".pix.db").write_text("this is not a database\n")
    (repo_with_db("zeroed") / ".pix.db").write_bytes(b"\0" * 65536)
    (repo_with_db("folder") / ".pix.db").mkdir()
    # A real index (a page-level copy of the module's database) whose middle third is overwritten:
    # the header and schema are intact, the damage shows only when the query reads its pages.
    damaged = repo_with_db("damaged") / ".pix.db"
    source = sqlite3.connect(repo / ".pix.db")
    copy = sqlite3.connect(damaged)
    source.backup(copy)
    copy.close()
    source.close()
    size = damaged.stat().st_size
    with damaged.open("r+b") as fh:
        fh.seek(size // 3 // 4096 * 4096)
        fh.write(b"\x5a" * (size // 3))
    return out


@pytest.mark.parametrize(
    ("args", "stdin", "where", "exit_code", "mention"),
    [case[1:] for case in FAILURES],
    ids=[case[0] for case in FAILURES],
)
def test_failure_is_one_line_on_stderr(places, args, stdin, where, exit_code, mention):
    code, out, err = run(*args, cwd=places[where], stdin=stdin)
    assert code == exit_code, (out, err)
    assert out == ""
    assert err.startswith("pix: error:"), err
    assert err.count("\n") == 1, err
    assert mention in err


@pytest.mark.parametrize(
    ("args", "stdin", "where", "exit_code", "mention"),
    [case[1:] for case in FAILURES],
    ids=[case[0] for case in FAILURES],
)
def test_failure_with_json_prints_exactly_the_error_envelope(
    places, args, stdin, where, exit_code, mention
):
    code, envelope, err = pix_json("query", *args, "--json", cwd=places[where], stdin=stdin)
    assert "Traceback" not in err
    assert code == exit_code, (envelope, err)
    jsonschema.validate(envelope, ERROR_SCHEMA)
    assert list(envelope) == ["error"]
    assert EXIT_FOR_CODE[envelope["error"]["code"]] == exit_code
    assert mention in envelope["error"]["message"] + envelope["error"].get("hint", "")


def test_format_json_failure_also_prints_the_envelope(places):
    code, envelope, err = pix_json("query", "x", "--format", "json", cwd=places["unindexed"])
    assert code == 3
    jsonschema.validate(envelope, ERROR_SCHEMA)
    assert envelope["error"]["code"] == "not_indexed"
    assert "Traceback" not in err


def test_top_out_of_range_warns_on_stderr_and_still_answers(repo):
    code, out, err = run(CELSIUS, "--top", "0", cwd=repo)
    assert code == 0
    assert len(headers(out)) == 1
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "top" in warnings[0]
    response = run_json(CELSIUS, "--top", "500", "--no-content", cwd=repo)
    assert any("500" in w and "100" in w for w in response["warnings"])
    everything = run_json(CELSIUS, "--top", "100", "--no-content", cwd=repo)
    assert everything["warnings"] == []
    assert response["results"] == everything["results"]


def test_refresh_never_indexes_another_folder_into_a_repositorys_database(make_repo, tmp_path):
    # `--db A/.pix.db --refresh` run from another folder indexed that folder into A's database,
    # whose new snapshot then answered every later query. A's tree is here: it is skipped with
    # a warning. A copied database whose tree is not here is still refreshed from this folder.
    repo = make_repo({"m.py": "def apple_function():\n    pass\n"})
    code, _, err = pix("index", "--static-only", cwd=repo)
    assert code == 0, err
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "stray.py").write_text("def unrelated():\n    pass\n")
    db = str(repo / ".pix.db")
    code, out, err = pix_json("query", "apple", "--db", db, "--refresh", "--json", cwd=elsewhere)
    assert code == 0, err
    assert [r["path"] for r in out["results"]] == ["m.py"] and "refreshed" not in out
    assert any(w.startswith("refresh skipped: ") for w in out["warnings"])
    code, out, err = pix_json("status", "--db", db, "--json", cwd=elsewhere)
    assert [s["root"] for s in out["snapshots"]] == [str(repo)]
    # The database's own tree changed: said, with where to re-index it (not --refresh).
    (repo / "m.py").write_text("def apple_function():\n    return 'changed'\n")
    code, out, err = pix_json("query", "apple", "--db", db, "--json", cwd=elsewhere)
    assert code == 0, err
    stale = f"1 file(s) changed in {repo} since this snapshot was indexed (m.py); "
    assert stale + f"run `pix index` in {repo} to include them" in out["warnings"]
    # status judges the same tree (it named the folder it was run in, "not indexed"; audit)
    code, out, err = pix_json("status", "--db", db, "--json", cwd=elsewhere)
    assert code == 0 and out["root"] == str(repo)
    assert out["workTree"] == {"indexed": True, "changed": 1, "changedPaths": ["m.py"]}
    copied = tmp_path / "copied.db"
    shutil.copy(db, copied)
    shutil.rmtree(repo)  # the copy's tree is not on this machine: refresh indexes this folder
    code, out, err = pix_json(
        "query", "unrelated", "--db", str(copied), "--refresh", "--json", cwd=elsewhere
    )
    assert code == 0, err
    assert out["refreshed"]["files"] == 1 and out["results"][0]["path"] == "stray.py"


def test_another_folders_database_is_told_apart_from_this_folders_own(make_repo, tmp_path):
    # The rule of the test above for a plain folder, a database kept outside its repository
    # and one holding commits only; a repository copied with its database is its own.
    plain, other = tmp_path / "plain", tmp_path / "other"
    for folder, text in ((plain, "def apple_function():\n    pass\n"), (other, "x = 1\n")):
        folder.mkdir()
        (folder / "m.py").write_text(text)
    assert pix("index", "--static-only", cwd=plain)[0] == 0
    db = str(plain / ".pix.db")
    code, out, err = pix_json("query", "apple", "--db", db, "--refresh", "--json", cwd=other)
    assert code == 0, err
    assert "refreshed" not in out and any(
        w.startswith("refresh skipped: ") for w in out["warnings"]
    )
    (plain / "m.py").write_text("def apple_function():\n    return 'changed'\n")
    code, out, err = pix_json("query", "apple", "--db", db, "--json", cwd=other)
    assert any(w.startswith(f"1 file(s) changed in {plain} ") for w in out["warnings"]), out

    # A database outside its repository: the advice names it.
    repo = make_repo({"m.py": "def apple_function():\n    pass\n"}, name="kept")
    kept = tmp_path / "dbs" / "kept.db"
    assert pix("index", "--static-only", "--db", str(kept), cwd=repo)[0] == 0
    (repo / "m.py").write_text("def apple_function():\n    return 'changed'\n")
    code, out, err = pix_json("query", "apple", "--db", str(kept), "--json", cwd=other)
    advice = f"run `pix index --db {kept}` in {repo} to include them"
    assert any(w.endswith(advice) for w in out["warnings"]), out

    # Commits only: no work-tree snapshot to answer from, and none of this folder is added.
    commits = make_repo({"m.py": "def apple_function():\n    pass\n"}, name="commits")
    assert pix("index", "--static-only", "--at", "HEAD", cwd=commits)[0] == 0
    cdb = str(commits / ".pix.db")
    code, out, err = pix_json("query", "apple", "--db", cdb, "--refresh", "--json", cwd=other)
    assert code == 3, err
    code, out, err = pix_json("status", "--db", cdb, "--json", cwd=other)
    assert [s["kind"] for s in out["snapshots"]] == ["commit"]

    # A repository copied with its database (`cp -r`): the copy's database, refreshed here.
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy)
    shutil.copy(kept, copy / ".pix.db")
    code, out, err = pix_json("query", "apple", "--refresh", "--json", cwd=copy)
    assert code == 0, err
    assert out["refreshed"]["files"] == 1
    assert not any(w.startswith("refresh skipped") for w in out["warnings"])


@pytest.mark.parametrize("flag", ["--only-path", "--ignore-path"])
def test_an_empty_glob_is_bad_input_as_the_request_schema_says(flag, make_repo):
    # `--only-path ''` answered "no results" and `--ignore-path ''` was ignored, where the
    # request schema (and so MCP and --input) refuses an empty glob (audit).
    repo = make_repo({"m.py": "def apple_function():\n    pass\n"})
    assert pix("index", "--static-only", cwd=repo)[0] == 0
    for glob in ("", "  "):
        code, out, err = pix("query", "apple", flag, glob, cwd=repo)
        assert code == 2 and err.startswith(f"pix: error: an {flag[2:]} glob is empty"), err


def test_a_subfolders_own_database_named_from_its_parent_judges_the_subfolder(make_repo, tmp_path):
    # `pix status --db sub/.pix.db` run in sub's parent read the parent as the tree: "work
    # tree not indexed", and a query's refresh indexed the parent into sub's database.
    sub = make_repo({"m.py": "def apple_function():\n    pass\n"}, name="sub")
    assert pix("index", "--static-only", cwd=sub)[0] == 0
    db = "sub/.pix.db"
    code, out, err = pix_json("status", "--db", db, "--json", cwd=tmp_path)
    assert code == 0 and out["root"] == str(sub), (err, out)
    assert out["workTree"] == {"indexed": True, "changed": 0, "changedPaths": []}
    (sub / "m.py").write_text("def apple_function():\n    return 'changed'\n")
    code, out, err = pix_json("query", "apple", "--db", db, "--refresh", "--json", cwd=tmp_path)
    assert code == 0, err
    assert any(
        w.startswith(f"refresh skipped: {sub / '.pix.db'} indexes {sub}") for w in out["warnings"]
    )
    code, out, err = pix_json("query", "apple", "--db", db, "--json", cwd=tmp_path)
    assert any(w.startswith(f"1 file(s) changed in {sub} ") for w in out["warnings"]), out


def test_a_folder_moved_behind_a_link_is_still_its_own_tree(make_repo):
    # Indexed at real/, then moved with a link left at real/: the snapshot's folder is the
    # same folder, so its changes are seen and a refresh indexes it.
    repo = make_repo({"m.py": "def apple_function():\n    pass\n"}, name="real")
    assert pix("index", "--static-only", cwd=repo)[0] == 0
    moved = repo.with_name("moved")
    repo.rename(moved)
    repo.symlink_to(moved, target_is_directory=True)
    (moved / "m.py").write_text("def apple_function():\n    return 'changed'\n")
    code, out, err = pix_json("query", "apple", "--json", cwd=moved)
    assert code == 0, err
    assert any(w.startswith("1 file(s) changed since this snapshot") for w in out["warnings"])
    code, out, err = pix_json("query", "apple", "--refresh", "--json", cwd=moved)
    assert code == 0, err
    # nothing changed since the refresh; the transformer's backlog stays `pix index`'s
    assert out["refreshed"]["files"] == 1
    assert [w.split(" ", 3)[:3] for w in out["warnings"]] == [["the", "transformer", "has"]]


def test_text_that_is_not_utf8_is_bad_input_for_every_command(repo):
    bad = "retry \udcff policy"
    for args in (
        ["pack", bad, "--budget", "100"],
        ["discover", "-l", f"a={bad}"],
        ["alias", "add", "badu", bad],
    ):
        code, out, err = pix(*args, cwd=repo)
        assert code == 2 and out == "", args
        assert err.startswith("pix: error: invalid request at ") and err.count("\n") == 1, err
        assert "not valid UTF-8 (the byte 0xff)" in err


def test_json_with_another_format_is_refused_not_silently_preferred(repo):
    for command in (["query", "x"], ["pack", "x", "--budget", "50"], ["run", "nothing"]):
        for other in ("text", "both"):
            code, envelope, err = pix_json(*command, "--json", "--format", other, cwd=repo)
            assert code == 2 and envelope["error"]["code"] == "bad_input", (command, err)
            assert envelope["error"]["message"] == (
                f"--json is --format json; it cannot go with --format {other}"
            )
    code, out, err = pix_json("query", CELSIUS, "--json", "--format", "json", cwd=repo)
    assert code == 0 and out["results"], err  # the same choice twice is no conflict
    # Refused before any work: an unknown commit (exit 3) is never looked for (a reviewer:
    # pack re-indexed with --refresh, then refused).
    for command in (["query", "x"], ["pack", "x", "--budget", "50"]):
        args = [*command, "--json", "--format", "text", "--at", "0123456789abcdef0123"]
        code, _, err = pix_json(*args, cwd=repo)
        assert code == 2, (command, err)


def test_a_changed_file_with_a_newline_in_its_name_keeps_the_warning_on_one_line(make_repo):
    repo = make_repo({"new\nline.py": "def apple():\n    pass\n", "b.py": "x = 1\n"})
    assert pix("index", "--static-only", cwd=repo)[0] == 0
    (repo / "new\nline.py").write_text("def apple():\n    return 2\n")
    code, out, err = pix("query", "apple", cwd=repo)
    assert code == 0, err
    warning = [line for line in err.splitlines() if "changed since this snapshot" in line]
    assert len(warning) == 1 and '"new\\nline.py"' in warning[0], err
