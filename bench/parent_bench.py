"""Each commit subject asked at its parent commit: pix where the developer stood.

    python -m bench.parent_bench [--sets lang] [--mirrors DIR] [--jobs 2] [--wide] [--dump F]

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

`--wide` asks, at the same parent, what issue 11 wants pix above on every set: each channel
alone, the plain BM25 baseline (bm25s over the parent's blobs) and semble's lexical side (its
own walker over the parent's tree, written out as committed), and pix without the
refinement; the table names, per set, the rivals pix is not above. `--dump F` writes every
ranking as a JSON line (set, the subject's number in its set, commit and query, system, gold,
ranked) for reading by hand. The gold files are those pix indexed at the parent, for every
system: a gold file pix skips (too large, binary) is dropped, which can only favour pix (a
rival that finds it is not credited; pix is not charged for skipping it).

Databases are cached beside devbench's (bench.devcorpora: `parent-<set>`, keyed by the model
and the chunker), so a second run indexes nothing again. Sets run `--jobs` at a time, each in
its own process. Prints each set's nDCG@10 / MRR@10, its distance to the mean of the sets, how
many subjects were asked and left out, and the time the set took (indexing and asking; the
asking includes the transformer reading each question's best candidates, pix/retrieve/
refine.py, which is most of it).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import NamedTuple

from bench import baselines, devcorpora, devsets, metrics
from bench.devbench import BASELINE, SEMBLE, Table, expand, indexed_commits, rank_pix
from pix.index import index_repository
from pix.query import QueryEngine

VARIANT = "-static"  # the transformer over a hundred snapshots a set would take hours here
# The files a commit's snapshot holds: those pix indexed there (a gold file pix skips at the
# parent, too large or unreadable, counts as not there, as a new one does).
PARENT_FILES = """
SELECT f.path FROM snapshot_file f JOIN snapshot s ON s.id = f.snapshot_id
WHERE s.kind = 'commit' AND s.commit_sha = ?
"""
PIX = "pix static-only"
# --wide: what issue 11 asks pix to be above on every set (each channel alone, plain BM25) and
# the peer (RIVALS), and pix without the transformer reading its best candidates.
SYSTEMS: dict[str, dict] = {
    PIX: {},
    "without refinement": {"refine": False},
    "static alone": {"channels": ["static"]},
    "bm25 alone": {"channels": ["bm25"]},
    "ident alone": {"channels": ["ident"]},
    "path alone": {"channels": ["path"]},
}
PEERS = (BASELINE, SEMBLE)  # devbench's labels: one name a system in every table and dump
RIVALS = (*(label for label, options in SYSTEMS.items() if "channels" in options), *PEERS)
METRICS = {"ndcg@10": "nDCG@10", "mrr@10": "MRR@10"}


class Asked(NamedTuple):
    """One set asked at its parents: each system's (ranked files, gold files there) per
    subject asked, those subjects (their number in the set, commit, query), and how many
    were left out."""

    runs: dict[str, list[tuple[list[str], list[str]]]]
    subjects: list[dict]
    left_out: int


def parents(root: Path, shas: list[str]) -> list[str | None]:
    """Each commit's first parent (None for a root commit), in one git call; `--no-walk=
    unsorted` keeps the commits in the order given."""
    lines = subprocess.run(
        ["git", "-C", str(root), "log", "--no-walk=unsorted", "--format=%H %P", *shas],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    first = {sha: rest[0] if rest else None for sha, *rest in (line.split() for line in lines)}
    return [first[sha] for sha in shas]


def ask_set(
    name: str, mirrors: str | None, wide: bool = False, key: str | None = None
) -> tuple[str, Asked, float]:
    """(set, what was asked, seconds) of one commit set; `key`: the parent's indexer key."""
    devcorpora.set_mirrors(mirrors)
    devcorpora.use_indexer_key(key)
    started = time.perf_counter()
    meta, qs = devsets.load_set(name)
    db = devcorpora.database(f"parent-{name}", VARIANT)
    asked = ask_at_parents(devcorpora.clone(meta["repo"]), db, qs, wide=wide)
    return name, asked, time.perf_counter() - started


def peers_at(root: Path, sha: str, cache: dict) -> dict[str, Callable[[str], list[str]]]:
    """The plain BM25 baseline and semble's lexical side over the tree of commit `sha`:
    BM25 from git's blobs (their words shared between commits through `cache`), semble's own
    walker over the tree written out as committed (devcorpora.write_tree, as devbench's
    snapshots are). semble keeps its index in memory, so the folder can go at once."""
    bm25 = baselines.BM25Files.from_git(root, sha, cache=cache)
    with tempfile.TemporaryDirectory(prefix="pix-parent-") as folder:
        devcorpora.write_tree(root / ".git", sha, Path(folder))
        semble = baselines.SembleLexical(Path(folder))
    return {BASELINE: bm25.rank, SEMBLE: semble.rank}


def ask_at_parents(root: Path, db: Path, qs: list[dict], wide: bool = False) -> Asked:
    """Every subject's parent commit indexed into `db` (static-only; one already there is
    not indexed again: a call that adds nothing still checks the whole database), then each
    subject asked there, pix alone or (`wide`) every system of SYSTEMS and the peers. Left
    out: a root commit's subject, or one whose files are all new at its commit."""
    at = parents(root, [q["commit"] for q in qs])
    have = indexed_commits(db)  # devbench --reuse's test: counted, the log by this rule
    for sha in dict.fromkeys(at):
        if sha and sha not in have:
            index_repository(str(root), str(db), at=sha, embed=False)
    engine = QueryEngine(db=str(db), cwd=str(root))
    systems = SYSTEMS if wide else {PIX: SYSTEMS[PIX]}
    runs: dict[str, list] = {label: [] for label in [*systems, *(PEERS if wide else ())]}
    subjects, left_out, words, peers = [], 0, {}, {}
    try:
        for n, (q, sha) in enumerate(zip(qs, at, strict=True)):
            with engine.store.read():
                there = {p for (p,) in engine.store.conn.execute(PARENT_FILES, (sha,))}
            gold = [g for g in q["gold_files"] if g in there]
            if not gold:
                left_out += 1
                continue
            subjects.append({"subject": n, "commit": q["commit"], "query": q["query"]})
            for label, options in systems.items():
                ranked = rank_pix(engine, q["query"], at=sha, **options)
                runs[label].append((ranked, gold))
            if wide:
                if sha not in peers:  # one parent's peers at a time: trees differ
                    peers = {sha: peers_at(root, sha, words)}
                for label, rank in peers[sha].items():
                    runs[label].append((rank(q["query"]), gold))
    finally:
        engine.close()
    return Asked(runs, subjects, left_out)


def below(scores: dict[str, dict[str, float]]) -> list[str]:
    """The rivals pix is not above on nDCG@10 or MRR@10 (issue 11: above plain BM25 and
    every single channel; the peer beside them), each with the metrics it ties or beats pix
    on, to the last digit (the table rounds to three)."""
    out = []
    for label in RIVALS:
        lost = [name for k, name in METRICS.items() if scores[label][k] >= scores[PIX][k]]
        if lost:
            out.append(f"{label} ({', '.join(lost)})")
    return out


def dump_rows(name: str, asked: Asked) -> Iterator[dict]:
    """Every ranking of one set, for reading by hand: the subject (its number in the set's
    file, commit, query), the system, the gold files at the parent, the ranked files."""
    for system, runs in asked.runs.items():
        for subject, (ranked, gold) in zip(asked.subjects, runs, strict=True):
            yield {"set": name, **subject, "system": system, "gold": gold, "ranked": ranked}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default="lang")
    parser.add_argument("--mirrors")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--wide", action="store_true", help="each channel alone and the peers")
    parser.add_argument("--dump", help="write every ranking here (JSON lines)")
    args = parser.parse_args(argv)
    names = expand(args.sets)
    done: dict[str, tuple[dict[str, dict], int, int, float]] = {}
    key = devcorpora.indexer_key()  # the workers' too, however they start
    with (
        open(args.dump, "w") if args.dump else contextlib.nullcontext() as dump,
        ProcessPoolExecutor(max_workers=args.jobs) as pool,
    ):
        n = len(names)
        jobs = pool.map(ask_set, names, [args.mirrors] * n, [args.wide] * n, [key] * n)
        for name, asked, seconds in jobs:
            count = len(asked.subjects)
            print(f"  {name}: {count} asked, {asked.left_out} left out, {seconds:.0f} s",
                  file=sys.stderr, flush=True)  # fmt: skip
            scores = {label: metrics.evaluate(r) for label, r in asked.runs.items()}
            done[name] = (scores, count, asked.left_out, seconds)
            if dump:
                dump.writelines(json.dumps(row) + "\n" for row in dump_rows(name, asked))
    print(table(done).render())


def table(done: dict[str, tuple[dict[str, dict], int, int, float]]) -> Table:
    """One row a set: each system's nDCG@10 / MRR@10, pix's distance to the mean of the sets,
    the systems pix is not above there; the mean of each system last."""
    labels = list(next(iter(done.values()))[0])
    mean = {
        label: {k: statistics.mean(s[label][k] for s, *_ in done.values()) for k in METRICS}
        for label in labels
    }
    wide = set(RIVALS) <= set(labels)
    rows = []
    for name, (scores, asked, left_out, seconds) in done.items():
        cells = {label: _pair(scores[label]) for label in labels}
        cells["distance to the mean"] = f"{scores[PIX]['ndcg@10'] - mean[PIX]['ndcg@10']:+.3f}"
        if wide:
            cells["pix not above"] = "; ".join(below(scores)) or "-"
        cells.update({"asked": asked, "left out": left_out, "s": round(seconds)})
        rows.append((name, cells))
    rows.append((f"**mean of {len(done)} sets**", {label: _pair(mean[label]) for label in labels}))
    columns = [*labels, "distance to the mean", *(["pix not above"] if wide else [])]
    title = "each subject asked at its parent commit (static-only), nDCG@10 / MRR@10"
    return Table(title, [*columns, "asked", "left out", "s"], rows, first="set")


def _pair(e: dict[str, float]) -> str:
    return f"{e['ndcg@10']:.3f} / {e['mrr@10']:.3f}"


if __name__ == "__main__":
    main()
