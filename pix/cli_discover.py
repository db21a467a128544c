"""`pix discover`: several literal/regex hypotheses tested at once, parsed here, run by
pix/discover (one repository) or pix/shards_tools.py (a workspace)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from pix import errors
from pix.cli import (
    DbsOption,
    JsonOption,
    ShowSecretsOption,
    WorkspaceOption,
    _where,
    _workspace,
    app,
)
from pix.cli_io import emit_json, read_json, warn_revealed


@app.command("discover")
def discover_cmd(
    literal: Annotated[
        list[str] | None,
        typer.Option(
            "--literal", "-l", metavar="ID=TEXT", help="A literal hypothesis; repeatable."
        ),
    ] = None,
    regex: Annotated[
        list[str] | None,
        typer.Option("--regex", "-r", metavar="ID=REGEX", help="A regex hypothesis; repeatable."),
    ] = None,
    root: Annotated[
        list[str] | None,
        typer.Option(
            "--root", metavar="DIR", help="A folder of the repository to search (default: all)."
        ),
    ] = None,
    glob: Annotated[
        list[str] | None,
        typer.Option(
            "--glob",
            "-g",
            metavar="GLOB",
            help="Search only paths matching this glob; !GLOB excludes.",
        ),
    ] = None,
    ignore_case: Annotated[
        bool, typer.Option("--ignore-case", "-i", help="Match -l/-r hypotheses in any case.")
    ] = False,
    native_only: Annotated[
        bool,
        typer.Option("--native-only", help="Do not leave out generated/vendored/cache/build."),
    ] = False,
    max_candidates: Annotated[
        int | None, typer.Option("--max-candidates", help="Ranked files to show (1-50).")
    ] = None,
    detailed: Annotated[
        bool, typer.Option("--detailed", help="Add the hypothesis x root status matrix.")
    ] = False,
    input_: Annotated[
        str | None, typer.Option("--input", help="A JSON request from a file, or - for stdin.")
    ] = None,
    as_json: JsonOption = False,
    show_secrets: ShowSecretsOption = False,
    db: DbsOption = None,
    cwd: Annotated[Path | None, typer.Option("--cwd", help="Run as if in this folder.")] = None,
    workspace: WorkspaceOption = None,
) -> None:
    """Test several literal/regex hypotheses at once: ranked candidate files and coverage."""
    from pix.discover import discover as run
    from pix.discover import render_text
    from pix.discover.request import request_from_flags

    flags = [literal, regex, root, glob, ignore_case, native_only, max_candidates]
    shards = _workspace(workspace, db)
    if input_ is not None:
        if any(flag for flag in flags):
            raise errors.UsageError("--input is exclusive with the flags that shape the request")
        request = read_json(input_)
        if detailed and isinstance(request, dict):  # an output option: it may refine --input
            request = {**request, "outputMode": "detailed"}
    else:
        # A workspace's roots are each repository's own, from its top; one repository's are
        # the shell's, from the folder pix runs in (discover's roots_here).
        request = request_from_flags(
            literal or [], regex or [], root or [], glob or [], ignore_case, native_only,
            detailed, max_candidates,
        )  # fmt: skip
    warn_revealed(show_secrets)
    if shards is not None:
        from pix.shards_tools import discover_shards

        response = discover_shards(shards, request, reveal=show_secrets)
        if as_json:
            emit_json(response)
            return
        for warning in response["warnings"]:
            typer.echo(f"warning: {warning}", err=True)
        for repo in response["repos"]:
            sys.stdout.write(f"== {repo['name']}\n")
            sys.stdout.write(render_text(repo["response"], from_flags=input_ is None))
        return
    roots_here = input_ is None and bool(root)
    response = run(request, **_where({"db": db, "cwd": cwd}), reveal=show_secrets,
                   roots_here=roots_here)  # fmt: skip
    if as_json:
        emit_json(response)
        return
    for warning in response["warnings"]:
        typer.echo(f"warning: {warning}", err=True)
    sys.stdout.write(render_text(response, from_flags=input_ is None))
