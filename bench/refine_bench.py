"""What refinement costs a question: static-only databases asked with and without the
transformer reading the best candidates on the spot (pix/retrieve/refine.py).

    python -m bench.refine_bench [--sets tmux,oban,shared-requests,cosqa-dev] [--queries 30]

For each static-only development database devbench cached (`--reuse --static-only` builds
them; never written here), the first N questions of its set, file mode, top 10, one engine per
set. Per set: chunks the transformer read a question (median), and median ms of a question
without refinement, with it and nothing kept (what a one-shot `pix query` pays, less loading
the model, which is done once per set), and asked again (what a server pays: the vectors are
kept). The engine is warm (models loaded, vector matrices in memory) before any timing.
Quality is devbench's: `python -m bench.devbench --static-only` prints "pix static-only"
(refined) beside "pix static-only without refinement".
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from bench import devbench, devcorpora, devsets, quality
from pix.query import QueryEngine
from pix.retrieve import knn

DEFAULT_SETS = "tmux,oban,scalafmt,shared-requests,shared-click,cosqa-dev"


def questions(name: str) -> tuple[str, list[dict]]:
    """The corpus root and the questions of one development set."""
    if name.startswith("shared-"):
        from bench import corpora

        return str(corpora.corpus(name[7:])), corpora.queries(name[7:])
    if name == "cosqa-dev":
        root, qs = devbench.cosqa_corpus()
        return str(root), qs
    meta, qs = devsets.load_set(name)
    return str(devcorpora.snapshot(meta["repo"], meta["pinned_commit"])), qs


def timed(engine: QueryEngine, query: str) -> float:
    started = time.perf_counter()
    quality.rank_files(engine, query)
    return (time.perf_counter() - started) * 1000


def measure(name: str, limit: int) -> dict:
    root, qs = questions(name)
    qs = qs[:limit]
    db = devcorpora.database(name, "-static")
    if not db.exists():
        raise SystemExit(f"{db} is missing: run `python -m bench.devbench --static-only`")
    engine = QueryEngine(db=str(db), cwd=root)
    top = engine.refine_top
    try:
        # The models load, and the engine gets warm (its vector matrices in memory after
        # knn.WARM_AFTER scans), before anything is timed: both modes are timed warm.
        engine.refine_top = 0
        for q in (qs * (knn.WARM_AFTER + 1))[: knn.WARM_AFTER + 1]:
            quality.rank_files(engine, q["query"])
        plain = [timed(engine, q["query"]) for q in qs]
        engine.refine_top = top
        timed(engine, qs[0]["query"])  # the transformer loads
        cold, warm, read = [], [], []
        for q in qs:
            engine.refined.clear()  # nothing kept: what a one-shot query starts from
            cold.append(timed(engine, q["query"]))
            read.append(len(engine.refined))
            warm.append(timed(engine, q["query"]))
    finally:
        engine.refine_top = top
        engine.close()
    return {
        "set": name,
        "questions": len(qs),
        "read": statistics.median(read),
        "plain": statistics.median(plain),
        "cold": statistics.median(cold),
        "warm": statistics.median(warm),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default=DEFAULT_SETS)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--mirrors", help="folder of <owner>+<name>/repo bare git dirs")
    args = parser.parse_args(argv)
    devcorpora.set_mirrors(args.mirrors)
    rows = []
    for name in args.sets.split(","):
        print(f"{name}...", file=sys.stderr, flush=True)
        rows.append(measure(name, args.queries))
    print(
        "| set | questions | chunks read (median) | ms without | ms refined, new "
        "| ms refined, kept |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['set']} | {r['questions']} | {r['read']:.0f} | {r['plain']:.1f} "
            f"| {r['cold']:.1f} | {r['warm']:.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
