"""One file's lines as the chunkers see them: sizes of row ranges, and cutting a range into
pieces of at most `max` characters.

Rows are 0-based and inclusive throughout. A `Piece` is what a chunker produces before the
entry point turns it into a `Chunk`; `merge` folds small neighbours together afterwards.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass, field

WINDOW_LINES = 40
WINDOW_OVERLAP = 5
CONTEXT_CHARS = 200
NO_BREAK = 1 << 20  # rank of a row where no boundary begins


@dataclass
class Piece:
    start: int
    end: int
    kind: str
    symbol: str | None
    context: str | None
    defines: list[str]
    declares: list[str] = field(default_factory=list)  # pix.ingest.declarations


class Lines:
    """One file's lines with prefix sums, so any row range's size is O(1)."""

    def __init__(self, lines: list[str], max_chars: int, min_chars: int) -> None:
        self.lines = lines
        self.max = max_chars
        self.min = min_chars
        # cum[i] = size of rows 0..i-1 with one '\n' each; size(a, b) drops the last '\n'.
        self.cum = [0, *itertools.accumulate(len(line) + 1 for line in lines)]

    def size(self, a: int, b: int) -> int:
        return self.cum[b + 1] - self.cum[a] - 1

    def blank(self, a: int, b: int) -> bool:
        return all(not self.lines[r].strip() for r in range(a, b + 1))

    def last_fit(self, a: int, limit: int) -> int:
        """Largest row e <= limit with size(a, e) <= max (a - 1 if row a alone is too long)."""
        e = bisect.bisect_right(self.cum, self.cum[a] + self.max + 1) - 2
        return min(e, limit)

    def signature(self, rows: tuple[int, int]) -> str:
        out: list[str] = []
        total = 0
        for line in self.lines[rows[0] : rows[1] + 1]:
            if out and total + len(line) + 1 > CONTEXT_CHARS:
                break
            out.append(line[:CONTEXT_CHARS])
            total += len(out[-1]) + 1
        return "\n".join(out)

    def split(self, lo: int, hi: int, rank: dict[int, int]) -> list[tuple[int, int]]:
        """Cut rows lo..hi into pieces <= max chars at the best-ranked row (lowest rank: the
        shallowest boundary) that still leaves a piece of min chars; a row too long on its own
        stands alone."""
        out: list[tuple[int, int]] = []
        s = lo
        while s <= hi:
            e = self.last_fit(s, hi)
            if e >= hi:
                out.append((s, hi))
                break
            if e < s:
                out.append((s, s))
                s += 1
                continue
            best, best_rank = e + 1, NO_BREAK + 1
            floor = self.cum[s] + self.min + 1
            for r in range(e + 1, s, -1):  # latest first, so ties keep the biggest piece
                if self.cum[r] < floor:
                    break
                r_rank = rank.get(r, NO_BREAK)
                if r_rank < best_rank:
                    best, best_rank = r, r_rank
            out.append((s, best - 1))
            s = best
        return out

    def windows(self, lo: int, hi: int) -> list[tuple[int, int]]:
        """Overlapping windows of at most WINDOW_LINES lines, ending at a blank line if one is
        in the second half so paragraphs stay together."""
        out: list[tuple[int, int]] = []
        s = lo
        while True:
            e = max(s, self.last_fit(s, min(hi, s + WINDOW_LINES - 1)))
            if out and e <= out[-1][1]:  # the overlap left no room for new lines
                s = out[-1][1] + 1
                e = max(s, self.last_fit(s, min(hi, s + WINDOW_LINES - 1)))
            if e < hi:
                for r in range(e, s + (e - s) // 2, -1):
                    if not self.lines[r].strip():
                        e = r
                        break
            out.append((s, e))
            if e >= hi:
                return out
            # Overlap by up to WINDOW_OVERLAP lines, but never more than a quarter of the window.
            overlap = min(WINDOW_OVERLAP, (e - s + 1) // 4)
            while overlap and self.size(e + 1 - overlap, e) > self.max // 4:
                overlap -= 1
            s = e + 1 - overlap


def merge(f: Lines, pieces: list[Piece]) -> list[Piece]:
    """Fold small neighbours together while the result stays within max chars."""
    out: list[Piece] = []
    for p in pieces:
        if out:
            q = out[-1]
            small = (
                f.size(q.start, q.end) < f.min
                or f.size(p.start, p.end) < f.min
                or f.blank(p.start, p.end)
                or f.blank(q.start, q.end)
            )
            if small and p.start == q.end + 1 and f.size(q.start, p.end) <= f.max:
                if f.size(p.start, p.end) > f.size(q.start, q.end):
                    q.kind, q.symbol, q.context = p.kind, p.symbol, p.context
                q.end = p.end
                q.defines.extend(p.defines)
                continue
        out.append(p)
    return out
