"""The log channel (pix/retrieve/commit_log.py): pix with and without it, each set on its own.

    python -m bench.log_bench [--sets lang,questions,exact] [--static-only] [--mirrors DIR]
                              [--weights 0.5,1.5] [--max-files 5,40] [--halves] [--speed]
                              [--no-merges] [--no-citing]

The channel reads the git log before the snapshot's commit. The development databases are
built from one-commit snapshots (bench/devcorpora.py), which hold no history, so this bench
writes it itself, into a copy of each cached database (devbench builds them; a missing one is
named and its set skipped), as `pix index` would have written it on the day each question was
asked, with the history prior's counts of the same day (bench/history_bench.py):

- a commit set (`lang`: the 14 language sets; or one set's name) asks each commit subject with
  the log of its commit's parent, read from the repository's mirror by pix/ingest/
  commit_log.py itself (the log at the pinned commit holds the very commit asked about, and
  every one after it);
- the developers' questions (`questions`, and `questions-more`, which nothing was tuned on)
  and the pasted strings (`exact`) ask with the log at the pinned commit.

`--no-merges` reads every log as pix did before the forty-sixth session, a merge listing no
files (pix/ingest/commit_log.py MERGES): two runs, with it and without, say what reading a
merge's files as its first parent's diff changes. `--no-citing` reads every log as pix did
before the forty-seventh session, without the older commits kept for the issues they cite
(pix/ingest/commit_log.py CITING = 0): their subjects join the FTS5 table the channel matches
(and so its BM25 statistics) but never vote, which two runs, with it and without, measure.

Each question's log is the only one in the copy (log_commit holds nothing else), so BM25's
statistics over the subjects are those `pix index` would have had. pix is asked in file mode,
top 10, without the channel and with it (and at each of `--weights`), in one process; the
table prints nDCG@10 / MRR@10 (exact strings: the holding file first / MRR@10), each
variant's difference in brackets. `--max-files` adds variants at the shipped weight whose log
keeps commits of up to that many files (pix/ingest/commit_log.py MAX_FILES). requests and
click (release archives) and issueloc (the issue route does not use the channel) are left out.

`--halves` prints a second table: each commit set's subjects split at their median year
(the set's newer half from that year on, the older before it; each half's size beside the
set's name), pix with the channel as shipped and without it on each half, and each cell's
distance to its column's mean over the sets. The databases hold the pinned commit's code, so
an old subject is asked of code that may since have moved (tmux's subjects go back to 2007),
and with the channel it also had a shorter log to match: the columns without the log show
the first alone. With 30-70 subjects a half, a half's nDCG@10 moves by about 0.05 with the
sample.

`--speed` times what the log adds: pix/ingest/commit_log.py's read at each development
repository's newest commit (`pix index`: the newest commits, and the commits citing an issue
kept beside them), and the channel's two statements on the first 50 commit subjects of each
language set (a query), medians of 3 runs, ms; then the read alone at the newest commit of
each issueloc repository (longer histories: sphinx's 22,000 commits, astropy's 41,000).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

import apsw

from bench import devcorpora, devsets, metrics
from bench.devbench import ISSUELOC_REPOS, Table
from bench.history_bench import Log, copied, described, mean_row, write_counts
from bench.quality import rank_files
from bench.weights_bench import LANG, corpus, expand
from pix.errors import PixError
from pix.ingest import commit_log as ingest_log
from pix.ingest.terms import query_terms
from pix.query import QueryEngine
from pix.retrieve import commit_log, route
from pix.retrieve.search import fts_query

EXACT = "exact-strings"
CLEAR_LOG = "DELETE FROM log_commit"  # files by cascade, FTS rows by trigger, links first
CLEAR_LINKS = "DELETE FROM snapshot_log_commit"


@contextmanager
def log_weight(weight: float) -> Iterator[None]:
    """The route's log weight for every shape that has one, for the duration."""
    saved = {shape: w["log"] for shape, w in route.WEIGHTS.items() if "log" in w}
    for shape in saved:
        route.WEIGHTS[shape]["log"] = weight
    try:
        yield
    finally:
        for shape, w in saved.items():
            route.WEIGHTS[shape]["log"] = w


def parent_log(git_dir, rev: str, max_files: int | None = None) -> ingest_log.Log:
    """What pix/ingest/commit_log.py reads at `rev` (empty before a root commit)."""
    try:
        return ingest_log.from_git(git_dir, rev, max_files)
    except PixError:  # `<root commit>^` names nothing
        return ingest_log.Log(rule=ingest_log.rule(max_files))


def at_most(found: ingest_log.Log, max_files: int) -> ingest_log.Log:
    """The log as read with a smaller MAX_FILES (each commit's paths are distinct)."""
    kept = tuple(c for c in found.commits if len(c[4]) <= max_files)
    citing = tuple(c for c in found.citing if len(c[4]) <= max_files)
    return ingest_log.Log(commits=kept, rule=ingest_log.rule(max_files), citing=citing)


def write_log(conn: apsw.Connection, snapshot_id: int, found: ingest_log.Log) -> None:
    """The snapshot's log as `pix index` writes it, and nothing else in log_commit."""
    with conn:
        conn.execute(CLEAR_LINKS)
        conn.execute(CLEAR_LOG)
        ingest_log.write(conn, snapshot_id, found)


def queries_of(name: str) -> tuple[str, list[dict]]:
    """(set whose database answers, queries) for `lang` names, `q:<repo>`, `qm:<repo>` and
    `e:<repo>`."""
    if name.startswith("e:"):
        repo = name[2:]
        return repo, [q for q in devsets.load_set(EXACT)[1] if q["set"] == repo]
    _, _, qs = corpus(name, "")
    return name.rpartition(":")[2], qs


class Variant(NamedTuple):
    """One way of asking: the log's weight, whether only change descriptions
    (route.describes_change) read it, and the largest commit the log keeps (files)."""

    label: str
    weight: float
    changes_only: bool = False
    max_files: int = ingest_log.MAX_FILES


WITHOUT = Variant("without", 0.0)


def commit_set(name: str, variant: str, todo: list[Variant]) -> tuple[list, list[list]] | None:
    """(the set's queries, the runs without the channel, then under each variant)."""
    repo, qs = queries_of(name)
    root, db, _ = corpus(repo, variant)
    if not db.exists():
        print(f"  {name}: no database at {db}; run bench.devbench --reuse first", file=sys.stderr)
        return None
    meta, _ = devsets.load_set(repo)
    git_dir = devcorpora.mirror(meta["repo"])
    counts = Log(git_dir, meta["pinned_commit"])
    most = max(v.max_files for v in [WITHOUT, *todo])
    pinned = parent_log(git_dir, meta["pinned_commit"], most)
    runs: list[list] = [[] for _ in range(len(todo) + 1)]
    exact = name.startswith("e:")
    with copied(db) as scratch:
        # Opened by pix first: a database cached before migration 011 gains its tables.
        engine = QueryEngine(db=str(scratch), cwd=str(root))
        conn = apsw.Connection(str(scratch))
        conn.set_busy_timeout(10_000)
        conn.execute("PRAGMA foreign_keys = ON")
        (snapshot_id,) = conn.execute("SELECT max(id) FROM snapshot").fetchone()
        for q in qs:
            write_counts(conn, snapshot_id, counts.asked(q))
            commit = q.get("commit")
            found = parent_log(git_dir, f"{commit}^", most) if commit else pinned
            change = route.describes_change(q["query"])
            written = None
            for run, v in zip(runs, [WITHOUT, *todo], strict=True):
                if v.max_files != written:
                    write_log(conn, snapshot_id, at_most(found, v.max_files))
                    written = v.max_files
                with log_weight(v.weight if change or not v.changes_only else 0.0):
                    ranked = rank_files(engine, q["query"])
                run.append((ranked[:1] if exact else ranked, q["gold_files"]))
        conn.close()
        engine.close()
    return qs, runs


def speed(variant: str) -> Table:
    """The cost of reading the log (`pix index`) and of the channel's statements (a query)."""
    rows = []
    for name in LANG:
        meta, qs = devsets.load_set(name)
        _, db, _ = corpus(name, variant)
        git_dir = devcorpora.mirror(meta["repo"])
        head = subprocess.run(
            ["git", "--git-dir", str(git_dir), "rev-parse", "HEAD"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        reads = []
        for _ in range(3):
            t0 = time.perf_counter()
            found = parent_log(git_dir, head)
            reads.append((time.perf_counter() - t0) * 1000)
        asks = []
        with copied(db) as scratch:
            QueryEngine(
                db=str(scratch), cwd=str(devcorpora.snapshot(meta["repo"], meta["pinned_commit"]))
            ).close()
            conn = apsw.Connection(str(scratch))
            conn.execute("PRAGMA foreign_keys = ON")
            (snapshot_id,) = conn.execute("SELECT max(id) FROM snapshot").fetchone()
            write_log(conn, snapshot_id, parent_log(git_dir, meta["pinned_commit"]))
            for q in qs[:50]:
                terms = query_terms(q["query"])
                times = []
                for _ in range(3):
                    t0 = time.perf_counter()
                    commit_log.log_files(conn, snapshot_id, fts_query(terms), None)
                    times.append((time.perf_counter() - t0) * 1000)
                asks.append(statistics.median(times))
            conn.close()
        cells = {
            "commits kept": len(found.commits),
            "citing kept": len(found.citing),
            "read ms": statistics.median(reads),
            "query ms": statistics.median(asks),
        }
        rows.append((f"{name} ({meta['repo']})", cells))
    for short, repo in ISSUELOC_REPOS.items():
        git_dir = devcorpora.mirror(repo)
        reads = []
        for _ in range(3):
            t0 = time.perf_counter()
            found = parent_log(git_dir, "HEAD")
            reads.append((time.perf_counter() - t0) * 1000)
        cells = {
            "commits kept": len(found.commits),
            "citing kept": len(found.citing),
            "read ms": statistics.median(reads),
        }
        rows.append((f"issueloc {short} ({repo})", cells))
    return Table(
        "the log: reading it at the newest commit (pix index), the channel's statements (a query)",
        ["commits kept", "citing kept", "read ms", "query ms"],
        rows,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default="lang,questions,exact")
    parser.add_argument("--static-only", action="store_true")
    parser.add_argument("--mirrors")
    parser.add_argument("--weights", default="", help="other log weights, comma-separated")
    parser.add_argument(
        "--max-files", default="", help="other largest commits the log keeps, comma-separated"
    )
    parser.add_argument(
        "--changes-only",
        action="store_true",
        help="each weight again, only change descriptions reading the log (not shipped)",
    )
    parser.add_argument(
        "--halves",
        action="store_true",
        help="also each commit set's newer and older half (split at its median year)",
    )
    parser.add_argument("--speed", action="store_true", help="time the log, then stop")
    parser.add_argument(
        "--no-merges",
        action="store_true",
        help="read every log as before the forty-sixth session, a merge listing no files",
    )
    parser.add_argument(
        "--no-citing",
        action="store_true",
        help="read every log as before the forty-seventh session, no older citing commits",
    )
    args = parser.parse_args(argv)
    devcorpora.set_mirrors(args.mirrors)
    if args.no_merges:  # run with and without it: what reading merges' files changes
        ingest_log.MERGES = False
    if args.no_citing:  # with and without: what the citing commits' subjects change
        ingest_log.CITING = 0
    variant = "-static" if args.static_only else ""
    if args.speed:
        print(speed(variant).render())
        return
    todo = [Variant(f"with (weight {route.LOG})", route.LOG)]
    todo += [Variant(f"weight {w}", float(w)) for w in args.weights.split(",") if w]
    if args.changes_only:  # each weight again, read by change descriptions only
        todo += [
            v._replace(label=f"{v.label}, change descriptions only", changes_only=True)
            for v in list(todo)
        ]
    todo += [
        Variant(f"commits of <= {n} files", route.LOG, max_files=int(n))
        for n in args.max_files.split(",")
        if n
    ]
    labels = [v.label for v in [WITHOUT, *todo]]
    exact = sorted({f"e:{q['set']}" for q in devsets.load_set(EXACT)[1]})
    # weights_bench's names (`lang` a set each, the questions one `q:<repo>` each), the pasted
    # strings one `e:<repo>` each
    names = [n for item in expand(args.sets) for n in (exact if item == "exact" else [item])]
    rows: list[tuple[str, dict]] = []
    per_set: list[list[dict]] = []
    halves: list[Halves] = []
    pooled = {prefix: [[] for _ in labels] for prefix in ("q:", "qm", "e:")}
    for name in names:
        asked = commit_set(name, variant, todo)
        if not asked:
            continue
        qs, got = asked
        print(f"  {name}: {len(got[0])} queries", file=sys.stderr, flush=True)
        if name[:2] in pooled:
            for into, run in zip(pooled[name[:2]], got, strict=True):
                into.extend(run)
            continue
        scores = [metrics.evaluate(run) for run in got]
        rows.append((name, described(scores, labels)))
        per_set.append(scores)
        if args.halves:  # got[1]: todo[0], the channel as shipped
            halves.append(by_age(name, [q["date"][:4] for q in qs], got[1], got[0]))
    if per_set:
        rows.append(mean_row(per_set, labels))
    for prefix, title in (
        ("q:", "developers' questions"),
        ("qm", "questions nobody tuned on (questions-more)"),
        ("e:", "exact strings (first)"),
    ):
        runs = pooled[prefix]
        if runs[0]:
            scores = [metrics.evaluate(run) for run in runs]
            rows.append((f"{title} ({len(runs[0])})", described(scores, labels)))
    tier = "static-only" if variant else "transformer"
    title = f"the log channel, file mode, nDCG@10 / MRR@10 ({tier})"
    print(Table(title, labels, rows).render())
    if halves:
        print(age_table(halves, tier).render())


class Halves(NamedTuple):
    """A commit set split by the age of its subjects: the median year it was cut at, how many
    subjects each half holds (newer, older), and each AGE_COLUMNS's scores ({}: no subject)."""

    name: str
    cut: str
    sizes: tuple[int, int]
    scores: dict[str, dict]


AGE_COLUMNS = ["newer half", "older half", "newer half, no log", "older half, no log"]


def by_age(name: str, years: list[str], shipped: list, without: list) -> Halves:
    """A commit set's runs (the channel as shipped, and without it: an old subject also had a
    shorter log to match) split at the median of its subjects' years (`years`, in the runs'
    order); a subject of that year is in the newer half."""
    cut = sorted(years)[len(years) // 2]
    newer = [i for i, year in enumerate(years) if year >= cut]
    older = [i for i, year in enumerate(years) if year < cut]

    def part(run: list, kept: list[int]) -> dict:
        return metrics.evaluate([run[i] for i in kept]) if kept else {}

    runs = [(shipped, newer), (shipped, older), (without, newer), (without, older)]
    scores = {c: part(run, kept) for c, (run, kept) in zip(AGE_COLUMNS, runs, strict=True)}
    return Halves(name, cut, (len(newer), len(older)), scores)


def age_table(halves: list[Halves], tier: str) -> Table:
    """Each set's halves, nDCG@10 / MRR@10, with each one's distance to the mean of the same
    column over the sets that have that half (nDCG@10)."""
    held = {c: [h.scores[c]["ndcg@10"] for h in halves if h.scores[c]] for c in AGE_COLUMNS}
    means = {c: statistics.mean(v) for c, v in held.items() if v}
    rows = []
    for h in halves:
        cells = {}
        for column, mean in means.items():
            if e := h.scores[column]:
                away = e["ndcg@10"] - mean
                cells[column] = f"{e['ndcg@10']:.3f} / {e['mrr@10']:.3f} ({away:+.3f})"
        newer, older = h.sizes
        rows.append((f"{h.name} (newer from {h.cut}: {newer} / {older})", cells))
    rows.append(
        (
            "**mean over the sets** (nDCG@10)",
            {c: f"{m:.3f} ({len(held[c])} sets)" for c, m in means.items()},
        )
    )
    title = (
        "pix by the age of the subjects (the channel as shipped; `no log`: without it), "
        f"nDCG@10 / MRR@10 (distance to the column's mean), ({tier})"
    )
    return Table(title, AGE_COLUMNS, rows)


if __name__ == "__main__":
    main()
