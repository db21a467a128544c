"""Warm query latency through `pix mcp` (the SDK's real stdio client) beside in-process latency.

    python -m bench.mcp_bench [--sets requests] [--modes chunk,file] [--reuse]

For each set, the corpus is indexed into a fresh database (pix.index.index_repository) unless
--reuse keeps it in the bench cache, then every development query (bench.corpora.queries) is
asked three ways, with the same request each time: mode, top 10 and maxCharacters 20,000 (the
MCP default budget, made explicit so every path does the same work):

- in-process: QueryEngine.query on an engine kept open (database and model loaded);
- MCP: `python -m pix.cli mcp --db DB --cwd CORPUS` started once by mcp.Client over stdio;
  the time of client.call_tool("query", ...) from the call to the parsed, schema-checked result
  (JSON-RPC both ways, argument validation, the worker-thread hop, the server's check for a
  changed work tree, and the client's validation of the result against the output schema);
- MCP --no-refresh: the same server without the changed-work-tree check.

Each path answers one warm-up query before timing, so model loading is never timed, and the
three paths take turns question by question (rotating which goes first), so a change in load
on a shared machine hits them alike. Prints one markdown table on stdout; load averages go to
stderr (timings are wall clock: compare rows of one run).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from bench import corpora
from pix.index import index_repository
from pix.mcp import DEFAULT_MAX_CHARACTERS
from pix.query import QueryEngine, QueryRequest

TOP = 10
WARM_UP = "warm up"


def build(name: str, folder: Path) -> Path:
    db = folder / f"{name}.db"
    report = index_repository(str(corpora.corpus(name)), str(db))
    print(f"indexed {name}: {report.files} files, {report.seconds}", file=sys.stderr)
    return db


def request(question: str, mode: str) -> dict:
    return {"query": question, "mode": mode, "top": TOP, "maxCharacters": DEFAULT_MAX_CHARACTERS}


PATHS = ("in-process (QueryEngine)", "MCP stdio", "MCP stdio --no-refresh")


def measure(name: str, db: Path, questions: list[str], mode: str) -> dict[str, list[float]]:
    """Milliseconds per question for each of PATHS. The three are interleaved question by
    question (in a rotating order), so a change in machine load hits them alike."""
    corpus = str(corpora.corpus(name))
    engine = QueryEngine(db=str(db), cwd=corpus)
    timings: dict[str, list[float]] = {label: [] for label in PATHS}

    def server(*flags: str) -> Client:
        return Client(
            StdioServerParameters(
                command=sys.executable,
                args=["-m", "pix.cli", "mcp", "--db", str(db), "--cwd", corpus, *flags],
                cwd=corpus,
            ),
            read_timeout_seconds=300,
        )

    async def main() -> None:
        async with server() as refreshing, server("--no-refresh") as plain:

            async def local(question: str) -> None:
                engine.query(QueryRequest.from_json(request(question, mode)))

            def remote(client: Client) -> Callable[[str], Awaitable[None]]:
                async def ask(question: str) -> None:
                    result = await client.call_tool("query", request(question, mode))
                    if result.is_error:
                        raise RuntimeError(f"{question!r}: {result.content[0].text}")

                return ask

            askers = dict(zip(PATHS, (local, remote(refreshing), remote(plain)), strict=True))
            for client in (refreshing, plain):
                await client.list_tools()  # the client caches output schemas from the listing
            for ask in askers.values():
                await ask(WARM_UP)  # model loading is never timed
            for i, question in enumerate(questions):
                order = list(PATHS[i % 3 :] + PATHS[: i % 3])
                for label in order:
                    t0 = time.perf_counter()
                    await askers[label](question)
                    timings[label].append((time.perf_counter() - t0) * 1000)

    try:
        anyio.run(main)
    finally:
        engine.close()
    return timings


def p95(xs: list[float]) -> float:
    """Nearest-rank 95th percentile."""
    ordered = sorted(xs)
    return ordered[max(math.ceil(0.95 * len(ordered)) - 1, 0)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default="requests")
    parser.add_argument("--modes", default="chunk,file")
    parser.add_argument(
        "--reuse", action="store_true", help="keep databases in the bench cache and reuse them"
    )
    args = parser.parse_args(argv)
    names = [s for s in args.sets.split(",") if s]
    modes = [m for m in args.modes.split(",") if m]
    rows = []
    with tempfile.TemporaryDirectory(prefix="pix-mcp-bench-") as tmp:
        folder = corpora.cache_dir() / "dbs" if args.reuse else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for name in names:
            db = folder / f"{name}.db"
            if not (args.reuse and db.exists()):
                db = build(name, folder)
            questions = [q["query"] for q in corpora.queries(name)]
            for mode in modes:
                print(f"{name} {mode}: load {os.getloadavg()}", file=sys.stderr)
                paths = measure(name, db, questions, mode)
                base = paths[PATHS[0]]
                for label, timings in paths.items():
                    added = statistics.median(timings) - statistics.median(base)
                    rows.append((name, mode, label, len(timings), timings, added))
        print(f"done: load {os.getloadavg()}", file=sys.stderr)
    print("| corpus | mode | path | queries | median ms | p95 ms | median added ms |")
    print("|---|---|---|---:|---:|---:|---:|")
    for name, mode, label, count, timings, added in rows:
        print(
            f"| {name} | {mode} | {label} | {count} | {statistics.median(timings):.1f} "
            f"| {p95(timings):.1f} | {added:+.1f} |"
        )


if __name__ == "__main__":
    os.environ.setdefault("PIX_BENCH", "1")
    main()
