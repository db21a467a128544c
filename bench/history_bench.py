"""The history prior (pix/retrieve/history.py): pix with and without it, each set on its own.

    python -m bench.history_bench [--sets lang,questions,issueloc] [--static-only] [--mirrors DIR]
                                  [--powers 0.1,0.2] [--caps 20,80] [--issues] [--speed]
                                  [--channel bm25]

The prior needs each file's commit count in the year before the question was asked. The
development databases are built from one-commit snapshots (bench/devcorpora.py), which hold no
history, so this bench writes the counts itself, into a copy of each cached database (devbench
builds them; a missing one is named and its set skipped), then asks pix (file mode, top 10)
without the prior and with it, in one process, and prints nDCG@10 / MRR@10 (Acc@1 / Acc@5 too
for issueloc, each repository's reports and all of them), each variant's difference in
brackets. `--powers` and `--caps` add variants of
pix/retrieve/history.py's POWER and CAP; `--issues` one that weighs every file of an issue
report, the first too, which pix does not (KEEPS_FIRST):

- a commit set (`lang`: the 14 language sets; or one set's name) asks each commit subject with
  the counts of the commits before that commit, from the repository's mirror: what the prior
  would have said on the day the change was made (the counts at the pinned commit include the
  very commit asked about);
- the developers' questions (`questions`) ask with the counts at the pinned commit;
- issueloc asks each issue at its base commit with pix/ingest/history.py's own counts from the
  repository's clone, written to that snapshot as `pix index` writes them.

requests and click are left out: their corpora are release archives, with no history.

`--channel bm25` asks one channel alone (priors and the history prior on), as devbench's
"bm25 alone" does, for the commit sets.

`--speed` times what the counts add to `pix index`: pix/ingest/history.py's `git log` over a
year of each development repository's history at its newest commit (median of 3 runs, ms).
"""

from __future__ import annotations

import argparse
import bisect
import datetime
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw

from bench import devbench, devcorpora, devsets, metrics
from bench.devbench import ISSUELOC_REPOS, Table
from bench.quality import rank_files
from bench.weights_bench import LANG, QUESTIONS
from pix.ingest import history as counting
from pix.query import QueryEngine
from pix.retrieve import history
from pix.store import search_sql

WINDOW = counting.WINDOW_DAYS * 86_400


class Log:
    """A repository's commits (committer time, changed paths), oldest first, from its mirror."""

    def __init__(self, git_dir: Path, rev: str) -> None:
        commits = sorted(counting.commits(git_dir, rev), key=lambda c: c[0])
        self.times = [t for t, _ in commits]
        self.paths = [p for _, p in commits]
        self.pinned = self.times[-1] + 1  # just after `rev`: what `pix index` counts there

    def asked(self, query: dict) -> Counter[str]:
        """The counts a question is asked with: of the year before its own commit (its
        `date`), or, undated, the pinned commit's."""
        when = query.get("date")
        return self.counts(int(datetime.datetime.fromisoformat(when).timestamp()) if when
                           else self.pinned)  # fmt: skip

    def counts(self, before: int) -> Counter[str]:
        """Path -> commits in the window before `before` (unix seconds), not at it."""
        lo = bisect.bisect_left(self.times, before - WINDOW)
        hi = bisect.bisect_left(self.times, before)
        out: Counter[str] = Counter()
        for paths in self.paths[lo:hi]:
            out.update(paths)
        return out


@contextmanager
def copied(db: Path) -> Iterator[Path]:
    """A scratch copy of a cached database (the cache is shared; this bench writes)."""
    with tempfile.TemporaryDirectory(prefix="pix-history-") as tmp:
        target = Path(tmp) / db.name
        shutil.copyfile(db, target)
        yield target


def write_counts(conn: apsw.Connection, snapshot_id: int, counts: Counter[str]) -> None:
    """What `pix index` writes for a snapshot, as of another day."""
    with conn:
        counting.store_counts(conn, snapshot_id, counts)


Variant = tuple[str, float, int, bool]  # label, POWER, CAP, weigh an issue's first file too


def variants(powers: str, caps: str, issues: bool) -> list[Variant]:
    """pix as it ships, then any other POWER x CAP (and every file of an issue weighed)."""
    out = [("with", history.POWER, history.CAP, False)]
    for power in [float(p) for p in powers.split(",") if p]:
        for cap in [int(c) for c in caps.split(",") if c] or [history.CAP]:
            if (power, cap) != (history.POWER, history.CAP):
                out.append((f"power {power} cap {cap}", power, cap, False))
    if issues:
        out.append(("with, an issue's first file too", history.POWER, history.CAP, True))
    return out


@contextmanager
def prior(power: float | None, cap: int = history.CAP, first: bool = False) -> Iterator[None]:
    """pix.retrieve.history as one variant has it (power None: off; `first`: an issue
    report's first file weighed too)."""
    saved = history.POWER, history.CAP, history.applies, history.KEEPS_FIRST
    if power is None:
        history.applies = lambda query, shape: False
    if first:
        history.KEEPS_FIRST = frozenset()
    history.POWER, history.CAP = (power, cap) if power is not None else saved[:2]
    try:
        yield
    finally:
        history.POWER, history.CAP, history.applies, history.KEEPS_FIRST = saved


def ask(engine: QueryEngine, query: str, todo: list[Variant], **options) -> list[list[str]]:
    """pix's first 10 files without the prior, then under each variant."""
    with prior(None):
        out = [rank_files(engine, query, **options)]
    for _, power, cap, first in todo:
        with prior(power, cap, first):
            out.append(rank_files(engine, query, **options))
    return out


def commit_set(
    name: str, variant: str, todo: list[Variant], channels: list[str] | None = None
) -> list[list] | None:
    """Runs without the prior, then under each variant, of one commit set or one
    repository's questions."""
    from bench.weights_bench import corpus

    root, db, qs = corpus(name, variant)
    if not db.exists():
        print(f"  {name}: no database at {db}; run bench.devbench --reuse first", file=sys.stderr)
        return None
    meta, _ = devsets.load_set(name.removeprefix("q:"))
    log = Log(devcorpora.mirror(meta["repo"]), meta["pinned_commit"])
    runs: list[list] = [[] for _ in range(len(todo) + 1)]
    with copied(db) as scratch:
        # Opened by pix first: a database cached before migration 008 gains its column.
        engine = QueryEngine(db=str(scratch), cwd=str(root))
        conn = apsw.Connection(str(scratch))
        conn.set_busy_timeout(10_000)
        (snapshot_id,) = conn.execute("SELECT max(id) FROM snapshot").fetchone()
        for q in qs:
            write_counts(conn, snapshot_id, log.asked(q))
            answers = ask(engine, q["query"], todo, channels=channels)
            for run, ranked in zip(runs, answers, strict=True):
                run.append((ranked, q["gold_files"]))
        conn.close()
        engine.close()
    return runs


def issueloc_repo(short: str, variant: str, todo: list[Variant]) -> list[list] | None:
    db = devcorpora.database(f"issueloc-{short}", variant)
    if not db.exists():
        print(f"  issueloc {short}: no database at {db}", file=sys.stderr)
        return None
    root, qs, at = devbench.issueloc_set(short)
    runs: list[list] = [[] for _ in range(len(todo) + 1)]
    with copied(db) as scratch:
        engine = QueryEngine(db=str(scratch), cwd=str(root))
        conn = apsw.Connection(str(scratch))
        conn.set_busy_timeout(10_000)
        for sha in sorted(set(at.values())):
            row = conn.execute(search_sql.SNAPSHOT_FOR_COMMIT, (sha,)).fetchone()
            if row:
                write_counts(conn, row[0], counting.recent_changes(root, sha))
        for q in qs:
            sha = at[q["base_commit"]]
            if not conn.execute(search_sql.SNAPSHOT_FOR_COMMIT, (sha,)).fetchone():
                continue
            for run, ranked in zip(runs, ask(engine, q["query"], todo, at=sha), strict=True):
                run.append((ranked, q["gold_files"]))
        conn.close()
        engine.close()
    return runs


def cells(runs: list[list], labels: list[str], acc: bool = False) -> dict[str, str]:
    """nDCG@10 / MRR@10 (and Acc@1 / Acc@5) of each run, each variant's difference to the
    first run (without the prior)."""
    ks = (1, 5) if acc else ()
    scores = [metrics.evaluate(run, acc_ks=ks) for run in runs]
    return described(scores, labels, acc)


def described(scores: list[dict], labels: list[str], acc: bool = False) -> dict[str, str]:
    out = {}
    base = scores[0]
    for label, e in zip(labels, scores, strict=True):
        cell = f"{e['ndcg@10']:.3f} / {e['mrr@10']:.3f}"
        if acc:
            cell += f" (Acc@1 {e['acc@1']:.3f}, Acc@5 {e['acc@5']:.3f})"
        if e is not base:
            gain = e["ndcg@10"] - base["ndcg@10"], e["mrr@10"] - base["mrr@10"]
            cell += f" ({gain[0]:+.3f} / {gain[1]:+.3f})"
        out[label] = cell
    return out


def mean_row(per_set: list[list[dict]], labels: list[str]) -> tuple[str, dict[str, str]]:
    """The row of each variant's nDCG@10 / MRR@10 over the commit sets (`per_set`: each
    set's scores, a variant each), the differences to the first."""
    means = [
        {k: sum(s[i][k] for s in per_set) / len(per_set) for k in ("ndcg@10", "mrr@10")}
        for i in range(len(labels))
    ]
    return f"**mean of {len(per_set)} commit sets**", described(means, labels)


def speed(names: list[str]) -> Table:
    """The cost of counting a year of history, per development repository."""
    rows = []
    repos = dict.fromkeys(devsets.load_set(n.removeprefix("q:"))[0]["repo"] for n in names)
    repos.update(dict.fromkeys(ISSUELOC_REPOS.values()))
    for repo in repos:
        git_dir = devcorpora.mirror(repo)
        head = subprocess.run(
            ["git", "--git-dir", str(git_dir), "rev-parse", "HEAD"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        times, counts = [], Counter()
        for _ in range(3):
            t0 = time.perf_counter()
            counts = counting.recent_changes(git_dir, head)
            times.append((time.perf_counter() - t0) * 1000)
        cells = {"files counted": len(counts), "commits x files": sum(counts.values())}
        rows.append((repo, {**cells, "median ms": statistics.median(times)}))
    title = "counting a year of history at the newest commit (pix/ingest/history.py)"
    return Table(title, ["files counted", "commits x files", "median ms"], rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default="lang,questions,issueloc")
    parser.add_argument("--static-only", action="store_true")
    parser.add_argument("--mirrors")
    parser.add_argument("--powers", default="", help="other POWERs to try, comma-separated")
    parser.add_argument("--caps", default="", help="other CAPs to try, comma-separated")
    parser.add_argument(
        "--issues", action="store_true", help="weigh an issue's first file too (not shipped)"
    )
    parser.add_argument("--speed", action="store_true", help="time the counting, then stop")
    parser.add_argument(
        "--channel", help="ask one channel alone (bm25, dense, ...), priors on, as devbench does"
    )
    args = parser.parse_args(argv)
    devcorpora.set_mirrors(args.mirrors)
    variant = "-static" if args.static_only else ""
    todo = variants(args.powers, args.caps, args.issues)
    labels = ["without", *(label for label, *_ in todo)]
    names: list[str] = []
    for part in args.sets.split(","):
        if part == "lang":
            names += LANG
        elif part == QUESTIONS:
            names += sorted({f"q:{q['set']}" for q in devsets.load_set(QUESTIONS)[1]})
        elif part:
            names.append(part)
    if args.speed:
        print(speed([n for n in names if n != "issueloc"] or list(LANG)).render())
        return
    rows: list[tuple[str, dict]] = []
    per_set: list[list[dict]] = []
    questions: list[list] = [[] for _ in labels]
    issues: list[list] = [[] for _ in labels]
    repos: list[tuple[str, dict]] = []
    for name in names:
        if name == "issueloc":
            for short in ISSUELOC_REPOS:
                got = issueloc_repo(short, variant, todo)
                if got:
                    for pooled, run in zip(issues, got, strict=True):
                        pooled.extend(run)
                    repos.append((f"issueloc {short} ({len(got[0])})", cells(got, labels, True)))
                    print(f"  issueloc {short}: {len(got[0])} issues", file=sys.stderr)
            continue
        got = commit_set(name, variant, todo, [args.channel] if args.channel else None)
        if not got:
            continue
        print(f"  {name}: {len(got[0])} queries", file=sys.stderr, flush=True)
        if name.startswith("q:"):
            for pooled, run in zip(questions, got, strict=True):
                pooled.extend(run)
            continue
        rows.append((name, cells(got, labels)))
        per_set.append([metrics.evaluate(run) for run in got])
    if per_set:
        rows.append(mean_row(per_set, labels))
    if questions[0]:
        rows.append((f"developers' questions ({len(questions[0])})", cells(questions, labels)))
    if issues[0]:
        rows += repos
        rows.append((f"issueloc ({len(issues[0])} issues)", cells(issues, labels, acc=True)))
    tier = "static-only" if variant else "transformer"
    title = f"the history prior, file mode, nDCG@10 / MRR@10 ({tier})"
    print(Table(title, labels, rows).render())


if __name__ == "__main__":
    main()
