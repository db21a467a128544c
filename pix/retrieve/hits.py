"""A fused candidate: one chunk at one path, with each channel's share of its score. Its own
module so that the steps after the SQL (pix/retrieve/named.py, rank, define, phrase) and the
statement that makes hits (pix/retrieve/search.py) can import it without a cycle."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields

# What a file's score adds to its strongest chunk's, each under its name in `Hit.rank`: file
# evidence (pix/retrieve/rank.py), then the outline, tested-file, titled-file and imported-file
# steps. A file result, and in chunk mode the strongest chunk carrying its file's score, scores
# that chunk's own score plus these.
FILE_PARTS = ("evidence", "outline", "tested", "titled", "imported")


@dataclass(frozen=True)
class Hit:
    """One fused chunk at one path, with each channel's share of its score."""

    path: str
    chunk_id: int
    blob_sha: str
    start_line: int
    end_line: int
    kind: str
    symbol: str | None
    score: float
    fused: float
    role: str
    language: str
    channels: dict[str, dict]  # channel -> {rank, score, weight, contribution}
    # What the ranking stage added (numbers; the tested step also names its test, testedBy).
    rank: dict[str, float | str] = field(default_factory=dict)
    copies: tuple[str, ...] = ()  # other paths with the same content, folded into this hit
    # (name, file line) of each name of the query this chunk defines (pix.retrieve.define)
    defines: tuple[tuple[str, int], ...] = ()


_FIELDS = tuple(f.name for f in fields(Hit))


def order(hit: Hit) -> tuple:
    """The order of a ranked list, as the retrieval statement orders it: score, then path,
    line and chunk."""
    return (-hit.score, hit.path, hit.start_line, hit.chunk_id)


def revised(hit: Hit, **changes) -> Hit:
    """`dataclasses.replace` for the ranking stage's loops over every candidate: replace runs
    the frozen __init__ again, one object.__setattr__ per field (6 us a hit; a question across
    20 repositories ranks 8,000). The copy is the same Hit, made without it."""
    new = object.__new__(Hit)
    new.__dict__.update(hit.__dict__)
    new.__dict__.update(changes)
    return new


def hits_of_rows(rows: list[tuple]) -> list[Hit]:
    """The fused statement's rows as hits. The statement spells each row's channels as the
    JSON object Hit.channels is, and all rows' are parsed in one call (a json.loads and a dict
    built per row were a third of the Python time of a query)."""
    channels = json.loads("[" + ",".join(row[-1] for row in rows) + "]")
    out = []
    new = object.__new__
    for row, parts in zip(rows, channels, strict=True):
        hit = new(Hit)
        hit.__dict__.update(zip(_FIELDS, row, strict=False))
        hit.__dict__["channels"] = parts
        hit.__dict__["rank"] = {}
        out.append(hit)
    return out
