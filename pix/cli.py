"""The `pix` command: parse, call one application function, render. Nothing else lives here.

Exit codes: 0 ok, 1 unexpected, 2 bad usage or input, 3 no index or no such snapshot,
4 unusable database, 5 conflict (another pix held or replaced the database), 130 interrupted.
With --json (or --format json) a failure prints the error envelope of schema/error.v1.json on
stdout.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import typing
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

try:  # typer >= 0.22 vendors its own click; older ones use the click package
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover
    from click import exceptions as click_errors

from pix import errors, interrupt
from pix.cli_cluster import optional_ray_address
from pix.cli_io import (
    Format,
    chosen_format,
    drop_stdout,
    emit_json,
    emit_pack,
    emit_response,
    fail,
    print_version,
    read_json,
    request_from_options,
    terminal_budget,
    warn_revealed,
)

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Plain help: rich's panels print a type placeholder (`<bool>`) even for flags that take
    # no value, and wrap words inside boxes that depend on the terminal's width.
    rich_markup_mode=None,
)

# A list, so that a command of one database can refuse a second --db (one_db) rather than
# silently use the last.
DbOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--db", metavar="FILE", help="Database file (default: $PIX_DB or <root>/.pix.db)."
    ),
]
DbsOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--db",
        metavar="FILE",
        help="Database file (default: $PIX_DB or <root>/.pix.db); repeat for several.",
    ),
]
WorkspaceOption = Annotated[
    Path | None,
    typer.Option(
        "--workspace", help="Ask the repositories of this pix.toml (or a folder holding one)."
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine output on stdout.")]
CwdOption = Annotated[Path | None, typer.Option("--cwd", help="Run as if in this folder.")]
ShowSecretsOption = Annotated[
    bool,
    typer.Option(
        "--show-secrets",
        help="Show secrets unmasked (for the repository's owner; never available over MCP).",
    ),
]


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=print_version, help="Print pix's version.")
    ] = False,
) -> None:
    """Local code retrieval: index a git repository into one SQLite file, then ask it."""


class Mode(StrEnum):
    minimal = "minimal"
    default = "default"
    full = "full"


class Fusion(StrEnum):
    rrf = "rrf"
    dbsf = "dbsf"


class Unit(StrEnum):
    tokens = "tokens"
    chars = "chars"


@app.command()
def index(
    path: Annotated[
        Path | None, typer.Argument(help="Repository or folder (default: here).")
    ] = None,
    db: DbOption = None,
    at: Annotated[
        str | None,
        typer.Option("--at", help="Index this commit's tree exactly (HEAD, sha or prefix)."),
    ] = None,
    max_bytes: Annotated[
        int, typer.Option("--max-bytes", min=1, help="Skip files larger than this.")
    ] = 1 << 20,
    static_only: Annotated[
        bool,
        typer.Option(
            "--static-only",
            "--no-embed",
            help="Stop before the transformer: words, names and the static tier are searchable.",
        ),
    ] = False,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Rebuild in a fresh file, swap it in; keeps aliases.")
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress or summary on stderr.")
    ] = False,
    as_json: JsonOption = False,
    workspace: Annotated[
        Path | None,
        typer.Option("--workspace", help="Index every repository of this workspace file/folder."),
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="[ADDRESS]",
            help="With --workspace: embed on a Ray cluster (no address: a local one). "
            "Needs pip install 'pix[cluster]'.",
        ),
    ] = None,
    ray_cpus: Annotated[
        int | None, typer.Option("--ray-cpus", min=1, help="CPUs of a local Ray (default: all).")
    ] = None,
) -> None:
    """Index the work tree (or a commit with --at) into the database."""
    from pix.progress import Progress

    db_file = one_db(db)
    progress = Progress(enabled=None if not quiet else False, notes=not quiet)
    if workspace is not None or ray is not None:
        from pix.cli_cluster import index_workspace_command

        index_workspace_command(
            workspace, ray, ray_cpus, path, db_file, at, rebuild, max_bytes, static_only, progress,
            as_json, quiet,
        )  # fmt: skip
        return
    from pix.index import index_repository

    report = index_repository(
        str(path) if path else None,
        str(db_file) if db_file else None,
        at,
        max_bytes,
        embed=not static_only,
        progress=progress,
        rebuild=rebuild,
    )
    if as_json:
        emit_json(report.describe())
    elif not quiet:
        from pix.output.render import index_summary

        typer.echo(index_summary(report.describe()), err=True)


@app.command()
def query(
    text: Annotated[str | None, typer.Argument(help="What to look for.")] = None,
    file: Annotated[
        bool, typer.Option("--file", help="Whole files ranked by their strongest chunk.")
    ] = False,
    top: Annotated[
        int | None, typer.Option("--top", help="Results (unique files with --file); 1-100.")
    ] = None,
    only_path: Annotated[
        list[str] | None,
        typer.Option("--only-path", metavar="GLOB", help="Search only paths matching this glob."),
    ] = None,
    ignore_path: Annotated[
        list[str] | None,
        typer.Option(
            "--ignore-path", metavar="GLOB", help="Never search paths matching this glob."
        ),
    ] = None,
    no_content: Annotated[
        bool, typer.Option("--no-content", help="Paths and scores only.")
    ] = False,
    context_lines: Annotated[
        int | None,
        typer.Option(
            "--context-lines", min=0, help="Context around chunks (no effect with --file)."
        ),
    ] = None,
    max_characters: Annotated[
        int | None,
        typer.Option(
            "--max-characters",
            min=0,
            help="Output budget; the last result may be cut, marked [...]. Text on a terminal "
            "gets 20,000 unless given; 0: no limit.",
        ),
    ] = None,
    fmt: Annotated[
        Format | None,
        typer.Option(
            "--format", help="text (default), json, or both (text on stderr, JSON on stdout)."
        ),
    ] = None,
    as_json: JsonOption = False,
    view: Annotated[
        Mode | None,
        typer.Option("--view", help="How much of each result to show (default: default)."),
    ] = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="Each channel's rank, score, weight and contribution.")
    ] = False,
    at: Annotated[
        str | None, typer.Option("--at", help="Query this indexed commit exactly.")
    ] = None,
    fusion: Annotated[
        Fusion | None, typer.Option("--fusion", help="rrf (default) or dbsf.")
    ] = None,
    no_priors: Annotated[
        bool,
        typer.Option(
            "--no-priors",
            help="Do not demote tests/docs/examples/vendored/config, nor weigh a change "
            "description or an issue report by each file's commits of the past year.",
        ),
    ] = False,
    channel: Annotated[
        list[str] | None,
        typer.Option(
            "--channel",
            metavar="dense|static|bm25|ident|path|evidence|component|log|phrase|definition",
            help="This channel only; repeatable.",
        ),
    ] = None,
    refresh: Annotated[
        bool, typer.Option("--refresh", help="Re-index changed files first.")
    ] = False,
    input_: Annotated[
        str | None, typer.Option("--input", help="A JSON request from a file, or - for stdin.")
    ] = None,
    copy: Annotated[
        bool, typer.Option("--copy", help="Also put the formatted text on the clipboard.")
    ] = False,
    show_secrets: ShowSecretsOption = False,
    db: DbsOption = None,
    cwd: CwdOption = None,
    workspace: WorkspaceOption = None,
) -> None:
    """Search the index: ranked chunks, or whole files with --file."""
    from pix.query import QueryRequest
    from pix.query import query as run

    output = chosen_format(as_json, fmt)  # refused before any work (a --refresh, say)
    options = dict(
        file=file, top=top, only_path=only_path, ignore_path=ignore_path, no_content=no_content,
        context_lines=context_lines, max_characters=max_characters, view=view, explain=explain,
        at=at, fusion=fusion, no_priors=no_priors, channel=channel, refresh=refresh,
    )  # fmt: skip
    if input_ is not None:
        given = [n for n, v in options.items() if n != "view" and v is not None and v is not False]
        if given or text is not None:
            flags = ["TEXT"] * (text is not None) + ["--" + g.replace("_", "-") for g in given]
            raise errors.UsageError(
                f"--input is exclusive with {', '.join(flags)}: put them in the JSON request"
            )
        request = QueryRequest.from_json(read_json(input_))
        if view is not None:  # an output option: it may refine an --input request
            request.view = view.value
    else:
        if text is None:
            raise errors.UsageError("a query is required", hint='pix query "what you look for"')
        request = request_from_options(text, options)
        if max_characters is None:
            request.max_characters = terminal_budget(output)
    warn_revealed(show_secrets)
    shards = _workspace(workspace, db)
    if shards is not None:
        from pix.shards import query_workspace

        response = query_workspace(shards, request, reveal=show_secrets)
    else:
        response = run(request, **_where({"db": db, "cwd": cwd}), reveal=show_secrets)
    emit_response(response, output, copy)


@app.command()
def status(
    db: DbsOption = None,
    as_json: JsonOption = False,
    workspace: WorkspaceOption = None,
    cwd: CwdOption = None,
) -> None:
    """What the database holds and whether the work tree changed since it was indexed."""
    from pix.output.render import render_status
    from pix.status import status as run

    shards = _workspace(workspace, db)
    if shards is not None:
        from pix.shards_tools import status_shards

        report = status_shards(shards)
        if as_json:
            emit_json(report)
            return
        for repo in report["repos"]:
            fresh = "fresh" if repo["fresh"] else "not fresh"
            sys.stdout.write(f"== {repo['name']} ({fresh})\n")
            if "status" in repo:
                sys.stdout.write(render_status(repo["status"]))
            else:
                sys.stdout.write(f"error: {repo['error']['message']}\n")
        return
    report = run(**_where({"db": db, "cwd": cwd}))
    if as_json:
        emit_json(report)
        return
    sys.stdout.write(render_status(report))


@app.command()
def gc(
    keep: Annotated[
        int | None,
        typer.Option("--keep", min=0, help="Keep only the N commit snapshots (--at) indexed last."),
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
    cwd: CwdOption = None,
) -> None:
    """Drop what no snapshot references and return the space to the file system."""
    from pix.gc import gc as run

    db_file = one_db(db)
    report = run(str(cwd) if cwd else None, db=str(db_file) if db_file else None, keep=keep)
    for warning in report.get("warnings", []):
        typer.echo(f"warning: {warning}", err=True)
    if as_json:
        emit_json(report)
    else:
        removed = report["removed"]
        typer.echo(
            f"removed {removed['snapshots']} snapshots, {removed['blobs']} blobs, "
            f"{removed['chunks']} chunks, {removed['vectors']} vectors; "
            f"{report['bytesBefore']:,} -> {report['bytesAfter']:,} bytes"
        )


# --- aliases, `pix run` and `pix mcp` ---------------------------------------------------------
# These commands reuse `pix query`'s option declarations (names, help, types, defaults) straight
# from its signature, so an option is declared once and `alias add` cannot drift from `query`.

QUERY_CHANGING = (
    "file", "top", "only_path", "ignore_path", "no_content", "context_lines", "max_characters",
    "view", "explain", "at", "fusion", "no_priors", "channel", "refresh", "db", "cwd",
)  # fmt: skip
# `pix run` takes only what changes how the alias's results are shown (pix/alias.py OUTPUT_FIELDS),
# plus where the database is; --file and --mode are refused with a message, the other query
# options are unknown to it (exit 2).
RUN_OPTIONS = (
    "fmt", "as_json", "view", "max_characters", "no_content", "copy", "show_secrets", "db", "cwd",
)  # fmt: skip


def _with_query_options(*names: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Append `pix query`'s parameters `names` to a command; it receives them as `options`."""
    hints = typing.get_type_hints(query, include_extras=True)
    source = inspect.signature(query).parameters
    extra = [
        source[n].replace(annotation=hints[n], kind=inspect.Parameter.KEYWORD_ONLY) for n in names
    ]

    def wrap(fn: Callable[..., None]) -> Callable[..., None]:
        own_hints = typing.get_type_hints(fn, include_extras=True)
        own = [
            p.replace(annotation=own_hints[p.name])
            for p in inspect.signature(fn).parameters.values()
            if p.name != "options"
        ]

        @functools.wraps(fn)
        def command(**kwargs: object) -> None:
            options = {n: kwargs.pop(n) for n in names}
            fn(**kwargs, options=options)

        command.__signature__ = inspect.Signature(own + extra)  # type: ignore[attr-defined]
        return command

    return wrap


def one_db(dbs: list[Path] | None) -> Path | None:
    if dbs and len(dbs) > 1:
        raise errors.UsageError(
            "this command takes one --db",
            hint="several databases are asked together by query, pack, discover and status",
        )
    return dbs[0] if dbs else None


def _where(options: dict) -> dict:
    """db and cwd for the one-database path (several --db make a workspace: _workspace)."""
    db = one_db(options["db"])
    return {"db": str(db) if db else None, "cwd": str(options["cwd"]) if options["cwd"] else None}


def _workspace(workspace: Path | None, dbs: list[Path] | None):
    from pix.workspace import workspace_from

    return workspace_from(str(workspace) if workspace else None, [str(d) for d in dbs or []])


@app.command("mcp")
def mcp(
    db: DbOption = None,
    cwd: Annotated[Path | None, typer.Option("--cwd", help="Serve as if in this folder.")] = None,
    no_refresh: Annotated[
        bool, typer.Option("--no-refresh", help="Never re-index changed files before a query.")
    ] = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Serve pix to agents over MCP (stdio): query, aliases, status and index tools."""
    from pix.mcp import serve

    db_file = one_db(db)
    serve(
        db=str(db_file) if db_file else None, cwd=str(cwd) if cwd else None,
        refresh=not no_refresh,
        workspace=_workspace(workspace, [db_file] if db_file else None) if workspace else None,
    )  # fmt: skip


@app.command("pack")
@_with_query_options(
    "only_path", "ignore_path", "at", "fusion", "no_priors", "channel", "refresh", "fmt",
    "as_json", "input_", "copy", "show_secrets", "db", "cwd", "workspace",
)  # fmt: skip
def pack_cmd(
    text: Annotated[str | None, typer.Argument(metavar="QUESTION", help="What to gather.")] = None,
    budget: Annotated[
        int | None, typer.Option("--budget", min=1, help="The packet's size limit, in --unit.")
    ] = None,
    unit: Annotated[
        Unit | None,
        typer.Option("--unit", help="tokens (the embedding model's tokenizer, default) or chars."),
    ] = None,
    options: dict | None = None,
) -> None:
    """The best evidence for a question that fits a token budget: one packet, with citations."""
    from pix.pack import PackRequest
    from pix.pack import pack as run

    assert options is not None
    output = chosen_format(options["as_json"], options["fmt"])  # refused before any work
    shaping = ("only_path", "ignore_path", "at", "fusion", "no_priors", "channel", "refresh")
    if options["input_"] is not None:
        given = [n for n in shaping if options[n]] + ["budget"] * (budget is not None)
        given += ["unit"] * (unit is not None)
        if given or text is not None:
            raise errors.UsageError("--input is exclusive with QUESTION and the query options")
        request = PackRequest.from_json(read_json(options["input_"]))
    else:
        if text is None or budget is None:
            raise errors.UsageError(
                "a question and --budget are required", hint='pix pack "question" --budget 4000'
            )
        o = options
        fusion, unit = o["fusion"] or Fusion.rrf, unit or Unit.tokens
        request = PackRequest(
            query=text, budget=budget, unit=unit.value, only_paths=o["only_path"] or [],
            ignore_paths=o["ignore_path"] or [], at=o["at"], fusion=fusion.value,
            priors=not o["no_priors"], channels=o["channel"] or None, refresh=o["refresh"],
        )  # fmt: skip
    warn_revealed(options["show_secrets"])
    shards = _workspace(options["workspace"], options["db"])
    if shards is not None:
        from pix.shards import ShardSet
        from pix.shards_tools import pack_shards

        opened = ShardSet(shards)
        try:
            response = pack_shards(opened, request, reveal=options["show_secrets"])
        finally:
            opened.close()
    else:
        response = run(request, **_where(options), reveal=options["show_secrets"])
    emit_pack(response, output, options["copy"])


# The alias and run commands live in pix/cli_alias.py and discover in pix/cli_discover.py;
# importing them registers them.
from pix import cli_alias, cli_discover  # noqa: E402, F401


def main(argv: list[str] | None = None, *, as_command: bool = False) -> int:
    """`pix` with `argv` (None: this process's arguments). `as_command`: pix is this process's
    program (`command`), so once the command is done a signal changes nothing
    (interrupt.finished); a program that calls main() keeps its own signal handling."""
    code: int | None = None
    while True:
        try:
            if code is None:
                code = _run(argv)
            if as_command:
                interrupt.finished()
            return code
        except KeyboardInterrupt:  # between _run's own handling and finished()
            if code is None:
                code = interrupt.report()


def command() -> int:
    """The `pix` program: the console script, `python -m pix` and `python -m pix.cli`."""
    return main(as_command=True)


def _run(argv: list[str] | None) -> int:
    interrupt.install()
    argv = optional_ray_address(list(sys.argv[1:] if argv is None else argv))
    try:
        # typer turns a KeyboardInterrupt into the return value 130
        code = app(args=argv, prog_name="pix", standalone_mode=False)
        # Here, not at exit: a reader that left or a full disk is then answered below.
        sys.stdout.flush()
        return interrupt.report() if code == 130 or interrupt.requested() else 0
    except click_errors.NoArgsIsHelpError as exc:  # help on stdout, as --help prints it
        typer.echo(exc.format_message())
        return 0
    except click_errors.UsageError as exc:
        return fail(errors.UsageError(exc.format_message().strip().splitlines()[-1]), argv)
    except KeyboardInterrupt:
        return interrupt.report()
    except BrokenPipeError:  # the reader left (`pix ... | head -0`): its choice, not a failure
        drop_stdout()
        return 0
    except SystemExit as exc:
        if isinstance(exc.__context__, BrokenPipeError):  # click's exit 1 for the same
            drop_stdout()
            return 0
        raise
    except Exception as exc:  # the last line of defence: one line, never a traceback
        if interrupt.requested():  # a cancelled SQLite or onnxruntime call
            return interrupt.report()
        if os.environ.get("PIX_DEBUG") and not isinstance(exc, errors.PixError):
            raise
        try:
            sys.stdout.flush()
        except OSError:  # it was stdout that failed: what it still holds goes nowhere
            drop_stdout()
        return fail(errors.as_pix_error(exc), argv)


if __name__ == "__main__":
    # Run as `python -m pix.cli`, this file is `__main__`, and pix/cli_alias.py registered its
    # commands on the `app` of a second copy, `pix.cli`: run that copy.
    from pix.cli import command as registered_command

    sys.exit(registered_command())
