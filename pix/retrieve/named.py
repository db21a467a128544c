"""Channels that name files rather than rank chunks, fused after the SQL.

An issue report names files in its traceback and prose (pix/retrieve/evidence.py); a commit
subject names a component of the code (pix/retrieve/component.py). Such a channel ranks files,
and a file ranked r adds weight x share / (k + r) to its chunks among the candidates, as a
ranked channel does in the SQL (times the chunk's path prior): the chunk that holds a line the
channel names takes the whole of it, the file's other chunks OTHER_CHUNKS of it. A file no
other channel found enters with that chunk, else its first one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import apsw

from pix.retrieve.hits import Hit, revised
from pix.retrieve.priors import ROLE_FACTORS, path_role

OTHER_CHUNKS = 0.5

NAMED_CHUNKS = """
SELECT f.path, c.id, b.sha, c.start_line, c.end_line, c.kind, c.symbol, b.language
FROM snapshot_file f JOIN blob b ON b.sha = f.blob_sha JOIN chunk c ON c.blob_id = b.id
WHERE f.snapshot_id = :snapshot AND f.path IN (SELECT value FROM json_each(:paths))
ORDER BY f.path, c.start_line, c.id
"""


@dataclass(frozen=True)
class NamedFile:
    """A file a channel names, in the channel's order."""

    path: str
    score: float  # the channel's own score of the file, as an explanation shows it
    line: int | None = None  # a line it names: the chunk holding it takes the whole part
    share: float = 1.0  # the file's share of the channel's weight
    explained: tuple[tuple[str, object], ...] = ()  # what the explanation adds (key, value)


def fuse(
    conn: apsw.Connection,
    snapshot_id: int,
    hits: list[Hit],
    files: list[NamedFile],
    channel: str,
    weight: float,
    rrf_k: int,
    priors: bool,
) -> list[Hit]:
    """`hits` with the channel's files credited, in the fused order (score, path, line)."""
    if not files or weight <= 0:
        return hits
    named = {f.path: (rank, f) for rank, f in enumerate(files, 1)}
    missing = sorted(set(named) - {h.path for h in hits})
    anchors: dict[str, tuple] = {}
    if missing:
        by_path: dict[str, list[tuple]] = {}
        params = {"snapshot": snapshot_id, "paths": json.dumps(missing)}
        for row in conn.execute(NAMED_CHUNKS, params):
            by_path.setdefault(row[0], []).append(row)
        for path, chunks in by_path.items():
            line = named[path][1].line
            holding = [r for r in chunks if line is not None and r[3] <= line <= r[4]]
            anchors[path] = (
                min(holding, key=lambda r: (r[4] - r[3], r[3])) if holding else chunks[0]
            )
    out = []
    for hit in hits:
        if hit.path in named:
            rank, f = named[hit.path]
            whole = f.line is None or hit.start_line <= f.line <= hit.end_line
            share = f.share * (1.0 if whole else OTHER_CHUNKS)
            hit = _credit(hit, channel, rank, f, weight * share, rrf_k, priors)
        out.append(hit)
    for path, row in anchors.items():
        rank, f = named[path]
        role = path_role(path)
        base = Hit(path, row[1], row[2], row[3], row[4], row[5], row[6], 0.0, 0.0, role, row[7], {})
        out.append(_credit(base, channel, rank, f, weight * f.share, rrf_k, priors))
    out.sort(key=lambda h: (-h.score, h.path, h.start_line, h.chunk_id))
    return out


def _credit(
    hit: Hit, channel: str, rank: int, named: NamedFile, weight: float, rrf_k: int, priors: bool
) -> Hit:
    part = weight / (rrf_k + rank)
    factor = ROLE_FACTORS[hit.role] if priors else 1.0
    channels = dict(hit.channels)
    channels[channel] = {
        "rank": rank,
        "score": named.score,
        "weight": weight,
        "contribution": part,
        **dict(named.explained),
    }
    return revised(hit, score=hit.score + part * factor, fused=hit.fused + part, channels=channels)
