"""`pix mcp`: the real server as a child process, spoken to by the official SDK's stdio client.

Each test starts `python -m pix.cli mcp` and talks MCP to it over its stdin/stdout. Answers are
compared with the real command line (`pix query --json`, `pix run --json`, ...): the same JSON,
the same error messages. One small repository is indexed once per module; tests that write get
a private copy of its database.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import jsonschema
import pytest
from conftest import AREA, GEOMETRY, GIT_ENV, GREETING, indexed_repo, pix, private_db, write
from mcp import Client, StdioServerParameters

from pix import alias
from pix.mcp import DEFAULT_MAX_CHARACTERS
from pix.schemas import bundled

# Longer than the default budget, so the budget has something to cut.
LOG = "# Station log\n\n" + "".join(
    f"Reading {i}: the weather station recorded rainfall and wind speed at noon.\n"
    for i in range(320)
)
FILES = {"shapes/geometry.py": GEOMETRY, "hello.py": GREETING, "docs/station_log.md": LOG}
RAIN = "weather station rainfall readings"

ANNOTATIONS = {  # tool: (readOnlyHint, destructiveHint, idempotentHint)
    "query": (True, False, True),
    "pack": (True, False, True),
    "alias_run": (True, False, True),
    "alias_list": (True, False, True),
    "alias_add": (False, True, True),
    "alias_remove": (False, True, True),
    "status": (True, False, True),
    "discover": (True, False, True),
    "index": (False, False, True),
}
QUERY_OPTIONS = {
    "query", "mode", "top", "noContent", "contextLines", "maxCharacters", "onlyPaths",
    "ignorePaths", "at", "explain", "view",
}  # fmt: skip


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, embedder) -> tuple[Path, Path]:
    root, db = indexed_repo(tmp_path_factory.mktemp("mcp"), FILES, embedder)
    return root, db


@pytest.fixture
def env(indexed, tmp_path) -> tuple[Path, Path]:
    """(repository, a private copy of its database) for one test."""
    root, db = indexed
    return root, private_db(db, tmp_path)


@asynccontextmanager
async def connect(cwd: Path, *args: str) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "pix.cli", "mcp", *args], cwd=str(cwd), env=GIT_ENV
    )
    async with Client(params, read_timeout_seconds=120) as client:
        yield client


def serve(cwd: Path, *args: str) -> Callable[[Callable[[Client], Awaitable[None]]], None]:
    """Decorator: run the async scenario against a fresh server, now."""

    def run(scenario: Callable[[Client], Awaitable[None]]) -> None:
        async def main() -> None:
            async with connect(cwd, *args) as client:
                await scenario(client)

        try:
            anyio.run(main)
        except BaseExceptionGroup as group:  # show the failed assertion, not the task groups
            leaf: BaseException = group
            while isinstance(leaf, BaseExceptionGroup):
                leaf = leaf.exceptions[0]
            raise leaf from None

    return run


async def call(client: Client, tool: str, args: dict) -> dict:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text) == result.structured_content
    return {"text": result.content[0].text, "json": result.structured_content}


async def error(client: Client, tool: str, args: dict) -> tuple[str, dict]:
    result = await client.call_tool(tool, args)
    assert result.is_error, result
    return result.content[0].text, result.structured_content


def cli(*args: str, root: Path, db: Path, stdin: str | None = None) -> tuple[int, str]:
    code, out, err = pix(*args, "--db", str(db), cwd=root, stdin=stdin)
    assert "Traceback" not in out + err
    return code, out


def cli_error(*args: str, root: Path, db: Path, stdin: str | None = None) -> dict:
    code, out = cli(*args, "--json", root=root, db=db, stdin=stdin)
    assert code == 2, out
    return json.loads(out)


def objects(schema: object) -> list[dict]:
    """Every object-typed subschema."""
    found = []
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            found.append(schema)
        for value in schema.values():
            found.extend(objects(value))
    elif isinstance(schema, list):
        for value in schema:
            found.extend(objects(value))
    return found


def test_tools_are_listed_with_strict_schemas_from_schema_dir_and_annotations(indexed):
    root, db = indexed

    @serve(root, "--db", str(db))
    async def _(client: Client) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == set(ANNOTATIONS)
        for name, tool in tools.items():
            hints = tool.annotations
            assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (
                ANNOTATIONS[name]
            ), name
            assert hints.open_world_hint is False
            schema = tool.input_schema
            assert schema == bundled(f"mcp-tools.v1.json#/$defs/{name}")
            assert "$ref" not in json.dumps(schema)  # self-contained for any client
            assert objects(schema) and all(
                o.get("additionalProperties") is False for o in objects(schema)
            ), name
            assert tool.description
        query = tools["query"].input_schema
        assert query["required"] == ["query", "mode"]
        assert QUERY_OPTIONS <= set(query["properties"])
        assert query["properties"]["mode"]["enum"] == ["chunk", "file"]
        assert set(tools["alias_run"].input_schema["properties"]) == {
            "name", "view", "noContent", "maxCharacters"
        }  # fmt: skip
        assert tools["alias_add"].input_schema["properties"]["spec"]["required"] == [
            "query",
            "mode",
        ]
        advice = tools["query"].description
        for words in ('"chunk"', '"file"', "noContent", f"{DEFAULT_MAX_CHARACTERS:,}"):
            assert words in advice
        assert tools["query"].output_schema["properties"]["mode"] == {"enum": ["chunk", "file"]}


@pytest.mark.parametrize(
    ("args", "flags"),
    [
        ({"query": AREA, "mode": "chunk"}, []),
        ({"query": AREA, "mode": "file", "top": 2}, ["--file", "--top", "2"]),
        (
            {"query": AREA, "mode": "chunk", "onlyPaths": ["*.py"], "contextLines": 1,
             "explain": True, "view": "full", "top": 3},
            ["--only-path", "*.py", "--context-lines", "1", "--explain", "--view", "full",
             "--top", "3"],
        ),
        ({"query": RAIN, "mode": "file", "noContent": True, "ignorePaths": ["shapes/"]},
         ["--file", "--no-content", "--ignore-path", "shapes/"]),
    ],
)  # fmt: skip
def test_query_answers_what_the_cli_answers(indexed, args, flags):
    root, db = indexed
    code, expected = cli(
        "query", args["query"], *flags, "--max-characters", str(DEFAULT_MAX_CHARACTERS), "--json",
        root=root, db=db,
    )  # fmt: skip
    assert code == 0
    answers = []

    @serve(root, "--db", str(db))
    async def _(client: Client) -> None:
        answers.append(await call(client, "query", args))

    assert answers[0]["text"] + "\n" == expected  # the bytes `pix query --json` prints
    response = answers[0]["json"]
    assert response["mode"] == args["mode"] and response["results"]
    assert "refreshed" not in response
    if args["mode"] == "file":
        assert all("startLine" not in r for r in response["results"])


def test_the_default_budget_applies_and_a_call_can_change_it(indexed):
    root, db = indexed

    @serve(root, "--db", str(db))
    async def _(client: Client) -> None:
        # Pinned to the long file: this is about the budget, not about ranking.
        request = {"query": RAIN, "mode": "file", "top": 1, "onlyPaths": ["docs/station_log.md"]}
        cut = (await call(client, "query", request))["json"]["results"][0]
        assert cut["file"] == "docs/station_log.md"
        assert cut["truncated"] is True and cut["text"].endswith("[...]")
        assert len(cut["text"]) < DEFAULT_MAX_CHARACTERS < len(LOG)
        whole = (await call(client, "query", {**request, "maxCharacters": 100_000}))["json"]
        assert whole["results"][0]["text"] == LOG and "truncated" not in whole["results"][0]
        small = (await call(client, "query", {**request, "maxCharacters": 500}))["json"]
        assert small["results"][0]["truncated"] is True
        assert len(small["results"][0]["text"]) < 500
        # Files the budget left out are still named (issue 10, point 15).
        everything = {"query": RAIN, "mode": "file", "top": 3}
        ranked = (await call(client, "query", {**everything, "noContent": True}))["json"]
        names = [r["file"] for r in ranked["results"]]
        assert len(names) == 3
        cut = (await call(client, "query", {**everything, "maxCharacters": 120}))["json"]
        assert [r["file"] for r in cut["results"]] == names[:1]  # cut short, the rest left out
        assert cut["omitted"]["budgetFiles"] == names[1:] and cut["omitted"]["budget"] == 2


def test_alias_tools_share_the_cli_aliases_and_semantics(env):
    root, db = env
    spec = {"query": AREA, "mode": "file", "top": 2}

    @serve(root, "--db", str(db))
    async def _(client: Client) -> None:
        added = (await call(client, "alias_add", {"name": "areas", "spec": spec}))["json"]
        assert added["spec"] == spec and added["replaced"] is False
        listed = (await call(client, "alias_list", {}))["json"]
        assert [a["name"] for a in listed["aliases"]] == ["areas"]
        # What MCP saved, the CLI runs, in the same mode, with the same answer.
        ran = await call(client, "alias_run", {"name": "areas"})
        assert ran["json"]["mode"] == "file"
        code, out = cli(
            "run", "areas", "--max-characters", str(DEFAULT_MAX_CHARACTERS), "--json",
            root=root, db=db,
        )  # fmt: skip
        assert code == 0 and ran["text"] + "\n" == out
        minimal = (await call(client, "alias_run", {"name": "areas", "view": "minimal",
                                                    "noContent": True}))["json"]  # fmt: skip
        assert minimal["mode"] == "file"
        assert all(set(r) == {"file", "score", "rel", "citation"} for r in minimal["results"])
        # A clash, a mode at run time and an unknown alias fail as on the command line.
        text, envelope = await error(client, "alias_add", {"name": "areas", "spec": spec})
        on_cli = cli_error("alias", "add", "areas", AREA, "--file", root=root, db=db)
        # The same error; the hint names the fix of each front end (audit: MCP said --force).
        assert {**envelope["error"], "hint": None} == {**on_cli["error"], "hint": None}
        assert envelope["error"]["hint"].startswith('pass "force": true to replace it')
        assert on_cli["error"]["hint"].startswith("pass --force to replace it")
        assert text.splitlines()[0] == envelope["error"]["message"]
        text, envelope = await error(client, "alias_run", {"name": "areas", "mode": "chunk"})
        assert envelope == cli_error("run", "areas", "--mode", "chunk", root=root, db=db)
        assert text == alias.MODE_REFUSED
        replaced = {"query": "say hello", "mode": "chunk"}
        added = await call(client, "alias_add", {"name": "areas", "spec": replaced, "force": True})
        assert added["json"]["replaced"] is True
        code, out = cli("alias", "show", "areas", "--json", root=root, db=db)
        assert json.loads(out)["spec"] == replaced
        removed = (await call(client, "alias_remove", {"name": "areas"}))["json"]
        assert removed == {"removed": "areas"}
        text, envelope = await error(client, "alias_run", {"name": "areas"})
        assert envelope == cli_error("run", "areas", root=root, db=db)
        assert text.startswith("no alias named 'areas'")


def test_bad_input_is_a_tool_error_with_the_cli_message_and_the_server_keeps_serving(env):
    root, db = env
    unknown_field = {"query": AREA, "mode": "chunk", "bogus": 1}
    wrong_type = {"query": AREA, "mode": "chunk", "top": "ten"}
    same_as_cli = [  # (tool, arguments, the CLI command that fails the same way)
        ("query", unknown_field, ["query", "--input", "-"], json.dumps(unknown_field)),
        ("query", wrong_type, ["query", "--input", "-"], json.dumps(wrong_type)),
        ("query", {"query": "   ", "mode": "file"}, ["query", "   ", "--file"], None),
        ("query", {"query": AREA, "mode": "chunk", "at": "main"}, ["query", AREA, "--at", "main"],
         None),
        ("alias_run", {"name": "missing"}, ["run", "missing"], None),
        ("alias_run", {"name": "x", "mode": "file"}, ["run", "x", "--file"], None),
        ("alias_add", {"name": "two words", "spec": {"query": AREA, "mode": "file"}},
         ["alias", "add", "two words", AREA, "--file"], None),
        ("alias_remove", {"name": "missing"}, ["alias", "rm", "missing"], None),
    ]  # fmt: skip
    expected = [cli_error(*command, root=root, db=db, stdin=stdin) for *_, command, stdin in
                same_as_cli]  # fmt: skip
    own = [  # no CLI equivalent: the message says what is wrong
        ("nope", {}, "unknown tool 'nope'"),
        ("query", {"query": AREA}, "invalid request at (top level): 'mode' is a required property"),
        ("query", {"mode": "file"}, "'query' is a required property"),
        ("alias_add", {"name": "x", "spec": {"query": AREA}}, "at spec: 'mode' is a required"),
        ("status", {"verbose": True}, "('verbose' was unexpected)"),
        ("alias_run", {"name": "x", "top": 3}, "('top' was unexpected)"),
    ]

    @serve(root, "--db", str(db))
    async def _(client: Client) -> None:
        good = await call(client, "query", {"query": AREA, "mode": "file"})
        for (tool, args, *_), envelope in zip(same_as_cli, expected, strict=True):
            text, structured = await error(client, tool, args)
            assert structured == envelope, (tool, args)
            assert text.splitlines()[0] == envelope["error"]["message"]
        for tool, args, words in own:
            text, structured = await error(client, tool, args)
            assert words in text, text
            assert structured["error"]["code"] == "bad_input"
        assert await call(client, "query", {"query": AREA, "mode": "file"}) == good


def problems(payload: dict, schema: str) -> list[str]:
    validator = jsonschema.Draft202012Validator(bundled(schema))
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(payload)]


def test_no_index_is_an_error_until_a_query_or_the_index_tool_builds_one(make_repo, tmp_path):
    root = make_repo({"hello.py": GREETING})
    db = tmp_path / "fresh.db"
    code, out = cli("query", "say hello", "--json", root=root, db=db)
    assert code == 3
    envelope = json.loads(out)

    @serve(root, "--db", str(db))
    async def _(client: Client) -> None:
        text, structured = await error(client, "alias_list", {})
        assert structured == envelope
        assert text.splitlines()[0] == f"no pix index at {db}"
        # a query indexes the repository first (words, names, static tier), and says so
        first = (await call(client, "query", {"query": "say hello", "mode": "chunk"}))["json"]
        assert first["refreshed"]["firstIndex"] is True and first["refreshed"]["files"] == 1
        assert first["results"][0]["path"] == "hello.py"
        report = (await call(client, "index", {}))["json"]
        assert report["files"] == 1 and report["embedPending"] == 0
        assert problems(report, "index-response.v1.json") == []  # camelCase, schemaVersion
        status = (await call(client, "status", {}))["json"]
        assert status["chunks"] >= 1 and status["workTree"]["changed"] == 0
        assert problems(status, "status-response.v1.json") == []
        assert status["model"]["dims"] == 384  # a number, not "384"
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tools["index"].output_schema == bundled("index-response.v1.json")
        assert tools["status"].output_schema == bundled("status-response.v1.json")
        response = (await call(client, "query", {"query": "say hello", "mode": "chunk"}))["json"]
        assert response["results"][0]["path"] == "hello.py"


def test_a_changed_work_tree_is_refreshed_before_a_query(make_repo, index):
    root = make_repo({"hello.py": GREETING, "shapes/geometry.py": GEOMETRY})
    index(root)
    addition = '\n\ndef zebra_crossing_signal(lights):\n    """Blink the zebra crossing."""\n'

    @serve(root)
    async def _(client: Client) -> None:
        request = {"query": "zebra crossing signal", "mode": "chunk", "top": 1}
        first = (await call(client, "query", request))["json"]
        assert "refreshed" not in first
        write(root, {"hello.py": GREETING + addition})
        second = (await call(client, "query", request))["json"]
        assert second["refreshed"]["changed"] == 1
        assert second["refreshed"]["changedPaths"] == ["hello.py"]
        assert second["refreshed"]["newBlobs"] == 1
        assert second["warnings"] == []
        assert "def zebra_crossing_signal(lights):" in second["results"][0]["text"]
        third = (await call(client, "query", request))["json"]
        assert "refreshed" not in third and third["results"] == second["results"]

    write(root, {"hello.py": GREETING + addition + "\n# one more line\n"})

    @serve(root, "--no-refresh")
    async def _(client: Client) -> None:
        response = (await call(client, "query", {"query": "zebra", "mode": "file"}))["json"]
        assert "refreshed" not in response
        assert any("changed since this snapshot" in w for w in response["warnings"])
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "The index is not refreshed first" in tools["query"].description


def test_concurrent_calls_are_answered_like_sequential_ones(indexed):
    root, db = indexed
    requests = [
        {"query": AREA, "mode": "chunk"},
        {"query": AREA, "mode": "file"},
        {"query": RAIN, "mode": "file", "noContent": True},
        {"query": "say hello", "mode": "chunk", "top": 1},
    ] * 2

    @serve(root, "--db", str(db))
    async def _(client: Client) -> None:
        sequential = [(await call(client, "query", r))["text"] for r in requests]
        concurrent: list[str | None] = [None] * len(requests)

        async def one(i: int) -> None:
            concurrent[i] = (await call(client, "query", requests[i]))["text"]

        async with anyio.create_task_group() as group:
            for i in range(len(requests)):
                group.start_soon(one, i)
        assert concurrent == sequential


# A raw client's first line (id 1).
INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "t", "version": "0"}},
}  # fmt: skip


def test_stdout_carries_only_protocol_and_the_server_ends_with_its_stdin(indexed):
    """Closing the client ends the server with exit 0 and nothing but protocol on stdout."""
    root, db = indexed
    code, out, err = pix("mcp", "--db", str(db), cwd=root, stdin=json.dumps(INITIALIZE) + "\n")
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 1
    reply = json.loads(lines[0])
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "pix"


def test_discover_tool_answers_what_the_cli_answers(indexed):
    root, db = indexed
    request = {
        "queries": [
            {"id": "area", "pattern": "area", "mode": "literal"},
            {"id": "greet", "pattern": r"def gre+t\(", "mode": "regex"},
        ]
    }
    code, out = cli(
        "discover", "--input", "-", "--json", root=root, db=db, stdin=json.dumps(request)
    )
    assert code == 0, out
    expected = json.loads(out)

    @serve(root, "--db", str(db))
    async def _(client: Client) -> None:
        answer = (await call(client, "discover", request))["json"]
        paths = [c["path"] for c in answer["candidates"]]
        assert paths == [c["path"] for c in expected["candidates"]] and paths
        message, _ = await error(client, "discover", {"queries": [{"id": "x", "pattern": "y"}]})
        assert "mode" in message
        # Listed with its output schema, as every other answering tool is.
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["discover"].output_schema == bundled("discover-response.v1.json")
        message, _ = await error(client, "discover", {**request, "repos": ["web"]})
        assert message.startswith("repos names repositories of a workspace")


def test_the_index_tool_never_indexes_another_folder_into_a_repositorys_database(
    make_repo, tmp_path
):
    # `pix mcp --db A/.pix.db` started in another folder: the index tool indexed that folder
    # into A's database, whose new snapshot then answered every later query. A's tree is here,
    # so the call is refused as a query's refresh skips it; queries still answer from A.
    repo = make_repo({"hello.py": GREETING})
    code, _, err = pix("index", "--static-only", cwd=repo)
    assert code == 0, err
    elsewhere = make_repo({"stray.py": "def unrelated():\n    pass\n"})
    db = repo / ".pix.db"

    @serve(elsewhere, "--db", str(db))
    async def _(client: Client) -> None:
        text, structured = await error(client, "index", {})
        assert text.splitlines()[0] == f"{db} indexes {repo}, not {elsewhere}"
        assert structured["error"]["code"] == "bad_input"
        response = (await call(client, "query", {"query": "say hello", "mode": "file"}))["json"]
        assert [r["file"] for r in response["results"]] == ["hello.py"]

    code, out, err = pix("status", "--db", str(db), "--json", cwd=elsewhere)
    assert code == 0, err
    assert [s["root"] for s in json.loads(out)["snapshots"]] == [str(repo)]


def test_a_server_that_could_never_answer_is_refused_before_it_serves(tmp_path):
    # `pix mcp --cwd FILE` and `--db FOLDER` started and exited 0, then failed every call.
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x\n")
    code, out, err = pix("mcp", "--cwd", str(a_file), cwd=tmp_path, stdin="")
    assert (code, out) == (2, "") and err == f"pix: error: not a folder: {a_file}\n"
    code, out, err = pix("mcp", "--db", str(tmp_path), cwd=tmp_path, stdin="")
    assert (code, out) == (2, "") and f"path {tmp_path} names a folder" in err
    (tmp_path / ".pix.db").mkdir()  # a folder where the database belongs: unusable, exit 4
    code, out, err = pix("mcp", cwd=tmp_path, stdin="")
    assert (code, out) == (4, "") and err.startswith(f"pix: error: {tmp_path / '.pix.db'} is a")
    # A file that is not a pix database (audit: it served, then failed every call).
    code, out, err = pix("mcp", "--db", str(a_file), cwd=tmp_path, stdin="")
    assert (code, out) == (4, "") and err.startswith(f"pix: error: {a_file} is not a pix database")
    assert a_file.read_text() == "x\n"


def test_every_line_gets_an_answer_even_one_the_sdk_cannot_read(indexed):
    # The SDK dropped a line it could not read (not JSON, or text with an unpaired
    # surrogate), and the client waited forever (audit). Each now gets its JSON-RPC error,
    # and the lines after it are answered as before.
    root, db = indexed
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
    lines = [
        json.dumps(INITIALIZE),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        "this is not json",
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"query",'
        '"arguments":{"query":"x\\ud800","mode":"chunk"}}}',
        json.dumps(call),
    ]
    # Bytes that are not UTF-8 are refused, as on the command line (not run as U+FFFD).
    raw = b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"query",' \
        b'"arguments":{"query":"x\xff\xfe","mode":"chunk"}}}'  # fmt: skip
    server = subprocess.Popen(
        [sys.executable, "-P", "-m", "pix.cli", "mcp", "--db", str(db), "--no-refresh"],
        cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(("\n".join(lines[:-1]) + "\n").encode() + raw + b"\n")
    server.stdin.write((lines[-1] + "\n").encode())
    server.stdin.flush()
    by_id: dict = {}
    while 3 not in by_id:  # (the server answers in order of reading; id 3 comes last)
        line = server.stdout.readline()
        assert line, server.stderr.read().decode() if server.stderr else ""
        answer = json.loads(line)
        by_id[answer["id"]] = answer
    server.stdin.close()
    assert server.wait(timeout=60) == 0
    assert set(by_id) == {1, None, 2, 4, 3}, by_id
    assert by_id[None]["error"]["code"] == -32700
    assert by_id[2]["error"]["code"] == by_id[4]["error"]["code"] == -32600
    assert "not valid UTF-8" in by_id[4]["error"]["message"]
    assert "query" in {tool["name"] for tool in by_id[3]["result"]["tools"]}


def test_a_client_that_closes_stdin_after_its_calls_still_gets_every_answer(indexed):
    # `printf '...' | pix mcp`: the SDK ended the session at end of input and dropped the
    # calls still running, unanswered (audit). Every request read is now answered first.
    root, db = indexed
    calls = [
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "query", "arguments": {"query": "area of a circle", "mode": "chunk"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "status", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
    ]  # fmt: skip
    lines = [
        json.dumps(INITIALIZE),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        *map(json.dumps, calls),
    ]
    code, out, err = pix("mcp", "--db", str(db), cwd=root, stdin="\n".join(lines) + "\n")
    assert code == 0, err
    by_id = {answer["id"]: answer for answer in map(json.loads, out.splitlines())}
    assert set(by_id) == {1, 2, 3, 4}, err
    query = json.loads(by_id[2]["result"]["content"][0]["text"])
    assert query["results"][0]["path"] == "shapes/geometry.py", query["results"]
    assert not by_id[3]["result"].get("isError"), by_id[3]


def test_cancelled_and_malformed_cancels_neither_hang_nor_end_the_session(indexed):
    # The end of input waits for every request read; a cancelled one gets no answer, and
    # the SDK correlates "5" with 5, so a wait keyed otherwise never ended (review). A cancel
    # whose requestId is an object ended the session with a TypeError.
    root, db = indexed
    query = {"query": AREA, "mode": "chunk"}
    lines = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "5", "method": "tools/call",
         "params": {"name": "query", "arguments": query}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {}}},
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},
        # No id at all, to the SDK, which answered nothing: each gets -32600 (audit).
        {"jsonrpc": "2.0", "id": None, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
        {"jsonrpc": "2.0", "id": True, "method": "ping"},
        {"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"},
        # A notification carrying "id": null is still read as one (review): no answer.
        {"jsonrpc": "2.0", "id": None, "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 6, "method": "ping"},
    ]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-P", "-m", "pix.cli", "mcp", "--db", str(db), "--no-refresh"],
        cwd=root, input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    answered = {reply["id"] for reply in replies if reply["id"] is not None}
    assert {1, 3, 6} <= answered <= {1, 3, 6, "5"}, done.stdout
    refused = [reply["error"]["code"] for reply in replies if reply["id"] is None]
    assert refused == [-32600] * 4, done.stdout


def test_a_client_that_stops_reading_ends_the_server_quietly(indexed):
    # `pix mcp | head -n1`: the answer to a call still running met a closed pipe at the end
    # of input, and the server ended with "unexpected ExceptionGroup", exit 1 (review).
    root, db = indexed
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "query", "arguments": {"query": AREA, "mode": "chunk"}}}  # fmt: skip
    server = subprocess.Popen(
        [sys.executable, "-P", "-m", "pix.cli", "mcp", "--db", str(db), "--no-refresh"],
        cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None
    server.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    server.stdin.flush()
    assert json.loads(server.stdout.readline())["id"] == 1
    server.stdout.close()  # as head does after its line
    server.stdin.write((json.dumps(call) + "\n").encode())
    server.stdin.close()
    assert server.wait(timeout=120) == 0
    err = server.stderr.read().decode()
    assert "unexpected" not in err and "Traceback" not in err, err
