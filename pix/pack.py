"""`pix pack`: the best evidence for a question that fits a token (or character) budget.

request -> the chunk ranking of `pix query` (same snapshot, channels and filters; each file's
strongest chunk scored as its file, copies not folded) ->
selection (pix.output.packet: spread over files, merge adjacent chunks, whole small files,
cut the last span to fit) -> masked text -> response dict (schema/pack-response.v1.json).
The CLI, the MCP `pack` tool and tests all call `run_pack`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import ClassVar

from pix.errors import UsageError
from pix.output import packet
from pix.output.result import citation
from pix.output.shown import Redactions
from pix.output.tokens import UNITS, Counter
from pix.query import QueryEngine, chunk_order, refresh_first, retrieve
from pix.request import QueryRequest, check_request, unmatched_warnings
from pix.retrieve import define, lift
from pix.retrieve.hits import Hit
from pix.schemas import JsonRequest

SCHEMA_VERSION = 1
BUDGET_MAX = 1_000_000
OMITTED_LISTED = 20  # the best-ranked left-out chunks are listed; all are counted


@dataclass
class PackRequest(JsonRequest):
    SCHEMA: ClassVar[str] = "pack-request.v1.json"

    query: str
    budget: int
    unit: str = "tokens"
    only_paths: list[str] = field(default_factory=list)
    ignore_paths: list[str] = field(default_factory=list)
    at: str | None = None
    fusion: str = "rrf"
    priors: bool = True
    channels: list[str] | None = None
    refresh: bool = False
    repos: list[str] | None = None  # a workspace's repositories to ask (pix.shards)

    def query_request(self) -> QueryRequest:
        return QueryRequest(
            query=self.query, only_paths=self.only_paths, ignore_paths=self.ignore_paths,
            at=self.at, fusion=self.fusion, priors=self.priors, channels=self.channels,
            refresh=self.refresh, repos=self.repos,
        )  # fmt: skip


def check_pack(request: PackRequest) -> None:
    if request.unit not in UNITS:
        raise UsageError(f"unit must be one of {', '.join(UNITS)}, not {request.unit!r}")
    if not 1 <= request.budget <= BUDGET_MAX:
        raise UsageError(f"budget must be between 1 and {BUDGET_MAX:,}, not {request.budget}")


def run_pack(
    engine: QueryEngine, request: PackRequest, reveal: bool = False, auto_refresh: bool = False
) -> dict:
    """The packet for one request. `reveal` (CLI --show-secrets only) shows secrets unmasked;
    `auto_refresh` as for `pix.query.run_query`."""
    return engine.answer(lambda: _run_pack(engine, replace(request), reveal, auto_refresh))


def _run_pack(engine: QueryEngine, request: PackRequest, reveal: bool, auto: bool) -> dict:
    check_pack(request)
    query = request.query_request()
    warnings = check_request(query)
    request.query = query.query  # the response echoes what was read (a long one is cut)
    counter = Counter(request.unit)
    refreshed, changed = refresh_first(engine, query, warnings, auto)
    redactions = Redactions(reveal)
    with engine.store.read():
        found = retrieve(engine, query, warnings, changed)
        warnings.extend(unmatched_warnings(found.unmatched))
        ranked = chunk_order(engine, query, found)
        hits = define.placed(ranked[: packet.MAX_CANDIDATES], engine)
        candidates = [candidate(i, h, h.path) for i, h in enumerate(hits)]
        files: dict[str, packet.FileLines] = {}
        shown = {}
        for c in candidates:
            if c.path not in files:
                shown[c.path] = engine.shown(c.blob, c.path, reveal)
                lines = shown[c.path].lines(1, shown[c.path].line_count, reveal)
                files[c.path] = packet.FileLines(lines, counter.lines)
    chosen, text, used, omitted = fit(candidates, files, request, counter, warnings)
    spans = []
    for span in chosen.spans:
        on = shown[span.path]
        redactions.add(span.blob, on.secrets_in(span.start_line, span.end_line), on, span.path)
        spans.append(project_span(span, chosen, files, counter, found.snapshot))
    warnings.extend(redactions.warnings())
    beyond = max(len(found.hits) - packet.MAX_CANDIDATES, 0)
    omitted["lowScore"] += beyond  # ranked below the candidates considered
    response = {
        "schemaVersion": SCHEMA_VERSION,
        "query": request.query,
        "snapshot": found.snapshot.describe(),
        "budget": budget_used(request, used, counter),
        "spans": spans,
        "omitted": {
            **omitted,
            "items": omitted_items(chosen, lambda path: {"path": path}),
        },
        "text": text,
        "warnings": warnings,
        "redactionSummary": redactions.summary(),
    }
    if refreshed:
        response["refreshed"] = refreshed
    return response


def candidate(rank: int, hit: Hit, path: str) -> packet.Candidate:
    """A ranked hit as the pack rule sees it; `path` names it in the packet (a workspace
    prefixes the repository)."""
    return packet.Candidate(
        rank, path, hit.blob_sha, hit.start_line, hit.end_line, hit.score, hit.defines,
        lift.lifted(hit),
    )  # fmt: skip


def fit(
    candidates: list[packet.Candidate],
    files: dict[str, packet.FileLines],
    request: PackRequest,
    counter: Counter,
    warnings: list[str],
    label: Callable[[str], str] = str,
) -> tuple[packet.Packet, str, int, dict[str, int]]:
    """The pack rule over ranked candidates, then the budget made to hold: (the chosen
    packet, its text, the units it uses, how many candidates were left out and why). One
    repository (run_pack) and a workspace (pix.shards_tools) share it; `label` names a
    candidate's path in warnings."""
    chosen = packet.select(candidates, files, request.budget, counter.text, counter.newline)
    if chosen.short_of:
        warnings.append(_short_of(chosen, request, label))
    text = packet.render(chosen.spans, files)
    used = counter.text(text) if text else 0
    while used > request.budget:  # costs add up exactly (tests check it); if ever they do not,
        dropped = chosen.spans.pop()  # the budget still holds and the drop is reported
        held = chosen.chunks.pop((dropped.path, dropped.start_line, dropped.end_line), [])
        chosen.omitted += [packet.Omission(c, "budget") for c in held]
        text = packet.render(chosen.spans, files)
        used = counter.text(text) if text else 0
    chosen.omitted.sort(key=lambda o: o.candidate.rank)
    omitted = {"budget": 0, "duplicate": 0, "lowScore": 0}
    for o in chosen.omitted:
        omitted[{"low_score": "lowScore"}.get(o.reason, o.reason)] += 1
    return chosen, text, used, omitted


def budget_used(request: PackRequest, used: int, counter: Counter) -> dict:
    """The response's `budget`: the limit asked for, in its unit, and what the packet uses."""
    return {
        "limit": request.budget,
        "unit": request.unit,
        "used": used,
        "counter": counter.describe(),
    }


def omitted_items(chosen: packet.Packet, locate: Callable[[str], dict]) -> list[dict]:
    """The first OMITTED_LISTED left-out candidates; `locate` turns a candidate's path into
    the fields that name it ({"path"}, or {"repo", "path"} in a workspace)."""
    return [
        {
            **locate(o.candidate.path),
            "startLine": o.candidate.start_line,
            "endLine": o.candidate.end_line,
            "score": round(o.candidate.score, 6),
            "reason": o.reason,
            **({"of": o.of} if o.of else {}),
        }
        for o in chosen.omitted[:OMITTED_LISTED]
    ]


def _short_of(chosen: packet.Packet, request: PackRequest, label: Callable[[str], str]) -> str:
    best, whole = chosen.short_of  # type: ignore[misc]
    where = f"{label(best.path)}:{best.start_line}-{best.end_line}"
    limit = f"the budget ({request.budget:,} {request.unit})"
    if chosen.spans:
        return (
            f"{limit} is too small for the best evidence: {where} needs {whole:,} whole, "
            f"so it is cut to fit; raise --budget for more"
        )
    return (
        f"{limit} is too small for any evidence: not even the first line of the best chunk "
        f"({where}, {whole:,} whole) fits"
    )


def project_span(
    span: packet.Span, chosen: packet.Packet, files, counter, snapshot, path: str | None = None
) -> dict:
    """A chosen span as the response shows it; `path` is its path in its repository when the
    packet's key for it is another (a workspace's repo-qualified key)."""
    path = path or span.path
    held = chosen.chunks.get((span.path, span.start_line, span.end_line), [])
    lines = files[span.path].lines[span.start_line - 1 : span.end_line]
    cite = citation(path, span.blob, (span.start_line, span.end_line), snapshot)
    # A span cut to fit may have lost a definition its chunk placed.
    defined = sorted(
        (line, name)
        for name, line in {d for c in held for d in c.defines}
        if span.start_line <= line <= span.end_line
    )
    return {
        "path": path,
        "startLine": span.start_line,
        "endLine": span.end_line,
        "whole": span.whole,
        "cut": span.cut,
        "score": round(max((c.score for c in held), default=0.0), 6),
        "chunks": len(held),
        **({"definitions": [{"name": n, "line": line} for line, n in defined]} if defined else {}),
        "units": counter.text(packet.block(span, lines)),
        "citation": cite,
        "text": "".join(line + "\n" for line in lines),
    }


def pack(
    request: PackRequest, db: str | None = None, cwd: str | None = None, reveal: bool = False
) -> dict:
    """One packet from the database of `cwd` (or `db`): open, answer, close."""
    engine = QueryEngine(db=db, cwd=cwd)
    try:
        return run_pack(engine, request, reveal)
    finally:
        engine.close()
