"""Which shards of a workspace to rank for a question (issue 13): a probe of every shard that
reads only what the cross-shard merge compares, the nearest chunk's cosine in each meaning
channel and the question's term counts, so that only the shards whose lists can reach the
merged top are ranked.

A shard's merged scores are its own scores times its factor (pix/shards.py), and its factor
depends on nothing but these signals. On the 20 development repositories the merged top 10
came from the BREADTH shards of largest factor: ranking those 6 gave the same MRR@10 and
nDCG@10 as ranking all 20 on every repository, on the 600 commit subjects the bench reports
and on the next 600 (8 did too; 5 cost one repository 0.008 MRR@10; bench/shards_bench.py
--breadths), in about a third of the time.

The probe must read what the ranking would read, to the bit: it probes only where the
ranking's candidates are the whole database's (no path filter, no --at, one snapshot's
chunks), with the same query vectors and the same scans (pix/retrieve/knn.py's rows are
vec0's), and it ranks every shard where the definition or phrase step lifts a chunk above all scores
(a name it defines, a phrase it holds verbatim), whatever its factor. Where a probe cannot
stand for the ranking, every shard is ranked, as before.

The probe also gives each shard a ceiling, the most any of its chunks or files can score
(`ceiling`), so that the chosen shards can be ranked STAGE at a time and a shard whose factor x
ceiling cannot reach the merged top of those before it left out (pix/shards.py): 3.3 shards a
question instead of 6.1 on the development repositories, the same results.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from pix.ingest.terms import query_terms
from pix.query import QueryEngine, QueryRequest, query_vectors
from pix.retrieve import component, define, lift, outline, phrase, rank, tested, titled
from pix.retrieve.route import route
from pix.retrieve.search import fts_query
from pix.shard_factors import MEANING
from pix.snapshot import Snapshot, select_snapshot
from pix.store import search_sql

BREADTH = 6  # shards ranked per question when the probe can choose them
PROBE_FACTOR = 4 / 3  # probe only workspaces of at least this many times BREADTH shards (8)
# Chosen shards are ranked this many at a time, largest factor first, and a shard whose
# ceiling cannot reach the merged top of those ranked before it is left out. A fixed number,
# not the thread count: the same question ranks the same shards on any machine.
STAGE = 2


@dataclass
class ShardProbe:
    """What the cross-shard merge compares, read without ranking the shard."""

    snapshot: Snapshot
    meaning: dict[str, float]  # meaning channel -> the cosine of its nearest chunk
    chunks: int  # in its snapshot
    df: dict[str, int] = field(default_factory=dict)  # query term -> chunks holding it
    held: tuple[tuple[str, ...], ...] = ()  # the sets of query terms one chunk holds together
    lifts: bool = False  # the definition or phrase step lifts one of its chunks


def probes_apply(request: QueryRequest) -> bool:
    """Whether a probe can stand for this request's ranking: the whole snapshot searched (no
    path filter, the work tree's snapshot)."""
    return not (
        request.at is not None or request.refresh or request.only_paths or request.ignore_paths
    )


def _lifts(store, snapshot_id: int, request: QueryRequest, shape: str) -> bool:
    """Whether the definition or the phrase step would lift a chunk of this shard above every
    score (a name it defines, a phrase it holds verbatim): such a shard is always ranked. The
    steps' own functions decide, as in the ranking."""
    channels = request.channels
    if (
        define.enabled(channels, shape)
        and define.defining(store, snapshot_id, request.query, None)[0]
    ):
        return True
    return phrase.enabled(channels, shape) and bool(
        phrase.holding(store, snapshot_id, request.query, None)[1]
    )


def probe(engine: QueryEngine, request: QueryRequest) -> ShardProbe | None:
    """The shard's probe, or None when its candidates are not the whole database's (it keeps
    other snapshots' chunks): then only ranking it tells. Call it outside a read."""
    store = engine.store
    with store.read():
        snapshot = select_snapshot(store, engine.target, None)
        if not engine.whole_scope(snapshot.id):
            return None
        chunks, embedded, static = engine.snapshot_counts(snapshot.id)
        r = route(request.query, request.channels)
        vector, static_vector = query_vectors(engine, request.query, r, embedded, static)
        meaning = _nearest(engine, snapshot.id, {"dense": vector, "static": static_vector})
        lifts = _lifts(store, snapshot.id, request, r.shape)
        counts = term_counts(engine, request.query)
        return ShardProbe(snapshot, meaning, chunks, counts.df, counts.held, lifts)


SCANS = {"dense": search_sql.DENSE_SCAN, "static": search_sql.STATIC_SCAN}


def _nearest(
    engine: QueryEngine, snapshot_id: int, queries: dict[str, np.ndarray | None]
) -> dict[str, float]:
    """Each channel's best cosine as its candidates score it (1 - distance): from the warm
    engine's matrices when it has them (the same rows), else from vec0's scan. A channel whose
    vector is None is off."""
    on = {name: vector for name, vector in queries.items() if vector is not None}
    near = engine.near(dict(queries), 1, snapshot_id) if on else None
    meaning = {}
    for channel, vector in on.items():
        if near is not None:
            rows = json.loads(near[channel])
        else:
            blob = vector.astype(np.int8).tobytes()
            rows = engine.store.conn.execute(SCANS[channel], (blob, 1)).fetchall()
        if rows and rows[0][1] is not None:
            meaning[channel] = 1.0 - float(rows[0][1])
    return meaning


DF_TERMS = 12  # the query's first terms counted
DF_OF_TERM = "SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH ?"
# Which of the query's terms each chunk holds, as a bit set over their places (each term its own
# FTS5 query, so FTS5 stems as it does for DF_OF_TERM), and the distinct sets.
TERMS_HELD = """
WITH term(place, phrase) AS (SELECT key, value FROM json_each(:terms))
SELECT DISTINCT held FROM (
    SELECT sum(1 << term.place) AS held
    FROM term JOIN chunk_fts ON chunk_fts MATCH term.phrase
    GROUP BY chunk_fts.rowid
)
ORDER BY held
"""
# The sets are read from at most this many (term, chunk) rows, the rarest terms first: grouping
# costs ~1.3 us a row (12 common words on xarray's 13,218 chunks: 23,046 rows, 30 ms), and
# 99.7% of the development workspace's (question, shard) pairs stay under it. A term left out
# is in so many chunks of the shard that holding it says little.
HELD_ROWS = 10_000


class TermCounts(NamedTuple):
    """What a shard holds of the query's terms: counts are comparable across shards, scores
    are not."""

    df: dict[str, int]  # term -> chunks holding it
    held: tuple[tuple[str, ...], ...]  # the sets of terms some chunk holds together


def term_counts(engine: QueryEngine, query: str) -> TermCounts:
    """How many chunks hold each of the query's first DF_TERMS terms, and which of them some
    one chunk holds together (of the rarest terms, within HELD_ROWS)."""
    conn = engine.store.conn
    terms = query_terms(query)[:DF_TERMS]
    df = {t: conn.execute(DF_OF_TERM, (fts_query([t]),)).fetchone()[0] for t in terms}
    read, chosen = 0, []
    for term in sorted((t for t in terms if df[t]), key=lambda t: (df[t], terms.index(t))):
        if read + df[term] > HELD_ROWS:
            break
        read += df[term]
        chosen.append(term)
    chosen.sort(key=terms.index)
    phrases = json.dumps([fts_query([t]) for t in chosen])
    rows = conn.execute(TERMS_HELD, {"terms": phrases}).fetchall() if chosen else []
    held = tuple(tuple(t for i, t in enumerate(chosen) if bits >> i & 1) for (bits,) in rows)
    return TermCounts(df, held)


def ceiling(probe: ShardProbe, request: QueryRequest) -> float:
    """The most a chunk or file of the probed shard can score for this request, in the
    fusion's units: rank 1 in every channel that has candidates there, the largest standing-out
    bonus, file evidence (pix.retrieve.rank.ceiling), an issue report's outline bonus (pix.
    retrieve.outline), a test's lent score (pix.retrieve.tested) and the bonus of a file an
    issue report's title names (pix.retrieve.titled), and the vote of a message an issue
    report quotes (pix.retrieve.phrase.quoted_weight). Priors only shrink
    scores. A shard where the definition or phrase step lifts a chunk exceeds it: such a
    shard is always ranked (`lifts`)."""
    r = route(request.query, request.channels)
    weights = dict(r.weights)
    for channel in MEANING:  # a meaning channel with no vector there finds nothing
        if channel not in probe.meaning:
            weights[channel] = 0.0
    if not component.names(request.query):  # nor a component channel with no component
        weights[component.CHANNEL] = 0.0
    # An issue report's quoted messages add one vote, not a lift above everything.
    weights[phrase.CHANNEL] = phrase.quoted_weight(request.channels, r.shape, request.query)
    most = lift.unit(rank.ceiling(weights), request.fusion)
    # A file gains its outline bonus, then a test's score, the test's own outline bonus in it,
    # then a share of the first file's score (all of that) if the title names it.
    lent = tested.lend_weight(request.priors)
    outlined = outline.most_share(request.channels, r.shape, lent)
    titled_share = titled.most_share(request.channels, r.shape)
    return most * (1.0 + tested.most_share(request.priors) + outlined) * (1.0 + titled_share)


def to_rank(
    probes: dict[str, ShardProbe], factors: dict[str, float], order: list[str], breadth: int
) -> set[str]:
    """The `breadth` shards of largest factor (ties: the workspace's order), and every shard
    where a chunk is lifted above all scores."""
    place = {name: i for i, name in enumerate(order)}
    ranked = sorted(factors, key=lambda name: (-factors[name], place[name]))
    return set(ranked[:breadth]) | {name for name, p in probes.items() if p.lifts}
