"""How fast Ctrl-C ends pix: SIGINT to process exit, in the middle of embedding and in MCP.

    python -m bench.interrupt_bench [--trials 5] [--loads idle,busy] [--python PY]

A generated repository (150 modules of small functions, about 300 embedding inputs) is
indexed keyword-only once; each trial copies that database and starts, as a real process:

- `index`: `pix index`, signalled once its first vectors are committed plus a random 0-0.5 s,
  so the signal lands inside an onnxruntime batch or a statement, wherever it falls;
- `mcp index`: `pix mcp`, initialised over stdio, then the `index` tool called, signalled the
  same way;
- `mcp idle`: `pix mcp`, initialised, signalled while it waits for stdin.

The delay is from `send_signal(SIGINT)` to the end of the process (`wait`). `busy` runs one
CPU-bound process beside it (the other core of a 2-core machine). `--python` runs another
checkout's pix (its virtualenv's python) for comparison. Prints one markdown table; the load
averages go to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import apsw

TIMEOUT = 120.0
MESSAGE = "interrupted"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "interrupt-bench", "version": "1"},
    },
}
GIT = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@pix.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@pix.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def make_repo(root: Path) -> None:
    for i in range(150):
        path = root / "pkg" / f"m{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            "\n\n".join(
                f"def m_{i}_{j}(value, scale={j}):\n"
                f"    '''Step {j} of module {i}: scale the value and report it.'''\n"
                f"    result = value * scale + {i}\n"
                f"    print('module {i} step {j}', result)\n"
                f"    return result\n"
                for j in range(6)
            )
        )
    env = {**os.environ, **GIT}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "bench"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, env=env)


def vectors(db: Path) -> int:
    try:
        conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    except apsw.Error:
        return 0
    try:
        return conn.execute("SELECT count(*) FROM chunk_vec_rowids").fetchone()[0]
    except apsw.Error:
        return 0
    finally:
        conn.close()


def start(python: str, repo: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [python, "-P", "-m", "pix.cli", *args],
        cwd=repo,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **GIT},
    )


def send(proc: subprocess.Popen, message: dict) -> None:
    assert proc.stdin is not None
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def under_way(proc: subprocess.Popen, db: Path) -> bool:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline and proc.poll() is None:
        if vectors(db):
            time.sleep(random.uniform(0.0, 0.5))
            return proc.poll() is None
        time.sleep(0.05)
    return False


def trial(python: str, repo: Path, template: Path, command: str) -> dict | None:
    db = repo / ".pix.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    shutil.copy(template, db)
    if command == "index":
        proc = start(python, repo, "index")
        ready = under_way(proc, db)
    else:
        proc = start(python, repo, "mcp")
        assert proc.stdout is not None
        send(proc, INIT)
        ready = json.loads(proc.stdout.readline()).get("id") == 1
        if command == "mcp index":
            send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
            call = {"name": "index", "arguments": {}}
            send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
            ready = under_way(proc, db)
    if not ready:
        proc.kill()
        proc.communicate()
        return None
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=TIMEOUT)
        delay = time.monotonic() - sent
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        delay = float("inf")
    text = err.decode(errors="replace")
    lines = text.strip().splitlines()
    return {
        "code": proc.returncode,
        "one_line": bool(lines) and MESSAGE in lines[-1] and "Traceback" not in text,
        "delay": delay,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--loads", default="idle,busy")
    parser.add_argument("--commands", default="index,mcp index,mcp idle")
    parser.add_argument("--python", default=sys.executable, help="the pix to run")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="pix-interrupt-") as tmp:
        repo = Path(tmp) / "repo"
        make_repo(repo)
        template = Path(tmp) / "keyword.db"
        built = subprocess.run(
            [args.python, "-P", "-m", "pix.cli", "index", "--no-embed", "--quiet"],
            cwd=repo,
            env={**os.environ, **GIT},
        )
        if built.returncode:
            raise SystemExit("the keyword index failed")
        shutil.move(repo / ".pix.db", template)
        for load in args.loads.split(","):
            burner = None
            if load == "busy":
                burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
            try:
                for command in args.commands.split(","):
                    print(f"{load} {command}: load {os.getloadavg()}", file=sys.stderr)
                    runs = [trial(args.python, repo, template, command) for _ in range(args.trials)]
                    done = [r for r in runs if r]
                    rows.append((load, command, done, len(runs) - len(done)))
            finally:
                if burner:
                    burner.kill()
                    burner.wait()
    print("| load | command | trials | exit codes | one-line message | median s | max s |")
    print("|---|---|---:|---|---:|---:|---:|")
    for load, command, done, missed in rows:
        codes = ", ".join(f"{c} x{n}" for c, n in _counts(r["code"] for r in done))
        delays = [r["delay"] for r in done]
        median = f"{statistics.median(delays):.2f}" if delays else "-"
        worst = f"{max(delays):.2f}" if delays else "-"
        trials = f"{len(done)}" + (f" (+{missed} not started)" if missed else "")
        ok = f"{sum(r['one_line'] for r in done)}/{len(done)}"
        print(f"| {load} | {command} | {trials} | {codes} | {ok} | {median} | {worst} |")


def _counts(values) -> list[tuple[object, int]]:
    out: dict = {}
    for value in values:
        out[value] = out.get(value, 0) + 1
    return sorted(out.items(), key=lambda item: str(item[0]))


if __name__ == "__main__":
    main()
