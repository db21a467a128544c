"""The `pix` command: parse, call one application function, render. Nothing else lives here.

Exit codes: 0 ok, 1 unexpected, 2 bad usage or input, 3 no index or no such snapshot,
4 unusable database, 130 interrupted. With --json (or --format json) a failure prints the error
envelope of schema/error.v1.json on stdout.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

try:  # typer >= 0.22 vendors its own click; older ones use the click package
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover
    from click import exceptions as click_errors

from pix import errors

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Local code retrieval: index a git repository into one SQLite file, then ask it.",
    pretty_exceptions_enable=False,
)

DbOption = Annotated[
    Path | None, typer.Option("--db", help="Database file (default: $PIX_DB or <root>/.pix.db).")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine output on stdout.")]


class Format(StrEnum):
    text = "text"
    json = "json"
    both = "both"


class Mode(StrEnum):
    minimal = "minimal"
    default = "default"
    full = "full"


class Fusion(StrEnum):
    rrf = "rrf"
    dbsf = "dbsf"


def emit_json(payload: object) -> None:
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")


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
    no_embed: Annotated[
        bool, typer.Option("--no-embed", help="Stop after the keyword index.")
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress or summary on stderr.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Index the work tree (or a commit with --at) into the database."""
    from pix.index import index_repository
    from pix.progress import Progress

    report = index_repository(
        str(path) if path else None,
        str(db) if db else None,
        at,
        max_bytes,
        embed=not no_embed,
        progress=Progress(enabled=None if not quiet else False),
    )
    if as_json:
        emit_json(asdict(report))
    elif not quiet:
        skipped = sum(report.skipped.values())
        typer.echo(
            f"indexed {report.files} files ({report.new_blobs} new, {skipped} skipped), "
            f"{report.chunks_added} chunks added, {report.embedded} embedded, "
            f"{report.embed_pending} pending -> {report.db}",
            err=True,
        )


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
        list[str] | None, typer.Option("--only-path", help="Search only paths matching this glob.")
    ] = None,
    ignore_path: Annotated[
        list[str] | None,
        typer.Option("--ignore-path", help="Never search paths matching this glob."),
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
            min=1,
            help="Output budget; the last result may be cut, marked [...].",
        ),
    ] = None,
    fmt: Annotated[
        Format,
        typer.Option("--format", help="text, json, or both (text on stderr, JSON on stdout)."),
    ] = Format.text,
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
        bool, typer.Option("--no-priors", help="Do not demote tests, docs, examples, vendored.")
    ] = False,
    channel: Annotated[
        list[str] | None,
        typer.Option(
            "--channel", help="Use only this channel (dense, bm25, ident, path); repeatable."
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
    db: DbOption = None,
    cwd: Annotated[Path | None, typer.Option("--cwd", help="Run as if in this folder.")] = None,
) -> None:
    """Search the index: ranked chunks, or whole files with --file."""
    from pix.query import QueryRequest
    from pix.query import query as run

    changing = {
        "TEXT": text,
        "--file": file or None,
        "--top": top,
        "--only-path": only_path,
        "--ignore-path": ignore_path,
        "--no-content": no_content or None,
        "--context-lines": context_lines,
        "--max-characters": max_characters,
        "--explain": explain or None,
        "--at": at,
        "--fusion": fusion,
        "--no-priors": no_priors or None,
        "--channel": channel,
        "--refresh": refresh or None,
    }
    if input_ is not None:
        given = [name for name, value in changing.items() if value]
        if given:
            raise errors.UsageError(
                f"--input is exclusive with {', '.join(given)}: put them in the JSON request"
            )
        request = QueryRequest.from_json(read_json(input_))
    else:
        if text is None:
            raise errors.UsageError("a query is required", hint='pix query "what you look for"')
        request = QueryRequest(
            query=text,
            mode="file" if file else "chunk",
            top=10 if top is None else top,
            only_paths=only_path or [],
            ignore_paths=ignore_path or [],
            no_content=no_content,
            context_lines=context_lines or 0,
            max_characters=max_characters,
            explain=explain,
            at=at,
            fusion=(fusion or Fusion.rrf).value,
            priors=not no_priors,
            channels=channel or None,
            refresh=refresh,
        )
    if view is not None:  # an output option: it may refine an --input request
        request.view = view.value
    response = run(request, db=str(db) if db else None, cwd=str(cwd) if cwd else None)
    fmt = Format.json if as_json else fmt
    from pix.output import render

    if fmt is not Format.text:
        emit_json(response)
    plain = render.render_response(response)
    if fmt is not Format.json:
        for warning in response["warnings"]:
            typer.echo(f"warning: {warning}", err=True)
        stream = sys.stdout if fmt is Format.text else sys.stderr
        stream.write(render.colorize_response(response) if stream.isatty() else plain)
    if copy:
        from pix.output.clipboard import copy as to_clipboard

        to_clipboard(plain)


@app.command()
def status(db: DbOption = None, as_json: JsonOption = False) -> None:
    """What the database holds and whether the work tree changed since it was indexed."""
    from pix.status import status as run

    report = run(db=str(db) if db else None)
    if as_json:
        emit_json(report)
        return
    from pix.output.render import render_status

    sys.stdout.write(render_status(report))


@app.command()
def gc(db: DbOption = None, as_json: JsonOption = False) -> None:
    """Drop contents that no snapshot references."""
    from pix.index import gc as run

    report = run(db=str(db) if db else None)
    if as_json:
        emit_json(report)
    else:
        removed = report["removed"]
        typer.echo(
            f"removed {removed['blobs']} blobs, {removed['chunks']} chunks, "
            f"{removed['vectors']} vectors"
        )


def read_json(source: str) -> object:
    try:
        raw = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise errors.UsageError(f"cannot read --input {source}: {exc.strerror}") from None
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise errors.UsageError(
            f"--input is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None


def _wants_json(argv: list[str]) -> bool:
    return (
        "--json" in argv
        or "--format=json" in argv
        or (
            "--format" in argv
            and argv[argv.index("--format") + 1 : argv.index("--format") + 2] == ["json"]
        )
    )


def _fail(error: errors.PixError, argv: list[str]) -> int:
    if _wants_json(argv):
        emit_json(error.envelope())
    else:
        line = f"pix: error: {error.message}"
        if error.hint:
            line += f" ({error.hint})"
        sys.stderr.write(" ".join(line.splitlines()) + "\n")
    return error.exit_code


def main(argv: list[str] | None = None) -> int:
    import apsw

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        app(args=argv, prog_name="pix", standalone_mode=False)
        return 0
    except click_errors.NoArgsIsHelpError as exc:
        exc.show()
        return 0
    except click_errors.UsageError as exc:
        return _fail(errors.UsageError(exc.format_message().strip().splitlines()[-1]), argv)
    except KeyboardInterrupt:
        return _interrupted()
    except errors.PixError as exc:
        return _fail(exc, argv)
    except (apsw.CorruptError, apsw.NotADBError) as exc:
        return _fail(errors.DatabaseError(f"the database is corrupt: {exc}"), argv)
    except apsw.BusyError:
        return _fail(
            errors.PixError("the database is busy (another pix is writing); try again"), argv
        )
    except BrokenPipeError:
        return 0
    except Exception as exc:  # the last line of defence: one line, never a traceback
        if os.environ.get("PIX_DEBUG"):
            raise
        return _fail(errors.PixError(f"unexpected {type(exc).__name__}: {exc}"), argv)


def _interrupted() -> int:
    sys.stderr.write(
        "pix: interrupted; what was committed is kept, run the command again to continue\n"
    )
    return 130


if __name__ == "__main__":
    sys.exit(main())
