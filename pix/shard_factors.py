"""The factor each shard's list is merged with (issue 13; pix/shards.py merges): the signals
that are comparable between shards, read from their answers or their probes
(pix/shard_probe.py): the nearest chunk's cosine in the meaning space they share, and chunk
counts (the query's terms' document frequencies, which of them one chunk holds together, each
shard's size).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from pix.shard_probe import ShardProbe
    from pix.shards import ShardAnswer

# How strongly the meaning gap and the coverage gap between shards scale a shard's list: chosen
# on the 20 development repositories, on the 596 commit subjects after the 600 the bench reports
# (bench/shards_bench.py --skip 30; bench/README.md, "tenth session"): a plateau of MRR@10
# 0.628-0.634 over beta 2-4 and gamma 4-10, whose middle is taken.
SHARD_BETA = 3.0
SHARD_GAMMA = 6.0
# The likelihood gap's weight, and the smoothing (in chunks) toward the workspace's vocabulary:
# tuned on other queries of the same 20 repositories than those the bench reports (see
# bench/README.md, "likelihood").
SHARD_LAMBDA = 1.0
LIKELIHOOD_MU = 100.0
MEANING = ("dense", "static")  # comparable across shards: one model, one static table


class ShardFactor(NamedTuple):
    """What a shard's list is scaled by in the merge, and the signals it came from (shown by
    --explain)."""

    factor: float
    channel: str | None  # the meaning channel compared (None: the shards share none)
    cosine: float | None  # the shard's nearest chunk's cosine in it
    coverage: float
    likelihood: float


Answers = dict[str, "ShardAnswer"] | dict[str, "ShardProbe"]


def workspace_counts(answers: Answers) -> tuple[int, dict[str, int]]:
    """The workspace's chunks (at least 1) and, per query term, the chunks of every shard
    holding it, in sorted term order: what coverage and likelihood compare each shard with."""
    total = sum(a.chunks for a in answers.values()) or 1
    terms = sorted({t for a in answers.values() for t in a.df})
    return total, {t: sum(a.df.get(t, 0) for a in answers.values()) for t in terms}


def coverage(answers: Answers) -> dict[str, float]:
    """name -> the share of the query's information that one chunk of the shard holds, its
    best: each term weighs its idf over the whole workspace, so a term that names one
    repository's subject weighs most, and a shard where one chunk says "reverse", "attribute"
    and "status" covers a commit subject that a shard saying each word somewhere does not.
    (Counting a term for a shard when any chunk held it measured 0.601 MRR@10 on the tuning
    queries against 0.629 for this, 0.480 against 0.490 on the reported ones.)"""
    total, held = workspace_counts(answers)
    idf = {t: math.log(1 + total / (df + 1)) for t, df in held.items()}
    norm = sum(idf.values()) or 1.0
    return {
        name: max((sum(idf[t] for t in terms) for terms in a.held), default=0.0) / norm
        for name, a in answers.items()
    }


def likelihood(answers: Answers, mu: float = LIKELIHOOD_MU) -> dict[str, float]:
    """name -> the mean over the query's terms of log P(term | shard): the share of the shard's
    chunks holding the term, Dirichlet-smoothed by `mu` chunks of the workspace's share (half a
    chunk added, so a term no shard holds costs every shard alike). Unlike coverage it counts
    how often: the shard that says the query's words most often, for its size, leads."""
    total, held = workspace_counts(answers)
    if not held:
        return {name: 0.0 for name in answers}
    share = {t: (df + 0.5) / total for t, df in held.items()}
    return {
        name: sum(math.log((a.df.get(t, 0) + mu * p) / (a.chunks + mu)) for t, p in share.items())
        / len(share)
        for name, a in answers.items()
    }


def shard_factors(
    answers: Answers,
    beta: float = SHARD_BETA,
    gamma: float = SHARD_GAMMA,
    lam: float = SHARD_LAMBDA,
) -> dict[str, ShardFactor]:
    """Each shard's factor: its list is scaled by how far its nearest chunk is from the best
    shard's, in the meaning space they all share, by how much less of the query's vocabulary
    it holds, and by how much less likely its vocabulary makes the query, than the best
    shard's. From the shards' answers, or from their probes (the same signals,
    pix/shard_probe.py)."""
    cover, fit = coverage(answers), likelihood(answers)
    top_cover, top_fit = max(cover.values(), default=0.0), max(fit.values(), default=0.0)
    channel = next((c for c in MEANING if all(c in a.meaning for a in answers.values())), None)
    best = max(a.meaning[channel] for a in answers.values()) if channel else 0.0
    out = {}
    for name, a in answers.items():
        cosine = a.meaning[channel] if channel else None
        gap = gamma * (cover[name] - top_cover) + lam * (fit[name] - top_fit)
        if channel:
            gap += beta * (cosine - best)
        out[name] = ShardFactor(math.exp(gap), channel, cosine, cover[name], fit[name])
    return out
