"""`pix pack`, `pix discover` and `pix status` across a workspace's shards (issue 13).

pack: the shards' fused chunk lists are merged as `pix query` merges them (pix.shards.merge:
each shard's own order, scaled by the meaning gap to the best shard), then the one pack rule
(pix.output.packet) chooses spans from the merged candidates; a span's path and citation are
those of its repository, and its heading in the packet names the repository.
discover: each shard runs the request on its own index; the candidates are merged by the
discover ranking (distinct hypotheses, then matches), each naming its repository, and every
shard's own response (coverage, next read) is kept under `repos`.
status: every shard's `pix status`, or why it has none, with its freshness.
"""

from __future__ import annotations

import time
from dataclasses import replace

from pix.errors import PixError, as_pix_error
from pix.output import packet
from pix.output.shown import Redactions
from pix.output.tokens import Counter
from pix.pack import SCHEMA_VERSION as PACK_VERSION
from pix.pack import (
    PackRequest,
    budget_used,
    candidate,
    check_pack,
    fit,
    omitted_items,
    project_span,
)
from pix.request import check_request
from pix.retrieve import define
from pix.shards import (
    SHARD_FAILURES,
    ShardSet,
    merge,
    problem_warning,
    raise_if_none,
    unmatched_anywhere,
)
from pix.workspace import Workspace

WORKSPACE_STATUS_VERSION = 1  # schema/workspace-status-response.v1.json
DISCOVER_WORKSPACE_VERSION = 1  # schema/discover-workspace-response.v1.json
SEP = ": "  # a packet heading `repo: path`


def pack_shards(
    shards: ShardSet, request: PackRequest, reveal: bool = False, auto_refresh: bool = False
) -> dict:
    """The packet for one request across the workspace (schema/pack-response.v1.json, with
    `repo` on every span and omitted item, and `repos`)."""
    request = replace(request)
    check_pack(request)
    query = request.query_request()
    warnings = check_request(query, workspace=True)
    request.query = query.query  # the response echoes what was read (a long one is cut)
    selected = shards.select(query.repos)
    answers, _ = shards.rank(selected, query, auto_refresh, warnings, packing=True)
    warnings.extend(unmatched_anywhere(query, answers))
    merged = merge(answers, [s.name for s in selected], packet.MAX_CANDIDATES)
    counter = Counter(request.unit)
    candidates, files, shown, where = [], {}, {}, {}
    merged = define.placed_each(merged, shards.engines)
    for i, (name, hit, _) in enumerate(merged):
        key = f"{name}{SEP}{hit.path}"
        where[key] = (name, hit.path)
        candidates.append(candidate(i, hit, key))
        if key not in files:
            shown[key] = shards.engines[name].shown(hit.blob_sha, hit.path, reveal)
            lines = shown[key].lines(1, shown[key].line_count, reveal)
            files[key] = packet.FileLines(lines, counter.lines)
    chosen, text, used, omitted = fit(
        candidates, files, request, counter, warnings, label=lambda key: ": ".join(where[key])
    )
    redactions = Redactions(reveal)
    spans = []
    for span in chosen.spans:
        name, path = where[span.path]
        on = shown[span.path]
        found = on.secrets_in(span.start_line, span.end_line)
        redactions.add(f"{name}/{span.blob}", found, on, f"{name}: {path}")
        snapshot = answers[name].snapshot
        spans.append(
            {"repo": name, **project_span(span, chosen, files, counter, snapshot, path=path)}
        )
    warnings.extend(redactions.warnings())
    total = sum(len(a.ranked) for a in answers.values())
    omitted["lowScore"] += max(total - len(merged), 0)
    lead = where[spans[0]["repo"] + SEP + spans[0]["path"]][0] if spans else next(iter(answers))
    return {
        "schemaVersion": PACK_VERSION,
        "query": request.query,
        "snapshot": answers[lead].snapshot.describe(),
        "budget": budget_used(request, used, counter),
        "spans": spans,
        "omitted": {
            **omitted,
            "items": omitted_items(
                chosen, lambda key: {"repo": where[key][0], "path": where[key][1]}
            ),
        },
        "text": text,
        "warnings": warnings,
        "redactionSummary": redactions.summary(),
        "repos": [{"name": n, "snapshot": a.snapshot.describe()} for n, a in answers.items()],
    }


def discover_shards(
    workspace: Workspace, request: dict, reveal: bool = False, repos: list[str] | None = None
) -> dict:
    """One discovery request on every shard (schema/discover-workspace-response.v1.json):
    the candidates of all, ranked together, and each shard's own response."""
    from pix.discover import discover
    from pix.discover.request import parse_request

    if isinstance(request, dict) and "repos" in request:
        repos = request["repos"] if repos is None else repos
        request = {k: v for k, v in request.items() if k != "repos"}
    selected = list(workspace.select(repos).shards)
    parse_request(request)  # a bad request is refused once; what fails after is a shard's
    answers: dict[str, dict | PixError] = {}
    started = time.monotonic()  # one time budget for all the shards, as for one database
    for shard in selected:
        try:
            answers[shard.name] = discover(
                request, **shard.where(), reveal=reveal, started=started,
            )  # fmt: skip
        except SHARD_FAILURES as exc:  # its folder or database: named in warnings, as query does
            answers[shard.name] = as_pix_error(exc)
    raise_if_none(answers, selected)
    warnings = []
    pooled = []
    for shard in selected:
        value = answers[shard.name]
        if isinstance(value, PixError):
            warnings.append(problem_warning(shard.name, value))
            continue
        warnings.extend(f"{shard.name}: {w}" for w in value["warnings"])
        pooled.extend((shard.name, c) for c in value["candidates"])
    place = {s.name: i for i, s in enumerate(selected)}
    pooled.sort(
        key=lambda nc: (
            -len(nc[1]["hypotheses"]), -len(nc[1]["roots"]), -nc[1]["matchCount"],
            place[nc[0]], nc[1]["rank"],
        )
    )  # fmt: skip
    limit = max(v["request"]["maxCandidates"] for v in answers.values() if isinstance(v, dict))
    return {
        "schemaVersion": DISCOVER_WORKSPACE_VERSION,
        "candidates": [
            {**c, "rank": i, "repo": name} for i, (name, c) in enumerate(pooled[:limit], 1)
        ],
        "totalCandidates": len(pooled),
        "repos": [
            {"name": name, "response": value}
            for name, value in answers.items()
            if isinstance(value, dict)
        ],
        "warnings": warnings,
    }


def status_shards(workspace: Workspace) -> dict:
    """Every shard's status with its freshness (schema/workspace-status-response.v1.json):
    `status` is `pix status --json` of that database, or `error` says why it has none."""
    from pix.status import status

    repos = []
    for shard in workspace.shards:
        entry: dict = {"name": shard.name, "db": str(shard.db)}
        entry["root"] = str(shard.root) if shard.root else None
        try:
            report = status(**shard.where())
            tree = report["workTree"]
            entry["fresh"] = tree["indexed"] and tree["changed"] == 0
            entry["status"] = report
        except SHARD_FAILURES as exc:
            entry["fresh"] = False
            entry["error"] = as_pix_error(exc).envelope()["error"]
        repos.append(entry)
    return {
        "schemaVersion": WORKSPACE_STATUS_VERSION,
        "workspace": str(workspace.source) if workspace.source else None,
        "repos": repos,
    }
