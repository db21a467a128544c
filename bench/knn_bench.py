"""A meaning channel's candidates: sqlite-vec's scan beside a warm engine's matrix.

    python -m bench.knn_bench [--queries N] [--k 200] [--django]

For every cached development database (devbench's `--reuse` caches: the transformer vectors of
the full databases, the static vectors of the static-only ones; never written) and, with
--django, a static-only index of django 5.2.19's sdist (bench/corpora.py "huge", built once
into $PIX_BENCH_CACHE/knn), one
row per vector table: how many vectors, the median ms of the vec0 scan (`embedding MATCH ...
AND k = K`, what a cold engine runs), of pix.retrieve.knn.nearest on the matrix a warm engine
keeps, and of the statement reading those K rows back from JSON (what the warm path adds in
SQL), the time and memory of loading the matrix once, and whether the rows (ids, order and
distances, after the JSON round trip) were the scan's for every query. Queries: N stored
vectors of the table, drawn evenly.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from bench import corpora, devcorpora
from pix.retrieve import knn
from pix.store import search_sql
from pix.store.db import open_store

SCAN = {"dense": search_sql.DENSE_SCAN, "static": search_sql.STATIC_SCAN}
GIVEN = search_sql.NEAR_FROM_JSON


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def databases(django: bool) -> list[tuple[str, Path]]:
    out = []
    for variant, label in (("", "full"), ("-static", "static-only")):
        folder = devcorpora.database("x", variant).parent
        out += [
            (f"{db.stem} ({label})", db)
            for db in sorted(folder.glob("*.db"))
            if not db.stem.startswith("parent-")  # parent_bench's: a snapshot per subject
        ]
    if django:
        db = corpora.cache_dir() / "knn" / "django-static.db"
        if not db.exists():
            from pix.index import index_repository

            db.parent.mkdir(parents=True, exist_ok=True)
            root = corpora.corpus("huge")
            log(f"indexing {root} static-only into {db}")
            index_repository(str(root), str(db), embed=False)
        out.append(("django 5.2.19 (static-only)", db))
    return out


def median_ms(times: list[float]) -> float:
    return statistics.median(times) * 1000


def measure(db: Path, channel: str, n: int, k: int) -> tuple | None:
    store = open_store(db, create=False)
    try:
        with store.read() as conn:
            t0 = time.perf_counter()
            matrix = knn.load(conn, knn.TABLES[channel])
            load_ms = (time.perf_counter() - t0) * 1000
            if matrix is None or len(matrix.ids) < 2 * k:
                return None
            step = max(1, len(matrix.ids) // n)
            queries = [matrix.vectors[i].astype(np.int8) for i in range(0, len(matrix.ids), step)]
            scan, mine, rescore, agree = [], [], [], 0
            for query in queries[:n]:
                t0 = time.perf_counter()
                rows = conn.execute(SCAN[channel], (query.tobytes(), k)).fetchall()
                t1 = time.perf_counter()
                near = knn.nearest(matrix, query, k)
                t2 = time.perf_counter()
                back = conn.execute(GIVEN, (json.dumps(near),)).fetchall()
                t3 = time.perf_counter()
                scan.append(t1 - t0)
                mine.append(t2 - t1)
                rescore.append(t3 - t2)
                agree += back == rows
            mib = (matrix.vectors.nbytes + matrix.ids.nbytes * 3 + matrix.magnitude.nbytes) / 2**20
            return (
                len(matrix.ids), matrix.vectors.shape[1], median_ms(scan), median_ms(mine),
                median_ms(rescore), load_ms, mib, f"{agree}/{len(scan)}",
            )  # fmt: skip
    finally:
        store.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--k", type=int, default=200)
    parser.add_argument("--django", action="store_true")
    args = parser.parse_args(argv)
    print(
        "| database | table | vectors | dims | vec0 scan ms | numpy ms | JSON read ms | "
        "speed-up | load ms | matrix MiB | same rows |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, db in databases(args.django):
        for channel in ("dense", "static"):
            row = measure(db, channel, args.queries, args.k)
            if row is None:
                continue
            n, dims, scan, mine, rescore, load_ms, mib, same = row
            print(
                f"| {name} | {channel} | {n:,} | {dims} | {scan:.2f} | {mine:.2f} | "
                f"{rescore:.2f} | {scan / (mine + rescore):.1f}x | {load_ms:.0f} | {mib:.1f} | "
                f"{same} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
