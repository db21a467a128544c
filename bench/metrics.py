"""File-level retrieval metrics, as ../shared/README.md (eval/commitloc) defines them.

Every function takes one query's ranked list of paths and its gold paths. The ranked list is
reduced to unique files first (first occurrence wins), because a chunk-level ranking repeats a
file and the metrics are defined over files.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

DEFAULT_KS: tuple[int, ...] = (1, 5, 10)


def unique(ranked: Iterable[str]) -> list[str]:
    """The ranking with repeats removed, order kept."""
    return list(dict.fromkeys(ranked))


def recall_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Share of the gold files found in the top k."""
    gold_set = set(gold)
    if not gold_set:
        raise ValueError("a query needs at least one gold file")
    return len(gold_set.intersection(unique(ranked)[:k])) / len(gold_set)


def all_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1 if every gold file is within the top k, else 0 (the Acc@k of SWE-bench localization)."""
    gold_set = set(gold)
    if not gold_set:
        raise ValueError("a query needs at least one gold file")
    return float(gold_set <= set(unique(ranked)[:k]))


def mrr_at(ranked: Sequence[str], gold: Iterable[str], k: int = 10) -> float:
    """1/rank of the first gold file within the top k, else 0."""
    gold_set = set(gold)
    for rank, path in enumerate(unique(ranked)[:k], start=1):
        if path in gold_set:
            return 1.0 / rank
    return 0.0


def ndcg_at(ranked: Sequence[str], gold: Iterable[str], k: int = 10) -> float:
    """nDCG with binary gains; the ideal ranking puts min(len(gold), k) gold files first."""
    gold_set = set(gold)
    if not gold_set:
        raise ValueError("a query needs at least one gold file")
    dcg = sum(
        1.0 / math.log2(rank + 1)
        for rank, path in enumerate(unique(ranked)[:k], start=1)
        if path in gold_set
    )
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(gold_set), k) + 1))
    return dcg / ideal


def score(
    ranked: Sequence[str],
    gold: Iterable[str],
    ks: Sequence[int] = DEFAULT_KS,
    acc_ks: Sequence[int] = (),
) -> dict[str, float]:
    """Every metric of one query: recall@k for each k, acc@k for each of acc_ks, MRR@10 and
    nDCG@10."""
    gold_list = list(gold)
    files = unique(ranked)
    out = {f"recall@{k}": recall_at(files, gold_list, k) for k in ks}
    out.update({f"acc@{k}": all_at(files, gold_list, k) for k in acc_ks})
    out["mrr@10"] = mrr_at(files, gold_list, 10)
    out["ndcg@10"] = ndcg_at(files, gold_list, 10)
    return out


def mean(scores: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """Each metric averaged over queries (every query counts once, whatever its gold size)."""
    rows = list(scores)
    if not rows:
        return {}
    keys = list(rows[0])
    return {key: sum(row[key] for row in rows) / len(rows) for key in keys}


def evaluate(
    runs: Iterable[tuple[Sequence[str], Iterable[str]]],
    ks: Sequence[int] = DEFAULT_KS,
    acc_ks: Sequence[int] = (),
) -> dict[str, float]:
    """Mean metrics over (ranked, gold) pairs, one pair per query."""
    return mean(score(ranked, gold, ks, acc_ks) for ranked, gold in runs)
