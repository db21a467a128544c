"""`pix pack` against plain top-k chunk output at the same token budget, on the commitloc sets.

    python -m bench.pack_bench [--sets requests,click] [--budgets 2000,4000,8000] [--reuse]
                               [--sweep]

For each query (the query alone, as bench.quality asks it) and budget: does a gold file appear
in the packet? The baseline is what an agent gets from `pix query` (chunk mode, default
options) when it keeps the results in rank order while their rendered text fits the same
budget, counted with the same tokenizer. Also: mean tokens used, mean distinct files, the
share of packets with a span cut to fit, and the median time to build a packet (warm engine).

--sweep also runs the packet rule with other spread decays and low-score shares, to show how
the defaults in pix/output/packet.py were chosen.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench import corpora
from bench.quality import build
from pix.output import packet
from pix.output.render import from_response, render_result
from pix.output.tokens import Counter
from pix.pack import PackRequest, run_pack
from pix.query import QueryEngine, QueryRequest

SWEEP = [(0.5, 0.25), (0.7, 0.25), (0.85, 0.25), (1.0, 0.25), (0.7, 0.4), (0.7, 0.1)]


def top_k_files(engine: QueryEngine, query: str, budget: int, counter: Counter) -> tuple:
    """Files in plain `pix query` output cut at the budget: (paths, tokens used)."""
    response = engine.query(QueryRequest(query=query, top=100))
    used, paths = 0, []
    for i, result in enumerate(from_response(response)):
        cost = counter.text(render_result(result)) + (counter.newline if i else 0)
        if used + cost > budget:
            break
        used += cost
        paths.append(result.path)
    return paths, used


def run(dbs: dict[str, Path], budgets: list[int], rules: list[tuple[float, float]]) -> list:
    counter = Counter("tokens")
    rows = []
    for set_name, db in dbs.items():
        engine = QueryEngine(db=str(db), cwd=str(corpora.corpus(set_name)))
        qs = corpora.queries(set_name)
        for budget in budgets:
            base = [top_k_files(engine, q["query"], budget, counter) for q in qs]
            rows.append((set_name, budget, "top-k chunks (pix query)", _row(base, qs, cuts=[])))
            for decay, share in rules:
                packet.SPREAD_DECAY, packet.LOW_SCORE_SHARE = decay, share
                found, cuts, times = [], [], []
                for q in qs:
                    started = time.perf_counter()
                    r = run_pack(engine, PackRequest(query=q["query"], budget=budget))
                    times.append(time.perf_counter() - started)
                    assert r["budget"]["used"] <= budget
                    found.append(([s["path"] for s in r["spans"]], r["budget"]["used"]))
                    cuts.append(any(s["cut"] for s in r["spans"]))
                label = f"pix pack (decay {decay:g}, low {share:g})"
                rows.append((set_name, budget, label, _row(found, qs, cuts, times)))
        engine.close()
    return rows


def _row(found: list, qs: list[dict], cuts: list[bool], times: list[float] | None = None) -> dict:
    pairs = zip(found, qs, strict=True)
    gold = [any(p in q["gold_files"] for p in paths) for (paths, _), q in pairs]
    return {
        "gold file in output": statistics.fmean(gold),
        "tokens used": statistics.fmean(used for _, used in found),
        "files": statistics.fmean(len(set(paths)) for paths, _ in found),
        "cut": statistics.fmean(cuts) if cuts else None,
        "median ms": statistics.median(times) * 1000 if times else None,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="requests,click")
    parser.add_argument("--budgets", default="2000,4000,8000")
    parser.add_argument("--reuse", action="store_true", help="reuse the bench cache databases")
    parser.add_argument("--sweep", action="store_true", help="also run other packet rules")
    args = parser.parse_args(argv)
    budgets = [int(b) for b in args.budgets.split(",")]
    rules = [(packet.SPREAD_DECAY, packet.LOW_SCORE_SHARE)]
    if args.sweep:
        rules += [r for r in SWEEP if r != rules[0]]
    with tempfile.TemporaryDirectory() as tmp:
        folder = corpora.cache_dir() / "dbs" if args.reuse else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        dbs = {}
        for name in args.sets.split(","):
            db = folder / f"{name}.db"
            dbs[name] = db if args.reuse and db.exists() else build(name, folder)
        rows = run(dbs, budgets, rules)
    print(
        "| set | budget (tokens) | output | gold file in output | tokens used | files | cut "
        "| median ms |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for set_name, budget, label, m in rows:
        cut = "" if m["cut"] is None else f"{m['cut']:.2f}"
        ms = "" if m["median ms"] is None else f"{m['median ms']:.1f}"
        print(
            f"| {set_name} | {budget:,} | {label} | {m['gold file in output']:.3f} | "
            f"{m['tokens used']:,.0f} | {m['files']:.1f} | {cut} | {ms} |"
        )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
