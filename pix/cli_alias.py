"""`pix alias add|list|show|rm` and `pix run`: saved queries, parsed here, run by pix/alias.py."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from pix import errors
from pix.cli import (
    QUERY_CHANGING,
    RUN_OPTIONS,
    JsonOption,
    _where,
    _with_query_options,
    app,
)
from pix.cli_io import (
    chosen_format,
    emit_json,
    emit_response,
    request_from_options,
    terminal_budget,
    warn_revealed,
)

alias_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Saved queries: a name for a query with its mode and options, kept in the database.",
)
app.add_typer(alias_app, name="alias")
AliasName = Annotated[
    str, typer.Argument(metavar="NAME", help="Alias name: letters, digits, '.', '_', '-'.")
]


@alias_app.command("add")
@_with_query_options(*QUERY_CHANGING)
def alias_add(
    name: AliasName,
    text: Annotated[str, typer.Argument(metavar="QUERY", help="What to look for.")],
    force: Annotated[bool, typer.Option("--force", help="Replace an alias of this name.")] = False,
    as_json: JsonOption = False,
    options: dict | None = None,
) -> None:
    """Save a query and its options (--file for a file alias) under NAME."""
    from pix import alias

    assert options is not None
    spec = alias.spec_of(request_from_options(text, options))
    record = alias.add_at(name, spec, force=force, **_where(options))
    if as_json:
        emit_json(record)
    else:
        verb = "replaced" if record["replaced"] else "saved"
        typer.echo(f"{verb} alias {name} ({record['spec']['mode']} mode)")


@alias_app.command("list")
@_with_query_options("as_json", "db", "cwd")
def alias_list(options: dict | None = None) -> None:
    """The saved aliases; an invalid one is listed with what is wrong with it."""
    from pix import alias
    from pix.output.pathtext import shown_path

    assert options is not None
    report = alias.list_at(**_where(options))
    if options["as_json"]:
        emit_json(report)
        return
    for item in report["aliases"]:
        if "error" in item:
            typer.echo(f"{shown_path(item['name'])}\tINVALID: {item['error']}")
        else:
            # One line an alias: a query holding a tab or a line break is shown quoted.
            spec = item["spec"]
            extra = {k: v for k, v in spec.items() if k not in ("query", "mode")}
            tail = "\t" + json.dumps(extra, ensure_ascii=False) if extra else ""
            typer.echo(f"{item['name']}\t{spec['mode']}\t{shown_path(spec['query'])}{tail}")


@alias_app.command("show")
@_with_query_options("as_json", "db", "cwd")
def alias_show(name: AliasName, options: dict | None = None) -> None:
    """One alias: its spec (query, mode, options) and when it was saved."""
    from pix import alias

    assert options is not None
    record = alias.show_at(name, **_where(options))
    if options["as_json"]:
        emit_json(record)
    else:
        typer.echo(f"{record['name']} (saved {record['createdAt']})")
        typer.echo(json.dumps(record["spec"], ensure_ascii=False, indent=2))


@alias_app.command("rm")
@_with_query_options("as_json", "db", "cwd")
def alias_rm(name: AliasName, options: dict | None = None) -> None:
    """Delete an alias (valid or not)."""
    from pix import alias

    assert options is not None
    record = alias.remove_at(name, **_where(options))
    if options["as_json"]:
        emit_json(record)
    else:
        typer.echo(f"removed alias {name}")


@app.command("run")
@_with_query_options(*RUN_OPTIONS)
def run_alias(
    name: AliasName,
    file: Annotated[bool, typer.Option("--file", hidden=True)] = False,
    mode: Annotated[str | None, typer.Option("--mode", hidden=True)] = None,
    options: dict | None = None,
) -> None:
    """Run a saved query. It keeps its mode and query options; only output options are taken."""
    from pix import alias

    assert options is not None
    fmt = chosen_format(options["as_json"], options["fmt"])  # refused before any work
    if file or mode is not None:
        raise errors.UsageError(alias.MODE_REFUSED)
    overrides: dict = {}
    if options["view"] is not None:
        overrides["view"] = options["view"].value
    if options["no_content"]:
        overrides["noContent"] = True
    if options["max_characters"] is not None:
        overrides["maxCharacters"] = options["max_characters"] or None  # 0: no limit
    default = terminal_budget(fmt) if options["max_characters"] is None else None
    warn_revealed(options["show_secrets"])
    response = alias.run(
        name, overrides, **_where(options), reveal=options["show_secrets"], default_max=default
    )
    emit_response(response, fmt, options["copy"])
