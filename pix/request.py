"""A query request and its checks: what `pix query`, `pix pack`, aliases, workspaces and MCP
all refuse or clamp before anything is read (schema/query-request.v1.json)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from pix.errors import UsageError, shown_value
from pix.pathglob import glob_regex
from pix.retrieve import define, phrase
from pix.retrieve.route import CHANNELS
from pix.schemas import JsonRequest, check_text
from pix.store import search_sql
from pix.store.db import Store

TOP_MIN, TOP_MAX = 1, 100
MODES = ("chunk", "file")
VIEWS = ("minimal", "default", "full")
FUSIONS = ("rrf", "dbsf")


@dataclass
class QueryRequest(JsonRequest):
    SCHEMA: ClassVar[str] = "query-request.v1.json"

    query: str
    mode: str = "chunk"
    top: int = 10
    only_paths: list[str] = field(default_factory=list)
    ignore_paths: list[str] = field(default_factory=list)
    no_content: bool = False
    context_lines: int = 0
    max_characters: int | None = None
    view: str = "default"
    explain: bool = False
    at: str | None = None
    fusion: str = "rrf"
    priors: bool = True
    channels: list[str] | None = None
    refresh: bool = False
    repos: list[str] | None = None  # a workspace's repositories to ask (pix.shards)


# Four times the longest issue report of the development set (8,230 characters): a pasted log
# of a megabyte took a minute to read (every term looked up, every window embedded), and an MCP
# server answers one call at a time.
MAX_QUERY_CHARS = 32_000


def check_request(request: QueryRequest, workspace: bool = False) -> list[str]:
    """Refuse what cannot be answered; clamp `top` with a warning (as seed 000 keeps).
    `workspace`: asked across a workspace's shards, where `repos` means something."""
    # A NUL ends a string inside SQLite's FTS5 query parser ("unterminated string"): it is no
    # character a question means, so it separates words like a space.
    request.query = request.query.replace("\x00", " ")
    check_text(
        {"query": request.query, "onlyPaths": request.only_paths,
         "ignorePaths": request.ignore_paths, "at": request.at}
    )  # fmt: skip
    warnings = []
    if len(request.query) > MAX_QUERY_CHARS:  # (before the emptiness check: what is read)
        warnings.append(
            f"the query is {len(request.query):,} characters; pix reads its first "
            f"{MAX_QUERY_CHARS:,}"
        )
        request.query = request.query[:MAX_QUERY_CHARS]
    if not request.query or not request.query.strip():
        raise UsageError(
            "the query is empty", hint='ask in words, e.g. "where are retries configured"'
        )
    for kind, globs in (("only-path", request.only_paths), ("ignore-path", request.ignore_paths)):
        if any(not glob.strip() for glob in globs):
            # (the request schema's minLength: a blank glob matches nothing, or everything)
            raise UsageError(f"an {kind} glob is empty", hint="give a glob such as 'src/*.py'")
    for name, value, allowed in (
        ("mode", request.mode, MODES),
        ("view", request.view, VIEWS),
        ("fusion", request.fusion, FUSIONS),
    ):
        if value not in allowed:
            raise UsageError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
    for name in request.channels or []:
        if name not in CHANNELS and name not in (phrase.CHANNEL, define.CHANNEL):
            names = ", ".join((*CHANNELS, phrase.CHANNEL, define.CHANNEL))
            raise UsageError(f"unknown channel {name!r}; channels are {names}")
    if request.context_lines < 0:
        raise UsageError("contextLines must be 0 or more")
    if request.max_characters is not None and request.max_characters < 1:
        raise UsageError("maxCharacters must be 1 or more")
    if request.repos and not workspace:
        raise UsageError(
            "repos names repositories of a workspace; this answers for one database",
            hint="pix query --workspace W, or pix mcp --workspace W",
        )
    if not TOP_MIN <= request.top <= TOP_MAX:
        clamped = min(max(request.top, TOP_MIN), TOP_MAX)
        warnings.append(f"top {request.top} is outside {TOP_MIN}-{TOP_MAX}; using {clamped}")
        request.top = clamped
    return warnings


def filter_paths(
    store: Store, snapshot_id: int, only: list[str], ignore: list[str]
) -> tuple[list[str] | None, list[str]]:
    """The snapshot's paths the globs let through (None: no glob, every path), and the
    only-path globs that match none of its files (a typo would otherwise answer nothing,
    silently)."""
    if not only and not ignore:
        return None, []
    keep = [glob_regex(p) for p in only]
    drop = [glob_regex(p) for p in ignore]
    paths = [row[0] for row in store.conn.execute(search_sql.SNAPSHOT_PATHS, (snapshot_id,))]
    unmatched = [g for g, r in zip(only, keep, strict=True) if not any(map(r.match, paths))]
    kept = [
        p
        for p in paths
        if (not keep or any(r.match(p) for r in keep)) and not any(r.match(p) for r in drop)
    ]
    return kept, unmatched


def unmatched_warnings(globs: list[str], where: str = "of the snapshot") -> list[str]:
    """One warning per distinct glob (a glob given twice is one mistake), quoted short."""
    return [
        f"only-path glob {shown_value(g)} matches no file {where}" for g in dict.fromkeys(globs)
    ]
