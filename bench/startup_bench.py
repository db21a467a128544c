"""How long a whole `pix` process takes, from exec to exit: what a user at a terminal and an
agent calling the CLI pay on every command. One markdown table on stdout.

    python -m bench.startup_bench [--corpus requests] [--runs 9] [--python PY ...]

The corpus (bench/corpora.py) is cloned into a temporary folder and indexed twice: once in
full (every chunk has a transformer vector, so a query embeds only itself) and once
`--static-only` (a query has the transformer read its best candidates on the spot). Then each
command below runs --runs times as a child process, the commands taking turns so that load
from anything else on the machine falls on all of them alike. Each `--python` is another
interpreter with pix installed (a wheel in a venv, another dependency set) run side by side
in the same turns; the default is this one. Cells are median seconds (min-max below it in
--verbose). Run it on an idle machine: every figure is wall time.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import corpora

QUESTION = "where are cookies merged into a request"
COMMANDS: list[tuple[str, str, list[str]]] = [
    # label, database ("full" or "static"), arguments
    ("pix --version", "full", ["--version"]),
    ("pix status", "full", ["status"]),
    ("pix alias list", "full", ["alias", "list"]),
    ("pix query --channel bm25 (no model)", "full", ["query", QUESTION, "--channel", "bm25"]),
    ("pix query (transformer, full index)", "full", ["query", QUESTION]),
    ("pix query --file --json (full index)", "full", ["query", QUESTION, "--file", "--json"]),
    ("pix query (static-only index)", "static", ["query", QUESTION]),
]


def prepare(corpus: str, tmp: Path, python: str) -> dict[str, Path]:
    """Two clones of the corpus: one indexed in full, one static-only."""
    source = corpora.corpus(corpus)
    folders = {}
    for kind, extra in (("full", []), ("static", ["--static-only"])):
        folder = tmp / kind
        subprocess.run(["git", "clone", "-q", str(source), str(folder)], check=True)
        print(f"indexing {corpus} ({kind}) ...", file=sys.stderr)
        subprocess.run(
            [python, "-m", "pix.cli", "index", "--quiet", *extra], cwd=folder, check=True
        )
        folders[kind] = folder
    return folders


def timed(python: str, args: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [python, "-P", "-m", "pix.cli", *args], cwd=cwd, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{python} pix {' '.join(args)} failed: {done.stderr.strip()}")
    return elapsed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default="requests", choices=sorted(corpora.CORPORA))
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument(
        "--python",
        action="append",
        default=None,
        help="an interpreter with pix installed (repeatable; default: this one)",
    )
    parser.add_argument("--verbose", action="store_true", help="min-max under each median")
    args = parser.parse_args(argv)
    # Absolute: each child runs in a temporary clone, where a relative path means nothing.
    pythons = [shutil.which(p) or str(Path(p).absolute()) for p in args.python or [sys.executable]]
    with tempfile.TemporaryDirectory(prefix="pix-startup-") as tmp:
        # The databases are built by the first interpreter and read by all of them: the
        # figures are of the process, not of indexing.
        folders = prepare(args.corpus, Path(tmp), pythons[0])
        seconds: dict[tuple[str, str], list[float]] = {}
        for run in range(args.runs):
            print(f"round {run + 1}/{args.runs}", file=sys.stderr)
            for label, kind, command in COMMANDS:
                for python in pythons:
                    seconds.setdefault((label, python), []).append(
                        timed(python, command, folders[kind])
                    )
        for folder in folders.values():
            shutil.rmtree(folder, ignore_errors=True)
    names = [python if len(pythons) > 1 else "median s" for python in pythons]
    print(f"| command ({args.corpus}, {args.runs} runs) | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(pythons))
    for label, _kind, _command in COMMANDS:
        cells = []
        for python in pythons:
            values = seconds[(label, python)]
            cell = f"{statistics.median(values):.3f}"
            if args.verbose:
                cell += f" ({min(values):.3f}-{max(values):.3f})"
            cells.append(cell)
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
