"""Query latency when the database holds more than the snapshot asked.

    python -m bench.scope_bench [--repo sphinx-doc/sphinx] [--snapshots 12] [--every 150]
                                [--queries 30] [--embed] [--mirrors DIR]

A database holds other versions of the code beside the snapshot a question is asked at: older
commits indexed with `pix index --at`, and the blobs files had before their last edit, until
`pix gc`. Then the snapshot is not the whole database, and every channel must keep to its
scope (pix/store/search_sql.py: the scoped statements). This bench indexes one repository
(bench.devcorpora's no-checkout clone; static-only unless --embed) into `many`: its newest
commit and the SNAPSHOTS - 1 commits every EVERY first-parent commits before it; `one` is a
copy of it after `pix gc --keep 1` (the newest commit alone, nothing embedded again). Both are
asked the subjects of the newest QUERIES commits (chunk mode, at the newest commit) and print,
by database: its chunks and the snapshot's, the median ms of a cold engine (opened for one
question, as `pix query` does, the models loaded beforehand), of a warm one (an engine that
has answered every subject 2 x knn.WARM_AFTER times: a server), and of `pix status` (its
quick_check of the file takes most of it), and whether every warm answer was its cold one
(and how many timed warm questions vec0 scanned for, where the matrices did not answer). A
third row asks `many` each subject at the newest and at the oldest snapshot in turn (a server
asked at HEAD and at the work tree; "in snapshot" is still the newest's).
Databases are built once into $PIX_BENCH_CACHE/scope (delete them to rebuild).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench import corpora, devcorpora
from pix.gc import gc
from pix.index import index_repository
from pix.query import QueryEngine, QueryRequest
from pix.retrieve import knn
from pix.status import status
from pix.store import search_sql, sql


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def first_parents(root: Path, count: int) -> list[tuple[str, str]]:
    """(sha, subject) of the newest `count` first-parent commits, newest first."""
    out = subprocess.run(
        ["git", "-C", str(root), "log", "--first-parent", "-n", str(count), "--format=%H %s"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return [tuple(line.split(" ", 1)) for line in out.splitlines() if " " in line]


def build(db: Path, root: Path, commits: list[str], embed: bool) -> None:
    """Index `commits` (oldest first) into `db` unless a build finished before."""
    done = db.with_name(db.name + ".done")
    if done.exists():
        return
    db.parent.mkdir(parents=True, exist_ok=True)
    for old in db.parent.glob(db.name + "*"):  # an interrupted build's file, WAL and all
        old.unlink()
    for n, sha in enumerate(commits, 1):
        log(f"  {db.name}: indexing {sha[:12]} ({n}/{len(commits)})")
        index_repository(str(root), str(db), at=sha, embed=embed)
    done.touch()


def newest_alone(many: Path, one: Path, root: Path) -> None:
    """`one`: a copy of `many` after `pix gc --keep 1` (the newest snapshot and what it
    references: its chunks and vectors as they were, nothing embedded again)."""
    done = one.with_name(one.name + ".done")
    if done.exists():
        return
    for old in one.parent.glob(one.name + "*"):
        old.unlink()
    for suffix in ("", "-wal"):
        if Path(f"{many}{suffix}").exists():
            shutil.copyfile(f"{many}{suffix}", f"{one}{suffix}")
    gc(str(root), str(one), keep=1)
    done.touch()


def counts(db: Path, sha: str) -> tuple[int, int]:
    """(chunks in the database, chunks of the snapshot at `sha`)"""
    engine = QueryEngine(db=str(db), cwd=str(db.parent))
    try:
        with engine.store.read():
            conn = engine.store.conn
            snapshot = conn.execute(search_sql.SNAPSHOT_FOR_COMMIT, (sha,)).fetchone()[0]
            total = conn.execute(sql.CHUNK_TOTALS).fetchone()[0]
            return total, conn.execute(sql.SNAPSHOT_COUNTS, {"snapshot": snapshot}).fetchone()[0]
    finally:
        engine.close()


def measure(db: Path, root: Path, shas: list[str], subjects: list[str], models: dict) -> dict:
    """Each subject asked at each of `shas` in turn (a server asked at two snapshots)."""
    requests = [
        QueryRequest(s, at=sha, no_content=True, explain=True) for s in subjects for sha in shas
    ]
    cold, answers = [], []
    for request in requests:
        t0 = time.perf_counter()
        engine = QueryEngine(db=str(db), cwd=str(root), **models)
        try:
            answers.append(json.dumps(engine.query(request)))
        finally:
            engine.close()
        cold.append(time.perf_counter() - t0)
    warm, same, from_memory = [], 0, 0
    engine = QueryEngine(db=str(db), cwd=str(root), **models)
    try:
        for _ in range(2 * knn.WARM_AFTER):
            for request in requests:
                engine.query(request)
        for request, answer in zip(requests, answers, strict=True):
            before = engine.warm.answered
            t0 = time.perf_counter()
            same += json.dumps(engine.query(request)) == answer
            warm.append(time.perf_counter() - t0)
            from_memory += engine.warm.answered > before
    finally:
        engine.close()
    t0 = time.perf_counter()
    status(db=str(db), cwd=str(root))
    status_ms = (time.perf_counter() - t0) * 1000
    return {
        "cold": statistics.median(cold) * 1000, "warm": statistics.median(warm) * 1000,
        "status": status_ms, "same": f"{same}/{len(requests)}",
        "scanned": len(requests) - from_memory,
    }  # fmt: skip


def scanned(count: int) -> str:
    """How many timed warm questions vec0 answered, not the engine's matrices (none: warm)."""
    return f" ({count} scanned: not warm)" if count else ""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", default="sphinx-doc/sphinx")
    parser.add_argument("--snapshots", type=int, default=12)
    parser.add_argument("--every", type=int, default=150)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--embed", action="store_true")
    parser.add_argument("--mirrors")
    args = parser.parse_args(argv)
    devcorpora.set_mirrors(args.mirrors)
    root = devcorpora.clone(args.repo)
    history = first_parents(root, max(args.queries, args.every * (args.snapshots - 1) + 1))
    newest = history[0][0]
    older = [sha for sha, _ in history[:: args.every][1 : args.snapshots]]
    tier = "full" if args.embed else "static"
    name = f"{args.repo.replace('/', '+')}-{newest[:12]}-{tier}"
    folder = corpora.cache_dir() / "scope"
    many = folder / f"{name}-many{args.snapshots}x{args.every}.db"
    label = f"many ({len(older) + 1} snapshots)"
    dbs = {"one": folder / f"{name}-one.db", label: many}
    build(many, root, [*reversed(older), newest], args.embed)
    newest_alone(many, dbs["one"], root)
    subjects = [subject for _, subject in history[: args.queries]]
    engine = QueryEngine(db=str(dbs["one"]), cwd=str(root))
    try:  # the models, loaded once and shared: a cold engine's time is then the database's
        models = {"embedder": engine.embedder(), "static": engine.static_embedder()}
    finally:
        engine.close()
    print(f"{args.repo} at {newest[:12]}, {tier}, {len(subjects)} commit subjects (chunk mode)\n")
    print("| database | chunks | in snapshot | cold ms | warm ms | status ms | warm = cold |")
    print("|---|---:|---:|---:|---:|---:|---|")
    oldest = older[-1] if older else newest
    asks = [(label, db, [newest]) for label, db in dbs.items()]
    asks.append((f"{label}, newest and oldest in turn", many, [newest, oldest]))
    for label, db, shas in asks:
        total, scoped = counts(db, newest)
        row = measure(db, root, shas, subjects, models)
        print(
            f"| {label} | {total:,} | {scoped:,} | {row['cold']:.1f} | {row['warm']:.1f} | "
            f"{row['status']:.1f} | {row['same']}{scanned(row['scanned'])} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
