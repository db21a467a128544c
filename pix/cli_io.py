"""How the `pix` command reads requests and writes answers: JSON in, text or JSON out, errors.

Text goes to stdout (or stderr with --format both, where stdout carries the JSON); warnings and
notes go to stderr, so machine output on stdout stays one clean JSON document.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path

import typer

from pix import __version__, errors


class Format(StrEnum):
    text = "text"
    json = "json"
    both = "both"


def print_version(wanted: bool) -> None:
    """`pix --version`: the version, then exit 0 before any command runs."""
    if wanted:
        typer.echo(f"pix {__version__}")
        raise typer.Exit()


def emit_json(payload: object) -> None:
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")


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


def output_format(argv: list[str]) -> str:
    """text, json or both, read from raw arguments: a failure may come before parsing ends."""
    if "--json" in argv:
        return "json"
    for i, arg in enumerate(argv):
        if arg.startswith("--format="):
            return arg.split("=", 1)[1]
        if arg == "--format" and i + 1 < len(argv):
            return argv[i + 1]
    return "text"


def fail(error: errors.PixError, argv: list[str]) -> int:
    """The error envelope on stdout for json (and both), one line on stderr for text (and both)."""
    fmt = output_format(argv)
    if fmt in ("json", "both"):
        emit_json(error.envelope())
    if fmt != "json":
        line = f"pix: error: {error.message}"
        if error.hint:
            line += f" ({error.hint})"
        sys.stderr.write(" ".join(line.splitlines()) + "\n")
    return error.exit_code


def warn_revealed(show_secrets: bool) -> None:
    if show_secrets:
        typer.echo(
            "pix: --show-secrets: secrets in this output are NOT masked; keep it to yourself",
            err=True,
        )


def emit_response(response: dict, fmt: Format, copy: bool) -> None:
    """Render a query response exactly as `pix query` does."""
    from pix.output import render

    _emit(
        response, fmt, copy, render.render_response(response),
        lambda: render.colorize_response(response),
    )  # fmt: skip


def emit_pack(response: dict, fmt: Format, copy: bool) -> None:
    """Render a pack response: the packet as text, and a one-line summary on stderr."""
    from pix.output.render import pack_summary

    _emit(response, fmt, copy, response["text"], None)
    if fmt is not Format.json:
        typer.echo(pack_summary(response), err=True)


def _emit(
    response: dict, fmt: Format, copy: bool, plain: str, coloured: Callable[[], str] | None
) -> None:
    """JSON on stdout (json, both), warnings and text on stderr (both) or text on stdout (text);
    `coloured` is the terminal form of `plain`, if there is one."""
    if copy:  # first: a clipboard failure must not follow a printed answer on stdout
        from pix.output.clipboard import copy as to_clipboard

        to_clipboard(plain)
    if fmt is not Format.text:
        emit_json(response)
    if fmt is not Format.json:
        for warning in response["warnings"]:
            typer.echo(f"warning: {warning}", err=True)
        stream = sys.stdout if fmt is Format.text else sys.stderr
        stream.write(coloured() if coloured and stream.isatty() else plain)
