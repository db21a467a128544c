"""Opening a workspace's shards, one after another and concurrently, with none, one or two of
them locked by another process past the lock wait (PIX_LOCK_TIMEOUT).

    python -m bench.lock_bench [--repos 8] [--trials 7] [--timeout 2]

Generated repositories (a few small modules each) are indexed static-only into their own
.pix.db and named in a pix.toml. Each trial builds a ShardSet (pix.shards: what every
`--workspace` command and `pix mcp --workspace` opens first) with 1 thread and with the
default; a locked shard is held by a real second process (`PRAGMA locking_mode = EXCLUSIVE;
BEGIN EXCLUSIVE`, which locks readers out) for the whole row. Prints one markdown table of
medians in milliseconds, and the ratio of the two.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.corpora import _GIT_ENV
from pix.index import index_repository
from pix.shards import THREADS, ShardSet
from pix.store.lock_wait import LOCK_TIMEOUT_ENV
from pix.workspace import load_workspace

HOLDER = """
import sys, time, apsw
conn = apsw.Connection(sys.argv[1])
conn.execute("PRAGMA locking_mode = EXCLUSIVE")
conn.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
sys.stdin.read()  # until the bench closes it
"""


def make_workspace(base: Path, repos: int) -> Path:
    env = {**os.environ, **_GIT_ENV}
    for i in range(repos):
        root = base / f"r{i}"
        root.mkdir()
        for j in range(3):
            (root / f"m{j}.py").write_text(f"def f_{i}_{j}(value):\n    return value * {j}\n")
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
            subprocess.run(["git", "-C", str(root), *args], check=True, env=env)
        index_repository(str(root), embed=False)
    (base / "pix.toml").write_text("".join(f'[[repo]]\npath = "r{i}"\n\n' for i in range(repos)))
    return base / "pix.toml"


def hold(db: Path) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def open_ms(toml: Path, threads: int, trials: int) -> tuple[float, int]:
    """Median milliseconds to open every shard, and how many could not be opened."""
    times, problems = [], 0
    for _ in range(trials):
        started = time.perf_counter()
        shards = ShardSet(load_workspace(toml), threads=threads)
        times.append((time.perf_counter() - started) * 1000)
        problems = len(shards.problems)
        shards.close()
    return statistics.median(times), problems


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=int, default=8)
    parser.add_argument("--trials", type=int, default=7)
    parser.add_argument("--timeout", type=float, default=2.0, help="PIX_LOCK_TIMEOUT, seconds")
    args = parser.parse_args(argv)
    os.environ[LOCK_TIMEOUT_ENV] = str(args.timeout)
    with tempfile.TemporaryDirectory(prefix="pix-lock-bench-") as tmp:
        toml = make_workspace(Path(tmp), args.repos)
        print(
            f"{args.repos} shards, PIX_LOCK_TIMEOUT={args.timeout:g} s, "
            f"median of {args.trials} (locked rows: 1)"
        )
        print(
            "\n| locked shards | not opened | 1 thread (ms) | "
            f"{THREADS} threads (ms) | ratio |\n|---:|---:|---:|---:|---:|"
        )
        for locked in (0, 1, 2):
            holders = [hold(Path(tmp) / f"r{i}" / ".pix.db") for i in range(locked)]
            trials = args.trials if not locked else 1  # each locked trial waits the timeout
            try:
                serial, problems = open_ms(toml, 1, trials)
                threaded, _ = open_ms(toml, THREADS, trials)
            finally:
                for proc in holders:
                    proc.communicate("")
            print(
                f"| {locked} | {problems} | {serial:.1f} | {threaded:.1f} | "
                f"{serial / threaded:.2f} |"
            )


if __name__ == "__main__":
    main()
