"""How far each language set is from the mean, and how much of that is the set's questions.

    python -m bench.devbench --sets lang --reuse --static-only --mirrors DIR --dump FILE
    python -m bench.parent_bench --sets lang --mirrors DIR --wide --dump FILE   # or this
    python -m bench.spread_bench FILE [--system "pix static-only"] [--samples 2000]

Issue 11 asks that no language set be more than 0.05 nDCG@10 below pix's own mean. This reads
devbench's rankings (`--dump`: every system's top 10 for every query, each subject asked of
the pinned commit) or parent_bench's (each asked of its parent commit, with the log there) and
prints, per set:

- pix's nDCG@10 and its distance to the mean of the sets, with a 95% bootstrap interval of
  that distance (the set's queries drawn again with replacement, the other sets as they are):
  how much of the distance a sample of 56-100 subjects can carry by chance;
- the share of the set's queries that no other system finds (no gold file in the first 10 of
  any channel alone, plain BM25 or the peer's lexical side): subjects such as "Add or fix
  some comments." name nothing any retriever can match;
- pix's nDCG@10 on the others, the ones some other system finds, and that subset's distance
  to its own mean: what remains of the spread once every set is asked only what can be found.

A second table holds every system of the dump: its mean over the sets, their standard
deviation, the sets more than 0.05 below its own mean, and how alike its order of the sets is
to pix's (Spearman's rho over the per-set nDCG@10): whether the spread is pix's or the sets'.

The second measure selects queries by the rivals' answers, never by pix's own, so it cannot
flatter pix by leaving out what pix alone misses.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
from collections import defaultdict

from bench import devbench, devsets, metrics, parent_bench

PIX = parent_bench.PIX
# Systems that answer without pix's ranking stage, under devbench's and parent_bench's labels
# (each channel alone, plain BM25, the peer's lexical side): a query none of them finds in its
# first 10 is one no retriever here can match. A dump holds the ones its run asked.
OTHERS = frozenset(
    label
    for table in (devbench.FULL, devbench.STATIC, devbench.KEYWORD, parent_bench.SYSTEMS)
    for label, options in table.items()
    if len(options.get("channels", ())) == 1
) | {devbench.BASELINE, devbench.SEMBLE}
# devbench's commit-set ids: <set>-<number> (its questions are <repo>-q<number>, its other sets
# are no language set).
_COMMIT_ID = re.compile(r"(.+)-(\d+)")


def load(path: str) -> dict[str, dict[str, dict[str, tuple[list[str], list[str]]]]]:
    """set -> system -> query id -> (ranked, gold), the language commit sets' rows of a
    devbench or parent_bench --dump file (devbench's other sets are left out)."""
    languages = set(devsets.committed_sets("commitloc"))
    out: dict = defaultdict(lambda: defaultdict(dict))
    with open(path, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if "set" in row:  # parent_bench's: the set, and each subject's number in it
                name, qid = row["set"], row["subject"]
            else:
                m = _COMMIT_ID.fullmatch(row["id"])
                name, qid = (m.group(1) if m else None), row["id"]
            if name in languages:
                out[name][row["system"]][qid] = (row["ranked"], row["gold"])
    return out


def found_by_others(by_system: dict, qid: str) -> bool:
    for system in OTHERS:
        if qid in by_system.get(system, {}):
            ranked, gold = by_system[system][qid]
            if set(ranked[:10]) & set(gold):
                return True
    return False


def interval(scores: list[float], rest_mean: float, n_sets: int, samples: int, rng) -> tuple:
    """95% bootstrap interval of (set mean - mean of all sets), resampling this set only."""
    diffs = []
    for _ in range(samples):
        m = statistics.fmean(rng.choices(scores, k=len(scores)))
        diffs.append(m - (rest_mean * (n_sets - 1) + m) / n_sets)
    diffs.sort()
    return diffs[int(0.025 * samples)], diffs[max(int(0.975 * samples) - 1, 0)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dump")
    parser.add_argument("--system", default=PIX)
    parser.add_argument("--samples", type=int, default=2000)
    args = parser.parse_args(argv)
    if args.samples < 1:
        sys.exit("spread_bench: --samples must be 1 or more")
    data = load(args.dump)
    rng = random.Random(0)
    sets = sorted(n for n in data if args.system in data[n])
    if len(sets) < 2:
        sys.exit(f"spread_bench: {args.system!r} answers {len(sets)} language set(s) in "
                 f"{args.dump}; a spread needs two or more")  # fmt: skip
    scores = set_scores(data, sets, args.system)
    means = set_means(scores)
    found = {n: [q for q in scores[n] if found_by_others(data[n], q)] for n in sets}
    found_means = {n: statistics.fmean(scores[n][q] for q in found[n]) for n in sets if found[n]}
    mean_all = statistics.fmean(means.values())
    # None: the dump holds no other system (parent_bench without --wide)
    mean_found = statistics.fmean(found_means.values()) if found_means else None
    print(f"| set | queries | {args.system} nDCG@10 | distance to the mean (95% interval) "
          "| found by no other system | nDCG@10 on the rest | its distance |")  # fmt: skip
    print("|---|---:|---:|---|---:|---:|---:|")
    for n in sets:
        rest = (mean_all * len(sets) - means[n]) / (len(sets) - 1)
        low, high = interval(list(scores[n].values()), rest, len(sets), args.samples, rng)
        share = 1 - len(found[n]) / len(scores[n])
        fm = found_means.get(n)
        rest_cells = ["-", "-", "-"] if mean_found is None else [f"{share:.0%}", "-", "-"]
        if fm is not None and mean_found is not None:
            rest_cells[1:] = [f"{fm:.3f}", f"{fm - mean_found:+.3f}"]
        cells = [
            n,
            str(len(scores[n])),
            f"{means[n]:.3f}",
            f"{means[n] - mean_all:+.3f} ({low:+.3f} to {high:+.3f})",
            *rest_cells,
        ]
        print("| " + " | ".join(cells) + " |")
    shown = "-" if mean_found is None else f"{mean_found:.3f}"
    print(f"| **mean of {len(sets)} sets** | | {mean_all:.3f} | | | {shown} | |")
    print()
    print(systems_table(data, sets, args.system, means))


def set_scores(data: dict, sets: list[str], system: str) -> dict[str, dict]:
    """set -> query id -> the system's nDCG@10, for the sets the system answers."""
    return {
        n: {q: metrics.ndcg_at(r, g) for q, (r, g) in data[n][system].items()}
        for n in sets
        if system in data[n]
    }


def set_means(scores: dict[str, dict]) -> dict[str, float]:
    return {n: statistics.fmean(by_query.values()) for n, by_query in scores.items()}


def ranks(values: list[float]) -> list[float]:
    """Each value's rank (1 = smallest), ties sharing their mean rank."""
    order = sorted(range(len(values)), key=values.__getitem__)
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(a: list[float], b: list[float]) -> float | None:
    """Spearman's rho, or None where it has no value (fewer than two sets, or every set alike)."""
    try:
        return statistics.correlation(ranks(a), ranks(b))
    except statistics.StatisticsError:
        return None


def systems_table(data: dict, sets: list[str], reference: str, base: dict[str, float]) -> str:
    """Every system of the dump beside `reference`, whose per-set means are `base`."""
    systems = sorted({s for n in sets for s in data[n]}, key=lambda s: (s != reference, s))
    lines = [
        f"| system | mean nDCG@10 | sd over the sets | sets more than 0.05 below its mean "
        f"| Spearman's rho with {reference} |",
        "|---|---:|---:|---|---:|",
    ]
    for system in systems:
        means = base if system == reference else set_means(set_scores(data, sets, system))
        if len(means) != len(sets):
            continue  # not asked on every set
        mean = statistics.fmean(means.values())
        low = ", ".join(n for n in sets if means[n] < mean - 0.05) or "none"
        rho = spearman([base[n] for n in sets], [means[n] for n in sets])
        sd = statistics.pstdev(means.values())
        shown = "-" if rho is None else f"{rho:.2f}"
        lines.append(f"| {system} | {mean:.3f} | {sd:.3f} | {low} | {shown} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
