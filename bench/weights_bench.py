"""pix's ranking under other weights, on devbench's cached databases, in seconds.

    python -m bench.weights_bench [--sets lang,shared,cosqa,questions,questions-more]
                                  [--static-only] [--mirrors DIR] --variant LABEL=SPEC [...]

devbench asks every system of every set and takes minutes a set; tuning one constant needs only
pix's own answer, so this asks pix (file mode, top 10) once per variant on the databases that
`python -m bench.devbench --sets ... --reuse [--static-only]` cached (it never builds one: a
missing database is named and its set skipped) and prints nDCG@10 / MRR@10 per set, each
variant beside pix as it ships, with the difference.

A SPEC is comma-separated assignments, each `[WHEN:]NAME=VALUE`:
- `question.dense=0.5`: the route's weight of a channel for a query shape (pix/retrieve/route.py
  WEIGHTS; `*` for every shape);
- `standout.dense=0.6`: a channel's standing-out factor (pix/retrieve/rank.py STANDOUT);
- `reading.question=0.75`: dense's weight for a shape in the refinement's second pass, where the
  transformer reads the first pass's best candidates (route.READING; `question.dense` sets its
  weight over the whole corpus only, so static-only any value above 0 changes nothing: 0 turns
  the channel, and so the refinement, off).
- `refine.question=5`: how many chunks of one file the refinement's transformer may read for a
  query shape (pix/retrieve/refine.py PER_FILE; 0: any number). Static-only databases only:
  where every chunk has its transformer vector nothing is read on the spot.
- `imported.question=0.2`: the imported-file step (pix/retrieve/imported.py) for a query shape
  too (`*`: every shape), at that weight (0: off, for the issue shape as well).
- `shape.min_chars=250`, `shape.min_lines=2`: what makes a query a report, the issue route's
  shape (pix/retrieve/evidence.py ISSUE_MIN_CHARS: this long; ISSUE_MIN_LINES: this many lines
  with code or a traceback).
WHEN limits an assignment to the question- and keyword-shaped queries that read as a change
description (`change:`: an imperative verb first, `Fix ...`, `Add ...`, or a component prefix,
`router: ...`; see is_change) or to the others (`plain:`): commit subjects are mostly the first,
developers' questions and web-search questions the second.

Sets: `lang` (the 14 language commit sets), `shared` (requests, click), `cosqa`, `questions`
(the 480 developers' questions, per repository), `questions-more` (150 more, of five other
repositories in C++, TypeScript and Rust), `bodies` (below), or any one of their names.

`bodies` asks each language set's commits that have a body (and pytest's and seaborn's, whose
databases devbench caches too) with the whole message as one text (`whole_message`: the subject
as devbench asks it, a blank line, the body without git's trailers): a title and a body, laid
out as a report is (`b:<set>` is one set's). Every other
development query is one line, and issueloc's 116 reports are all Python, so these are the
only multi-line texts in other languages to judge the report shape on. They are not reports:
a body is written after the change, by its author, and names the changed code more often than
a report does, so its figures say how a rule moves across languages, not how well reports
are answered.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pix.query
from bench import corpora, devbench, devcorpora, devsets, metrics, quality
from pix.query import QueryEngine
from pix.retrieve import evidence, imported, rank, refine, route

LANG = tuple(devsets.committed_sets("commitloc"))
SHARED = ("requests", "click")
QUESTIONS = "questions"
# Each question set's prefix: `q:<repo>` is that repository's share of the 480 developers'
# questions, `qm:<repo>` its share of questions-more (five repositories of their own).
QUESTION_SETS = {"q:": QUESTIONS, "qm:": "questions-more"}
# The commit sets whose messages `bodies` asks whole (`b:<set>`).
BODIES = (*LANG, "pytest", "seaborn")
SHAPE = {"min_chars": "ISSUE_MIN_CHARS", "min_lines": "ISSUE_MIN_LINES"}

NL_SHAPES = ("question", "keywords")  # the shapes a change: or plain: assignment applies to
# Does the query read as a change description (a commit subject) rather than a question? The
# history prior's test (pix/retrieve/history.py).
is_change = route.describes_change


def parse_spec(spec: str) -> list[tuple[str | None, str, str, float]]:
    """`[WHEN:]TABLE.KEY=VALUE,...` -> (when, table, key, value) each; a clear error else."""
    out = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        when, _, assignment = part.rpartition(":") if ":" in part else ("", "", part)
        name, eq, value = assignment.partition("=")
        table, dot, key = name.partition(".")
        if not (eq and dot) or when not in ("", "change", "plain"):
            raise SystemExit(f"weights_bench: cannot read {part!r} (see --help)")
        tables = ("standout", "reading", "refine", "imported", "shape", "*")
        if table not in tables and table not in route.WEIGHTS:
            raise SystemExit(f"weights_bench: no query shape or table {table!r} in {part!r}")
        if table == "shape" and (key not in SHAPE or when or not value.strip().isdigit()):
            raise SystemExit(
                f"weights_bench: {part!r}: a shape rule is min_chars or min_lines, a whole "
                "number, for every query (it decides the shape a WHEN would ask for)"
            )
        if (
            table in ("reading", "refine")
            and key not in route.WEIGHTS
            or (table == "imported" and key != "*" and key not in route.WEIGHTS)
        ):
            raise SystemExit(f"weights_bench: no query shape {key!r} in {part!r}")
        out.append((when or None, table, key, float(value)))
    return out


@contextmanager
def applied(assignments: list[tuple[str | None, str, str, float]]) -> Iterator[None]:
    """pix ranks under `assignments` inside the block: the route step, which every query passes
    first, sets each query's weights and standing-out factors, then restores none of them
    until the block ends (the bench asks one query at a time)."""
    weights = {shape: dict(w) for shape, w in route.WEIGHTS.items()}
    standout = dict(rank.STANDOUT)
    reading = dict(route.READING)
    per_file = dict(refine.PER_FILE)
    lifted = (imported.SHAPES, imported.WEIGHT)
    rules = {name: getattr(evidence, name) for name in SHAPE.values()}
    original = pix.query.route

    def restore() -> None:
        """Everything as it was when the block began."""
        for shape, w in weights.items():
            route.WEIGHTS[shape] = dict(w)
        rank.STANDOUT.clear()
        rank.STANDOUT.update(standout)
        route.READING.clear()
        route.READING.update(reading)
        refine.PER_FILE = dict(per_file)
        imported.SHAPES, imported.WEIGHT = lifted
        for name, value in rules.items():
            setattr(evidence, name, value)

    def routed(query: str, channels: list[str] | None = None) -> route.Route:
        restore()
        for _, table, key, value in assignments:  # the shape first: the rest may depend on it
            if table == "shape":
                setattr(evidence, SHAPE[key], int(value))
        shape = route.shape_of(query)
        kind = ("change" if is_change(query) else "plain") if shape in NL_SHAPES else None
        for when, table, key, value in assignments:
            if when is not None and when != kind:
                continue
            if table == "standout":
                rank.STANDOUT[key] = value
                continue
            if table == "reading":
                route.READING[key] = value
                continue
            if table == "refine":
                refine.PER_FILE[key] = int(value)
                continue
            if table == "shape":
                continue
            if table == "imported":
                if key in ("*", shape):
                    imported.SHAPES = imported.SHAPES | {shape}
                    imported.WEIGHT = value
                continue
            for name in route.WEIGHTS if table == "*" else [table]:
                route.WEIGHTS[name][key] = value
        return original(query, channels)

    pix.query.route = routed
    try:
        yield
    finally:
        pix.query.route = original
        restore()


def corpus(name: str, variant: str) -> tuple[Path, Path, list[dict]]:
    """(work tree, cached database, queries) of one set; `q:<repo>` and `qm:<repo>` are that
    repository's share of a question set (QUESTION_SETS)."""
    if name == "cosqa":
        root, qs = devbench.cosqa_corpus()
        return root, devcorpora.database("cosqa-dev", variant), qs
    if name in SHARED:
        db = devcorpora.database(f"shared-{name}", variant)
        return corpora.corpus(name), db, corpora.queries(name)
    prefix, _, repo = name.rpartition(":")
    meta, qs = devsets.load_set(repo)
    if prefix == "b":
        qs = [whole_message(q) for q in qs if q["body"].strip()]
    elif prefix:
        qs = [q for q in devsets.load_set(QUESTION_SETS[prefix + ":"])[1] if q["set"] == repo]
    root = devcorpora.snapshot(meta["repo"], meta["pinned_commit"])
    return root, devcorpora.database(repo, variant), qs


# A git trailer (`Signed-off-by: ...`, `Co-authored-by: ...`): git's bookkeeping, no part of
# what the message says.
_TRAILER = re.compile(r"[A-Za-z][A-Za-z-]*-by:\s.*|Change-Id:\s.*")


def whole_message(q: dict) -> dict:
    """A commit-set query asked with its commit's whole message: the subject as devbench asks
    it (devsets.query_text: without a conventional-commit type or a trailing pull-request
    number), blank line, the body without its trailers."""
    body = "\n".join(line for line in q["body"].splitlines() if not _TRAILER.fullmatch(line))
    return {**q, "query": f"{q['query'].strip()}\n\n{body.strip()}"}


def expand(sets: str) -> list[str]:
    """devbench's set names, each question set split by repository (`q:<repo>`, `qm:<repo>`),
    `bodies` by commit set (`b:<set>`)."""
    split = {
        whole: [f"{prefix}{n}" for n in sorted({q["set"] for q in devsets.load_set(whole)[1]})]
        for prefix, whole in QUESTION_SETS.items()
    }
    split["bodies"] = [f"b:{n}" for n in BODIES]
    return [name for item in devbench.expand(sets) for name in split.get(item, [item])]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default="lang,shared,cosqa,questions,questions-more")
    parser.add_argument("--static-only", action="store_true")
    parser.add_argument("--mirrors")
    parser.add_argument("--variant", action="append", default=[], help="LABEL=SPEC, repeatable")
    args = parser.parse_args(argv)
    devcorpora.set_mirrors(args.mirrors)
    variants = {"pix": []}
    for v in args.variant:
        label, eq, spec = v.partition("=")
        if not eq:
            raise SystemExit(f"weights_bench: --variant {v!r} is not LABEL=SPEC")
        variants[label] = parse_spec(spec)
    suffix = "-static" if args.static_only else ""
    scores: dict[str, dict[str, tuple[float, float]]] = {}
    for name in expand(args.sets):
        root, db, qs = corpus(name, suffix)
        if not db.exists():
            print(f"{name}: no cached database ({db}); run bench.devbench --reuse", file=sys.stderr)
            continue
        engine = QueryEngine(db=str(db), cwd=str(root))
        t0 = time.perf_counter()
        for label, assignments in variants.items():
            with applied(assignments):
                runs = [(quality.rank_files(engine, q["query"]), q["gold_files"]) for q in qs]
            m = metrics.evaluate(runs)
            scores.setdefault(name, {})[label] = (m["ndcg@10"], m["mrr@10"])
        engine.close()
        print(f"{name}: {len(qs)} queries, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    print(render(scores, list(variants)))


def render(scores: dict[str, dict[str, tuple[float, float]]], labels: list[str]) -> str:
    head = "| set | " + " | ".join(labels) + " |"
    lines = [head, "|---|" + "---:|" * len(labels)]
    rows = list(scores.items())
    for group, members in (
        ("mean of the language sets", [n for n in scores if n in LANG]),
        ("developers' questions (mean of repositories)", [n for n in scores if n[:2] == "q:"]),
        ("questions-more (mean of repositories)", [n for n in scores if n[:3] == "qm:"]),
        ("whole commit messages (mean of sets)", [n for n in scores if n[:2] == "b:"]),
    ):
        if members:
            rows.append((f"**{group}**", mean(scores, members, labels)))
    for name, by in rows:
        if name.startswith(("q:", "qm:")) and len(rows) > 1:
            continue  # each repository's 30 questions are in the questions mean
        base = by[labels[0]]
        cells = [f"{base[0]:.3f} / {base[1]:.3f}"] + [
            f"{n:.3f} / {r:.3f} ({n - base[0]:+.3f} / {r - base[1]:+.3f})"
            for n, r in (by[x] for x in labels[1:])
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def mean(scores: dict, members: list[str], labels: list[str]) -> dict[str, tuple[float, float]]:
    return {
        x: tuple(sum(scores[n][x][i] for n in members) / len(members) for i in (0, 1))
        for x in labels
    }


if __name__ == "__main__":
    main()
