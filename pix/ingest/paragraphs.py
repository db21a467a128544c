"""The fallback for text no grammar parses: blocks cut at blank lines and indentation.

A file is cut into top-level blocks where a line at the file's outermost indentation follows a
blank line or a deeper line (a paragraph, a top-level YAML key, a function in a language pix
has no grammar for). A line that closes something (`}`, `end`, `fi`, `</div>`...) never
starts a block. A block longer than `max` is cut inside, preferring a blank line then a
shallower line over a deeper one, each later piece carrying the block's first line as
context. Small neighbours are merged afterwards, as with every chunker.

Definitions in such text are found by keyword (`function foo`, `sub foo`, `proc foo`,
`foo <- function(`...), so the identifier channel still sees them; prose and data formats
(`text`, `yaml`, `json`...) get none.
"""

from __future__ import annotations

import re

from pix.ingest.lines import CONTEXT_CHARS, Lines, Piece, merge

_CLOSER = re.compile(
    r"[}\])]|</|#\s*end|(end|fi|done|esac|else|elif|elsif|elseif|except|finally|catch|rescue"
    r"|ensure|until|endif|endfor|endwhile|endfunction)\b"
)
_DEFINITION = re.compile(
    r"[ \t]*(?:(?:export|public|private|protected|static|async|local|pub|inline|extern"
    r"|abstract|final|override|global)[ \t]+)*"
    r"(?:def|defp|defn|function|func|fn|fun|sub|proc|method|macro|class|struct|module"
    r"|interface|trait|enum|object|record|namespace|package|program|subroutine|procedure)"
    r"[ \t]+([A-Za-z_][\w.:]*[\w])"
    r"|[ \t]*([A-Za-z_][\w.]*)[ \t]*(?:<-|=)[ \t]*function\b",  # R, JS-style assignments
    re.M,
)
NO_DEFINITIONS = frozenset(
    "text markdown rst yaml json toml ini cfg xml html css csv properties env conf".split()
)


def _ranks(lines: list[str]) -> tuple[dict[int, int], list[int]]:
    """Row -> boundary rank (twice the indentation, plus one without a blank line before),
    and the rows that start a top-level block."""
    depth = [len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip()) for line in lines]
    filled = [d for d, line in zip(depth, lines, strict=True) if line.strip()]
    top = min(filled, default=0)
    rank: dict[int, int] = {}
    starts: list[int] = []
    blank_before, previous = True, None
    for row, line in enumerate(lines):
        text = line.strip()
        if not text:
            blank_before = True
            continue
        d = depth[row]
        if not _CLOSER.match(text) and (blank_before or (previous is not None and d < previous)):
            rank[row] = 2 * d + (0 if blank_before else 1)
            if d == top:
                starts.append(row)
        blank_before, previous = False, d
    return rank, starts


def block_pieces(f: Lines, language: str) -> list[Piece]:
    """Pieces of at most f.max characters along blank lines and indentation."""
    n = len(f.lines)
    rank, starts = _ranks(f.lines)
    bounds = sorted({0, *starts})
    pieces: list[Piece] = []
    for k, a in enumerate(bounds):
        b = bounds[k + 1] - 1 if k + 1 < len(bounds) else n - 1
        head = f.lines[a][:CONTEXT_CHARS] if f.lines[a].strip() else None
        for s, e in f.split(a, b, rank):
            pieces.append(Piece(s, e, "block", None, head if s != a else None, []))
    pieces = merge(f, pieces)
    if language not in NO_DEFINITIONS:
        for p in pieces:
            text = "\n".join(f.lines[p.start : p.end + 1])
            p.defines = [name.replace("::", ".") for m in _DEFINITION.finditer(text)
                         for name in m.groups() if name]  # fmt: skip
    return pieces
