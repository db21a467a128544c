"""One question across the 20 development repositories (issue 13): latency and quality.

    python -m bench.shards_bench [--mirrors DIR] [--queries N] [--latency N] [--threads 1,2]
                                 [--sizes 1,5,10,20] [--depths 100] [--mixes B:G:L,..]
                                 [--breadths 5,6,8] [--skip N] [--no-quality] [--no-latency]
                                 [--history]

The workspace is the 20 repositories with commit sets: the 14 language sets of bench/devsets,
the shared requests and click sets, and the four `commitloc-shards` Python sets (pytest,
sphinx, pylint, xarray). Every database is static-only (`pix index --static-only`: words,
names and the static tier; the transformer for all 20 would take hours here): the 16 existing
ones are read from devbench's `--reuse --static-only` cache (never written), the four others
are built once into $PIX_BENCH_CACHE/shards/<model>-<indexer>/.

Tables (stdout; progress on stderr):
- latency: a warm ShardSet (databases open, model loaded, three queries first), `pix query`
  in file mode, top 10, no content, on N shards (1, 5, 10, 20: the first N of the workspace's
  order, which alternates small and large databases); with 1 and 2 threads checking every
  shard's work tree on every query (what a one-shot `pix query --workspace` does, minus opening
  the databases), and with 2 threads trusting a check for 2 s (what `pix mcp --workspace`
  does with --no-refresh; one that re-indexes changed shards checks every shard's work tree
  once its check is 2 s old, and the line under the table gives what checking all of them
  costs); median and p90 ms of `query_shards` over the same --latency queries (drawn evenly
  from the 20 sets), the configurations taken in turns. Each of --depths adds a row of the
  server configuration asking each shard for that many candidates per channel instead of
  pix.retrieve.search.DEPTH (ShardSet depth: faster, and each shard ranks otherwise than
  alone; the quality table says what it costs). "shards ranked": from PROBE_FACTOR x BREADTH
  shards on, pix probes every shard and ranks the BREADTH of largest factor
  (pix/shard_probe.py), STAGE at a time, leaving out those whose ceiling cannot reach the
  merged top ("ceilings"); one server row ranks every chosen shard ("every one", the same
  answers), one ranks them all, as pix did before the probe. "mean ranked": shards ranked a
  query (the answer's `repos` with `ranked: true`).
- quality: each repository's own commit set (--queries per set, the first N after --skip: tune
  mixes with --skip 30, report without), asked of that repository alone (`QueryEngine.query`,
  as devbench does) and of all 20 (`query_shards`); MRR@10 / nDCG@10 where a result of another
  repository is a miss. One row per repository, then the mean; one column pair per
  beta:gamma:lambda mix (SHARD_BETA: the meaning gap, SHARD_GAMMA: the coverage gap, the best
  chunk's share of the query's terms, SHARD_LAMBDA: the likelihood gap; 0:0:0 is a plain merge
  of the shards' own scores; the default marked *).
  Each query's shard rankings are computed once and merged with every mix (pix.shards.merge
  is the function query_shards uses). Each of --depths adds a column pair: all 20 with the
  default mix, each shard asked for that many candidates per channel. Each of --breadths adds a
  column pair: all 20 probed and only that many of largest factor merged (with every shard a
  name or phrase lifts), from the same rankings: what BREADTH would give. The last column pair
  is `query_shards` as shipped: all 20 probed, the BREADTH of largest factor ranked. Under it,
  the routing table: the questions grouped by where their own repository's factor stood (the
  largest; at least half the largest; a tenth to half; below a tenth), with MRR@10 alone and
  as shipped pooled over each group. It says where the gap to asking alone comes from.

`--history` asks with the history prior's counts (pix/retrieve/history.py), which the cached
databases lack (one-commit snapshots): every shard is a scratch copy holding the counts of the
year before its pinned commit, as `pix index` writes them, and while a repository's own
questions are asked its counts are those of the year before each question's own commit (as
bench/history_bench.py does), so that no question is weighed by the commit that answers it.
requests and click (release archives) have no history and stay uncounted. Quality only.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import apsw

from bench import corpora, devcorpora, devsets, metrics, quality
from bench.history_bench import Log, write_counts
from pix.index import index_repository
from pix.mcp import WORKSPACE_FRESH_SECONDS
from pix.query import QueryEngine, QueryRequest
from pix.retrieve.search import DEPTH
from pix.shard_factors import SHARD_BETA, SHARD_GAMMA, SHARD_LAMBDA, shard_factors
from pix.shard_probe import BREADTH, PROBE_FACTOR, probe, to_rank
from pix.shards import ShardSet, merge, query_shards, shard_ranking
from pix.snapshot import changed_files, select_snapshot
from pix.workspace import Shard, Workspace

SHARED = ("requests", "click")
NEW = tuple(devsets.committed_sets("commitloc-shards"))
SIZES = (1, 5, 10, 20)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def shard_sets() -> list[tuple[Shard, list[dict]]]:
    """The 20 repositories: (shard, its queries)."""
    out = []
    for name in devsets.committed_sets("commitloc"):
        meta, qs = devsets.load_set(name)
        root = devcorpora.snapshot(meta["repo"], meta["pinned_commit"])
        out.append((Shard(name, root, _cached(name)), qs))
    for name in SHARED:
        out.append(
            (Shard(name, corpora.corpus(name), _cached(f"shared-{name}")), corpora.queries(name))
        )
    key = devcorpora.database("x", "-static").parent.name  # <model>-<indexer>-static
    for name in NEW:
        meta, qs = devsets.load_set(name)
        root = devcorpora.snapshot(meta["repo"], meta["pinned_commit"])
        db = corpora.cache_dir() / "shards" / key / f"{name}.db"
        if not db.exists():
            db.parent.mkdir(parents=True, exist_ok=True)
            t0 = time.perf_counter()
            index_repository(str(root), str(db), embed=False)
            log(f"  {name}: indexed static-only in {time.perf_counter() - t0:.0f} s ({db})")
        out.append((Shard(name, root, db), qs))
    # Interleave sizes so that 5 and 10 shards are not all small or all large.
    order = sorted(out, key=lambda sq: sq[0].db.stat().st_size)
    mixed = [order[i] for i in _spread(len(order))]
    return mixed


def with_questions(sets: list[tuple[Shard, list[dict]]]) -> list[tuple[Shard, list[dict]]]:
    """The same shards, each asked the developers' questions of its repository
    (bench/devsets/questions; written by people reading the code, at the same pinned commits)
    instead of its commit subjects; a repository without questions stays in the workspace
    as a shard that is never asked."""
    _, qs = devsets.load_set("questions")
    by_set: dict[str, list[dict]] = {}
    for q in qs:
        by_set.setdefault(q["set"], []).append(q)
    return [(shard, by_set.get(shard.name, [])) for shard, _ in sets]


def _spread(n: int) -> list[int]:
    """0, n-1, 1, n-2, ...: smallest, largest, next smallest, ..."""
    lo, hi, out = 0, n - 1, []
    while lo <= hi:
        out.append(lo)
        if hi != lo:
            out.append(hi)
        lo, hi = lo + 1, hi - 1
    return out


def _cached(name: str) -> Path:
    db = devcorpora.database(name, "-static")
    if not db.exists():
        raise SystemExit(
            f"{db} is missing: run `python -m bench.devbench --sets all --reuse --static-only`"
        )
    return db


class History:
    """The shards' commit counts (`--history`): scratch copies of the databases, each counted
    as of its pinned commit, and a repository's counts moved to a question's own day while
    its questions are asked."""

    def __init__(self, sets: list[tuple[Shard, list[dict]]]) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="pix-shards-history-")
        self.logs: dict[str, Log] = {}
        self.conns: dict[str, apsw.Connection] = {}
        self.sets = []
        for shard, qs in sets:
            db = Path(self._tmp.name) / shard.db.name
            shutil.copyfile(shard.db, db)
            self.sets.append((dataclasses.replace(shard, db=db), qs))
            if shard.name in SHARED:
                continue
            meta, _ = devsets.load_set(shard.name)
            self.logs[shard.name] = Log(devcorpora.mirror(meta["repo"]), meta["pinned_commit"])
            # Opened by pix first: a database cached before migration 008 gains its column.
            QueryEngine(db=str(db), cwd=str(shard.root)).close()
            conn = apsw.Connection(str(db))
            conn.set_busy_timeout(10_000)
            self.conns[shard.name] = conn
            self.pinned(shard.name)

    def _write(self, name: str, counts: Counter[str]) -> None:
        conn = self.conns[name]
        (snapshot_id,) = conn.execute("SELECT max(id) FROM snapshot").fetchone()
        write_counts(conn, snapshot_id, counts)

    def pinned(self, name: str) -> None:
        """The counts `pix index` writes at the pinned commit."""
        if name in self.logs:
            self._write(name, self.logs[name].counts(self.logs[name].pinned))

    def asked(self, name: str, query: dict) -> None:
        """The counts of the year before the question's own commit (history_bench.Log.asked)."""
        if name in self.logs:
            self._write(name, self.logs[name].asked(query))

    def close(self) -> None:
        for conn in self.conns.values():
            conn.close()
        self._tmp.cleanup()


def mix(text: str) -> tuple[float, float, float]:
    """`B:G[:L]` -> (beta, gamma, lambda); lambda 0 when left out (the merge before it)."""
    values = [float(x) for x in text.split(":")]
    if len(values) not in (2, 3):
        raise SystemExit(f"shards_bench: --mixes takes B:G or B:G:L, not {text!r}")
    return (values[0], values[1], values[2] if len(values) == 3 else 0.0)


def request(query: str) -> QueryRequest:
    return QueryRequest(query=query, mode="file", top=10, no_content=True)


def latency(
    sets, n_queries: int, threads: list[int], sizes: list[int], depths: list[int]
) -> list[tuple]:
    """Per number of shards, each configuration (threads, seconds a work-tree check is
    trusted: 0 as a one-shot command, 2 as `pix mcp --workspace`, candidates per channel)
    over the same queries."""
    pool = [q["query"] for _, qs in sets for q in qs[:3]]
    step = max(1, len(pool) // n_queries)
    queries = pool[::step][:n_queries]
    server = (max(threads), WORKSPACE_FRESH_SECONDS)
    configs = [(t, 0.0, DEPTH, BREADTH, True) for t in threads]
    configs += [(*server, DEPTH, BREADTH, True)]
    configs += [(*server, DEPTH, BREADTH, False)]  # every chosen shard ranked: no ceilings
    configs += [(*server, DEPTH, None, True)]  # every shard ranked: what pix did before the probe
    configs += [(*server, d, BREADTH, True) for d in depths if d != DEPTH]
    rows = []
    checks: dict[int, float] = {}
    for size in sizes:
        workspace = Workspace(None, tuple(shard for shard, _ in sets[:size]))
        chunks = 0
        opened = {
            c: ShardSet(
                workspace, threads=c[0], fresh_for=c[1], depth=c[2], breadth=c[3], ceilings=c[4]
            )
            for c in configs
        }
        for engine in next(iter(opened.values())).engines.values():
            chunks += engine.store.conn.execute("SELECT count(*) FROM chunk").fetchone()[0]
        for shards in opened.values():
            for q in queries[:3]:  # warm: model, pages, kept vectors
                query_shards(shards, request(q))
        times: dict[tuple, list[float]] = {c: [] for c in configs}
        asked: dict[tuple, list[int]] = {c: [] for c in configs}
        for q in queries:
            for c, shards in opened.items():
                t0 = time.perf_counter()
                answer = query_shards(shards, request(q))
                times[c].append((time.perf_counter() - t0) * 1000)
                asked[c].append(sum(1 for r in answer["repos"] if r["ranked"]))
        checks[size] = check_ms(next(iter(opened.values())))
        for c, shards in opened.items():
            ms = sorted(times[c])
            p90 = ms[int(0.9 * (len(ms) - 1))]
            ranked = statistics.fmean(asked[c])
            rows.append((size, chunks, *c, ranked, len(ms), statistics.median(ms), p90))
            shards.close()
        log(f"  latency: {size} shards done")
    return rows, checks


def check_ms(shards: ShardSet, runs: int = 5) -> float:
    """Median ms of one work-tree check of every shard, one after another: what a server
    that re-indexes changed shards (`pix mcp --workspace`) spends every WORKSPACE_FRESH_SECONDS
    on top of its queries."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for engine in shards.engines.values():
            with engine.store.read():
                snapshot = select_snapshot(engine.store, engine.target, None)
                changed_files(engine.store, engine.target, snapshot)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def quality_rows(
    sets,
    per_set: int,
    betas: list[tuple[float, float, float]],
    depths: list[int],
    skip: int = 0,
    breadths: tuple[int, ...] = (),
    history: History | None = None,
) -> list[tuple]:
    workspace = Workspace(None, tuple(shard for shard, _ in sets))
    shards = ShardSet(workspace, threads=2, breadth=None)
    probed = ShardSet(workspace, threads=2)  # pix as shipped: the best BREADTH ranked
    fewer = {d: ShardSet(workspace, threads=2, depth=d, breadth=None) for d in depths}
    order = workspace.names()
    rows = []
    routed: list[tuple[str, tuple, tuple]] = []
    for shard, qs in sets:
        if not qs[skip : skip + per_set]:
            continue
        engine = shards.engines[shard.name]
        alone, across, chosen = [], {b: [] for b in betas}, []
        shallow: dict[int, list] = {d: [] for d in depths}
        narrow: dict[int, list] = {k: [] for k in breadths}
        t0 = time.perf_counter()
        for q in qs[skip : skip + per_set]:
            if history:
                history.asked(shard.name, q)
            gold = [f"{shard.name}/{g}" for g in q["gold_files"]]
            own = quality.rank_files(engine, q["query"])
            alone.append(([f"{shard.name}/{f}" for f in own], gold))
            req = request(q["query"])
            answers = shards.map(workspace.shards, lambda e, req=req: shard_ranking(e, req))
            for beta in betas:
                merged = merge(answers, order, 10, shard_factors(answers, *beta))
                across[beta].append(([f"{n}/{h.path}" for n, h, _ in merged], gold))
            if breadths:
                probes = shards.map(workspace.shards, lambda e, req=req: probe(e, req))
                factors = shard_factors(probes)
                largest = {n: f.factor for n, f in factors.items()}
                for k in breadths:
                    keep = to_rank(probes, largest, order, k)
                    kept = {n: a for n, a in answers.items() if n in keep}
                    merged = merge(kept, order, 10, factors)
                    narrow[k].append(([f"{n}/{h.path}" for n, h, _ in merged], gold))
            answer = query_shards(probed, req)
            chosen.append(([f"{r['repo']}/{r['file']}" for r in answer["results"]], gold))
            routed.append((routing_group(answer["repos"], shard.name), alone[-1], chosen[-1]))
            for d, few in fewer.items():
                answers = few.map(workspace.shards, lambda e, req=req: shard_ranking(e, req))
                merged = merge(answers, order, 10)
                shallow[d].append(([f"{n}/{h.path}" for n, h, _ in merged], gold))
        if history:
            history.pinned(shard.name)
        m_alone = metrics.evaluate(alone)
        row = [shard.name, len(alone), m_alone["mrr@10"], m_alone["ndcg@10"]]
        for beta in betas:
            m = metrics.evaluate(across[beta])
            row += [m["mrr@10"], m["ndcg@10"]]
        for d in depths:
            m = metrics.evaluate(shallow[d])
            row += [m["mrr@10"], m["ndcg@10"]]
        for k in breadths:
            m = metrics.evaluate(narrow[k])
            row += [m["mrr@10"], m["ndcg@10"]]
        m = metrics.evaluate(chosen)
        row += [m["mrr@10"], m["ndcg@10"]]
        rows.append(tuple(row))
        log(f"  quality: {shard.name} ({len(alone)} queries, {time.perf_counter() - t0:.0f} s)")
    shards.close()
    probed.close()
    for few in fewer.values():
        few.close()
    return rows, routed


# Where the question's own repository's factor stood: the largest (the first of equals), or
# else the share of the largest it reached, at least each floor.
LARGEST = "the largest"
SHARE_GROUPS = (
    (0.5, "at least half the largest"),
    (0.1, "a tenth to half of it"),
    (0.0, "below a tenth of it"),
)
ROUTING_GROUPS = (LARGEST, *(label for _, label in SHARE_GROUPS))


def routing_group(repos: list[dict], gold_repo: str) -> str:
    """Where the question's own repository stood in the probe's factors (the answer's
    `repos` listing). Grouped so, the questions show how much of the gap to asking that
    repository alone comes from another repository's larger factor, and by how much."""
    factors = {r["name"]: r["factor"] for r in repos}
    first = max(factors, key=factors.__getitem__)  # the first of equals, in workspace order
    if first == gold_repo:
        return LARGEST
    share = factors.get(gold_repo, 0.0) / factors[first] if factors[first] > 0 else 0.0
    return next(label for floor, label in SHARE_GROUPS if share >= floor)


def routing_table(routed: list[tuple[str, tuple, tuple]]) -> str:
    """MRR@10 alone and across all 20 (as shipped), pooled over the questions of each
    routing group."""
    lines = [
        "| the own repository's factor | queries | share | alone MRR@10 "
        "| all 20, as shipped, MRR@10 |",
        "|---|---:|---:|---:|---:|",
    ]
    for label in ROUTING_GROUPS:
        group = [(a, c) for g, a, c in routed if g == label]
        if not group:
            continue
        alone = metrics.evaluate(a for a, _ in group)["mrr@10"]
        across = metrics.evaluate(c for _, c in group)["mrr@10"]
        lines.append(
            f"| {label} | {len(group)} | {len(group) / len(routed):.3f} | {alone:.3f} "
            f"| {across:.3f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirrors", help="folder of <owner>+<name>/repo bare git dirs")
    parser.add_argument("--queries", type=int, default=100, help="queries per set (quality)")
    parser.add_argument(
        "--skip",
        type=int,
        default=0,
        help="leave out each set's first N queries (tune on others than those reported)",
    )
    parser.add_argument("--latency", type=int, default=60, help="queries timed per row")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="shard counts timed")
    parser.add_argument(
        "--depths",
        default="100",
        help=f"candidates per channel to compare with pix query's {DEPTH} ('' for none)",
    )
    parser.add_argument(
        "--mixes",
        default=f"0:0:0,{SHARD_BETA:g}:{SHARD_GAMMA:g}:0,0:0:{SHARD_LAMBDA:g},"
        f"{SHARD_BETA:g}:{SHARD_GAMMA:g}:{SHARD_LAMBDA:g}",
        help="beta:gamma:lambda mixes to merge with (0:0:0: a plain merge of the shards' scores)",
    )
    parser.add_argument(
        "--breadths",
        default="",
        help="shards ranked after the probe to compare with BREADTH's (quality), e.g. 5,6,8",
    )
    parser.add_argument("--no-quality", action="store_true")
    parser.add_argument("--no-latency", action="store_true")
    parser.add_argument(
        "--history", action="store_true", help="ask with each repository's commit counts"
    )
    parser.add_argument(
        "--questions",
        action="store_true",
        help="ask the developers' questions (bench/devsets/questions), not the commit subjects",
    )
    args = parser.parse_args(argv)
    if args.history and not args.no_latency:
        parser.error("--history measures quality: add --no-latency")
    devcorpora.set_mirrors(args.mirrors)
    sets = shard_sets()
    if args.questions:
        sets = with_questions(sets)
        print("The developers' questions (--questions), not the commit subjects.\n")
    history = History(sets) if args.history else None
    if history:
        sets = history.sets
        print("With the history prior's counts (--history).\n")
    depths = [int(d) for d in args.depths.split(",") if d and int(d) != DEPTH]
    log(f"workspace: {', '.join(s.name for s, _ in sets)}")
    print("Static-only databases (words, names, static tier; no transformer vectors).\n")
    if not args.no_latency:
        threads = [int(t) for t in args.threads.split(",")]
        sizes = [int(n) for n in args.sizes.split(",")]
        rows, checks = latency(sets, args.latency, threads, sizes, depths)
        print(
            "| shards | chunks | threads | work tree checked | candidates per channel "
            "| shards ranked | mean ranked | queries | median ms | p90 ms |"
        )
        print("|---:|---:|---:|---|---:|---|---:|---:|---:|---:|")
        for size, chunks, t, fresh, depth, breadth, ceilings, mean, n, med, p90 in rows:
            checked = "every query" if not fresh else f"every {fresh:g} s"
            probed = breadth is not None and size >= PROBE_FACTOR * breadth
            ranked = f"best {breadth} by probe" if probed else "all"
            if probed:
                ranked += ", ceilings" if ceilings else ", every one"
            print(
                f"| {size} | {chunks:,} | {t} | {checked} | {depth} | {ranked} | {mean:.1f} "
                f"| {n} | {med:.1f} | {p90:.1f} |"
            )
        print(
            "\none work-tree check of every shard (a re-indexing server's, every "
            f"{WORKSPACE_FRESH_SECONDS:g} s), median ms: "
            + ", ".join(f"{n} shards {ms:.1f}" for n, ms in checks.items())
        )
        print()
    if not args.no_quality:
        betas = [mix(m) for m in args.mixes.split(",")]
        breadths = tuple(int(k) for k in args.breadths.split(",") if k)
        rows, routed = quality_rows(sets, args.queries, betas, depths, args.skip, breadths, history)
        default = (SHARD_BETA, SHARD_GAMMA, SHARD_LAMBDA)
        head = "| repository | queries | alone MRR@10 | alone nDCG@10 |"
        head += "".join(
            f" all 20 {b:g}:{g:g}:{lam:g}{'*' if (b, g, lam) == default else ''} MRR@10 | nDCG@10 |"
            for b, g, lam in betas
        )
        head += "".join(f" all 20 depth {d} MRR@10 | nDCG@10 |" for d in depths)
        head += "".join(f" all 20 probed, best {k} MRR@10 | nDCG@10 |" for k in breadths)
        head += f" all 20, best {BREADTH} ranked by probe MRR@10 | nDCG@10 |"
        print(head)
        print("|---|---:|" + "---:|" * (4 + 2 * len(betas) + 2 * len(depths) + 2 * len(breadths)))
        for row in rows:
            print(f"| {row[0]} | {row[1]} | " + " | ".join(f"{v:.3f}" for v in row[2:]) + " |")
        means = [statistics.fmean(r[i] for r in rows) for i in range(2, len(rows[0]))]
        print("| **mean** | | " + " | ".join(f"{v:.3f}" for v in means) + " |")
        worst = [min(r[4 + 2 * j] - r[2] for r in rows) for j in range(len(betas))]
        print(
            "\nlargest loss of MRR@10 against alone, per beta:gamma:lambda: "
            + ", ".join(
                ":".join(f"{x:g}" for x in m) + f": {w:+.3f}"
                for m, w in zip(betas, worst, strict=True)
            )
        )
        print(
            "\nBy where the question's own repository stood among the probe's factors "
            "(pooled over all queries; ties: the workspace's order):\n"
        )
        print(routing_table(routed))
        if depths and default in betas:
            at = 4 + 2 * betas.index(default)
            for j, d in enumerate(depths):
                col = 4 + 2 * len(betas) + 2 * j
                print(
                    f"depth {d} against {DEPTH} (the default mix), mean MRR@10 "
                    f"{means[col - 2] - means[at - 2]:+.3f}, per repository from "
                    f"{min(r[col] - r[at] for r in rows):+.3f} to "
                    f"{max(r[col] - r[at] for r in rows):+.3f}"
                )
    if history:
        history.close()


if __name__ == "__main__":
    main()
