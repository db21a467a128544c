"""The in-memory result that budget, render and the JSON projection share: made from ranked
hits and the files they show (hydrate), and projected into the response's JSON (project),
each with its citation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pix.retrieve.hits import FILE_PARTS

if TYPE_CHECKING:  # (pix.query imports this module)
    from pix.output.shown import ShownFile
    from pix.query import QueryRequest
    from pix.retrieve.hits import Hit
    from pix.snapshot import Snapshot


@dataclass
class Result:
    mode: str  # 'chunk' | 'file'
    path: str
    blob: str
    score: float
    rel: float
    role: str
    language: str | None = None
    start_line: int | None = None  # chunk mode only
    end_line: int | None = None
    kind: str | None = None
    symbol: str | None = None
    text: str | None = None  # None with noContent
    context_before: str | None = None
    context_after: str | None = None
    truncated: bool = False
    explain: dict = field(default_factory=dict)
    repo: str | None = None  # the workspace repository it comes from (pix.shards)
    copies: tuple[str, ...] = ()  # other paths with the same content (pix/retrieve/rank.py)
    defines: tuple[tuple[str, int], ...] = ()  # chunk mode: the query's names, where defined


def line_count(text: str | None) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def shown_lines(res: Result) -> tuple[int, int] | None:
    """The file lines a result shows (1-based, inclusive), None when it shows no text."""
    if res.text is None:
        return None
    first = 1 if res.mode == "file" else res.start_line or 1
    if res.truncated:  # context dropped, text cut after some lines (the last maybe partly)
        return first, first + res.text.count("\n") - 1
    if res.mode == "file":
        return first, first + line_count(res.text) - 1
    assert res.end_line is not None
    return first - line_count(res.context_before), res.end_line + line_count(res.context_after)


def hydrate(
    files: dict[tuple[str, str], ShownFile],
    hits: list[Hit],
    request: QueryRequest,
    top_score: float,
    reveal: bool,
) -> list[Result]:
    results = []
    for hit in hits:
        res = Result(
            mode=request.mode,
            path=hit.path,
            blob=hit.blob_sha,
            score=hit.score,
            language=hit.language,
            rel=hit.score / top_score if top_score else 0.0,
            role=hit.role,
            copies=hit.copies,
            explain={
                "channels": hit.channels,
                "fused": hit.fused,
                "role": hit.role,
                "rank": hit.rank,
            },
        )
        if request.mode == "chunk":
            res.start_line, res.end_line = hit.start_line, hit.end_line
            res.kind, res.symbol, res.defines = hit.kind, hit.symbol, hit.defines
        if not request.no_content:
            shown = files[(hit.blob_sha, hit.path)]
            if request.mode == "file":
                res.text = shown.whole(reveal)
            else:
                res.text = shown.text(hit.start_line, hit.end_line, reveal)
                n = request.context_lines
                if n:
                    before = shown.lines(hit.start_line - n, hit.start_line - 1, reveal)
                    after = shown.lines(hit.end_line + 1, hit.end_line + n, reveal)
                    res.context_before = "".join(line + "\n" for line in before)
                    res.context_after = "".join(line + "\n" for line in after)
        results.append(res)
    return results


def project(res: Result, request: QueryRequest, snapshot: Snapshot, factor: float = 1.0) -> dict:
    """A result in the requested view. A file result is seed 000's `{file, score, rel,
    text?, truncated?}` (plus its citation, and role/explain when asked for): it never
    carries lines, context or chunks. A chunk result names its `path` and lines. `factor`:
    what a workspace merged its repository's scores with (score = factor x its own)."""
    if res.mode == "file":
        out: dict = {"file": res.path, "score": round(res.score, 6), "rel": round(res.rel, 4)}
        out["citation"] = citation(res.path, res.blob, None, snapshot)
    else:
        out = {"path": res.path, "startLine": res.start_line, "endLine": res.end_line}
        out["score"] = round(res.score, 6)
        out["citation"] = citation(res.path, res.blob, (res.start_line, res.end_line), snapshot)
        if request.view != "minimal":
            out["rel"] = round(res.rel, 4)
            out["kind"] = res.kind
            out["symbol"] = res.symbol
            if res.defines:
                out["definitions"] = [{"name": n, "line": line} for n, line in res.defines]
    if res.copies:
        out["copies"] = list(res.copies)
    if res.text is not None:
        out["text"] = res.text
        if res.mode == "chunk" and (res.context_before or res.context_after):
            out["context"] = {"before": res.context_before or "", "after": res.context_after or ""}
    if res.truncated:
        out["truncated"] = True
    if request.view == "full":
        out["role"] = res.role
    if request.explain:
        # The ranking stage's part: standout inside the fused score, evidence, outline,
        # tested, titled and imported (a file, or in chunk mode its strongest chunk, which
        # carries the file's score: pix/retrieve/rank.py carried) on top of that chunk's
        # score, so the prior is that chunk's score / fused (the repository's own score,
        # before a workspace's factor).
        fused = res.explain["fused"]
        rank = {"standout": 0.0, **res.explain["rank"]}
        own = res.score / factor if factor else 0.0
        chunk_score = own - sum(rank.get(k, 0.0) for k in FILE_PARTS)
        out["explain"] = {
            "score": round(res.score, 6),
            "fused": round(res.explain["fused"], 6),
            "role": res.role,
            "prior": round(chunk_score / fused, 4) if fused else 1.0,
            "channels": {
                name: {k: (round(v, 6) if isinstance(v, float) else v) for k, v in ch.items()}
                for name, ch in res.explain["channels"].items()
            },
            "rank": {k: (round(v, 6) if isinstance(v, float) else v) for k, v in rank.items()},
        }
    return out


def citation(
    path: str, blob: str, lines: tuple[int | None, int | None] | None, snapshot: Snapshot
) -> dict:
    """A stable id (path, content and lines, if a part of the file is cited: the same text at
    the same path cites the same way at any commit), the path, the blob id and the commit of
    the snapshot read."""
    span = f"#L{lines[0]}-L{lines[1]}" if lines else ""
    return {
        "id": f"{path}@{blob[:12]}{span}",
        "path": path,
        "blob": blob,
        "commit": snapshot.commit,
    }
