"""Embedding a workspace: Ray (pix/cluster.py) against `pix index` repository by repository.

    python -m bench.cluster_bench [--sets oban,gitsigns] [--runs 3] [--workers 1,4]
                                  [--scaling-runs 1] [--mirrors DIR]

The workspace is the development sets' repositories at their pinned commits (bench/devsets/,
bench/devcorpora.py snapshots; default two small ones, about 2,650 distinct chunk texts in
all). Every run starts from fresh clones without a database and is timed as whole processes,
interpreter start, Ray's start and shutdown and model loads included:

- plain: `pix index` in each repository, one after the other (the sum of their walls);
- ray N: `pix index --workspace W --ray --ray-cpus N`, a local Ray instance of N CPUs.

`--runs` runs of plain and of ray 2 (the target: Ray on 2 CPUs no slower than plain), taken in
turns so that load from other work hits both alike; `--scaling-runs` runs of each other worker
count. This machine has os.cpu_count() cores and is the only node: more Ray CPUs than cores are
simulated workers (more worker processes on the same cores), so the speed-up past the core
count shows scheduling overhead, not what more machines would give. Progress on stderr; one
markdown table on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import devcorpora

DEVSETS = Path(__file__).parent / "devsets"
GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def snapshots(sets: list[str]) -> dict[str, Path]:
    out = {}
    for name in sets:
        meta = json.loads((DEVSETS / name / "meta.json").read_text(encoding="utf-8"))
        out[name] = devcorpora.snapshot(meta["repo"], meta["pinned_commit"])
    return out


def fresh_workspace(base: Path, repos: dict[str, Path]) -> Path:
    """Clones of the snapshots (no database) and their pix.toml, in a new folder."""
    ws = Path(tempfile.mkdtemp(prefix="ws-", dir=base))
    lines = []
    for name, source in repos.items():
        subprocess.run(
            ["git", "clone", "-q", str(source), str(ws / name)],
            check=True,
            env={**os.environ, **GIT_ENV},
        )
        lines.append(f'[[repo]]\nname = "{name}"\npath = "{name}"\n')
    (ws / "pix.toml").write_text("".join(lines), encoding="utf-8")
    return ws


def pix(*args: str, cwd: Path) -> tuple[float, dict]:
    """The installed command (this interpreter's pix), timed whole; its JSON report."""
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pix.cli", *args, "--json"],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
    )
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"pix {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return wall, json.loads(done.stdout)


def run_plain(ws: Path, names: list[str]) -> dict:
    wall = embed = 0.0
    inputs = 0
    for name in names:
        seconds, report = pix("index", cwd=ws / name)
        wall += seconds
        embed += report["seconds"].get("embed", 0.0)
        inputs += report["embedded"]
    return {"wall": wall, "embed": embed, "inputs": inputs, "shared": 0}


def run_ray(ws: Path, cpus: int) -> dict:
    wall, report = pix("index", "--workspace", str(ws), "--ray", "--ray-cpus", str(cpus), cwd=ws)
    assert report["workers"] == cpus, report["workers"]
    assert all(repo["report"]["embedPending"] == 0 for repo in report["repos"])
    return {
        "wall": wall,
        "embed": report["seconds"]["embed"],
        "inputs": report["embedded"] + report["swept"],
        "shared": report["shared"],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="oban,gitsigns")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", default="1,4", help="other local Ray CPU counts")
    parser.add_argument("--scaling-runs", type=int, default=1)
    parser.add_argument("--mirrors")
    args = parser.parse_args(argv)
    devcorpora.set_mirrors(args.mirrors)
    repos = snapshots(args.sets.split(","))
    others = [int(n) for n in args.workers.split(",") if n and int(n) != 2]
    plan: list[tuple[str, int]] = []
    for _ in range(args.runs):
        plan += [("plain", 0), ("ray", 2)]
    for _ in range(args.scaling_runs):
        plan += [("ray", n) for n in others]
    results: dict[tuple[str, int], list[dict]] = {}
    base = Path(tempfile.mkdtemp(prefix="pix-cluster-bench-"))
    load = [os.getloadavg()[0]]
    try:
        for number, (system, cpus) in enumerate(plan, 1):
            ws = fresh_workspace(base, repos)
            one = run_plain(ws, list(repos)) if system == "plain" else run_ray(ws, cpus)
            shutil.rmtree(ws)
            results.setdefault((system, cpus), []).append(one)
            load.append(os.getloadavg()[0])
            label = "plain" if system == "plain" else f"ray {cpus}"
            print(
                f"[{number}/{len(plan)}] {label}: {one['wall']:.1f} s wall, "
                f"{one['embed']:.1f} s embedding, {one['inputs']} inputs, load {load[-1]:.1f}",
                file=sys.stderr,
            )
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print_table(results, args, repos, load)


def print_table(results, args, repos, load) -> None:
    plain = statistics.median(r["wall"] for r in results[("plain", 0)])
    one_cpu = results.get(("ray", 1))
    base_ray = statistics.median(r["wall"] for r in one_cpu) if one_cpu else None
    print(
        f"Workspace: {', '.join(repos)} ({args.sets}); machine: {os.cpu_count()} cores, "
        f"load average {min(load):.1f}-{max(load):.1f} during the runs. Ray CPUs beyond "
        f"{os.cpu_count()} are simulated workers on the same cores.\n"
    )
    print(
        "| system | Ray CPUs | runs | wall s (median) | wall min-max | embed s (median) "
        "| inputs embedded | shared inputs | plain / this | speed-up vs ray 1 |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (system, cpus), rows in sorted(results.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        walls = [r["wall"] for r in rows]
        wall = statistics.median(walls)
        speedup = f"{base_ray / wall:.2f}" if base_ray and system == "ray" else "-"
        print(
            f"| {'pix index per repository' if system == 'plain' else 'pix index --ray'} "
            f"| {cpus or '-'} | {len(rows)} | {wall:.1f} | {min(walls):.1f}-{max(walls):.1f} "
            f"| {statistics.median(r['embed'] for r in rows):.1f} | {rows[0]['inputs']} "
            f"| {rows[0]['shared']} | {plain / wall:.2f} | {speedup} |"
        )


if __name__ == "__main__":
    main()
