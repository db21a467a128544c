"""First indexes at once: rounds of processes that create one new database together.

    python -m bench.race_bench [--rounds 100] [--processes 2]

A generated repository (five small modules) in a temporary folder; each round deletes its
database and starts `--processes` `pix index --static-only --json` processes at the same
moment, then counts the ones that failed and why (their error message, the folder's path as REPO).
A race of two processes making one new file shows up in about one round in fifty, so it
takes a few hundred rounds to see one; a test could not wait that long. Prints one markdown
table.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.corpora import _GIT_ENV

MODULE = "def f{i}(x):\n    return x + {i}\n"


def make_repo(root: Path) -> Path:
    root.mkdir()
    for i in range(5):
        (root / f"m{i}.py").write_text(MODULE.format(i=i), encoding="utf-8")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=root, env=_GIT_ENV, check=True)
    return root


def one_round(repo: Path, processes: int) -> list[str]:
    """The error of each process that failed (empty when all succeeded)."""
    for name in (".pix.db", ".pix.db-wal", ".pix.db-shm"):
        (repo / name).unlink(missing_ok=True)
    command = [sys.executable, "-m", "pix.cli", "index", "--static-only", "--json", "-q", "."]
    procs = [
        subprocess.Popen(command, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(processes)
    ]
    errors = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        if proc.returncode != 0:
            try:
                message = json.loads(out)["error"]["message"]
            except (ValueError, KeyError):
                message = (err or out).decode("utf-8", "replace").strip().splitlines()[-1]
            errors.append(message.replace(str(repo), "REPO"))
    return errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args(argv)
    failures: collections.Counter[str] = collections.Counter()
    failed_rounds = 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pix-race-bench-") as tmp:
        repo = make_repo(Path(tmp) / "repo")
        for n in range(args.rounds):
            errors = one_round(repo, args.processes)
            failures.update(errors)
            failed_rounds += bool(errors)
            if errors:
                print(f"round {n + 1}: {errors}", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - t0
    runs = args.rounds * args.processes
    print(
        f"{args.rounds} rounds of {args.processes} first indexes at once, {seconds:.0f} s\n\n"
        "| failed processes | of | failed rounds | error |\n|---:|---:|---:|---|"
    )
    if not failures:
        print(f"| 0 | {runs} | 0 | |")
    for message, n in failures.most_common():
        print(f"| {n} | {runs} | {failed_rounds} | {message} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
