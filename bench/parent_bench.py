"""Each commit subject asked at its parent commit: pix where the developer stood.

    python -m bench.parent_bench [--sets lang] [--mirrors DIR] [--jobs 2]

devbench, log_bench and weights_bench ask every subject of a commit set of one database, the
set's pinned commit: a subject of 2007 is asked of 2026's code, which may have moved or gone
since (bench/README.md, "thirty-sixth session": the older half of the sets scores 0.10 lower
without the log). Here each subject is asked of the code it was written against: its commit's
parent is indexed static-only (`pix index --at PARENT`, keyword phase and static vectors, one
database per set, blobs shared between commits), with the git log and the history counts pix
reads at that commit, and pix is asked there (file mode, top 10). One database holds every
parent of a set, so BM25's statistics count the chunks of all of them, not the parent's alone
(gitsigns 0.691 / 0.652 so, 0.693 / 0.644 asked of a database of each parent alone). The gold
files are the subject's files pix indexed at the parent: a file its commit added cannot be
found there, and a subject whose files are all new (or a root commit's) is left out, counted.

Databases are cached beside devbench's (bench.devcorpora: `parent-<set>`, keyed by the model
and the chunker), so a second run indexes nothing again. Sets run `--jobs` at a time, each in
its own process. Prints each set's nDCG@10 / MRR@10, its distance to the mean of the sets, how
many subjects were asked and left out, and the time the set took (indexing and asking; the
asking includes the transformer reading each question's best candidates, pix/retrieve/
refine.py, which is most of it).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from bench import devcorpora, devsets, metrics
from bench.devbench import Table, expand, indexed_commits
from bench.quality import rank_files
from pix.index import index_repository
from pix.query import QueryEngine

VARIANT = "-static"  # the transformer over a hundred snapshots a set would take hours here
# The files a commit's snapshot holds: those pix indexed there (a gold file pix skips at the
# parent, too large or unreadable, counts as not there, as a new one does).
PARENT_FILES = """
SELECT f.path FROM snapshot_file f JOIN snapshot s ON s.id = f.snapshot_id
WHERE s.kind = 'commit' AND s.commit_sha = ?
"""


def parents(root: Path, shas: list[str]) -> list[str | None]:
    """Each commit's first parent (None for a root commit), in one git call; `--no-walk=
    unsorted` keeps the commits in the order given."""
    lines = subprocess.run(
        ["git", "-C", str(root), "log", "--no-walk=unsorted", "--format=%H %P", *shas],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    first = {sha: rest[0] if rest else None for sha, *rest in (line.split() for line in lines)}
    return [first[sha] for sha in shas]


def ask_set(name: str, mirrors: str | None) -> tuple[str, list, int, float]:
    """(set, runs, subjects left out, seconds) of one commit set."""
    devcorpora.set_mirrors(mirrors)
    started = time.perf_counter()
    meta, qs = devsets.load_set(name)
    db = devcorpora.database(f"parent-{name}", VARIANT)
    runs, left_out = ask_at_parents(devcorpora.clone(meta["repo"]), db, qs)
    return name, runs, left_out, time.perf_counter() - started


def ask_at_parents(
    root: Path, db: Path, qs: list[dict]
) -> tuple[list[tuple[list[str], list[str]]], int]:
    """Every subject's parent commit indexed into `db` (static-only; one already there is
    not indexed again: a call that adds nothing still checks the whole database), then each
    subject asked there: ((ranked files, gold files there) per subject asked, subjects left
    out: a root commit's, or one whose files are all new at its commit)."""
    at = parents(root, [q["commit"] for q in qs])
    have = indexed_commits(db)  # devbench --reuse's test: counted, the log by this rule
    for sha in dict.fromkeys(at):
        if sha and sha not in have:
            index_repository(str(root), str(db), at=sha, embed=False)
    engine = QueryEngine(db=str(db), cwd=str(root))
    runs, left_out = [], 0
    try:
        for q, sha in zip(qs, at, strict=True):
            with engine.store.read():
                there = {p for (p,) in engine.store.conn.execute(PARENT_FILES, (sha,))}
            gold = [g for g in q["gold_files"] if g in there]
            if not gold:
                left_out += 1
                continue
            runs.append((rank_files(engine, q["query"], at=sha), gold))
    finally:
        engine.close()
    return runs, left_out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default="lang")
    parser.add_argument("--mirrors")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    names = expand(args.sets)
    done: dict[str, tuple[dict, int, int, float]] = {}
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for name, runs, left_out, seconds in pool.map(ask_set, names, [args.mirrors] * len(names)):
            print(f"  {name}: {len(runs)} asked, {left_out} left out, {seconds:.0f} s",
                  file=sys.stderr, flush=True)  # fmt: skip
            done[name] = (metrics.evaluate(runs), len(runs), left_out, seconds)
    ndcg, mrr = (statistics.mean(e[k] for e, *_ in done.values()) for k in ("ndcg@10", "mrr@10"))
    rows = []
    for name, (e, asked, left_out, seconds) in done.items():
        cells = {
            "nDCG@10 / MRR@10": f"{e['ndcg@10']:.3f} / {e['mrr@10']:.3f}",
            "distance to the mean": f"{e['ndcg@10'] - ndcg:+.3f}",
            "asked": asked,
            "left out": left_out,
            "s": round(seconds),
        }
        rows.append((name, cells))
    rows.append((f"**mean of {len(done)} sets**", {"nDCG@10 / MRR@10": f"{ndcg:.3f} / {mrr:.3f}"}))
    columns = ["nDCG@10 / MRR@10", "distance to the mean", "asked", "left out", "s"]
    print(Table("each subject asked at its parent commit (static-only)", columns, rows).render())


if __name__ == "__main__":
    main()
