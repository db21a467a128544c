"""`pix mcp`: pix for agents over the Model Context Protocol (stdio), on the official SDK.

It uses the SDK's low-level `Server` rather than `MCPServer` because the tool input schemas are
pix's own JSON Schemas (schema/mcp-tools.v1.json, references inlined by pix.schemas.bundled),
not schemas derived from Python signatures: the server validates every call against exactly
the schema it listed, and refuses unknown fields.

One QueryEngine (database and model open) lives as long as the server, so a warm query costs
retrieval only. Tool calls run in worker threads (the SDK serves requests concurrently; a query
is CPU-bound and must not stall the event loop) and one lock serialises everything that touches
the engine. Every failure becomes a tool result with isError and the message the CLI prints;
the server keeps serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server import Server

from pix import __version__, alias, interrupt
from pix.errors import DatabaseError, NotIndexedError, PixError, UsageError, as_pix_error
from pix.index import index_repository
from pix.locate import locate
from pix.mcp_wire import serve_stdio
from pix.pack import PackRequest
from pix.query import QueryEngine, QueryRequest, other_tree
from pix.schemas import bundled
from pix.shards import ShardSet, query_shards
from pix.snapshot import reindex_command
from pix.store.db import refuse_unusable
from pix.workspace import Workspace

# An agent's context is precious: no answer is longer than this unless the call asks for more.
DEFAULT_MAX_CHARACTERS = 20_000
TOOLS_SCHEMA = "mcp-tools.v1.json"
QUERY_RESPONSE = "query-response.v2.json"
PACK_RESPONSE = "pack-response.v1.json"
STATUS_RESPONSE = "status-response.v1.json"
INDEX_RESPONSE = "index-response.v1.json"
DISCOVER_RESPONSE = "discover-response.v1.json"
MCP_INTERRUPT_GRACE_SECONDS = 0.25
ALIAS_WRITES = ("alias_add", "alias_remove")
# A workspace server checks each repository's work tree at most this often (20 repositories'
# checks cost ~250 ms of a ~1 s answer; a file saved is seen at most this late).
WORKSPACE_FRESH_SECONDS = 2.0
# What these tools return for `pix mcp --workspace W` (query and pack keep their schemas).
WORKSPACE_OUTPUTS = {
    "status": "workspace-status-response.v1.json",
    "discover": "discover-workspace-response.v1.json",
}  # `index` checks its own file (index_repository)

INSTRUCTIONS = (
    "pix searches the local git repository it was started in, by meaning, words and "
    "identifiers. Start with the query tool; save a query you will repeat with alias_add."
)
MODES_ADVICE = (
    'mode is required. Use "chunk" to find the exact place: a function, class or section, '
    'with its path and line range. Use "file" when you need whole files as context: each file '
    "appears once, ranked by its best chunk and the evidence of its others, with its complete "
    "text. In chunk mode each file's best chunk carries that file score. A text held at several "
    "paths is shown once; its copies lists the other paths. Set noContent to true to "
    "get only paths, lines and scores first, then ask again for what you need. "
)


def _budget_advice(default: int) -> str:
    return (
        f"Answers are limited to maxCharacters characters (default {default:,}; pass a number "
        "to change it); only the last result may be cut, and it is then marked truncated: true. "
        "In file mode, omitted.budgetFiles names the files the budget left out. "
    )


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    read_only: bool
    destructive: bool
    idempotent: bool
    output: str | None  # the schema (in schema/) its structured result follows, if one


def tool_specs(default_max: int, refresh: bool) -> list[ToolSpec]:
    freshness = (
        "If files changed since the index was built, they are re-indexed first and the "
        "response's refreshed field says what changed. "
        if refresh
        else "The index is not refreshed first; warnings say when files changed (use index). "
    )
    return [
        ToolSpec(
            "query",
            "Search the repository. " + MODES_ADVICE + _budget_advice(default_max) + freshness
            + "The result is the JSON of `pix query --json`.",
            # A refresh only brings pix's own index up to date with the files on disk: the
            # repository, the aliases and every answer's meaning are unchanged.
            read_only=True, destructive=False, idempotent=True, output=QUERY_RESPONSE,
        ),
        ToolSpec(
            "pack",
            "Gather the best evidence for a question into one packet that fits a budget "
            "(budget, in unit: tokens of pix's embedding tokenizer by default, or chars). "
            "Chunks of one file are merged into spans, a small file is given whole when that "
            "is cheaper, files are spread before repeating one, and the last span may be cut "
            "to fit (cut: true). text is the packet; spans carry citations; omitted says what "
            "was left out and why. Secrets are always masked. " + freshness
            + "The result is the JSON of `pix pack --format json`.",
            read_only=True, destructive=False, idempotent=True, output=PACK_RESPONSE,
        ),
        ToolSpec(
            "alias_run",
            "Run a saved query by name (see alias_list). It keeps the mode and options it was "
            "saved with; only view, noContent and maxCharacters may be given. "
            + _budget_advice(default_max) + freshness,
            read_only=True, destructive=False, idempotent=True, output=QUERY_RESPONSE,
        ),
        ToolSpec(
            "alias_list",
            "List the saved queries (aliases) with their query, mode and options. An invalid "
            "one is listed with what is wrong with it.",
            read_only=True, destructive=False, idempotent=True, output=None,
        ),
        ToolSpec(
            "alias_add",
            "Save a query under a name. spec is a query request with an explicit mode (chunk "
            "or file), as for the query tool. An existing name is refused unless force is true, "
            "which replaces it.",
            read_only=False, destructive=True, idempotent=True, output=None,
        ),
        ToolSpec(
            "alias_remove",
            "Delete a saved query by name.",
            read_only=False, destructive=True, idempotent=True, output=None,
        ),
        ToolSpec(
            "status",
            "What the index holds (snapshots, files, chunks, embedded share) and which files "
            "changed since it was built. The JSON of `pix status --json`.",
            read_only=True, destructive=False, idempotent=True, output=STATUS_RESPONSE,
        ),
        ToolSpec(
            "discover",
            "When you do not know where something lives: test several literal or regex "
            "hypotheses at once (each with an explicit mode) across roots of the indexed "
            "snapshot. Returns ranked candidate files with short excerpts, which hypothesis x "
            "root cells were searched completely (no_matches there is real absence evidence) "
            "and a recommended next read. Exact matching, not meaning: use query for that. "
            "The JSON of `pix discover --json`.",
            read_only=True, destructive=False, idempotent=True, output=DISCOVER_RESPONSE,
        ),
        ToolSpec(
            "index",
            "Bring the index up to date with the work tree: only changed files are read and "
            "only new chunks embedded. The JSON of `pix index --json`.",
            read_only=False, destructive=False, idempotent=True, output=INDEX_RESPONSE,
        ),
    ]  # fmt: skip


def ok(payload: dict) -> types.CallToolResult:
    """The payload as structured content, and as text in the bytes `pix ... --json` prints."""
    text = json.dumps(payload, ensure_ascii=False, indent=2)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=payload
    )


def failed(error: PixError) -> types.CallToolResult:
    """The CLI's message (and hint) as text, the CLI's --json error envelope as structure."""
    text = error.message + (f"\nhint: {error.hint}" if error.hint else "")
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=error.envelope(),
        is_error=True,
    )


class PixMcp:
    """The tools, independent of the transport: `call` is synchronous and thread-safe."""

    def __init__(
        self,
        db: str | None = None,
        cwd: str | None = None,
        refresh: bool = True,
        default_max_characters: int = DEFAULT_MAX_CHARACTERS,
        workspace: Workspace | None = None,
    ) -> None:
        """`workspace`: serve its repositories (pix.shards) instead of one database: query,
        pack, discover and status span them (a `repos` argument narrows); the alias and
        index tools need one repository and say so."""
        self.db, self.cwd, self.refresh = db, cwd, refresh
        self.workspace = workspace
        self._shards: ShardSet | None = None
        self.default_max_characters = default_max_characters
        self.specs = {s.name: s for s in tool_specs(default_max_characters, refresh)}
        self._lock = threading.Lock()
        self._engine: QueryEngine | None = None
        self._lost = False  # the database this server had was deleted
        self._handlers: dict[str, Callable[[dict], dict]] = {
            "query": self._query,
            "pack": self._pack,
            "alias_run": self._alias_run,
            "alias_list": lambda args: alias.list_all(self._open().store),
            "alias_add": self._alias_add,
            "alias_remove": lambda args: alias.remove(self._open().store, args["name"]),
            "status": self._status,
            "discover": self._discover,
            "index": self._index,
        }

    def close(self) -> None:
        with self._lock:
            if self._shards is not None:
                self._shards.close()
                self._shards = None
            if self._engine is not None:
                self._engine.close()
                self._engine = None

    def tools(self) -> list[types.Tool]:
        out = []
        for spec in self.specs.values():
            out.append(
                types.Tool(
                    name=spec.name,
                    description=spec.description,
                    input_schema=copy.deepcopy(bundled(_input_ref(spec.name))),
                    output_schema=(
                        copy.deepcopy(bundled(output)) if (output := self._output(spec)) else None
                    ),
                    annotations=types.ToolAnnotations(
                        read_only_hint=spec.read_only,
                        destructive_hint=spec.destructive,
                        idempotent_hint=spec.idempotent,
                        open_world_hint=False,
                    ),
                )
            )
        return out

    def _output(self, spec: ToolSpec) -> str | None:
        if self.workspace is not None and spec.name in WORKSPACE_OUTPUTS:
            return WORKSPACE_OUTPUTS[spec.name]
        return spec.output

    def call(self, name: str, arguments: dict | None) -> types.CallToolResult:
        try:
            return ok(self._dispatch(name, arguments or {}))
        except Exception as exc:  # the server must survive anything a call does
            return failed(as_pix_error(exc))

    def _dispatch(self, name: str, args: dict) -> dict:
        if name not in self.specs:
            raise UsageError(f"unknown tool {name!r}; tools are {', '.join(self.specs)}")
        if name == "alias_run" and "mode" in args:
            raise UsageError(alias.MODE_REFUSED)  # the message `pix run --file` gives
        problem = alias.schema_problem(args, _input_ref(name))
        if problem:
            raise UsageError(problem)
        with self._lock:
            if self.workspace is not None:
                return self._workspace_call(name, args)
            self._follow_file()
            answer = self._handlers[name](args)
            if name in ALIAS_WRITES and self._engine is not None:
                # Never a success for a change that went to a file no longer at the path.
                self._engine.store.check_not_moved(f"{name} ran")
            return answer

    # --- handlers: called with the lock held ---------------------------------------------

    def _workspace_call(self, name: str, args: dict) -> dict:
        """A tool over the workspace's shards (opened on first use, kept warm; a shard that
        could not be opened is tried again on each call)."""
        from pix.shards_tools import discover_shards, pack_shards, status_shards

        if name == "status":
            return status_shards(self.workspace)
        if name == "discover":
            return discover_shards(self.workspace, args)
        if name not in ("query", "pack"):
            raise UsageError(
                f"the {name} tool needs one repository; this server answers for the "
                f"workspace {self.workspace.source or ''}".rstrip(),
                hint="start `pix mcp` in the repository (or with --db) for aliases and index",
            )
        if self._shards is None:
            self._shards = ShardSet(self.workspace, fresh_for=WORKSPACE_FRESH_SECONDS)
        else:
            self._shards.follow_files()
            self._shards.reopen_failed()
        if name == "pack":
            return pack_shards(self._shards, PackRequest.from_json(args), auto_refresh=self.refresh)
        request = QueryRequest.from_json(args)
        if request.max_characters is None:
            request.max_characters = self.default_max_characters
        return query_shards(self._shards, request, auto_refresh=self.refresh)

    def _follow_file(self) -> None:
        """The file at the path may have been deleted or replaced (`pix index --rebuild`, a
        copy) since the last call: reopen what is there now. If that fails, the engine goes,
        and the next use of it fails as the CLI would ("no pix index", exit 3 in the CLI)."""
        if self._engine is None or not self._engine.store.moved():
            return
        try:
            self._engine.reopen()
        except PixError:
            self._engine.close()
            self._engine = None
            self._lost = True  # gone under us: say so, never index a new one unasked

    def _open(self) -> QueryEngine:
        """The engine, opened on first use: the server starts (and `index` works) before any
        index exists; a call that needs one fails with the CLI's "no pix index" message."""
        if self._engine is None:
            self._engine = QueryEngine(db=self.db, cwd=self.cwd)
        return self._engine

    def _query(self, args: dict) -> dict:
        return self._answer(QueryRequest.from_json(args))

    def _pack(self, args: dict) -> dict:
        from pix.pack import run_pack

        engine, first = self._open_or_index()
        response = run_pack(engine, PackRequest.from_json(args), auto_refresh=self.refresh)
        return _say_first_index(response, first)

    def _open_or_index(self) -> tuple[QueryEngine, dict | None]:
        """The engine; on a repository never indexed, its first index is made inside the call
        (words, names and the static tier: seconds, where the transformer would take
        minutes), and what it did is returned to be reported. A database deleted under this
        server is reported instead (the index tool builds a new one)."""
        try:
            return self._open(), None
        except NotIndexedError:
            target = locate(self.cwd, self.db)
            if target.db.exists() or self._lost:  # no work-tree snapshot, or deleted: say so
                raise
            report = index_repository(str(target.root), str(target.db), embed=False)
            first = {
                "firstIndex": True,
                "files": report.files,
                "newBlobs": report.new_blobs,
                "staticVectors": report.static_vectors,
                "embedPending": report.embed_pending,
            }
            return self._open(), first

    def _alias_run(self, args: dict) -> dict:
        overrides = {key: args[key] for key in alias.OUTPUT_FIELDS if key in args}
        return self._answer(alias.request_for(self._open().store, args["name"], overrides))

    def _alias_add(self, args: dict) -> dict:
        try:
            return alias.add(
                self._open().store, args["name"], args["spec"], args.get("force", False)
            )
        except alias.AliasExistsError as exc:
            raise UsageError(
                exc.message, hint='pass "force": true to replace it, or see it with alias_list'
            ) from None

    def _status(self, args: dict) -> dict:
        from pix.status import status

        return status(db=self.db, cwd=self.cwd)

    def _discover(self, args: dict) -> dict:
        from pix.discover import discover

        return discover(args, db=self.db, cwd=self.cwd)

    def _index(self, args: dict) -> dict:
        target = locate(self.cwd, self.db)
        try:
            engine = self._open()
        except NotIndexedError:
            engine = None  # the first index: index_repository loads the model itself
        if engine is not None and (other := other_tree(engine)) is not None:
            # `--db` names another repository's database (its tree is on this machine): the
            # server's folder indexed into it would answer every later query instead, and the
            # agent could not tell. A query's refresh skips it for the same reason.
            raise UsageError(
                f"{target.db} indexes {other}, not {target.root}",
                hint=f"run `{reindex_command(other, target.db)}` in {other}",
            )
        embedder = engine.embedder() if engine is not None else None
        return index_repository(str(target.root), str(target.db), embedder=embedder).describe()

    def _answer(self, request: QueryRequest) -> dict:
        """Run a request through the one query path, with the agent's budget and, if files
        changed since the snapshot was indexed, an incremental refresh first."""
        if request.max_characters is None:
            request.max_characters = self.default_max_characters
        engine, first = self._open_or_index()
        return _say_first_index(engine.query(request, auto_refresh=self.refresh), first)


def _say_first_index(response: dict, first: dict | None) -> dict:
    if first:
        response["refreshed"] = {**response.get("refreshed", {}), **first}
        response["warnings"].insert(
            0,
            f"this repository had no index: it was indexed for this call ({first['files']} "
            "files; words, names and the static tier); call the index tool to add the "
            "transformer's vectors",
        )
    return response


def _input_ref(tool: str) -> str:
    return f"{TOOLS_SCHEMA}#/$defs/{tool}"


def build_server(tools: PixMcp) -> Server:
    async def list_tools(
        ctx: object, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools.tools())

    async def call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await anyio.to_thread.run_sync(tools.call, params.name, params.arguments)

    return Server(
        "pix",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve(
    db: str | None = None,
    cwd: str | None = None,
    refresh: bool = True,
    workspace: Workspace | None = None,
) -> None:
    """Serve over stdin/stdout until the client closes stdin. Nothing else may write stdout.
    A folder or database path that can never serve is refused before serving, as the other
    commands refuse it, rather than failing every call."""
    if workspace is None:
        target = locate(cwd, db)  # UsageError: no such folder, not a folder
        if target.db.is_dir():
            raise DatabaseError(
                f"{target.db} is a folder, not a database file",
                hint="pass --db with a file name; the first index makes it",
            )
        refuse_unusable(target.db)  # a text file, another program's SQLite, a newer pix's
    tools = PixMcp(db=db, cwd=cwd, refresh=refresh, workspace=workspace)
    server = build_server(tools)
    # On Ctrl-C a server has nothing to unwind that SQLite does not guarantee by itself (a cut
    # call's transaction rolls back, its leases end with the process), and the thread reading
    # stdin cannot be stopped: end it soon after cancelling the running call.
    interrupt.set_grace(MCP_INTERRUPT_GRACE_SECONDS)

    async def main() -> None:
        # After Ctrl-C asyncio's shutdown reports the cancelled tasks' exception groups with a
        # traceback on stderr; the one line of pix.interrupt is all a user should see.
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(
            lambda loop, context: (
                None if interrupt.requested() else loop.default_exception_handler(context)
            )
        )
        await serve_stdio(server)

    try:
        anyio.run(main)
    except* (BrokenPipeError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        # The client closed its end of stdout (`pix mcp ... | head -n1`): nobody is left to
        # answer, and that is the client's choice, as for any command piped into head.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    finally:
        tools.close()
