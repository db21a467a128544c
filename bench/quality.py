"""Retrieval quality and query speed of pix on the commitloc development sets, in one run.

    python -m bench.quality [--sets requests,click] [--large] [--reuse]

Quality (file mode, top 10, the query alone, no body): recall@1/5/10, MRR@10 and nDCG@10 for
the fused default (RRF), DBSF, each channel alone, the default without path priors, and the
grep-style keyword baseline of ../shared/README.md, per set and over both sets together.
Chunk mode: the share of queries with a gold file among the top 5 chunks.

Speed: median and p95 in-process latency of a warm query (query embedding included, database
and model already open), and the median wall time of the whole `pix query` process.
Each corpus is indexed into a fresh database in a temp folder unless --reuse keeps the
databases in the bench cache (faster to iterate; stale if the chunker changed).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import baselines, corpora, metrics
from pix.index import index_repository
from pix.query import QueryEngine, QueryRequest

CONFIGS: dict[str, dict] = {
    "pix default (RRF)": {},
    "pix DBSF": {"fusion": "dbsf"},
    "dense alone": {"channels": ["dense"]},
    "bm25 alone": {"channels": ["bm25"]},
    "ident alone": {"channels": ["ident"]},
    "path alone": {"channels": ["path"]},
    "pix without priors": {"priors": False},
}
COLUMNS = ["recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10"]
CLI_RUNS = 10


def build(name: str, folder: Path) -> Path:
    db = folder / f"{name}.db"
    report = index_repository(str(corpora.corpus(name)), str(db))
    print(
        f"indexed {name}: {report.files} files, {report.chunks_added} chunks, {report.seconds}",
        file=sys.stderr,
    )
    return db


def rank_files(engine: QueryEngine, query: str, top: int = 10, **options) -> list[str]:
    request = QueryRequest(query=query, mode="file", top=top, no_content=True, **options)
    return [r["file"] for r in engine.query(request)["results"]]


# How many chunks a chunk-mode answer is read to: twice the files the metrics read (10).
CHUNK_DEPTH = 20


def rank_chunk_files(engine: QueryEngine, query: str, **options) -> list[str]:
    """The files of a chunk-mode answer (the CLI's and MCP's default mode) in the order of
    their first chunk among the first CHUNK_DEPTH: which files an agent reading it meets first."""
    request = QueryRequest(query=query, top=CHUNK_DEPTH, no_content=True, **options)
    return list(dict.fromkeys(r["path"] for r in engine.query(request)["results"]))


def quality(dbs: dict[str, Path]) -> list[tuple[str, str, dict[str, float]]]:
    rows = []
    per_config: dict[str, list] = {name: [] for name in [*CONFIGS, "grep baseline"]}
    chunk_hits: list[float] = []
    for set_name, db in dbs.items():
        engine = QueryEngine(db=str(db), cwd=str(corpora.corpus(set_name)))
        qs = corpora.queries(set_name)
        for label, options in CONFIGS.items():
            runs = [(rank_files(engine, q["query"], **options), q["gold_files"]) for q in qs]
            per_config[label].extend(runs)
            rows.append((set_name, label, metrics.evaluate(runs)))
        grep = baselines.GrepIndex(corpora.corpus(set_name))
        runs = [(grep.rank(q["query"]), q["gold_files"]) for q in qs]
        per_config["grep baseline"].extend(runs)
        rows.append((set_name, "grep baseline", metrics.evaluate(runs)))
        hits = []
        for q in qs:
            response = engine.query(QueryRequest(query=q["query"], top=5, no_content=True))
            hits.append(float(any(r["path"] in q["gold_files"] for r in response["results"])))
        chunk_hits.extend(hits)
        rows.append(
            (
                set_name,
                "chunk mode: gold file in top 5 chunks",
                {"recall@5": statistics.fmean(hits)},
            )
        )
        engine.close()
    if len(dbs) > 1:
        for label, runs in per_config.items():
            rows.append(("both", label, metrics.evaluate(runs)))
        rows.append(
            (
                "both",
                "chunk mode: gold file in top 5 chunks",
                {"recall@5": statistics.fmean(chunk_hits)},
            )
        )
    return rows


def latency(name: str, db: Path, questions: list[str]) -> dict[str, float]:
    engine = QueryEngine(db=str(db), cwd=str(corpora.corpus(name)))
    engine.query(QueryRequest(query="warm up"))
    timings = {"chunk": [], "file": []}
    for mode in timings:
        for question in questions:
            t0 = time.perf_counter()
            engine.query(QueryRequest(query=question, mode=mode, top=10))
            timings[mode].append((time.perf_counter() - t0) * 1000)
    engine.close()
    cli = []
    for question in questions[:CLI_RUNS]:
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "pix.cli", "query", question, "--db", str(db), "--top", "10"],
            cwd=corpora.corpus(name),
            capture_output=True,
            check=True,
        )
        cli.append((time.perf_counter() - t0) * 1000)

    def p95(xs: list[float]) -> float:
        return statistics.quantiles(xs, n=20)[-1] if len(xs) > 1 else xs[0]

    return {
        "queries": len(questions),
        "chunk median ms": statistics.median(timings["chunk"]),
        "chunk p95 ms": p95(timings["chunk"]),
        "file median ms": statistics.median(timings["file"]),
        "file p95 ms": p95(timings["file"]),
        "CLI median ms": statistics.median(cli),
    }


ISSUE_CHARS = 2000


def issue_texts(limit: int) -> list[str]:
    """The first `limit` issue reports of ../shared/eval/issueloc at least ISSUE_CHARS long, cut
    to ISSUE_CHARS: what an agent pastes when it starts on a bug (the repository they were
    written for does not matter for timing)."""
    path = corpora.shared_dir() / "eval" / "issueloc" / "queries.jsonl"
    with path.open(encoding="utf-8") as fh:
        texts = [json.loads(line)["query"] for line in fh if line.strip()]
    return [t[:ISSUE_CHARS] for t in texts if len(t) >= ISSUE_CHARS][:limit]


def issue_latency(name: str, db: Path, texts: list[str]) -> dict[str, float]:
    """Warm file-mode latency of issue-length queries (the issue route: evidence, windows
    embedded one by one, selected BM25 terms)."""
    engine = QueryEngine(db=str(db), cwd=str(corpora.corpus(name)))
    engine.query(QueryRequest(query=texts[0], mode="file"))
    ms = []
    for text in texts:
        t0 = time.perf_counter()
        engine.query(QueryRequest(query=text, mode="file", top=10))
        ms.append((time.perf_counter() - t0) * 1000)
    engine.close()
    return {
        "issues": len(ms),
        "median ms": statistics.median(ms),
        "p90 ms": statistics.quantiles(ms, n=10)[-1] if len(ms) > 1 else ms[0],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default="requests,click")
    parser.add_argument(
        "--large",
        action="store_true",
        help="also measure latency on the large corpus (indexes it: minutes)",
    )
    parser.add_argument(
        "--reuse", action="store_true", help="keep databases in the bench cache and reuse them"
    )
    parser.add_argument("--speed-only", action="store_true", help="skip the quality table")
    parser.add_argument(
        "--issues",
        type=int,
        default=0,
        help=f"also time N issue reports cut to {ISSUE_CHARS:,} characters on each set",
    )
    args = parser.parse_args(argv)
    names = [s for s in args.sets.split(",") if s]
    with tempfile.TemporaryDirectory(prefix="pix-quality-") as tmp:
        folder = corpora.cache_dir() / "dbs" if args.reuse else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        dbs = {
            n: (
                folder / f"{n}.db"
                if args.reuse and (folder / f"{n}.db").exists()
                else build(n, folder)
            )
            for n in names
        }
        if not args.speed_only:
            rows = quality(dbs)
            print("| set | system | " + " | ".join(COLUMNS) + " |")
            print("|---|---|" + "---:|" * len(COLUMNS))
            for set_name, label, m in rows:
                cells = [f"{m[c]:.3f}" if c in m else "" for c in COLUMNS]
                print(f"| {set_name} | {label} | " + " | ".join(cells) + " |")
        speed_names = names + (["large"] if args.large else [])
        print()
        speed_cols = [
            "queries",
            "chunk median ms",
            "chunk p95 ms",
            "file median ms",
            "file p95 ms",
            "CLI median ms",
        ]
        print("| corpus | " + " | ".join(speed_cols) + " |")
        print("|---|" + "---:|" * len(speed_cols))
        for name in speed_names:
            if name not in dbs:
                db = folder / f"{name}.db"
                dbs[name] = db if args.reuse and db.exists() else build(name, folder)
            questions = (
                [q["query"] for q in corpora.queries(name)]
                if name != "large"
                else [q["query"] for q in corpora.queries("requests") + corpora.queries("click")]
            )
            s = latency(name, dbs[name], questions)
            print(
                f"| {name} | "
                + " | ".join(f"{s[c]:.0f}" if c == "queries" else f"{s[c]:.1f}" for c in speed_cols)
                + " |"
            )
        if args.issues:
            texts = issue_texts(args.issues)
            print(f"\nwarm file-mode latency of {ISSUE_CHARS:,}-character issue reports\n")
            print("| corpus | issues | median ms | p90 ms |\n|---|---:|---:|---:|")
            for name in speed_names:
                s = issue_latency(name, dbs[name], texts)
                print(f"| {name} | {s['issues']} | {s['median ms']:.1f} | {s['p90 ms']:.1f} |")


if __name__ == "__main__":
    os.environ.setdefault("PIX_BENCH", "1")
    main()
