"""The phrase step (pix.retrieve.phrase) on every development set: how often a query's phrase
occurs verbatim, whether the files holding it are the right ones, and what the step costs.

    python -m bench.phrase_bench [--sets SETS] [--mirrors DIR] [--static-only] [--repeat N]

SETS as bench.devbench takes them (default `all`); its cached databases (--static-only: the
static-tier cache). One row per set; the columns are described in bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bench import corpora, devbench, devcorpora, devsets
from pix.query import QueryEngine, QueryRequest
from pix.retrieve import phrase
from pix.retrieve.route import CHANNELS
from pix.snapshot import select_snapshot

SHORT_CHARS = 100
COUNTED = ["phrased", "matched", "whole", "quoted", "gold held", "hijacked", "common"]
COLUMNS = [
    "queries", *COUNTED, "step ms", "step p90", "query ms", "query ms no phrase",
]  # fmt: skip


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def corpora_of(names: list[str], run: devbench.Run) -> Iterator[tuple[str, Path, Path, list]]:
    """(label, root, database, queries with an `at` each) per set, as devbench builds them."""
    lang = set(devsets.committed_sets("commitloc"))
    for name in names:
        if name in lang:
            meta, qs = devsets.load_set(name)
            root = devcorpora.snapshot(meta["repo"], meta["pinned_commit"])
            yield name, root, devbench.build_db(name, root, run, False), qs
        elif name in ("requests", "click"):
            root = corpora.corpus(name)
            db = devbench.build_db(f"shared-{name}", root, run, False)
            yield name, root, db, corpora.queries(name)
        elif name == "cosqa":
            root, qs = devbench.cosqa_corpus()
            yield name, root, devbench.build_db("cosqa-dev", root, run, False), qs
        elif name == "exact":
            _, qs = devsets.load_set("exact-strings")
            for part in dict.fromkeys(q["set"] for q in qs):
                meta, _ = devsets.load_set(part)
                root = devcorpora.snapshot(meta["repo"], meta["pinned_commit"])
                db = devbench.build_db(part, root, run, False)
                yield f"exact:{part}", root, db, [q for q in qs if q["set"] == part]
        elif name.startswith("issueloc:"):
            short = name.split(":", 1)[1]
            root, qs, at = devbench.issueloc_set(short)
            db = devbench.build_db(f"issueloc-{short}", root, run, False, list(at.values()))
            yield name, root, db, [{**q, "at": at[q["base_commit"]]} for q in qs]
        else:
            raise SystemExit(f"unknown set {name!r}")


def count(engine: QueryEngine, qs: list[dict]) -> tuple[dict[str, float], list[float]]:
    """What the phrase step finds for each query (COUNTED), and its own seconds per query with
    a phrase."""
    counts: dict[str, float] = dict.fromkeys(COUNTED, 0)
    step: list[float] = []
    for q in qs:
        phrases = phrase.phrases_of(q["query"])
        if not phrases:
            continue
        counts["phrased"] += 1
        with engine.store.read():
            snapshot = select_snapshot(engine.store, engine.target, q.get("at"))
            t0 = time.perf_counter()
            evidence, reports = phrase.find(engine.store, snapshot.id, phrases, None)
            step.append(time.perf_counter() - t0)
        matched = [r for r in reports if r.status == "matched"]
        if not matched:
            counts["common"] += any(r.status == "common" for r in reports)
            continue
        counts["matched"] += 1
        counts["whole" if any(r.phrase.source == "query" for r in matched) else "quoted"] += 1
        held = {ev.path for ev in evidence.values()}
        counts["gold held" if held & set(q["gold_files"]) else "hijacked"] += 1
    return counts, step


def measure(engine: QueryEngine, qs: list[dict], repeat: int) -> dict[str, float]:
    counts, step = count(engine, qs)
    out: dict[str, float] = {"queries": len(qs), **counts}
    if step:
        out["step ms"] = 1000 * statistics.median(step)
        out["step p90"] = 1000 * statistics.quantiles(step, n=10)[-1] if len(step) > 1 else 0.0
    short = [q for q in qs if len(q["query"]) <= SHORT_CHARS]
    on, off = [], []
    for _ in range(repeat):
        for q in short:
            for times, options in ((on, {}), (off, {"channels": list(CHANNELS)})):
                request = QueryRequest(
                    query=q["query"], mode="file", top=10, no_content=True, at=q.get("at"),
                    **options,
                )  # fmt: skip
                t0 = time.perf_counter()
                engine.query(request)
                times.append(time.perf_counter() - t0)
    if on:
        out["query ms"] = 1000 * statistics.median(on)
        out["query ms no phrase"] = 1000 * statistics.median(off)
    return out


# --sweep: the policy's other choices, each as the module constants it changes.
VARIANTS: dict[str, dict] = {
    "default": {},
    "case-insensitive": {"CASE_SENSITIVE": False},
    "docs lifted too": {"UNLIFTED_ROLES": frozenset()},
    "one word is enough (min 3 chars)": {"MIN_WORDS": 1, "MIN_CHARS": 3},
    "min 3 words": {"MIN_WORDS": 3},
    "min 8 chars": {"MIN_CHARS": 8},
    "min 20 chars": {"MIN_CHARS": 20},
    "max files 1": {"MAX_FILES": 1},
    "max files 10": {"MAX_FILES": 10},
}
GROUPS = {"exact": "exact", "issueloc": "issue", "cosqa": "cosqa"}  # the rest: commit sets
SWEEP_COLUMNS = [
    f"{group} {what}"
    for group in ("exact", "commit", "issue", "cosqa")
    for what in ("matched", "gold held", "hijacked")
]


def sweep(engines: list[tuple[str, QueryEngine, list[dict]]]) -> devbench.Table:
    table = devbench.Table(
        "phrase step policy sweep: queries whose phrase matched, and whether a gold file holds it",
        SWEEP_COLUMNS,
    )
    table.first = "variant"
    default = {name: getattr(phrase, name) for v in VARIANTS.values() for name in v}
    for label, changes in VARIANTS.items():
        for name, value in {**default, **changes}.items():
            setattr(phrase, name, value)
        row: dict[str, float] = dict.fromkeys(SWEEP_COLUMNS, 0)
        for set_label, engine, qs in engines:
            group = GROUPS.get(set_label.split(":", 1)[0], "commit")
            counts, _ = count(engine, qs)
            for what in ("matched", "gold held", "hijacked"):
                row[f"{group} {what}"] += counts[what]
        table.rows.append((label, row))
        log(f"variant {label}: {row}")
    for name, value in default.items():
        setattr(phrase, name, value)
    table.notes.append(
        "groups: exact = the exact-string set, commit = the language and requests/click commit"
        " sets, issue = issueloc, cosqa = CoSQA; hijacked = matched, but no gold file holds it"
    )
    return table


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default="all")
    parser.add_argument("--mirrors", help="folder of <owner>+<name>/repo bare git dirs")
    parser.add_argument("--static-only", action="store_true", help="the static-tier databases")
    parser.add_argument("--repeat", type=int, default=1, help="latency passes per query")
    parser.add_argument("--sweep", action="store_true", help="the policy's other choices")
    args = parser.parse_args(argv)
    devcorpora.set_mirrors(args.mirrors)
    names = devbench.expand(args.sets)
    with tempfile.TemporaryDirectory(prefix="pix-phrase-bench-") as tmp:
        run = devbench.Run(Path(tmp), True, False, set(), 0, args.static_only)
        table = devbench.Table(
            f"phrase step: MIN_CHARS={phrase.MIN_CHARS}, MIN_WORDS={phrase.MIN_WORDS}, "
            f"MAX_CHARS={phrase.MAX_CHARS}, MAX_FILES={phrase.MAX_FILES}",
            COLUMNS,
        )
        table.first = "set"
        engines = []
        for label, root, db, qs in corpora_of(names, run):
            log(f"set {label}")
            engine = QueryEngine(db=str(db), cwd=str(root))
            if args.sweep:
                engines.append((label, engine, qs))
                continue
            # One untimed query first: the model and the database pages are warm after it.
            engine.query(QueryRequest(query=qs[0]["query"], mode="file", at=qs[0].get("at")))
            table.rows.append((label, measure(engine, qs, args.repeat)))
            engine.close()
        if args.sweep:
            table = sweep(engines)
            for _, engine, _ in engines:
                engine.close()
        print(table.render(), flush=True)


if __name__ == "__main__":
    os.environ.setdefault("PIX_BENCH", "1")
    main()
