"""How far each language set is from the mean, and how much of that is the set's questions.

    python -m bench.devbench --sets lang --reuse --static-only --mirrors DIR --dump FILE
    python -m bench.parent_bench --sets lang --mirrors DIR --wide --dump FILE   # or this
    python -m bench.spread_bench FILE [FILE ...] [--system "pix static-only"] [--samples 2000]

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

Several dumps are read as one (the 14 language sets' and the second sets', `--sets pairs`, run
apart). Where a language has more than one set, two more tables follow: the first two again by
language (a language's figure is the mean of its sets, each set weighing the same; its interval
draws every one of its sets again), so a language is judged on more than one project's commit
style.
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


# The language commit sets: devbench's 14, the second repository of twelve of their
# languages, and the commitloc-more sets (the second and third of TypeScript and Rust; C++).
LANGUAGE_KINDS = ("commitloc", "commitloc-pair", "commitloc-more")


def load(*paths: str) -> dict[str, dict[str, dict[str, tuple[list[str], list[str]]]]]:
    """set -> system -> query id -> (ranked, gold), the language commit sets' rows of devbench
    or parent_bench --dump files (devbench's other sets are left out)."""
    languages = {n for kind in LANGUAGE_KINDS for n in devsets.committed_sets(kind)}
    out: dict = defaultdict(lambda: defaultdict(dict))
    for path in paths:
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


def language_of(sets: list[str]) -> dict[str, list[str]]:
    """language -> its sets, as each set's meta.json names it."""
    out: dict[str, list[str]] = defaultdict(list)
    for name in sets:
        out[devsets.load_set(name)[0]["language"]].append(name)
    return dict(sorted(out.items()))


def found_by_others(by_system: dict, qid: str) -> bool:
    for system in OTHERS:
        if qid in by_system.get(system, {}):
            ranked, gold = by_system[system][qid]
            if set(ranked[:10]) & set(gold):
                return True
    return False


def interval(
    groups: list[list[float]], rest_mean: float, n_units: int, samples: int, rng
) -> tuple[float, float]:
    """95% bootstrap interval of (a unit's mean - the mean of all units), where the unit is a
    set (one group of scores) or a language (one group a set, each weighing the same), every
    group of this unit drawn again and the other units as they are."""
    diffs = []
    for _ in range(samples):
        m = statistics.fmean(statistics.fmean(rng.choices(g, k=len(g))) for g in groups)
        diffs.append(m - (rest_mean * (n_units - 1) + m) / n_units)
    diffs.sort()
    return diffs[int(0.025 * samples)], diffs[max(int(0.975 * samples) - 1, 0)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dump", nargs="+")
    parser.add_argument("--system", default=PIX)
    parser.add_argument("--samples", type=int, default=2000)
    args = parser.parse_args(argv)
    if args.samples < 1:
        sys.exit("spread_bench: --samples must be 1 or more")
    data = load(*args.dump)
    rng = random.Random(0)
    sets = sorted(n for n in data if args.system in data[n])
    if len(sets) < 2:
        sys.exit(f"spread_bench: {args.system!r} answers {len(sets)} language set(s) in "
                 f"{' '.join(args.dump)}; a spread needs two or more")  # fmt: skip
    scores = set_scores(data, sets, args.system)
    # Only for the sets whose dump holds another system (parent_bench without --wide has none).
    found = {
        n: [q for q in scores[n] if found_by_others(data[n], q)]
        for n in sets
        if OTHERS & set(data[n])
    }
    units: list[dict[str, list[str]]] = [{n: [n] for n in sets}]
    languages = language_of(sets)
    if 2 <= len(languages) < len(sets):
        units.append({f"{lang} ({', '.join(members)})": members for lang, members in
                      languages.items()})  # fmt: skip
    for i, unit in enumerate(units):
        kind = "set" if i == 0 else "language"
        print(spread_table(kind, unit, scores, found, args.system, args.samples, rng))
        print()
        print(systems_table(data, unit, args.system, unit_means(unit, set_means(scores))))
        if i + 1 < len(units):
            print()


def spread_table(
    kind: str,
    units: dict[str, list[str]],
    scores: dict,
    found: dict,
    system: str,
    samples: int,
    rng: random.Random,
) -> str:
    """Each unit (a set, or a language's sets) of `system`: its nDCG@10, its distance to the
    mean of the units with a bootstrap interval, and the same on the queries some other system
    finds (`found`, for the sets whose dump holds another system; a unit's share of queries
    pooled over its sets, its nDCG@10 on the rest the mean of its sets', as everywhere else)."""
    means = unit_means(units, set_means(scores))
    found_sets = {n: statistics.fmean(scores[n][q] for q in qs) for n, qs in found.items() if qs}
    found_means = {
        u: statistics.fmean(found_sets[n] for n in members)
        for u, members in units.items()
        if all(n in found_sets for n in members)
    }
    mean_all = statistics.fmean(means.values())
    # None: the dump holds no other system (parent_bench without --wide)
    mean_found = statistics.fmean(found_means.values()) if found_means else None
    lines = [
        f"| {kind} | queries | {system} nDCG@10 | distance to the mean (95% interval) "
        "| found by no other system | nDCG@10 on the rest | its distance |",
        "|---|---:|---:|---|---:|---:|---:|",
    ]
    for u, members in units.items():
        rest = (mean_all * len(units) - means[u]) / (len(units) - 1)
        groups = [list(scores[n].values()) for n in members]
        low, high = interval(groups, rest, len(units), samples, rng)
        asked = sum(len(scores[n]) for n in members)
        rest_cells = ["-", "-", "-"]
        if mean_found is not None and all(n in found for n in members):
            rest_cells[0] = f"{1 - sum(len(found[n]) for n in members) / asked:.0%}"
        fm = found_means.get(u)
        if fm is not None and mean_found is not None:
            rest_cells[1:] = [f"{fm:.3f}", f"{fm - mean_found:+.3f}"]
        cells = [
            u,
            str(asked),
            f"{means[u]:.3f}",
            f"{means[u] - mean_all:+.3f} ({low:+.3f} to {high:+.3f})",
            *rest_cells,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    shown = "-" if mean_found is None else f"{mean_found:.3f}"
    noun = "sets" if kind == "set" else "languages"
    lines.append(f"| **mean of {len(units)} {noun}** | | {mean_all:.3f} | | | {shown} | |")
    return "\n".join(lines)


def unit_means(units: dict[str, list[str]], means: dict[str, float]) -> dict[str, float]:
    """Each unit's mean of its sets' means, for the units whose every set has one."""
    return {
        u: statistics.fmean(means[n] for n in members)
        for u, members in units.items()
        if all(n in means for n in members)
    }


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


def systems_table(
    data: dict, units: dict[str, list[str]], reference: str, base: dict[str, float]
) -> str:
    """Every system of the dump beside `reference`, whose per-unit means are `base`."""
    sets = [n for members in units.values() for n in members]
    systems = sorted({s for n in sets for s in data[n]}, key=lambda s: (s != reference, s))
    noun = "sets" if all(len(m) == 1 for m in units.values()) else "languages"
    lines = [
        f"| system | mean nDCG@10 | sd over the {noun} | {noun} more than 0.05 below its mean "
        f"| Spearman's rho with {reference} |",
        "|---|---:|---:|---|---:|",
    ]
    for system in systems:
        if system == reference:
            means = base
        else:
            means = unit_means(units, set_means(set_scores(data, sets, system)))
        if len(means) != len(units):
            continue  # not asked on every set
        mean = statistics.fmean(means.values())
        low = ", ".join(u.split(" (")[0] for u in units if means[u] < mean - 0.05) or "none"
        rho = spearman([base[u] for u in units], [means[u] for u in units])
        sd = statistics.pstdev(means.values())
        shown = "-" if rho is None else f"{rho:.2f}"
        lines.append(f"| {system} | {mean:.3f} | {sd:.3f} | {low} | {shown} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
