"""Path priors on every development set: variants of the role rules and factors, each
measured on the same candidates.

    python -m bench.priors_bench [--sets lang,exact,shared,issueloc] [--mirrors DIR]
                                 [--variants NAME,...] [--systems pix,bm25]

A prior multiplies a file's fused score by its role's factor, and in file mode a file ranks by
its strongest chunk, so under any prior a file scores factor(role(path)) x its best fused score
with priors off. Each query is therefore asked once with priors off (per system: pix's default
channels on a --static-only database, and bm25 alone), keeping every candidate file and that
score, and every variant re-ranks those lists: a sweep over many variants costs one run of the
queries. Databases come from devbench's --static-only cache (`devcorpora.database`, as
`devbench --reuse --static-only`), built if absent. Prints nDCG@10 / MRR@10 per set and
variant (issueloc: Acc@5 too), each variant's mean over the language sets, and its change
against `current` per set. Each new rule group is measured left out of `current` and alone on
top of main's rules, so a group is kept only if it helps across the sets.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

from bench import corpora, devbench, devcorpora, devsets, metrics
from pix.query import QueryEngine, QueryRequest, retrieve
from pix.retrieve import foreign, priors
from pix.retrieve.rank import by_file
from pix.snapshot import select_snapshot

# On --static-only databases (devbench's cache): pix's default channels there are static +
# bm25 + ident + path, what a fresh index answers; bm25 alone shows a prior on one channel.
SYSTEMS: dict[str, list[str] | None] = {
    "pix": None,
    "bm25": ["bm25"],
}
Role = Callable[[str], str]
# Variants that leave a snapshot's foreign folders (pix/retrieve/foreign.py: someone else's
# code, known by its own license text) in the role their paths give; every other variant
# puts those folders' source files in the vendored role, as pix does.
WITHOUT_FOREIGN = frozenset({"before (main)", "current without foreign folders"})

_OLD_TEST = re.compile(
    r"(^|/)(tests?|testing|__tests__|spec|specs|test_?data|fixtures?)/"
    r"|(^|/)(test_[^/]*|[^/]*_test\.\w+|[^/]*\.(test|spec)\.\w+|conftest\.py)$",
    re.I,
)
_OLD_VENDORED = re.compile(r"(^|/)(vendor|vendored|_vendor|third_party|thirdparty|external)/", re.I)
_OLD_EXAMPLE = re.compile(r"(^|/)(examples?|samples?|demos?)/", re.I)
_OLD_DOCS = re.compile(
    r"(^|/)(docs?|documentation|man)/"
    r"|(^|/)(changes|changelog|history|news|release[-_]?notes|authors|contributing|readme)"
    r"([.\-_][^/]*)?$"
    r"|\.(md|rst|txt|adoc)$",
    re.I,
)
OLD_FACTORS = {"source": 1.0, "test": 0.4, "docs": 0.3, "example": 0.7, "vendored": 0.5}


def old_role(path: str) -> str:
    """The rules before issue 11 (main's pix/retrieve/priors.py)."""
    if _OLD_VENDORED.search(path):
        return "vendored"
    if _OLD_TEST.search(path):
        return "test"
    if _OLD_EXAMPLE.search(path):
        return "example"
    if _OLD_DOCS.search(path):
        return "docs"
    return "source"


def _without_new(role: str) -> Role:
    """pix's rules, except that a path only the new rules call `role` keeps its old role."""

    def rule(path: str) -> str:
        got = priors.path_role(path)
        return old_role(path) if got == role and old_role(path) != role else got

    return rule


def _only_new(role: str) -> Role:
    """The old rules plus only the new rules for `role`."""

    def rule(path: str) -> str:
        got, before = priors.path_role(path), old_role(path)
        return role if got == role else before if before != role else got

    return rule


def variants() -> dict[str, tuple[Role, dict[str, float]]]:
    """name -> (role function, factors). `current` is pix/retrieve/priors.py as it stands;
    each new rule group is measured both ways: left out of `current`, and alone on `before`."""
    now = dict(priors.ROLE_FACTORS)
    old_plus = {**OLD_FACTORS, **{k: v for k, v in now.items() if k not in OLD_FACTORS}}
    out: dict[str, tuple[Role, dict[str, float]]] = {
        "before (main)": (old_role, OLD_FACTORS),
        "current": (priors.path_role, now),
        "no priors": (priors.path_role, dict.fromkeys(now, 1.0)),
        "current without foreign folders": (priors.path_role, now),
    }
    for role in ("test", "vendored", "example", "config"):
        out[f"current without new {role} rules"] = (_without_new(role), now)
        out[f"before + new {role} rules"] = (_only_new(role), old_plus)
    for factor in (0.3, 0.7, 1.0):
        out[f"config x{factor}"] = (priors.path_role, {**now, "config": factor})
    for factor in (0.2, 0.3, 0.6):
        out[f"test x{factor}"] = (priors.path_role, {**now, "test": factor})
    for factor in (0.5, 1.0):
        out[f"example x{factor}"] = (priors.path_role, {**now, "example": factor})
    for factor in (0.3, 1.0):
        out[f"vendored x{factor}"] = (priors.path_role, {**now, "vendored": factor})
    for factor in (0.15, 0.5):
        out[f"docs x{factor}"] = (priors.path_role, {**now, "docs": factor})
    return out


def candidates(engine: QueryEngine, query: str, channels: list[str] | None, at: str | None) -> list:
    """(path, best fused score) of every candidate file, priors off, best first."""
    request = QueryRequest(query=query, mode="file", channels=channels, priors=False, at=at)
    with engine.store.read():
        hits = retrieve(engine, request, [], []).hits
    return [(h.path, h.fused) for h in by_file(hits)]


def foreign_of(engine: QueryEngine, at: str | None) -> list[str]:
    """The foreign folders of the snapshot a query is asked at (its commit, else the newest)."""
    with engine.store.read():
        snapshot = select_snapshot(engine.store, engine.target, at)
        return list(engine.foreign_folders(snapshot.id))


def rerank(files: list, role: Role, factors: dict[str, float], folders=()) -> list[str]:
    scored = [
        (score * factors.get(foreign.role_of(path, role(path), folders), 1.0), path)
        for path, score in files
    ]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [path for _, path in scored[:10]]


def with_folders(row: list) -> list:
    """A collected row as (gold, {system: candidates}, foreign folders): a --save of an earlier
    version has no folders (none)."""
    return [*row, []] if len(row) == 2 else row


def collect(names: list[str], systems: list[str], folder: str | None) -> dict[str, list]:
    """set -> [(gold, {system: candidates}, the foreign folders of the query's snapshot)] for
    every query of every set. `folder`: read the databases there instead of this indexer's
    cache (priors are query-side, so a database another chunker built measures them too)."""
    if folder:
        run = devbench.Run(Path(folder), False, False, set(), 0, static_only=True)
    else:
        run = devbench.Run(devcorpora.cache_dir(), True, False, set(), 0, static_only=True)
    out: dict[str, list] = {}
    lang = set(devsets.committed_sets("commitloc")) | set(devsets.committed_sets("commitloc-more"))
    question_sets = set(devsets.committed_sets("questions"))
    for name in names:
        print(f"set {name}", file=sys.stderr, flush=True)
        jobs: list[tuple[QueryEngine, list[dict], Callable]] = []
        if name in lang:
            meta, qs = devsets.load_set(name)
            root = devcorpora.snapshot(meta["repo"], meta["pinned_commit"])
            db = devbench.build_db(name, root, run, False)
            jobs.append((QueryEngine(db=str(db), cwd=str(root)), qs, lambda q: None))
        elif name in ("requests", "click"):
            root = corpora.corpus(name)
            db = devbench.build_db(f"shared-{name}", root, run, False)
            engine = QueryEngine(db=str(db), cwd=str(root))
            jobs.append((engine, corpora.queries(name), lambda q: None))
        elif name == "exact" or name in question_sets:
            _, qs = devsets.load_set("exact-strings" if name == "exact" else name)
            for set_name in dict.fromkeys(q["set"] for q in qs):
                meta, _ = devsets.load_set(set_name)
                root = devcorpora.snapshot(meta["repo"], meta["pinned_commit"])
                db = devbench.build_db(set_name, root, run, False)
                part = [q for q in qs if q["set"] == set_name]
                jobs.append((QueryEngine(db=str(db), cwd=str(root)), part, lambda q: None))
        elif name.startswith("issueloc:"):
            short = name.split(":", 1)[1]
            root, qs, at = devbench.issueloc_set(short)
            db = devbench.build_db(f"issueloc-{short}", root, run, False, list(at.values()))
            engine = QueryEngine(db=str(db), cwd=str(root))
            jobs.append((engine, qs, lambda q, at=at: at[q["base_commit"]]))
        else:
            raise SystemExit(f"unknown set {name!r}")
        rows = out.setdefault(name, [])
        for engine, qs, at_of in jobs:
            for q in qs:
                per = {s: candidates(engine, q["query"], SYSTEMS[s], at_of(q)) for s in systems}
                rows.append((q["gold_files"], per, foreign_of(engine, at_of(q))))
            engine.close()
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default="lang,exact,shared,issueloc")
    parser.add_argument("--mirrors")
    parser.add_argument("--variants", help="comma-separated names (default: all)")
    parser.add_argument("--systems", default="pix,bm25")
    parser.add_argument("--folder", help="databases from this folder, not this indexer's cache")
    parser.add_argument("--save", help="write the collected candidates to this JSON file")
    parser.add_argument("--load", help="read candidates collected by an earlier --save")
    args = parser.parse_args(argv)
    devcorpora.set_mirrors(args.mirrors)
    systems = args.systems.split(",")
    if args.load:
        with open(args.load, encoding="utf-8") as fh:
            data = json.load(fh)
    else:
        data = collect(devbench.expand(args.sets), systems, args.folder)
    if args.save:
        with open(args.save, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
    if any(len(row) == 2 for rows in data.values() for row in rows):
        print(
            "priors_bench: rows saved before the foreign folders were recorded have no foreign "
            "folders: every variant reads them as it reads 'current without foreign folders'",
            file=sys.stderr,
        )
    table = variants()
    chosen = args.variants.split(",") if args.variants else list(table)
    lang = set(devsets.committed_sets("commitloc"))
    issue_sets = [n for n in data if n.startswith("issueloc:")]
    for system in systems:
        results: dict[str, dict[str, dict[str, float]]] = {}
        for label in chosen:
            role, factors = table[label]
            keep = label in WITHOUT_FOREIGN
            row = results.setdefault(label, {})
            for name, rows in data.items():
                runs = [
                    (rerank(per[system], role, factors, () if keep else tuple(f)), gold)
                    for gold, per, f in map(with_folders, rows)
                ]
                row[name] = metrics.evaluate(runs, acc_ks=(5,))
            if issue_sets:
                runs = [
                    (rerank(per[system], role, factors, () if keep else tuple(f)), gold)
                    for n in issue_sets
                    for gold, per, f in map(with_folders, data[n])
                ]
                row["issueloc"] = metrics.evaluate(runs, acc_ks=(5,))
        shown = [n for n in data if not n.startswith("issueloc:")] + (
            ["issueloc"] if issue_sets else []
        )
        print(f"### {system}: nDCG@10 / MRR@10 (issueloc: Acc@5 / MRR@10)\n")
        print("| variant | lang mean | " + " | ".join(shown) + " |")
        print("|---|---:|" + "---:|" * len(shown))
        base = results.get("current")
        for label in chosen:
            row = results[label]
            lang_names = [n for n in shown if n in lang]
            mean = statistics.fmean(row[n]["ndcg@10"] for n in lang_names) if lang_names else 0
            cells = []
            for n in shown:
                key = "acc@5" if n == "issueloc" else "ndcg@10"
                cell = f"{row[n][key]:.3f} / {row[n]['mrr@10']:.3f}"
                if base is not None and label != "current":
                    cell += f" ({row[n][key] - base[n][key]:+.3f})"
                cells.append(cell)
            print(f"| {label} | {mean:.3f} | " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main()
