"""The ranking stage after fusion: what reciprocal ranks leave out.

Three steps, each measured on every development set (bench/devbench.py; the figures are in
bench/README.md):

- Standing out (chunks, RRF only). Reciprocal-rank fusion sees only ranks, and with k = 60 the
  first ten ranks of a channel are worth nearly the same, so a chunk that two channels rank
  fifth beats one that a single channel ranks first by a wide margin. That drowns a channel
  that knows: on NL->function questions the dense channel's first hit is right three times in
  four, and fusion buries it. So each chunk also gets, per scored channel (dense, bm25), a
  bonus for how far its raw score stands above that channel's top STANDOUT_TOP
  scores: weight x STANDOUT[channel] x max(z, 0) / k, z = (score - mean) / sd of those. A
  clear winner gains, a crowd of near-equal scores gains nothing. DBSF already fuses scores,
  so it is left alone there.
- File evidence. A file scores its strongest chunk's score plus, for its next
  chunks (at most FILE_CHUNKS in all), what each scores above the weakest candidate, times
  FILE_DECAY to the power of its place: one excellent chunk still leads, a file that several
  chunks point to beats one with a single lucky chunk, and a long file gains nothing from
  chunks that are candidates only because every chunk is (a small repository: the nearest 200
  are all of them, and RRF scores them nearly alike). In chunk mode each file's strongest
  chunk is scored as its file (`carried`): ranked by their own scores, the first chunks named
  the file with one lucky chunk before the file several chunks point to, and file mode's
  steps (pix/retrieve/outline.py, tested.py, titled.py) reached only file answers.
- Copies (both modes). Byte-identical files at several paths (requests' three test certificate
  authorities, PKG-INFO beside egg-info/PKG-INFO) tie in every channel but the path's and would
  fill several places with one text. The best-placed copy stands for all of them and names the
  others (`fold_copies`): in file mode a file whose blob ranked higher already, in chunk mode a
  chunk shown at a higher-ranked path already.

Tried and not kept (no gain beyond 0.005 on any set): a bonus for chunks that define a name the
query uses and that BM25 also found (the identifier channel already ranks definitions);
semble's multi-chunk boost (a share of the best score times the file's share of the summed
scores: +0.001 to +0.004 over FILE_DECAY's sum on the language sets, -0.03 on requests).
"""

from __future__ import annotations

import numpy as np

from pix.retrieve.hits import Hit, order, revised
from pix.retrieve.search import RRF_K

# The channels with a raw score worth comparing, and how much standing out counts in each. The
# transformer's lead is the surest sign (on NL->function questions its first hit is right 92-99%
# of the time when it leads the second by more than one standard deviation); BM25 leads say
# less. 0.3 for dense: 0.5 lifts NL->function further but costs the language sets embedded with
# the transformer 0.014 nDCG@10. The static tier's lead says nothing: a bonus of 0.15 for it cost
# the 16 commit sets 0.008 nDCG@10 / 0.010 MRR@10 static-only (bench/devbench.py --static-only).
STANDOUT = {"dense": 0.3, "bm25": 0.15}
STANDOUT_TOP = 20
FILE_DECAY = 0.35
FILE_CHUNKS = 5
# The largest z a score reaches against the STANDOUT_TOP best it is one of, with their
# population sd (np.std): one score above STANDOUT_TOP - 1 equal ones, sqrt(n - 1).
STANDOUT_Z_MAX = (STANDOUT_TOP - 1) ** 0.5
# A file scores at most this multiple of its best chunk (every next chunk as strong).
FILE_EVIDENCE_MAX = 1 + sum(FILE_DECAY**i for i in range(1, FILE_CHUNKS))


def ceiling(weights: dict[str, float]) -> float:
    """The most a chunk or file can score under these channel weights, in RRF rank-1 shares
    (1 / (k + 1)): rank 1 in every channel, the largest standing-out bonus, the most file
    evidence. A step that must outrank everything (pix.retrieve.phrase) weighs more."""
    standout = sum(weights.get(name, 0.0) * factor for name, factor in STANDOUT.items())
    standout *= STANDOUT_Z_MAX * (RRF_K + 1) / RRF_K
    return (sum(weights.values()) + standout) * FILE_EVIDENCE_MAX


def channel_stats(hits: list[Hit]) -> dict[str, tuple[float, float]]:
    """Mean and standard deviation of each scored channel's STANDOUT_TOP best raw scores
    (a channel with fewer than three candidates, or no spread, has none)."""
    stats = {}
    for name in STANDOUT:
        scores = np.array([h.channels[name]["score"] for h in hits if name in h.channels])
        if len(scores) < 3:
            continue
        top = -np.sort(-scores)[:STANDOUT_TOP]
        sd = float(top.std())
        if sd > 0:
            stats[name] = (float(top.mean()), sd)
    return stats


def rescore(hits: list[Hit], fusion: str = "rrf") -> list[Hit]:
    """The fused chunks with each one's standing-out bonus added (inside the path prior),
    in the order of the new score (then path, line, chunk, as the SQL orders)."""
    if fusion != "rrf" or not hits:
        return hits
    stats = channel_stats(hits)
    out = []
    for hit in hits:
        bonus = 0.0
        for name, (mean, sd) in stats.items():
            channel = hit.channels.get(name)
            if channel:
                z = (channel["score"] - mean) / sd
                bonus += channel["weight"] * STANDOUT[name] * max(z, 0.0) / RRF_K
        if bonus:
            prior = hit.score / hit.fused if hit.fused else 1.0
            hit = revised(
                hit,
                score=(hit.fused + bonus) * prior,
                fused=hit.fused + bonus,
                rank={**hit.rank, "standout": bonus},
            )
        out.append(hit)
    return sorted(out, key=order)


def by_file(hits: list[Hit]) -> list[Hit]:
    """One hit per path: its strongest chunk, scored with the file's evidence (its next chunks'
    scores above the weakest candidate's, decayed by FILE_DECAY per place, at most FILE_CHUNKS
    chunks in all), ordered by that score, then path. `hits` is ordered by score already."""
    chunks: dict[str, list[Hit]] = {}
    for hit in hits:
        chunks.setdefault(hit.path, []).append(hit)
    floor = min((h.score for h in hits), default=0.0)
    files = []
    for path_hits in chunks.values():
        best = path_hits[0]
        rest = [h.score - floor for h in path_hits[1:FILE_CHUNKS]]
        total = best.score + sum(s * FILE_DECAY**i for i, s in enumerate(rest, 1))
        files.append(
            revised(
                best,
                score=total,
                rank={**best.rank, "evidence": total - best.score, "chunks": len(path_hits)},
            )
        )
    return sorted(files, key=lambda h: (-h.score, h.path))


def fold_copies(hits: list[Hit], files: bool) -> list[Hit]:
    """`hits` (ranked) with each content once: a later hit of the same blob (file mode) or
    chunk (chunk mode) is dropped, its path added to the first one's `copies`."""
    same: dict[str | int, list[Hit]] = {}  # insertion order: each content's first place
    for hit in hits:
        same.setdefault(hit.blob_sha if files else hit.chunk_id, []).append(hit)
    return [
        revised(first, copies=tuple(h.path for h in rest)) if rest else first
        for first, *rest in same.values()
    ]


def arrange(hits: list[Hit], files: bool) -> list[Hit]:
    """The ranked list a mode shows: files (by_file) or chunks, each content once."""
    return fold_copies(by_file(hits) if files else hits, files)


def carried(hits: list[Hit], files: list[Hit]) -> list[Hit]:
    """`hits` (chunks) with each file's strongest chunk scored as its file in `files` (file
    mode's list, after its steps), ranked again; every chunk at every path (chunk mode folds
    copies after, `pix pack` names a repeated text itself). A file's other chunks keep their
    own scores, so the first chunks name the files file mode ranks first, in its order, and
    a file's further chunks follow where they score."""
    scored = {(f.chunk_id, f.path): revised(f, copies=()) for f in files}
    return sorted((scored.get((h.chunk_id, h.path), h) for h in hits), key=order)
