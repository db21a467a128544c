"""The workspace against one database of all 20 repositories (issue 13): is the gap to asking
a repository alone pix's fusion across shards, or the questions?

    python -m bench.onedb_bench [--mirrors DIR] [--queries N] [--skip N]

shards_bench asks each repository's commit subjects of that repository alone and of the 20 as
a workspace (one database each, fused). This bench adds the centralized index of distributed
retrieval's textbook comparison: one git repository whose tree holds the 20 trees side by side
(`<repository>/<path>`), indexed static-only into one database like the shards, so BM25's
statistics, the nearest chunks and every prior see all 20 at once and no fusion across
databases is needed. If that database trails asking alone as far as the workspace does, the
gap is the questions' (a commit subject such as "Fix typo" names no repository), not the
fusion's.

The shards are shards_bench's (devbench's `--reuse --static-only` cache, never written); the
one database is built once into $PIX_BENCH_CACHE/onedb/<model>-<indexer>-static/ (a few
minutes). Per repository and pooled: MRR@10 / nDCG@10 alone, across the workspace as shipped
(`query_shards`), and of the one database, with "foreign first": the share of questions whose
first file is another repository's. Quality only; progress on stderr, the table on stdout.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

from bench import corpora, devcorpora, metrics, quality
from bench.shards_bench import request, shard_sets, with_questions
from pix.index import index_repository
from pix.ingest.scan import git
from pix.query import QueryEngine
from pix.shards import ShardSet, query_shards
from pix.workspace import Shard, Workspace

SYSTEMS = ("alone", "all 20, as shipped", "one database")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def one_repository(shards: list[Shard], target: Path) -> Path:
    """A git repository holding every shard's tracked files under `<shard name>/`, committed
    once (devcorpora.commit_tree)."""
    tree = target / "tree"
    if (tree / ".git").exists():
        return tree
    building = target / "tree.partial"
    shutil.rmtree(building, ignore_errors=True)
    for shard in shards:
        for path in filter(None, git(shard.root, "ls-files", "-z").decode().split("\0")):
            source, copy = shard.root / path, building / shard.name / path
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy, follow_symlinks=False)
    devcorpora.commit_tree(building, "the 20 development repositories")
    building.rename(tree)
    return tree


def one_database(shards: list[Shard]) -> tuple[Path, Path]:
    key = devcorpora.database("x", "-static").parent.name  # <model>-<indexer>-static
    target = corpora.cache_dir() / "onedb" / key
    target.mkdir(parents=True, exist_ok=True)
    tree = one_repository(shards, target)
    db = target / "all.db"
    if not db.exists():
        t0 = time.perf_counter()
        index_repository(str(tree), str(db), embed=False)
        log(f"one database: indexed static-only in {time.perf_counter() - t0:.0f} s ({db})")
    return tree, db


def foreign_first(runs: list[tuple[list[str], list[str]]]) -> float:
    """The share of questions whose first file belongs to another repository than the gold's."""
    if not runs:
        return 0.0
    other = sum(
        1 for ranked, gold in runs if ranked and ranked[0].split("/")[0] != gold[0].split("/")[0]
    )
    return other / len(runs)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirrors", help="folder of <owner>+<name>/repo bare git dirs")
    parser.add_argument("--queries", type=int, default=100, help="queries per set")
    parser.add_argument("--skip", type=int, default=0, help="leave out each set's first N")
    parser.add_argument(
        "--questions",
        action="store_true",
        help="ask the developers' questions (bench/devsets/questions), not the commit subjects",
    )
    args = parser.parse_args(argv)
    devcorpora.set_mirrors(args.mirrors)
    sets = shard_sets()
    if args.questions:
        sets = with_questions(sets)
    shards = [shard for shard, _ in sets]
    tree, db = one_database(shards)
    workspace = Workspace(None, tuple(shards))
    shipped = ShardSet(workspace, threads=2)
    one = QueryEngine(db=str(db), cwd=str(tree))
    runs: dict[str, dict[str, list]] = {s: {} for s in SYSTEMS}
    for shard, qs in sets:
        if not qs[args.skip : args.skip + args.queries]:
            continue  # a repository without questions is only asked across the others
        t0 = time.perf_counter()
        alone = shipped.engines[shard.name]
        for system in SYSTEMS:
            runs[system][shard.name] = []
        for q in qs[args.skip : args.skip + args.queries]:
            gold = [f"{shard.name}/{g}" for g in q["gold_files"]]
            own = quality.rank_files(alone, q["query"])
            runs["alone"][shard.name].append(([f"{shard.name}/{f}" for f in own], gold))
            answer = query_shards(shipped, request(q["query"]))
            across = [f"{r['repo']}/{r['file']}" for r in answer["results"]]
            runs["all 20, as shipped"][shard.name].append((across, gold))
            runs["one database"][shard.name].append((quality.rank_files(one, q["query"]), gold))
        log(f"  {shard.name}: {len(qs[args.skip : args.skip + args.queries])} questions, "
            f"{time.perf_counter() - t0:.0f} s")  # fmt: skip
    shipped.close()
    one.close()
    asked = "developers' questions" if args.questions else "commit subjects"
    print(f"Static-only databases; {sum(len(r) for r in runs['alone'].values())} {asked}.\n")
    head = "| repository | queries |" + "".join(f" {s} MRR@10 | nDCG@10 |" for s in SYSTEMS)
    print(head + " foreign first, as shipped | foreign first, one database |")
    print("|---|---:|" + "---:|" * (2 * len(SYSTEMS) + 2))
    means: list[list[float]] = []
    for name in runs["alone"]:
        cells = []
        for system in SYSTEMS:
            m = metrics.evaluate(runs[system][name])
            cells += [m["mrr@10"], m["ndcg@10"]]
        cells += [foreign_first(runs[s][name]) for s in SYSTEMS[1:]]
        means.append(cells)
        row = " | ".join(f"{v:.3f}" for v in cells)
        print(f"| {name} | {len(runs['alone'][name])} | {row} |")
    mean = [statistics.fmean(col) for col in zip(*means, strict=True)]
    print("| **mean** | | " + " | ".join(f"{v:.3f}" for v in mean) + " |")
    print(
        f"\ngap to alone (mean MRR@10): as shipped {mean[0] - mean[2]:.3f}, "
        f"one database {mean[0] - mean[4]:.3f}"
    )


if __name__ == "__main__":
    main()
