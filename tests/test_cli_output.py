"""CLI output edges: explain in text, failures under --format both, a failing clipboard,
context lines around form feeds, text that is not UTF-8, and the machine output of index and
status (schema/index-response.v1.json, status-response.v1.json)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from conftest import GIT_ENV, new_repo, pix, write

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


SHAPES = "".join(
    f'def area_{i}(w, h):\n    """Area of shape {i}."""\n    return w * h * {i}\n\n\n'
    for i in range(30)
)


def test_the_explain_line_adds_up_to_the_score(tmp_path):
    # The ranking stage's parts (standing out, file evidence) were in the JSON only, so the
    # text's parts did not add up to the fused score or to the file's.
    repo = new_repo(tmp_path / "shapes", {"shapes.py": SHAPES, "other.py": "x = 1\n"})
    assert pix("index", "--static-only", "-q", cwd=repo)[0] == 0
    for mode in ((), ("--file",)):
        args = ("query", "area of shape", "--explain", "--no-content", *mode)
        code, out, err = pix(*args, cwd=repo)
        assert code == 0, err
        lines = out.splitlines()
        explained = [(lines[i - 1], line) for i, line in enumerate(lines) if "explain:" in line]
        assert explained
        for header, line in explained:
            score = float(re.search(r"  score ([\d.]+)", header).group(1))
            fused, prior = map(float, re.findall(r"fused ([\d.]+) x prior ([\d.]+)", line)[0])
            parts = [float(x) for x in re.findall(r"\+([\d.]+)", line.split("file evidence")[0])]
            evidence = [float(x) for x in re.findall(r"file evidence \+([\d.]+)", line)]
            assert sum(parts) == pytest.approx(fused, abs=1e-4 * len(parts)), line
            assert fused * prior + sum(evidence) == pytest.approx(score, abs=2e-4), line
        assert any("standing out +" in line for _, line in explained)
        if mode:
            assert any("file evidence +" in line for _, line in explained)


def test_format_both_failure_prints_envelope_and_line(repo):
    code, out, err = pix("query", "", "--format", "both", cwd=repo)
    assert code == 2
    assert json.loads(out)["error"]["code"] == "bad_input"
    assert err.startswith("pix: error: the query is empty")


def test_failing_clipboard_leaves_one_json_document(repo):
    code, out, err = pix(
        "query", "zebra", "--copy", "--json", cwd=repo, env={"PIX_CLIPBOARD": "false"}
    )
    assert code == 2
    assert "results" in json.loads(out)  # one document: the answer, no error envelope after it
    assert err == "pix: error: clipboard command 'false' exited 1\n"


def test_copy_does_not_wait_for_what_the_clipboard_command_leaves_behind(repo, tmp_path):
    """xclip and wl-copy fork a process that serves the clipboard and keeps the stdout or
    stderr it inherited; pix returns when the command itself is done (audit)."""
    target, marker = tmp_path / "clip.txt", tmp_path / "served"
    script = (
        f"cat > {shlex.quote(str(target))}; (sleep 20; touch {shlex.quote(str(marker))}) & exit 0"
    )
    code, out, err = pix(
        "query", "zebra", "--top", "1", "--copy", cwd=repo,
        env={"PIX_CLIPBOARD": f"sh -c {shlex.quote(script)}"},
    )  # fmt: skip
    assert (code, err) == (0, "")
    assert not marker.exists()  # returned while the server it left was still running
    assert target.read_text(encoding="utf-8") == out


def run_with_stdout(fd: int, *args: str, cwd) -> tuple[int, str]:
    """pix with `fd` as its stdout: (exit code, stderr)."""
    done = subprocess.run(
        [sys.executable, "-P", "-m", "pix.cli", *args],
        cwd=cwd, stdout=fd, stderr=subprocess.PIPE, text=True,
        env={**os.environ, **GIT_ENV},
    )  # fmt: skip
    return done.returncode, done.stderr


@pytest.mark.parametrize(
    "args", [("status",), ("status", "--json"), ("query", "zebra"), ("alias", "list", "--json")]
)
def test_a_reader_that_left_ends_the_command_quietly(repo, args):
    """`pix ... | head -0`: the reader's choice, as for any command piped into head: exit 0,
    nothing on stderr (click made it exit 1)."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write to the pipe fails now (EPIPE)
    try:
        code, err = run_with_stdout(write_end, *args, cwd=repo)
    finally:
        os.close(write_end)
    assert (code, err) == (0, "")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
@pytest.mark.parametrize("args", [("status", "--json"), ("status",), ("query", "zebra", "--json")])
def test_stdout_that_cannot_be_written_is_one_line_on_stderr(repo, args):
    """A full disk under stdout: the error envelope cannot go there either, so the one line
    goes to stderr, never a traceback (audit)."""
    with open("/dev/full", "w") as full:
        code, err = run_with_stdout(full.fileno(), *args, cwd=repo)
    assert code == 1
    assert (
        err.splitlines()[-1] == "pix: error: unexpected OSError: [Errno 28] No space left on device"
    )
    assert "Traceback" not in err and "Exception ignored" not in err


@pytest.mark.parametrize("setting", ["'unbalanced", "   "])
def test_an_unreadable_clipboard_setting_is_the_same_one_line_error(repo, setting):
    # An unbalanced quote made shlex raise: exit 1 and a second JSON document on stdout.
    code, out, err = pix(
        "query", "zebra", "--copy", "--json", cwd=repo, env={"PIX_CLIPBOARD": setting}
    )
    assert code == 2
    assert "results" in json.loads(out)
    assert err.startswith("pix: error: ") and err.count("\n") == 1 and "Traceback" not in err


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


# -- issue 10 (6): consistent machine output ---------------------------------------------------


def schema_problems(payload: object, schema: str) -> list[str]:
    from pix.schemas import bundled

    validator = jsonschema.Draft202012Validator(bundled(schema))
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(payload)]


def test_index_json_is_camel_case_with_a_schema_version(repo):
    code, out, err = pix("index", str(repo), "--json", "--quiet")
    assert code == 0, err
    report = json.loads(out)
    assert schema_problems(report, "index-response.v1.json") == []
    assert report["schemaVersion"] == 1
    assert not [key for key in report if "_" in key], report
    assert report["skipped"] == {"not_text": 1} and report["embedPending"] == 0


def test_status_json_gives_numbers_as_numbers_and_a_schema_version(repo):
    code, out, err = pix("status", "--json", cwd=repo)
    assert code == 0, err
    report = json.loads(out)
    assert schema_problems(report, "status-response.v1.json") == []
    assert report["schemaVersion"] == 1
    assert report["model"]["dims"] == 384 and isinstance(report["model"]["maxTokens"], int)
    text = pix("status", cwd=repo)[1]
    assert "(384 dims, " in text


@pytest.mark.parametrize(
    "command",
    [["query"], ["pack"], ["discover"]],
    ids=["query", "pack", "discover"],
)
@pytest.mark.parametrize("where", ["file", "stdin"])
def test_input_that_is_not_utf8_is_bad_input(repo, tmp_path, command, where):
    latin = '{"query": "caf\xe9", "budget": 100}'.encode("latin-1")
    if where == "file":
        request = tmp_path / "request.json"
        request.write_bytes(latin)
        done = run_bytes(*command, "--input", str(request), cwd=repo)
    else:
        done = run_bytes(*command, "--input", "-", cwd=repo, stdin=latin)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(b"pix: error: --input ") and b"is not UTF-8" in done.stderr
    assert done.stderr.count(b"\n") == 1 and done.stdout == b""


def test_input_may_start_with_a_byte_order_mark(repo, tmp_path):
    request = tmp_path / "request.json"
    request.write_bytes(b"\xef\xbb\xbf" + json.dumps({"query": "zebra", "top": 1}).encode())
    code, out, err = pix("query", "--input", str(request), "--json", cwd=repo)
    assert code == 0, err
    assert json.loads(out)["results"]


def test_a_bad_value_is_quoted_as_json_and_cut_short_in_the_one_line_error(repo, tmp_path):
    """The client wrote JSON: null and true are quoted as JSON spells them, not as Python's
    None and True; a 100,000-character value is cut, not echoed whole (audit)."""
    request = tmp_path / "request.json"
    for payload, said in (
        (None, "invalid request at (top level): null is not of type 'object'"),
        ({"query": "zebra", "top": True}, "invalid request at top: true is not of type 'integer'"),
    ):
        request.write_text(json.dumps(payload))
        code, _, err = pix("query", "--input", str(request), cwd=repo)
        assert code == 2 and err == f"pix: error: {said}\n"
    pattern = "x" * 100_000
    request.write_text(json.dumps({"queries": [{"id": "a", "mode": "regex", "pattern": pattern}]}))
    code, _, err = pix("discover", "--input", str(request), cwd=repo)
    assert code == 2 and err.count("\n") == 1 and len(err) < 200, err[:300]
    assert "(100,000 characters) is too long" in err
    code, _, err = pix("alias", "add", "a" * 5000, "zebra", cwd=repo)
    assert code == 2 and err.count("\n") == 1 and len(err) < 300 and "(5,000 characters)" in err
    code, _, err = pix("discover", "-l", "y" * 100_000, cwd=repo)  # no `=`: not ID=PATTERN
    assert code == 2 and err.count("\n") == 1 and len(err) < 300, err[:300]
    code, _, err = pix("query", "zebra", "--at", "ec4", cwd=repo)
    assert code == 2 and "give at least 4 digits" in err and "rev-parse" not in err


def test_an_error_quotes_a_value_short_with_its_own_quotes():
    from pix.errors import shown_value

    assert shown_value(None) == "null" and shown_value(False) == "false"
    assert shown_value("files") == "'files'"
    quoted = shown_value("it's" + "x" * 100)  # repr picks double quotes: they must close
    assert quoted.startswith("\"it's") and quoted.endswith('…" (104 characters)')
    controls = shown_value("\x01" * 100)  # repr escapes them: four characters each
    assert len(controls) < 100 and "\x01" not in controls
    assert shown_value(["x" * 50, "y" * 50]).endswith("…")


def test_integral_floats_are_integers_and_deep_nesting_is_bad_input(repo, tmp_path):
    # JSON Schema counts 3.0 as an integer, so it passes validation: it must then act as 3,
    # not fail as a float later (exit 1, "unexpected").
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"query": "zebra", "top": 1.0, "contextLines": 1.0}))
    code, out, err = pix("query", "--input", str(request), "--json", cwd=repo)
    assert code == 0, err
    assert len(json.loads(out)["results"]) == 1
    request.write_text(json.dumps({"query": "zebra", "budget": 200.0}))
    code, out, err = pix("pack", "--input", str(request), "--json", cwd=repo)
    assert code == 0, err
    assert json.loads(out)["budget"]["limit"] == 200 and '"limit": 200,' in out
    request.write_text(json.dumps({"query": "zebra", "top": 2.5}))
    code, out, err = pix("query", "--input", str(request), cwd=repo)
    assert code == 2 and "invalid request at top: 2.5 is not of type 'integer'" in err
    deep = b'{"query": "zebra", "repos": ' + b"[" * 980 + b"]" * 980 + b"}"
    for stdin in (b"[" * 100_000, deep):  # too deep to parse; parsed, too deep to validate
        done = run_bytes("query", "--input", "-", cwd=repo, stdin=stdin)
        assert done.returncode == 2, done.stderr
        assert done.stderr == (
            b"pix: error: --input nests arrays or objects too deeply to read (at most 64 levels)\n"
        )


def run_bytes(*args: str, cwd, stdin: bytes | None = None, env: dict | None = None):
    import os
    import subprocess
    import sys

    from conftest import GIT_ENV

    return subprocess.run(
        [sys.executable, "-P", "-m", "pix.cli", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env={**os.environ, **GIT_ENV, **(env or {})},
    )


@pytest.mark.parametrize("fmt", ["text", "json", "both"])
def test_copy_without_a_clipboard_still_prints_the_answer_then_exits_2(repo, tmp_path, fmt):
    import shutil

    # A PATH with git and nothing else: no clipboard command can be found on it.
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "git").symlink_to(shutil.which("git"))
    env = {"PIX_CLIPBOARD": "", "PATH": str(tools)}
    args = ("query", "zebra unicorn target", "--top", "1", "--format", fmt)
    code, answer, _ = pix(*args, cwd=repo)
    assert code == 0
    code, out, err = pix(*args, "--copy", cwd=repo, env=env)
    assert code == 2
    assert out == answer  # exactly the answer without --copy: one document with JSON
    last = err.splitlines()[-1]
    assert last.startswith("pix: error: no clipboard command found") and "PIX_CLIPBOARD" in last


def test_pack_copy_without_a_clipboard_prints_the_packet_and_its_summary(repo):
    code, out, err = pix(
        "pack", "zebra unicorn target", "--budget", "400", "--copy", cwd=repo,
        env={"PIX_CLIPBOARD": "sh -c 'exit 7'"},
    )  # fmt: skip
    assert code == 2
    assert "zebra_unicorn_target" in out
    assert err.splitlines()[0].startswith("pix pack: ")
    assert err.splitlines()[-1] == "pix: error: clipboard command 'sh' exited 7"


def test_a_file_name_with_a_newline_is_quoted_in_text_output(make_repo, index):
    # A newline in a name would split a result's header line in two: text output quotes such a
    # name with escapes (as git does); JSON keeps the name as it is.
    repo = make_repo({"new\nline.py": "def newline_func():\n    pass\n"})
    index(repo, embed=False)
    quoted = '"new\\nline.py"'
    for command in (["query"], ["query", "--file"], ["pack", "--budget", "200"]):
        code, out, err = pix(*command, "newline_func", cwd=repo)
        assert code == 0, err
        assert out.startswith(f"── {quoted}"), out
    code, out, err = pix("discover", "-l", "a=newline_func", cwd=repo)
    assert code == 0 and f"next read: {quoted} lines 1-2" in out
    code, out, err = pix("query", "newline_func", "--json", cwd=repo)
    assert json.loads(out)["results"][0]["path"] == "new\nline.py"
    # named as a copy, or as cut by the budget: quoted too
    write(repo, {"copy.py": "def newline_func():\n    pass\n"})
    index(repo, embed=False)
    code, out, err = pix("query", "newline_func", cwd=repo)
    assert code == 0 and f"(same text at {quoted})" in out
    code, out, err = pix("query", "newline_func", "--file", "--max-characters", "1", cwd=repo)
    assert code == 0 and out.count("\n") == 1 and "cut by the budget: " in out


def test_a_nul_in_the_query_separates_words(repo, tmp_path):
    # A NUL ended a string inside FTS5's query parser: "unexpected SQLError: unterminated
    # string", exit 1. It is a separator now; a query of NULs alone is empty (exit 2).
    request = tmp_path / "request.json"
    for command, extra in ((["query"], {}), (["pack"], {"budget": 200})):
        request.write_text(json.dumps({"query": "zebra\u0000", **extra}))
        code, out, err = pix(*command, "--input", str(request), "--json", cwd=repo)
        assert code == 0, err
        request.write_text(json.dumps({"query": "a\u0000", **extra}))
        code, out, err = pix(*command, "--input", str(request), "--json", cwd=repo)
        assert code == 0, err
    request.write_text(json.dumps({"query": "\u0000"}))
    code, out, err = pix("query", "--input", str(request), cwd=repo)
    assert code == 2 and err.startswith("pix: error: the query is empty")


def test_a_home_folder_that_cannot_be_written_prints_no_onnxruntime_line(repo, tmp_path):
    # onnxruntime's telemetry keeps a device id under $HOME and printed a coloured warning
    # line on every run where it could not (a read-only or missing HOME; audit). pix turns the
    # telemetry off: stderr holds pix's own lines only.
    home = tmp_path / "home"
    home.write_text("a file, so nothing can be made under it\n", encoding="utf-8")
    code, out, err = pix("query", "greeting", "--json", cwd=repo, env={"HOME": str(home)})
    assert code == 0, err
    assert json.loads(out)["results"]
    assert "onnxruntime" not in err and "telemetry" not in err, err


def test_unicode_line_breaks_in_a_name_are_quoted_too():
    from pix.output.pathtext import path_sample, shown_path

    # str.splitlines breaks at these, and JSON leaves them as they are.
    for name in ("a\u2028b.py", "a\u2029b.py", "a\x85b.py", "tab\tname.py"):
        shown = shown_path(name)
        assert len(shown.splitlines()) == 1 and shown.startswith('"'), repr(shown)
        assert json.loads(shown) == name
    assert shown_path("plain name.py") == "plain name.py"
    assert path_sample(["a.py", "b\nc.py", "d.py", "e.py"]) == 'a.py, "b\\nc.py", d.py …'
