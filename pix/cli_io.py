"""How the `pix` command reads requests and writes answers: JSON in, text or JSON out, errors.

Text goes to stdout (or stderr with --format both, where stdout carries the JSON); warnings and
notes go to stderr, so machine output on stdout stays one clean JSON document.
"""

from __future__ import annotations

import json
import os
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


# Text read on a terminal gets a budget unless one is asked for (`--file` printed 324 KB for
# one question); JSON, pipes and MCP keep their documented defaults.
TERMINAL_MAX_CHARACTERS = 20_000


def chosen_format(as_json: bool, fmt: Format | None) -> Format:
    """--json is --format json: with another --format it is refused, not silently preferred."""
    if as_json and fmt not in (None, Format.json):
        assert fmt is not None
        raise errors.UsageError(f"--json is --format json; it cannot go with --format {fmt.value}")
    return Format.json if as_json else fmt or Format.text


def terminal_budget(fmt: Format) -> int | None:
    """The character budget for an answer printed as `fmt` when the command gave none."""
    return TERMINAL_MAX_CHARACTERS if fmt is Format.text and sys.stdout.isatty() else None


def emit_json(payload: object) -> None:
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")


def read_json(source: str) -> object:
    """The JSON request of --input (a file, or - for stdin): anything that is not UTF-8 JSON
    is bad input (exit 2). A byte order mark is allowed, as RFC 8259 lets a parser allow it."""
    try:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError as exc:
        raise errors.UsageError(f"cannot read --input {source}: {exc.strerror}") from None
    try:
        raw = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        where = "stdin" if source == "-" else source
        raise errors.UsageError(
            f"--input {where} is not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x})",
            hint="save the request as UTF-8",
        ) from None
    too_deep = f"--input nests arrays or objects too deeply to read (at most {MAX_NESTING} levels)"
    try:
        payload = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise errors.UsageError(
            f"--input is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:  # json's decoder recurses once per nested array or object
        raise errors.UsageError(too_deep) from None
    if _nesting(payload) > MAX_NESTING:  # validation and its messages recurse too
        raise errors.UsageError(too_deep)
    return payload


MAX_NESTING = 64  # a request is a few levels deep; jsonschema recurses per level


def _nesting(value: object) -> int:
    """How deeply arrays and objects nest in a parsed JSON value (walked without recursion)."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, depth = todo.pop()
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        )
        if children is None:
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_NESTING:
            break
        todo.extend((child, depth + 1) for child in children)
    return deepest


def request_from_options(text: str, o: dict):
    """A QueryRequest from `pix query`'s options (by parameter name), with the defaults
    `pix query` applies."""
    from pix.query import QueryRequest

    return QueryRequest(
        query=text,
        mode="file" if o["file"] else "chunk",
        top=10 if o["top"] is None else o["top"],
        only_paths=o["only_path"] or [],
        ignore_paths=o["ignore_path"] or [],
        no_content=o["no_content"],
        context_lines=o["context_lines"] or 0,
        max_characters=o["max_characters"] or None,  # 0: no limit
        view=o["view"].value if o["view"] else "default",
        explain=o["explain"],
        at=o["at"],
        fusion=o["fusion"].value if o["fusion"] else "rrf",
        priors=not o["no_priors"],
        channels=o["channel"] or None,
        refresh=o["refresh"],
    )


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


def drop_stdout() -> None:
    """Send what is left for stdout nowhere: its reader is gone (`pix ... | head -0`) or its
    file cannot take more (a full disk). Else Python's flush at exit fails once more, and
    prints that on stderr."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # no stdout at all
        pass


def fail(error: errors.PixError, argv: list[str]) -> int:
    """The error envelope on stdout for json (and both), one line on stderr for text (and both).
    When stdout itself fails (a full disk), the line goes to stderr instead."""
    fmt = output_format(argv)
    if fmt in ("json", "both") and not error.after_answer:  # stdout holds one document
        try:
            emit_json(error.envelope())
            sys.stdout.flush()
        except OSError:
            drop_stdout()
            fmt = "text"
    if fmt != "json" or error.after_answer:
        line = f"pix: error: {error.message}"
        if error.hint:
            line += f" ({error.hint})"
        sys.stderr.write(" ".join(line.splitlines()) + "\n")
    return error.exit_code


def warn_revealed(show_secrets: bool) -> None:
    if show_secrets:
        typer.echo(
            "pix: --show-secrets: secrets this output can show are NOT masked; keep it to yourself",
            err=True,
        )


def emit_response(response: dict, fmt: Format, copy: bool) -> None:
    """Render a query response exactly as `pix query` does."""
    from pix.output import render

    plain = render.render_response(response)
    _emit(response, fmt, plain, lambda: render.colorize_response(response))
    _copy(plain, copy)


def emit_pack(response: dict, fmt: Format, copy: bool) -> None:
    """Render a pack response: the packet as text, and a one-line summary on stderr."""
    from pix.output.render import pack_summary

    _emit(response, fmt, response["text"], None)
    if fmt is not Format.json:
        typer.echo(pack_summary(response), err=True)
    _copy(response["text"], copy)


def _emit(response: dict, fmt: Format, plain: str, coloured: Callable[[], str] | None) -> None:
    """JSON on stdout (json, both), warnings and text on stderr (both) or text on stdout (text);
    `coloured` is the terminal form of `plain`, if there is one."""
    if fmt is not Format.text:
        emit_json(response)
    if fmt is not Format.json:
        for warning in response["warnings"]:
            typer.echo(f"warning: {warning}", err=True)
        stream = sys.stdout if fmt is Format.text else sys.stderr
        stream.write(coloured() if coloured and stream.isatty() else plain)


def _copy(plain: str, copy: bool) -> None:
    """The clipboard comes after the answer: if it fails (ClipboardError: exit 2, reported on
    stderr only), the answer has been given exactly as without --copy."""
    if copy:
        from pix.output.clipboard import copy as to_clipboard

        sys.stdout.flush()
        to_clipboard(plain)
