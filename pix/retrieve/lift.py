"""Steps after fusion that add a channel of their own (the phrase step, the definition step):
the chunks they found gain that channel's contribution, chunks no other channel found join
the list, and the list is ordered again the way the retrieval statement orders it.

The weights that lift such chunks above every other are `above_all`: no score without the
step's channel exceeds the ranking stage's ceiling (pix.retrieve.rank.ceiling: every
channel's rank 1, the largest standing-out bonus and file evidence; DBSF scores are smaller),
and no prior shrinks a score by more than the smallest factor: the path role's, times the
history prior's when it weighs the query (pix.retrieve.history: it multiplies every chunk,
lifted ones too, after these steps).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pix.retrieve import history, rank
from pix.retrieve.hits import Hit, order
from pix.retrieve.priors import ROLE_FACTORS, path_role
from pix.retrieve.search import RRF_K

# The channels of the steps built on this module (pix.retrieve.define and .phrase take their
# names from here, so that `lifted` knows every one).
DEFINITION, PHRASE = "definition", "phrase"
STEP_CHANNELS = frozenset({DEFINITION, PHRASE})


def lifted(hit: Hit) -> bool:
    """Whether a step lifted the hit (its channel added to the score)."""
    return any(hit.channels.get(c, {}).get("contribution", 0) > 0 for c in STEP_CHANNELS)


@dataclass
class Location:
    """Where a found chunk sits: what a Hit needs when no other channel found the chunk."""

    path: str
    chunk_id: int
    blob_sha: str
    start_line: int
    end_line: int
    kind: str
    symbol: str | None
    language: str


def above_all(
    weights: dict[str, float], priors: bool, weighed: bool = False, lent: float = 0.0
) -> float:
    """A channel weight whose rank 1 outranks every chunk and file without it. `weighed`: the
    history prior will multiply the scores too; `lent`: the most a test lends the file it
    tests, as a share of the ceiling (pix.retrieve.tested.most_share), which a file, and in
    chunk mode its strongest chunk, gains after the ranking stage."""
    floor = min(ROLE_FACTORS.values()) * (history.factor(0) if weighed else 1.0)
    floor = floor if priors else 1.0
    return 1.0 + rank.ceiling(weights) * (1.0 + lent) / floor


def unit(weight: float, fusion: str) -> float:
    """What rank 1 of a channel of this weight contributes (RRF: w / (k + 1); DBSF: w)."""
    return weight / (RRF_K + 1) if fusion == "rrf" else weight


def entry(weight: float, fusion: str, count: int, **explained) -> dict:
    """A lifted chunk's channel entry: rank 1, scored by how many of the step's items (names,
    phrases) it holds, each worth a rank 1 of `weight`; `explained` joins it."""
    share = unit(weight, fusion)
    return {
        "rank": 1,
        "score": float(count),
        "weight": weight,
        "contribution": share * count,
        **explained,
    }


def add_channel(
    hits: list[Hit],
    name: str,
    found: dict[tuple[str, int], tuple[Location, dict]],
    priors: bool,
) -> list[Hit]:
    """`hits` with channel `name` added: `found` maps (path, chunk id) to the chunk and its
    channel entry (rank, score, weight, contribution, and whatever the step explains)."""
    if not found:
        return hits
    found = dict(found)  # popped below as hits claim their entry

    def factor(role: str) -> float:
        return ROLE_FACTORS[role] if priors else 1.0

    out = []
    for hit in hits:
        entry = found.pop((hit.path, hit.chunk_id), None)
        if entry is None:
            out.append(hit)
            continue
        ch = entry[1]
        fused = hit.fused + ch["contribution"]
        channels = dict(sorted({**hit.channels, name: ch}.items()))
        out.append(replace(hit, fused=fused, score=fused * factor(hit.role), channels=channels))
    for at, ch in found.values():  # chunks no other channel found
        role = path_role(at.path)
        out.append(
            Hit(
                at.path, at.chunk_id, at.blob_sha, at.start_line, at.end_line, at.kind,
                at.symbol, ch["contribution"] * factor(role), ch["contribution"], role,
                at.language, {name: ch},
            )
        )  # fmt: skip
    out.sort(key=order)
    return out
