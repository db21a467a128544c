"""Choosing what goes into a context packet, and rendering it.

The rule, in order (all ties broken by fused rank, so the same ranking gives the same packet):

1. Candidates are the fused chunk ranking, best first, at most MAX_CANDIDATES of them. A chunk
   scoring below LOW_SCORE_SHARE of the best chunk's score is left out as `low_score`. The
   chunks the definition or phrase step lifted (a name or a phrase of the question found
   verbatim) are kept, and the share is of the best chunk they did not lift: a lift is a
   fixed bonus far above fused scores, and measured against it every other chunk was "low"
   (`pix pack "recipe dependencies" --budget 2000` packed one 346-token span).
2. Spread over files: a file's k-th chunk (k = 0, 1, ...) competes with priority
   score x SPREAD_DECAY^k, so a second chunk of one file must be 1/0.7 = 1.43 times as strong
   as a first chunk of another to come before it (bench/pack_bench.py --sweep: 0.7 finds the
   gold file as often as 0.5 with fewer, deeper files; 1.0, no spreading, finds it less often).
3. Chunks are taken greedily in priority order while the packet fits the budget. A chunk
   whose lines are already in the packet, whose file's content is already in it under another
   path, or whose text repeats a chunk already in it is left out as `duplicate`; one that does
   not fit is left out as `budget`, and later (smaller) ones may still fit.
4. Chunks of one file merge into one span when they overlap, touch or leave a gap of at most
   MERGE_GAP lines. A file is shown whole when that costs no more than its spans.
5. If room is left, the highest-priority chunk left out for budget is cut to the lines that fit
   (at least MIN_CUT_LINES) and marked as cut.
   A budget too small for the best chunk whole is the exception to 3-5: the packet is that
   chunk cut to fit (down to one line), alone, and says so (`short_of`), rather than an
   unrelated chunk that happens to be small enough.
6. The packet lists files in the order of their best chunk and each file's spans by line.

Costs are exact in the budget's unit (pix.output.tokens): a span costs its header line and its
lines; blocks are separated by one blank line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pix.output.pathtext import shown_path

MAX_CANDIDATES = 60
LOW_SCORE_SHARE = 0.25
SPREAD_DECAY = 0.7
MERGE_GAP = 2
MIN_CUT_LINES = 3


@dataclass(frozen=True)
class Candidate:
    rank: int  # position in the fused ranking, 0 = best
    path: str
    blob: str
    start_line: int
    end_line: int
    score: float
    defines: tuple[tuple[str, int], ...] = ()  # the question's names it defines, and where
    lifted: bool = False  # the definition or phrase step lifted it


class FileLines:
    """What selection needs of one file: its shown (masked) lines and their costs, measured
    only when asked for (most lines of most files are never costed)."""

    def __init__(self, lines: list[str], measure: Callable[[list[str]], np.ndarray]) -> None:
        self.lines = lines
        self._measure = measure
        self._costs = np.full(len(lines), -1, dtype=np.int64)
        nonblank = np.fromiter((bool(line.strip()) for line in lines), bool, len(lines))
        self._nonblank = np.concatenate(([0], np.cumsum(nonblank)))

    def cost(self, first: int, last: int) -> int:
        """Lines first..last (1-based), line breaks excluded."""
        window = self._costs[first - 1 : last]
        missing = np.flatnonzero(window < 0)
        if missing.size:
            window[missing] = self._measure([self.lines[first - 1 + i] for i in missing])
        return int(window.sum())

    def nonblank(self, first: int, last: int) -> int:
        """Lines first..last with a visible character: each costs at least one unit."""
        return int(self._nonblank[last] - self._nonblank[first - 1])


@dataclass(frozen=True)
class Span:
    path: str
    blob: str
    start_line: int
    end_line: int
    whole: bool = False
    cut: bool = False


@dataclass
class Omission:
    candidate: Candidate
    reason: str  # budget | duplicate | low_score
    of: str | None = None  # for duplicate: the path already holding it


@dataclass
class Packet:
    spans: list[Span]
    chunks: dict[tuple[str, int, int], list[Candidate]]  # span key -> chunks it holds
    omitted: list[Omission]
    used: int
    # When the budget could not hold the best chunk whole: that chunk and what it costs whole
    # (the packet then holds it cut to fit, or nothing if not even one line fits).
    short_of: tuple[Candidate, int] | None = None


def header(span: Span) -> str:
    if span.whole:
        return f"── {shown_path(span.path)} (whole file)"
    suffix = " (cut to fit)" if span.cut else ""
    return f"── {shown_path(span.path)}:{span.start_line}-{span.end_line}{suffix}"


def block(span: Span, lines: list[str]) -> str:
    return header(span) + "\n" + "".join(line + "\n" for line in lines)


def render(spans: list[Span], files: dict[str, FileLines]) -> str:
    """The packet text: one block per span, a blank line between blocks."""
    return "\n".join(block(s, files[s.path].lines[s.start_line - 1 : s.end_line]) for s in spans)


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if merged and a <= merged[-1][1] + 1 + MERGE_GAP:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


class _Selection:
    """The packet being built: per file, its chunk ranges; costs recomputed per file."""

    def __init__(
        self,
        files: dict[str, FileLines],
        blobs: dict[str, str],
        text_cost: Callable[[str], int],
        newline: int,
    ) -> None:
        self.files, self.blobs, self.text_cost, self.newline = files, blobs, text_cost, newline
        self.ranges: dict[str, list[tuple[int, int]]] = {}
        self.cut: dict[str, tuple[int, int]] = {}  # path -> the cut chunk's (start, end)
        self._headers: dict[str, int] = {}

    def _header_cost(self, span: Span) -> int:
        text = header(span)
        if text not in self._headers:
            self._headers[text] = self.text_cost(text) + self.newline
        return self._headers[text]

    def spans_of(self, path: str, ranges: list[tuple[int, int]]) -> list[Span]:
        f, blob = self.files[path], self.blobs[path]
        merged = _merge(ranges)
        cut = self.cut.get(path)  # (first line, the cut chunk's own last line)
        spans = [
            Span(path, blob, a, b, cut=cut is not None and a <= cut[0] <= b < cut[1])
            for a, b in merged
        ]
        whole = Span(path, blob, 1, len(f.lines), whole=True)
        headers = sum(self._header_cost(s) for s in spans) - self._header_cost(whole)
        outside = f.nonblank(1, len(f.lines)) - sum(f.nonblank(a, b) for a, b in merged)
        if outside > headers:  # the lines left out cost more than the headers saved
            return spans
        if self.cost_of([whole]) <= self.cost_of(spans):
            return [whole]
        return spans

    def cost_of(self, spans: list[Span]) -> int:
        if not spans:
            return 0
        f = self.files[spans[0].path]
        inner = sum(
            self._header_cost(s)
            + f.cost(s.start_line, s.end_line)
            + self.newline * (s.end_line - s.start_line + 1)
            for s in spans
        )
        return inner + self.newline * (len(spans) - 1)  # blank lines between its blocks

    def total(self, changed: str | None = None, ranges: list[tuple[int, int]] | None = None) -> int:
        """The packet's cost, with `changed`'s ranges replaced by `ranges` if given."""
        current = dict(self.ranges)
        if changed is not None and ranges:
            current[changed] = ranges
        cost = sum(self.cost_of(self.spans_of(path, r)) for path, r in current.items())
        return cost + self.newline * max(len(current) - 1, 0)  # blank lines between files

    def covered(self, c: Candidate) -> bool:
        spans = self.spans_of(c.path, self.ranges[c.path]) if c.path in self.ranges else []
        return any(s.start_line <= c.start_line and c.end_line <= s.end_line for s in spans)


def select(
    candidates: list[Candidate],
    files: dict[str, FileLines],
    budget: int,
    text_cost: Callable[[str], int],
    newline: int,
) -> Packet:
    """The packet for `candidates` (fused order) within `budget` (see the module's rule)."""
    omitted: list[Omission] = []
    considered = candidates[:MAX_CANDIDATES]
    top = next((c.score for c in considered if not c.lifted), 0.0)
    eligible = []
    per_file: dict[str, int] = {}
    for c in considered:
        if not c.lifted and c.score < LOW_SCORE_SHARE * top:
            omitted.append(Omission(c, "low_score"))
            continue
        k = per_file.get(c.path, 0)
        per_file[c.path] = k + 1
        eligible.append((-c.score * SPREAD_DECAY**k, c.rank, c))
    eligible.sort(key=lambda e: (e[0], e[1]))

    sel = _Selection(files, {c.path: c.blob for c in considered}, text_cost, newline)
    holder_of_blob: dict[str, str] = {}
    texts: dict[str, str] = {}  # chunk text -> path holding it
    taken: dict[str, list[Candidate]] = {}  # path -> its chunks in the packet
    over_budget: list[Candidate] = []
    used = 0
    short_of = None
    if eligible:
        best = eligible[0][2]
        whole = sel.total(best.path, [(best.start_line, best.end_line)])
        if whole > budget:  # the best evidence first, even cut, not a small unrelated chunk
            short_of = (best, whole)
            cut = _cut_to_fit(sel, best, budget, min_lines=1)
            if cut is not None:
                sel.ranges[best.path], used = cut
                taken[best.path] = [best]
            else:
                over_budget.append(best)
            over_budget += [c for _, _, c in eligible[1:]]
            eligible = []
    for _, _, c in eligible:
        lines = files[c.path].lines[c.start_line - 1 : c.end_line]
        text = "\n".join(lines)
        holder = holder_of_blob.get(c.blob)
        if holder is not None and holder != c.path:
            omitted.append(Omission(c, "duplicate", holder))
            continue
        if c.path in sel.ranges and sel.covered(c):
            omitted.append(Omission(c, "duplicate", c.path))
            continue
        if text.strip() and texts.get(text, c.path) != c.path:
            omitted.append(Omission(c, "duplicate", texts[text]))
            continue
        ranges = [*sel.ranges.get(c.path, []), (c.start_line, c.end_line)]
        total = sel.total(c.path, ranges)
        if total > budget:
            over_budget.append(c)
            continue
        sel.ranges[c.path] = ranges
        holder_of_blob[c.blob] = c.path
        texts.setdefault(text, c.path)
        taken.setdefault(c.path, []).append(c)
        used = total

    if over_budget and short_of is None:
        c = over_budget[0]
        best = _cut_to_fit(sel, c, budget)
        if best is not None:
            sel.ranges[c.path], used = best
            taken.setdefault(c.path, []).append(c)
            over_budget = over_budget[1:]
    omitted += [Omission(c, "budget") for c in over_budget]

    spans: list[Span] = []
    chunks: dict[tuple[str, int, int], list[Candidate]] = {}
    for path in sorted(sel.ranges, key=lambda p: (min(c.rank for c in taken[p]), p)):
        for span in sel.spans_of(path, sel.ranges[path]):
            spans.append(span)
            chunks[(path, span.start_line, span.end_line)] = sorted(
                (c for c in taken[path] if span.start_line <= c.start_line <= span.end_line),
                key=lambda c: c.rank,
            )
    omitted.sort(key=lambda o: o.candidate.rank)
    return Packet(spans, chunks, omitted, used, short_of)


def _cut_to_fit(
    sel: _Selection, c: Candidate, budget: int, min_lines: int = MIN_CUT_LINES
) -> tuple[list[tuple[int, int]], int] | None:
    """The candidate's first lines that fit (as many as possible, at least `min_lines`),
    as (the file's new ranges, the packet's new cost); None if not even that fits. The one
    cut the packet makes: the chunk stays recorded in `sel.cut` when it fits."""
    sel.cut[c.path] = (c.start_line, c.end_line)  # its header says so, and costs that
    best = None
    lo, hi = min_lines, c.end_line - c.start_line  # one line short of the whole chunk
    while lo <= hi:  # the cost grows with the lines kept: binary search the last that fits
        mid = (lo + hi) // 2
        ranges = [*sel.ranges.get(c.path, []), (c.start_line, c.start_line + mid - 1)]
        total = sel.total(c.path, ranges)
        if total <= budget:
            best, lo = (ranges, total), mid + 1
        else:
            hi = mid - 1
    if best is None:
        del sel.cut[c.path]
    return best
