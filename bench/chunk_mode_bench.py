"""Chunk mode, as shipped against each chunk at its own score, on every development set.

    python -m bench.chunk_mode_bench [--sets lang,shared,questions,issueloc] [--static-only]
                                     [--mirrors DIR]

Chunk mode (the CLI's and MCP's default) scores each file's strongest chunk as its file: the
file's evidence and the outline, tested-file and titled-file steps (pix/retrieve/rank.py
`carried`). The other order is what it answered before: every chunk at its own score, the
steps nowhere. Both orders come from one retrieval per query, so the two columns differ only
by that. Per set, of the first CHUNKS chunks: the files in the order of their first chunk,
scored as file mode is (nDCG@10, MRR@10; issueloc: Acc@1 and Acc@5 too, every gold file
among the first k files), `in 5`, the share of queries with a gold file among the first five
chunks, and `files/10`, the distinct files among the first ten; and the milliseconds each
order takes after retrieval (the file steps' reads included). Databases are devbench's
(`python -m bench.devbench --sets ... --reuse [--static-only] --build-only` builds them);
a set whose database is missing is skipped with a note on stderr. Progress on stderr, the
table on stdout.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Iterator
from types import SimpleNamespace

from bench import devbench, devcorpora, devsets, metrics
from bench.devbench import Table
from pix.query import QueryEngine, ranked_list, retrieve
from pix.request import QueryRequest
from pix.retrieve.rank import arrange

CHUNKS = 20  # the chunks read per query: twice the files the metrics read
ORDERS = ("own score", "shipped")


# Milliseconds each order took after retrieval, per query: what ranking the files for chunk
# mode adds to an answer (the file steps' reads included).
TIMES: dict[str, list[float]] = {order: [] for order in ORDERS}


def orders(engine: QueryEngine, query: str, at: str | None) -> dict[str, list[str]]:
    """The paths of the first CHUNKS chunks, each chunk at its own score and as shipped."""
    request = QueryRequest(query=query, top=CHUNKS, no_content=True, at=at)
    with engine.store.read():
        found = retrieve(engine, request, [])
        start = time.perf_counter()
        shipped = ranked_list(engine, request, found)
        TIMES["shipped"].append((time.perf_counter() - start) * 1000)
    start = time.perf_counter()
    own = arrange(found.hits, False)
    TIMES["own score"].append((time.perf_counter() - start) * 1000)
    return {
        "own score": [h.path for h in own[:CHUNKS]],
        "shipped": [h.path for h in shipped[:CHUNKS]],
    }


def score(runs: list[tuple[list[str], list[str]]], issues: bool) -> dict[str, float]:
    """Files by first chunk scored as file mode is, and the chunk-level shares."""
    files = [(list(dict.fromkeys(paths)), gold) for paths, gold in runs]
    m = metrics.evaluate(files, ks=(10,), acc_ks=(1, 5) if issues else ())
    m["in 5"] = statistics.fmean(float(any(p in gold for p in paths[:5])) for paths, gold in runs)
    m["files/10"] = statistics.fmean(len(set(paths[:10])) for paths, _ in runs)
    return m


def commit_sets(names: list[str], variant: str) -> Iterator[tuple[str, list[dict], QueryEngine]]:
    """(set, queries, engine) of each commit set and of each repository of the questions."""
    run = SimpleNamespace(embed=False, issueloc_embed=())
    for name in names:
        if name == "questions":
            qs = devsets.load_set("questions")[1]
            groups = {q["set"]: [x for x in qs if x["set"] == q["set"]] for q in qs}
        elif name in ("requests", "click"):
            groups = {name: devbench.corpora.queries(name)}
        else:
            groups = {name: devsets.load_set(name)[1]}
        for group, qs in groups.items():
            label, root, _, _ = devbench.set_corpus(group, run)
            db = devcorpora.database(label, variant)
            if not db.exists():
                print(f"  {group}: no database at {db}; run bench.devbench --reuse "
                      "--build-only first", file=sys.stderr)  # fmt: skip
                continue
            yield (
                (name if name == "questions" else group),
                qs,
                QueryEngine(db=str(db), cwd=str(root)),
            )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default="lang,shared,questions,issueloc")
    parser.add_argument("--static-only", action="store_true")
    parser.add_argument("--mirrors")
    args = parser.parse_args(argv)
    devcorpora.set_mirrors(args.mirrors)
    variant = "-static" if args.static_only else ""
    names = devbench.expand(args.sets)
    issue_names = [n.split(":", 1)[1] for n in names if n.startswith("issueloc:")]
    commit_names = [n for n in names if not n.startswith("issueloc:")]
    runs: dict[str, dict[str, list]] = {}
    for name, qs, engine in commit_sets(commit_names, variant):
        for q in qs:
            for label, paths in orders(engine, q["query"], None).items():
                runs.setdefault(name, {}).setdefault(label, []).append((paths, q["gold_files"]))
        engine.close()
        print(f"  {name}: {len(qs)} queries", file=sys.stderr, flush=True)
    for short in issue_names:
        db = devcorpora.database(f"issueloc-{short}", variant)
        if not db.exists():
            print(f"  issueloc {short}: no database at {db}", file=sys.stderr)
            continue
        root, qs, at = devbench.issueloc_set(short)
        engine = QueryEngine(db=str(db), cwd=str(root))
        for q in qs:
            for label, paths in orders(engine, q["query"], at[q["base_commit"]]).items():
                runs.setdefault("issueloc", {}).setdefault(label, []).append(
                    (paths, q["gold_files"])
                )
        engine.close()
        print(f"  issueloc {short}: {len(qs)} reports", file=sys.stderr, flush=True)
    columns = [f"{o} {c}" for c in ("ndcg@10", "mrr@10", "in 5", "files/10") for o in ORDERS]
    table = Table(f"chunk mode, first {CHUNKS} chunks ({variant or 'full'} databases)", columns)
    table.first = "set"
    per_set: dict[str, dict[str, dict]] = {}
    for name, by_order in runs.items():
        per_set[name] = {o: score(by_order[o], name == "issueloc") for o in ORDERS}
        cells = {f"{o} {c}": per_set[name][o][c] for o in ORDERS for c in per_set[name][o]}
        table.rows.append((name, cells))
    commits = [n for n in per_set if n not in ("questions", "issueloc")]
    if commits:
        mean = {
            f"{o} {c}": statistics.fmean(per_set[n][o][c] for n in commits)
            for o in ORDERS
            for c in ("ndcg@10", "mrr@10", "in 5", "files/10")
        }
        table.rows.append((f"mean of the {len(commits)} commit sets", mean))
    if "issueloc" in per_set:
        issue = per_set["issueloc"]
        table.notes.append(
            "issueloc Acc@1 / Acc@5 of the files by first chunk: "
            + ", ".join(f"{o} {issue[o]['acc@1']:.3f} / {issue[o]['acc@5']:.3f}" for o in ORDERS)
        )
    table.notes.append(
        "ms after retrieval, median / p90 over every query: "
        + ", ".join(
            f"{o} {statistics.median(t):.3f} / {statistics.quantiles(t, n=10)[-1]:.3f}"
            for o, t in TIMES.items()
            if len(t) > 1
        )
    )
    print(table.render())


if __name__ == "__main__":
    main()
