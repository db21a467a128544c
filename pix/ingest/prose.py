"""Prose split at its headings: Markdown (ATX and setext, outside fences and front matter) and
reStructuredText (under- and overlined titles). A section longer than `max` is windowed, each
later window carrying the heading line as context.
"""

from __future__ import annotations

import re

from pix.ingest.lines import CONTEXT_CHARS, Lines, Piece, merge

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_LIST_OR_QUOTE = re.compile(r"\s*([-*+>]|\d+[.)])(\s|$)")
_RST_ADORN = re.compile(r"""([=\-~^"'`#*+:])\1*[ \t]*$""")


def _markdown_headings(lines: list[str]) -> list[tuple[int, str]]:
    heads: list[tuple[int, str]] = []
    fence = ""
    begin = 0
    if lines and lines[0].strip() == "---":  # YAML front matter: its closing '---' is no heading
        ends = (j + 1 for j in range(1, len(lines)) if lines[j].strip() in ("---", "..."))
        begin = next(ends, 1)
    for i in range(begin, len(lines)):
        line = lines[i]
        m = _FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = ""
            continue
        if m:
            fence = m.group(1)
            continue
        m = _ATX.match(line)
        if m:
            heads.append((i, (m.group(2) or "").strip()))
            continue
        prev = lines[i - 1] if i else ""
        if (
            _SETEXT.match(line)
            and prev.strip()
            and not _ATX.match(prev)
            and not _FENCE.match(prev)
            and not _LIST_OR_QUOTE.match(prev)
            and not _SETEXT.match(prev)
            and (not heads or heads[-1][0] != i - 1)
        ):
            heads.append((i - 1, prev.strip()))
    return heads


def _rst_headings(lines: list[str]) -> list[tuple[int, str]]:
    """Rows of section titles: a title line under- (and maybe over-) lined with one repeated
    punctuation character, at least as long as the title."""
    heads: list[tuple[int, str]] = []
    taken = -1  # last row already used as an adornment
    for i in range(len(lines) - 1):
        title, under = lines[i], lines[i + 1]
        if i <= taken or not title.strip() or not _RST_ADORN.match(under):
            continue
        over = i - 1 > taken and lines[i - 1].rstrip() == under.rstrip()
        if (
            not _RST_ADORN.match(title)
            and len(under.rstrip()) >= len(title.rstrip())
            and (over or not title[0].isspace())
            and (over or i == 0 or not lines[i - 1].strip())
        ):
            heads.append((i - 1 if over else i, title.strip()))
            taken = i + 1
    return heads


def _sections(f: Lines, heads: list[tuple[int, str]]) -> list[Piece]:
    n = len(f.lines)
    bounds = [(0, None, None)] if not heads or heads[0][0] > 0 else []
    bounds += [(row, title or None, f.lines[row]) for row, title in heads]
    pieces: list[Piece] = []
    for k, (start, title, head) in enumerate(bounds):
        end = bounds[k + 1][0] - 1 if k + 1 < len(bounds) else n - 1
        for s, e in f.windows(start, end) if f.size(start, end) > f.max else [(start, end)]:
            ctx = head[:CONTEXT_CHARS] if head is not None and s != start else None
            pieces.append(Piece(s, e, "section", title, ctx, []))
    return pieces


def markdown_pieces(f: Lines) -> list[Piece]:
    return merge(f, _sections(f, _markdown_headings(f.lines)))


def rst_pieces(f: Lines) -> list[Piece]:
    return merge(f, _sections(f, _rst_headings(f.lines)))
