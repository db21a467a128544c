"""Where a chunk defines the name asked for: the definition step's `definitions` on the
developers' symbol lookups, and what placing them costs a query.

    python -m bench.define_bench [--static-only] [--mirrors DIR] [--runs 3]

The 160 symbol lookups of bench/devsets/questions, each on its repository's devbench database
(bench.devcorpora's cache, built by `bench.devbench --sets questions --reuse` with the same
options; never built here), chunk mode, top 10. Per repository: lookups, how many first
results the step lifted, how many of those it placed (`definitions` present), how many placed
lines are below the chunk's first line (the citation the field corrects: a comment or
decorator above the name, or a neighbour's definition first), how many of the placed
chunks are named for another definition or none (merged small neighbours), and how many
placed lines hold the name as a whole word (a check of the parse: every one should; it
cannot tell a definition from a use on the same line). Then the median ms
of a whole warm `QueryEngine.query` with and without placing, taken in turns `--runs`
times each.
Progress on stderr, tables on stdout.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time

from bench import devcorpora, devsets
from bench.devbench import Table
from pix.query import QueryEngine, QueryRequest
from pix.retrieve import define

COLUMNS = ["lookups", "lifted", "placed", "below first line", "named otherwise", "line has name"]


def ask(engine: QueryEngine, query: str) -> dict:
    return engine.query(QueryRequest(query, top=10, explain=True))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--static-only", action="store_true")
    parser.add_argument("--mirrors")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    devcorpora.set_mirrors(args.mirrors)
    variant = "-static" if args.static_only else ""
    _, qs = devsets.load_set("questions")
    lookups = [q for q in qs if q["kind"] == "symbol"]
    rows, with_ms, without_ms = [], [], []
    place = define.placed
    for name in dict.fromkeys(q["set"] for q in lookups):
        db = devcorpora.database(name, variant)
        if not db.exists():
            print(f"  {name}: no database at {db}; run bench.devbench --reuse", file=sys.stderr)
            continue
        set_meta, _ = devsets.load_set(name)
        root = devcorpora.snapshot(set_meta["repo"], set_meta["pinned_commit"])
        engine = QueryEngine(db=str(db), cwd=str(root))
        part = [q for q in lookups if q["set"] == name]
        counts = dict.fromkeys(COLUMNS, 0)
        counts["lookups"] = len(part)
        ask(engine, part[0]["query"])  # warm: models and matrices loaded
        for q in part:
            top = (ask(engine, q["query"])["results"] or [{}])[0]
            lifted = "definition" in top.get("explain", {}).get("channels", {})
            counts["lifted"] += lifted
            placed = top.get("definitions") or []
            if not placed:
                continue
            counts["placed"] += 1
            lines = top["text"].split("\n")
            first = placed[0]
            counts["below first line"] += first["line"] > top["startLine"]
            names = {d["name"] for d in placed}
            own = (top.get("symbol") or "").rsplit(".", 1)[-1]
            counts["named otherwise"] += own not in names
            counts["line has name"] += all(
                re.search(
                    rf"(?<![\w$]){re.escape(d['name'])}(?![\w$])",
                    lines[d["line"] - top["startLine"]],
                )
                for d in placed
            )
            for _ in range(args.runs):
                for on in (True, False):
                    define.placed = place if on else (lambda hits, engine: hits)
                    began = time.perf_counter()
                    ask(engine, q["query"])
                    (with_ms if on else without_ms).append(1000 * (time.perf_counter() - began))
            define.placed = place
        engine.close()
        rows.append((name, counts))
        print(f"  {name}: {counts}", file=sys.stderr, flush=True)
    total = {c: sum(r[c] for _, r in rows) for c in COLUMNS}
    rows.append(("all", total))
    tier = "static-only" if args.static_only else "transformer"
    title = f"definitions on the developers' symbol lookups ({tier})"
    print(Table(title, COLUMNS, rows, first="repository").render())
    if with_ms:
        print(
            f"\nwarm query of a placed lookup, median of {len(with_ms)}: "
            f"{statistics.median(with_ms):.1f} ms placing, "
            f"{statistics.median(without_ms):.1f} ms without"
        )


if __name__ == "__main__":
    main()
