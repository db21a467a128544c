"""Issue-shaped queries: what each step of pix/retrieve/evidence.py is worth, and how fast.

    python -m bench.issue_bench [--repos requests,flask,...] [--static-only] [--mirrors DIR]
                                [--limits 12,24,48] [--weights JSON] [--only LABELS]
                                [--latency N] [--no-quality]

On the issueloc set (../shared/eval/issueloc/, each issue asked at its base commit, file mode, the
first 20 files: metrics at 10 read the first 10, and acc@20, every gold file among the first 20, is
the most any re-ordering of those could reach) pix runs with every step, with none (the router's
`question` shape, as before), and with each step removed on its own (`shape`: the issue route and
its weights; `terms`: BM25 on the most selective terms only; `ident`: identifiers that are
definitions feed the identifier channel; `files`: the evidence channel of files the issue names;
`kinds`: prose and configuration files demoted; `windows`: the transformer reads the issue in
windows, which needs transformer vectors, so it changes nothing on a --static-only database;
`environment`: sections about the reporter's machine, from an "Environment" or "System Information"
heading to the next heading, are left out of everything the issue is searched by; `title`: the
title counts TITLE_WEIGHT times in the meaning vectors; `images`: pasted screenshots are left out;
`urls`: a link gives BM25's term selection only the file it points at; `exports`: a package's
name the report calls (`xr.where`) names the module it is defined in, pix/retrieve/exports.py;
`cited`: an issue number the report cites (`#7964`) names the files that past commits citing it
changed, pix/retrieve/commit_log.py `cited_changes`; `links`: a link to a file on a code host
(`github.com/o/r/blob/<ref>/<path>`) names that file of the snapshot, pix/retrieve/links.py;
`members`: a class's member the report names (`Card.fromstring`) names the files defining it,
pix/retrieve/members.py; and `without outline`:
the outline step of pix/retrieve/outline.py off; `without tested`: no test lends its score to
the file it tests, pix/retrieve/tested.py; `without titled`: no bonus for a file the title
names, pix/retrieve/titled.py; `without imported`: no bonus for the files the first file
imports, pix/retrieve/imported.py; `without quoted`: no vote for the chunks holding a message the
report quotes whole, pix/retrieve/phrase.py rank_quoted). `--only` runs the variants
named (comma-separated labels). `--limits` reruns the full pipeline with other BM25 term caps,
`--weights` with other weights of the issue route or other values of evidence.py's and
windows.py's constants (a
JSON list of changes: `[{"bm25": 1.5}, {"COMMON_SHARE": 0.02}]`; `{"refine": 0}`: the
refinement's transformer may read any number of one file's chunks, pix/retrieve/refine.py
PER_FILE; `{"imported": 0.3}`: the imported-file step's weight). Databases are devbench's
(bench.devcorpora's cache, built by `bench.devbench --reuse` with the same options); this bench
never builds one: a repository whose database is missing, and an issue whose base commit is not
indexed in it, are skipped with a note on stderr.

Latency: `--latency N` issues per repository, cut to 2,000 characters, each asked once with a
warm engine (open, model loaded, another issue asked before), with every step, with none,
without the quoted messages, without the re-exports and without the cited numbers, in turns
(each issue starts with the next variant); the median and p90 in ms of the whole
`QueryEngine.query` call.
Progress on stderr, tables on stdout.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from bench import devbench, devcorpora, metrics
from bench.devbench import ISSUE_COLUMNS, ISSUELOC_REPOS, Table
from bench.quality import rank_files
from pix.query import QueryEngine
from pix.retrieve import (
    evidence,
    imported,
    outline,
    phrase,
    refine,
    route,
    tested,
    titled,
    windows,
)
from pix.store import search_sql

ALL = evidence.STEPS


LIMIT = evidence.BM25_TERMS
ISSUE_WEIGHTS = dict(route.WEIGHTS["issue"])


def variants(limits: list[int], weights: list[dict] = ()) -> dict[str, tuple]:
    out = {"pix (every step)": (ALL, LIMIT, {}), "none (before)": (frozenset(), LIMIT, {})}
    for step in sorted(ALL - {"windows"}):
        out[f"without {step}"] = (ALL - {step}, LIMIT, {})
    out["without outline"] = (ALL, LIMIT, {"outline": False})
    out["without tested"] = (ALL, LIMIT, {"tested": False})
    out["without titled"] = (ALL, LIMIT, {"titled": False})
    out["without imported"] = (ALL, LIMIT, {"imported": False})
    out["without quoted"] = (ALL, LIMIT, {"quoted": False})
    out["shape only"] = (frozenset({"shape"}), LIMIT, {})
    for limit in limits:
        if limit != LIMIT:
            out[f"BM25 terms {limit}"] = (ALL, limit, {})
    for change in weights:
        out["weights " + json.dumps(change)] = (ALL, LIMIT, change)
    return out


# Quality asks for the first 20 files: metrics at 10 read the first 10 (the same files as a
# top-10 answer), acc@20 says how many reports a re-ordering of pix's first 20 could serve.
QUALITY_TOP = 20
COLUMNS = [*ISSUE_COLUMNS, "acc@20"]


# evidence.py's constants, and windows.py's (TITLE_WEIGHT, WINDOW_CHARS, STATIC_CHARS)
CONSTANTS = {
    (module, name): getattr(module, name)
    for module in (evidence, windows)
    for name in dir(module)
    if name.isupper()
}
OUTLINE_SHAPES = outline.SHAPES
TESTED_WEIGHT = tested.WEIGHT
TITLED_WEIGHT = titled.WEIGHT
IMPORTED_WEIGHT = imported.WEIGHT
QUOTED_WEIGHT = phrase.ISSUE_WEIGHT
REFINE_PER_FILE = dict(refine.PER_FILE)


def set_steps(steps: frozenset, limit: int, weights: dict | None = None) -> None:
    """Steps, the BM25 term cap and changes: a channel name changes the issue route's weight,
    an upper-case name one of evidence.py's or windows.py's constants."""
    weights = dict(weights or {})
    # "outline": False runs without the outline step (pix/retrieve/outline.py)
    outline.SHAPES = OUTLINE_SHAPES if weights.pop("outline", True) else frozenset()
    # "tested": False runs without the tested-file step (pix/retrieve/tested.py), a number
    # with that weight
    lend = weights.pop("tested", True)
    tested.WEIGHT = TESTED_WEIGHT if lend is True else float(lend)
    # "titled": False runs without the titled-file step (pix/retrieve/titled.py), a number
    # with that weight
    named = weights.pop("titled", True)
    titled.WEIGHT = TITLED_WEIGHT if named is True else float(named)
    # "imported": False runs without the imported-file step (pix/retrieve/imported.py), a
    # number with that weight
    lifted = weights.pop("imported", True)
    imported.WEIGHT = IMPORTED_WEIGHT if lifted is True else float(lifted)
    # "quoted": False runs without the quoted messages (pix/retrieve/phrase.py rank_quoted), a
    # number with that weight
    quoted = weights.pop("quoted", True)
    phrase.ISSUE_WEIGHT = QUOTED_WEIGHT if quoted is True else float(quoted)
    # "refine": N lets the refinement's transformer read at most N chunks of one file of a
    # report (0: any number; pix/retrieve/refine.py PER_FILE; static-only databases only)
    per_file = weights.pop("refine", REFINE_PER_FILE["issue"])
    refine.PER_FILE = REFINE_PER_FILE | {"issue": int(per_file)}
    for (module, name), value in CONSTANTS.items():
        setattr(module, name, weights.get(name, value))
    evidence.STEPS = steps
    evidence.BM25_TERMS = limit
    channels = {k: v for k, v in weights.items() if not k.isupper()}
    route.WEIGHTS["issue"] = ISSUE_WEIGHTS | channels


def open_repo(short: str, variant: str) -> tuple[QueryEngine, list[dict], dict] | None:
    db = devcorpora.database(f"issueloc-{short}", variant)
    if not db.exists():
        print(f"  {short}: no database at {db}; run bench.devbench --reuse first", file=sys.stderr)
        return None
    root, qs, at = devbench.issueloc_set(short)
    engine = QueryEngine(db=str(db), cwd=str(root))
    with engine.store.read():
        indexed = {
            sha for sha in at.values()
            if engine.store.conn.execute(search_sql.SNAPSHOT_FOR_COMMIT, (sha,)).fetchone()
        }  # fmt: skip
    missing = [q for q in qs if at[q["base_commit"]] not in indexed]
    if missing:
        print(f"  {short}: {len(missing)} issue(s) skipped, base commit not indexed (yet)",
              file=sys.stderr)  # fmt: skip
    return engine, [q for q in qs if at[q["base_commit"]] in indexed], at


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repos", default=",".join(ISSUELOC_REPOS))
    parser.add_argument("--static-only", action="store_true")
    parser.add_argument("--mirrors")
    parser.add_argument("--limits", default="12,48")
    parser.add_argument("--latency", type=int, default=0)
    parser.add_argument("--no-quality", action="store_true")
    parser.add_argument(
        "--only", help="comma list of step variants to run (--limits, --weights always run)"
    )
    parser.add_argument(
        "--weights", default="[]", help='JSON list of issue-route weight changes: [{"bm25": 2}]'
    )
    args = parser.parse_args(argv)
    devcorpora.set_mirrors(args.mirrors)
    variant = "-static" if args.static_only else ""
    names = [n for n in args.repos.split(",") if n]
    todo = variants([int(x) for x in args.limits.split(",") if x], json.loads(args.weights))
    if args.only:
        keep = args.only.split(",")
        todo = {k: v for k, v in todo.items() if k in keep or k.startswith(("weights", "BM25"))}
    runs: dict[str, list] = {label: [] for label in todo}
    latency: dict[str, list[float]] = {
        "pix (every step)": [], "none (before)": [], "without quoted": [], "without exports": [],
        "without cited": [],
    }  # fmt: skip
    for short in names:
        opened = open_repo(short, variant)
        if opened is None:
            continue
        engine, qs, at = opened
        print(f"  {short}: {len(qs)} issues", file=sys.stderr, flush=True)
        for label, (steps, limit, change) in [] if args.no_quality else todo.items():
            set_steps(steps, limit, change)
            for q in qs:
                ranked = rank_files(engine, q["query"], QUALITY_TOP, at=at[q["base_commit"]])
                runs[label].append((ranked, q["gold_files"]))
        labels = list(latency)
        if args.latency:  # warm: the engine's caches, the database pages, the model
            for label in labels:
                set_steps(*variants([])[label])
                rank_files(engine, qs[-1]["query"][:2000], at=at[qs[-1]["base_commit"]])
        for n, q in enumerate(qs[: args.latency]):
            text = q["query"][:2000]
            # Each issue is asked once per variant, first by turns, so no variant gets the
            # pages another just read every time.
            for label in labels[n % len(labels) :] + labels[: n % len(labels)]:
                set_steps(*variants([])[label])
                t0 = time.perf_counter()
                rank_files(engine, text, at=at[q["base_commit"]])
                latency[label].append((time.perf_counter() - t0) * 1000)
        engine.close()
    set_steps(ALL, LIMIT)
    if not args.no_quality:
        rows = [
            (label, metrics.evaluate(r, ks=(1, 5, 10), acc_ks=(1, 3, 5, 10, 20)))
            for label, r in runs.items()
            if r
        ]
        n = len(next(iter(runs.values())))
        title = (
            f"issueloc ({n} issues of {', '.join(names)}; {'static-only' if variant else 'full'})"
        )
        print(Table(title, COLUMNS, rows).render(), flush=True)
        print(by_gold_count(runs).render(), flush=True)
    if args.latency:
        rows = []
        for label, ms in latency.items():
            if ms:
                q = statistics.quantiles(ms, n=10) if len(ms) > 1 else [ms[0]] * 9
                rows.append(
                    (
                        label,
                        {"queries": len(ms), "median ms": statistics.median(ms), "p90 ms": q[8]},
                    )
                )
        print(
            Table(
                "warm latency, 2,000-character issues", ["queries", "median ms", "p90 ms"], rows
            ).render()
        )


def by_gold_count(runs: dict[str, list]) -> Table:
    """Each variant on the reports whose fix changed one file apart from those that changed
    several (Acc@k needs every gold file in the first k). Published file-level figures on
    SWE-bench Lite (the issue's yardstick: 84.7% Acc@5 for CodeRankEmbed) are of one-file fixes
    only: that benchmark keeps no instance whose patch edits more than one file."""
    rows = []
    for label, pairs in runs.items():
        for name, keep in (("one file", lambda g: len(g) == 1), ("several", lambda g: len(g) > 1)):
            chosen = [(ranked, gold) for ranked, gold in pairs if keep(gold)]
            if chosen:
                scores = metrics.evaluate(chosen, ks=(1, 5, 10), acc_ks=(1, 3, 5, 10, 20))
                rows.append((f"{label}, {name} ({len(chosen)})", scores))
    return Table("by the number of files the fix changed", COLUMNS, rows)


if __name__ == "__main__":
    main()
