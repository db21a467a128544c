"""`pix discover`: the application function that the CLI and the MCP tool call.

request -> hypotheses compiled -> newest work-tree snapshot -> roots resolved and scoped ->
per hypothesis: trigram narrowing (or a disclosed scan) ->
per hypothesis x root cell: exact verification in path order, within the limits and the time
budget -> status per cell -> files ranked -> response (schema/discover-response.v1.json)

Cells run hypothesis by hypothesis, roots in request order, files in path order, so what a
limit or the budget cuts is deterministic. The budget is checked before each file and, for a
regex, inside each search (pix/discover/verify.py runs patterns with the `regex` module's
timeout), so a pattern that backtracks without end stops its cell at the budget.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import apsw
import regex

from pix.discover import fragments, trigram
from pix.discover.masking import Shown
from pix.discover.request import Hypothesis, Request, parse_request
from pix.discover.scope import (
    GlobFilter,
    Root,
    describe_root,
    from_folder,
    resolve_root,
    scope_root,
    unsearched_reason,
)
from pix.discover.verify import Excerpt, FileResult, Matcher
from pix.errors import UsageError
from pix.locate import locate, open_index
from pix.output.pathtext import path_sample, shown_path
from pix.snapshot import changed_files, searched_tree, select_snapshot
from pix.store import sql
from pix.store.db import Store

SCHEMA_VERSION = 1
COMPLETE_STATUSES = ("matched", "no_matches")
STALE_LISTED = 20  # stale paths named in the response; the count is always exact
TEXT_CACHE_CHARS = 64 << 20  # texts kept while a call runs, for the next hypothesis
NEXT_READ_BEFORE = 5  # lines shown before the first match of the recommended read
NEXT_READ_SPAN = 60  # matches this far after the first one are read in the same range
NEXT_READ_AFTER = 10


@dataclass
class Narrowing:
    method: str  # 'trigram' | 'scan'
    expression: str | None = None
    fragments: list[list[str]] = field(default_factory=list)
    reason: str | None = None

    def describe(self) -> dict:
        out: dict = {"method": self.method}
        if self.method == "trigram":
            out["fragments"] = self.fragments
        else:
            out["reason"] = self.reason
        return out


@dataclass
class Cell:
    hypothesis: str
    root: str
    status: str = "no_matches"
    reason: str | None = None
    limits: list[str] = field(default_factory=list)
    candidate_files: int = 0
    searched_files: int = 0
    matched_files: int = 0
    matching_lines: int = 0
    stale_files: int = 0
    unsearched_files: int = 0

    @property
    def complete(self) -> bool:
        """Fully executed over a root whose files the index holds as they are now."""
        return self.status in COMPLETE_STATUSES and self.stale_files == 0

    def describe(self) -> dict:
        return {
            "hypothesis": self.hypothesis,
            "root": self.root,
            "status": self.status,
            "complete": self.complete,
            "reason": self.reason,
            "limitsHit": self.limits,
            "candidateFiles": self.candidate_files,
            "searchedFiles": self.searched_files,
            "matchedFiles": self.matched_files,
            "matchingLines": self.matching_lines,
            "staleFiles": self.stale_files,
            "unsearchedFiles": self.unsearched_files,
        }


@dataclass
class Hit:
    """What the hypotheses found in one file."""

    lines: dict[str, list[int]] = field(default_factory=dict)  # hypothesis -> line numbers
    excerpts: dict[str, list[Excerpt]] = field(default_factory=dict)
    roots: list[str] = field(default_factory=list)


def discover(
    request: dict,
    db: str | None = None,
    cwd: str | None = None,
    reveal: bool = False,
    started: float | None = None,
    tree_here: bool = True,
    roots_here: bool = False,
) -> dict:
    """Run one discovery request (schema/discover-request.v1.json) against the index of the
    repository at `cwd` (or its database `db`) and return the response dict. Excerpts show
    secrets masked unless `reveal` (the CLI's owner-only --show-secrets). `started`
    (time.monotonic()): when the time budget began, if before this call (a workspace's shards
    share one budget). `tree_here`: False for a workspace's bare `db` entry
    (pix.locate.Target.tree_here). `roots_here`: the request's roots are relative to the folder
    pix runs in (`cwd`), as a shell means them (the CLI's --root), not to the tree's top."""
    started = time.monotonic() if started is None else started
    req = parse_request(request)  # a dict, validated
    if request.get("repos"):
        raise UsageError(
            "repos names repositories of a workspace; this answers for one database",
            hint="pix discover --workspace W, or pix mcp --workspace W",
        )
    target = replace(locate(cwd, db), tree_here=tree_here)
    store = open_index(target)
    here = (Path(cwd) if cwd else Path.cwd()).absolute() if roots_here else None
    try:
        return _run(store, target, req, started, reveal, here)
    except apsw.SQLError:
        store.check_integrity()  # a damaged file surfaces as odd SQL errors
        raise
    finally:
        store.close()


def plan_narrowing(matcher: Matcher) -> Narrowing:
    h = matcher.hypothesis
    if matcher.error:
        return Narrowing("scan", reason="not run: " + matcher.error)
    if matcher.nested_set:  # `re` would require fragments that the matcher does not
        return Narrowing(
            "scan", reason="a set within a set ([[:alpha:]]): every file in the roots is read"
        )
    if h.mode == "literal":
        plan = fragments.literal_plan(h.pattern)
        why = f"a literal shorter than {fragments.MIN_FRAGMENT} characters"
    else:
        plan = fragments.regex_plan(h.pattern)
        why = f"no literal run of {fragments.MIN_FRAGMENT}+ characters that every match needs"
    # Caseless when asked, or by a global inline flag: `(?i)abc` (a scoped `(?i:abc)` is a
    # group, which the plan skips).
    caseless = not h.case_sensitive or bool(
        matcher.regex is not None and matcher.regex.flags & regex.IGNORECASE
    )
    if plan is not None and caseless:
        plan = fragments.caseless_plan(plan)
        why = f"no literal run of {fragments.MIN_FRAGMENT}+ characters that case folding keeps"
    if plan is None:
        return Narrowing("scan", reason=why + ": every file in the roots is read")
    return Narrowing("trigram", fragments.fts_expression(plan, caseless=caseless), plan)


class Texts:
    """File texts for one call, kept (up to a size) so later hypotheses read them once."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.cache: dict[str, str] = {}
        self.chars = 0

    def get(self, sha: str, blob_id: int) -> str:
        text = self.cache.get(sha)
        if text is None:
            text = trigram.read_text(self.store, blob_id)
            if self.chars + len(text) <= TEXT_CACHE_CHARS:
                self.cache[sha] = text
                self.chars += len(text)
        return text


def _run(
    store: Store, target, req: Request, started: float, reveal: bool, here: Path | None
) -> dict:
    deadline = started + req.time_budget_ms / 1000
    matchers = [Matcher(h) for h in req.queries]
    narrowings = [plan_narrowing(m) for m in matchers]
    warnings: list[str] = []
    conn = store.conn

    with store.read():
        snapshot = select_snapshot(store, target, None)
        files = {
            path: (sha, blob_id, line_count)
            for path, sha, blob_id, line_count in conn.execute(sql.DISCOVER_FILES, (snapshot.id,))
        }
        indexed = list(files)  # sorted by path (SQL ORDER BY path: code point order)
        skipped = conn.execute(sql.DISCOVER_SKIPPED, (snapshot.id,)).fetchall()
        stale = changed_files(store, target, snapshot)
        # Roots are the indexed tree's: another folder's when --db names its database (audit:
        # from /tmp, `roots: ["src"]` of fzf's database was "no longer exists").
        top = searched_tree(snapshot, target).resolve()
        if here is not None:
            req = replace(req, roots=from_folder(req.roots, here, top))
        roots = _resolve_roots(req, top, indexed, skipped, stale)
        masking = Shown(store, target, files, reveal, req.snippet_length)
        cells, hits = _search(store, req, matchers, narrowings, roots, files, deadline, masking)
        if stale:
            warnings.append(
                f"{len(stale)} file(s) changed since this snapshot was indexed "
                f"({path_sample(stale)}); "
                "cells over them are incomplete: run `pix index` to include them"
            )
        # Inside the read: the excerpts are masked and counted from the same database state
        # the search read (an index and a gc in between would change the secrets).
        response = _response(
            req, snapshot, roots, cells, hits, files, narrowings, stale, warnings, started, masking
        )
        # (the response holds this list) Only once the excerpts are built is it known which
        # shown secrets stayed masked: a warning read before them was always empty (review).
        warnings.extend(masking.warnings())
        return response


def _resolve_roots(
    req: Request, top, indexed: list[str], skipped: list, stale: list[str]
) -> list[Root]:
    globs = GlobFilter.of(req.globs)
    roots: list[Root] = []
    seen: dict[str, str] = {}
    for name in req.roots:
        root = resolve_root(name, top, indexed)
        if root.status == "searched":
            assert root.rel is not None
            if root.rel in seen:
                why = f"the same folder as root {shown_path(seen[root.rel])}"
                root.diagnose("skipped", "duplicate_root", why)
            else:
                seen[root.rel] = name
                scope_root(root, indexed, skipped, stale, globs, req.filter_mode)
        roots.append(root)
    return roots


def _search(
    store: Store,
    req: Request,
    matchers: list[Matcher],
    narrowings: list[Narrowing],
    roots: list[Root],
    files: dict[str, tuple[str, int, int]],
    deadline: float,
    masking: Shown,
) -> tuple[list[Cell], dict[str, Hit]]:
    cells: list[Cell] = []
    hits: dict[str, Hit] = {}
    texts = Texts(store)
    in_roots = sorted({p for r in roots for p in r.files})
    timed_out = False
    for matcher, narrowing in zip(matchers, narrowings, strict=True):
        h = matcher.hypothesis
        results: dict[str, FileResult] = {}  # one verification per content
        candidates: set[str] | None = None  # None: every file (a scan)
        if matcher.error is None and narrowing.expression is not None and not timed_out:
            ids = trigram.candidate_ids(store, narrowing.expression)
            candidates = {p for p in in_roots if files[p][1] in ids}
        for root in roots:
            cell = Cell(h.id, root.name, stale_files=len(root.stale))
            cell.unsearched_files = len(root.unsearched) if root.status == "searched" else 0
            cells.append(cell)
            if root.status != "searched":
                cell.status, cell.reason = root.status, root.reason
            elif matcher.error is not None:
                cell.status = "invalid_regex" if h.mode == "regex" else "error"
                cell.reason = matcher.error
            elif timed_out:
                cell.status, cell.reason = "timeout", "not started: the time budget was spent"
            else:
                try:
                    timed_out = _run_cell(
                        cell, root, h, matcher, candidates, files, results, texts, hits, req,
                        deadline,
                    )  # fmt: skip
                except Exception as exc:  # one cell's failure must not sink the others
                    cell.status, cell.reason = "error", f"{type(exc).__name__}: {exc}"
            if cell.unsearched_files and cell.status in (*COMPLETE_STATUSES, "partial"):
                # Absence (or a complete match list) holds only over files actually searched.
                why = unsearched_reason(root)
                cell.reason = f"{cell.reason}; {why}" if cell.status == "partial" else why
                cell.status = "partial"
            if cell.stale_files and cell.status in COMPLETE_STATUSES:
                cell.reason = (
                    f"{cell.stale_files} file(s) under this root changed since indexing and "
                    "were searched as indexed, not as they are now"
                )
    return cells, hits


def _run_cell(
    cell: Cell,
    root: Root,
    h: Hypothesis,
    matcher: Matcher,
    candidates: set[str] | None,
    files: dict[str, tuple[str, int, int]],
    results: dict[str, FileResult],
    texts: Texts,
    hits: dict[str, Hit],
    req: Request,
    deadline: float,
) -> bool:
    """Verify one hypothesis over one root's candidates, in path order. True on timeout."""
    paths = root.files if candidates is None else [p for p in root.files if p in candidates]
    cell.candidate_files = len(paths)
    for i, path in enumerate(paths):
        if time.monotonic() >= deadline:
            cell.status = "timeout"
            cell.reason = f"the time budget ran out after {i} of {len(paths)} candidate files"
            return True
        sha, blob_id, _ = files[path]
        result = results.get(sha)
        if result is None:
            text = texts.get(sha, blob_id)
            try:
                result = matcher.scan(text, req.max_matches_per_file, req.snippet_length, deadline)
            except TimeoutError:  # a pattern that backtracks without end (pix/discover/verify.py)
                cell.status = "timeout"
                cell.reason = (
                    f"the time budget ran out matching {shown_path(path)} ({i} of {len(paths)} "
                    "candidate files verified)"
                )
                return True
            results[sha] = result
        cell.searched_files += 1
        if result.limited and "maxMatchesPerFile" not in cell.limits:
            cell.limits.append("maxMatchesPerFile")
        if not result.lines:
            continue
        room = req.max_matches_per_search - cell.matching_lines
        lines = result.lines[:room]
        if len(lines) < len(result.lines):
            cell.limits.append("maxMatchesPerSearch")
        hit = hits.setdefault(path, Hit())
        hit.lines.setdefault(h.id, lines)
        hit.excerpts.setdefault(h.id, [e for e in result.excerpts if e.line <= lines[-1]])
        if root.name not in hit.roots:
            hit.roots.append(root.name)
        cell.matched_files += 1
        cell.matching_lines += len(lines)
        if cell.matching_lines >= req.max_matches_per_search and i + 1 < len(paths):
            if "maxMatchesPerSearch" not in cell.limits:
                cell.limits.append("maxMatchesPerSearch")
            break
    if cell.limits:
        cell.status = "partial"
        left = cell.candidate_files - cell.searched_files
        cell.reason = (
            "limit reached: "
            + ", ".join(cell.limits)
            + (f"; {left} candidate file(s) not verified" if left else "")
        )
    else:
        cell.status = "matched" if cell.matched_files else "no_matches"
    return False


def _rank(hits: dict[str, Hit], req: Request) -> list[tuple[str, Hit, int]]:
    """Deterministic evidence aggregation, as the seed orders it: distinct hypotheses, distinct
    roots, bounded match count (each hypothesis counts at most maxMatchesPerFile lines), then
    path (code point order)."""
    scored = []
    for path, hit in hits.items():
        bounded = sum(min(len(v), req.max_matches_per_file) for v in hit.lines.values())
        scored.append((path, hit, bounded))
    scored.sort(key=lambda s: (-len(s[1].lines), -len(s[1].roots), -s[2], s[0]))
    return scored


def _excerpts(hit: Hit, order: list[str]) -> list[tuple[str, Excerpt]]:
    """Up to two: the first excerpt of each hypothesis (request order), then their seconds."""
    picked: list[tuple[str, Excerpt]] = []
    for depth in range(2):
        for hid in order:
            found = hit.excerpts.get(hid, [])
            if depth < len(found) and len(picked) < 2:
                picked.append((hid, found[depth]))
    return picked


def _next_read(path: str, hit: Hit, line_count: int, why: str) -> dict:
    lines = sorted({n for v in hit.lines.values() for n in v})
    first = lines[0]
    last = max(n for n in lines if n <= first + NEXT_READ_SPAN)
    return {
        "path": path,
        "startLine": max(1, first - NEXT_READ_BEFORE),
        "endLine": min(max(line_count, 1), last + NEXT_READ_AFTER),
        "reason": why,
    }


def _response(
    req: Request,
    snapshot,
    roots: list[Root],
    cells: list[Cell],
    hits: dict[str, Hit],
    files: dict[str, tuple[str, int, int]],
    narrowings: list[Narrowing],
    stale: list[str],
    warnings: list[str],
    started: float,
    masking: Shown,
) -> dict:
    order = [q.id for q in req.queries]
    stale_set = set(stale)
    ranked = _rank(hits, req)
    candidates = [
        {
            "rank": i + 1,
            "path": path,
            "hypotheses": [hid for hid in order if hid in hit.lines],
            # (hit.roots in request order; a root named twice is searched once)
            "roots": [name for name in dict.fromkeys(r.name for r in roots) if name in hit.roots],
            "matchCount": bounded,
            "excerpts": masking.excerpts(path, _excerpts(hit, order)),
            "stale": path in stale_set,
        }
        for i, (path, hit, bounded) in enumerate(ranked[: req.max_candidates])
    ]
    next_read = None
    if ranked:
        path, hit, _ = ranked[0]
        shown = [hid for hid in order if hid in hit.lines]
        next_read = _next_read(path, hit, files[path][2], f"rank 1: matches {', '.join(shown)}")
    incomplete: dict[str, list[dict]] = {}
    for cell in cells:
        if not cell.complete:
            incomplete.setdefault(cell.hypothesis, []).append(
                {"root": cell.root, "status": cell.status, "reason": cell.reason}
            )
    response: dict = {
        "schemaVersion": SCHEMA_VERSION,
        "snapshot": snapshot.describe(),
        "request": req.describe(),
        "candidates": candidates,
        "totalCandidates": len(ranked),
        "nextRead": next_read,
        "coverage": {
            "cells": len(cells),
            "complete": sum(c.complete for c in cells),
            "absenceEvidence": [
                {"hypothesis": c.hypothesis, "root": c.root}
                for c in cells
                if c.complete and c.status == "no_matches"
            ],
            "roots": [describe_root(r) for r in roots],
            "hypotheses": [
                {"id": q.id, "mode": q.mode, "narrowing": n.describe()}
                for q, n in zip(req.queries, narrowings, strict=True)
            ],
        },
        "incompleteHypotheses": [
            {"id": hid, "cells": incomplete[hid]} for hid in order if hid in incomplete
        ],
        "stale": {
            "count": len(stale),
            "files": stale[:STALE_LISTED],
            "truncated": len(stale) > STALE_LISTED,
        },
        "warnings": warnings,
        "redactionSummary": masking.redactions.summary(),
    }
    if req.output_mode == "detailed":
        response["matrix"] = [c.describe() for c in cells]
    response["elapsedMs"] = round((time.monotonic() - started) * 1000, 1)
    return response
