"""Waiting for another process's lock on a .pix.db: said on a terminal, bounded by
PIX_LOCK_TIMEOUT (exit 5 past it), and in a workspace one locked shard is a warning while the
others answer. The lock is held by a real second process with SQLite's own transactions."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import TABLES, WEATHER, commit, new_repo, on_pty, pix, pix_json, write

from pix.index import index_repository

# Holds the database's lock for argv[3] seconds: "immediate" is a writer's transaction (another
# pix index), "exclusive" locks out readers too (a sqlite3 shell in exclusive mode).
HOLDER = """
import sys, time, apsw
conn = apsw.Connection(sys.argv[1])
if sys.argv[2] == "exclusive":
    conn.execute("PRAGMA locking_mode = EXCLUSIVE")
conn.execute("BEGIN " + sys.argv[2].upper())
print("held", flush=True)
time.sleep(float(sys.argv[3]))
conn.execute("ROLLBACK")
"""


def hold(db: Path, how: str, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db), how, str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


@pytest.fixture
def holders():
    started: list[subprocess.Popen] = []
    yield lambda db, how, seconds: started.append(hold(db, how, seconds)) or started[-1]
    for proc in started:
        proc.kill()
        proc.wait()


@pytest.fixture
def repo(tmp_path, embedder) -> Path:
    root = new_repo(tmp_path / "weather", {"weather.py": WEATHER})
    index_repository(str(root), embedder=embedder)
    write(root, {"tables.py": TABLES})  # a change: the next pix index writes
    commit(root, "tables")
    return root


def test_a_long_wait_is_said_on_a_terminal_and_the_index_goes_on(repo, holders):
    # Held 6 s: pix reaches the lock well within the 4 s that leaves for a wait past 2 s.
    holder = holders(repo / ".pix.db", "immediate", 6)
    code, shown = on_pty("index", cwd=repo, stream="stderr")
    assert holder.wait() == 0
    assert code == 0, shown
    assert "pix: waiting for" in shown and "another process holds its lock" in shown
    assert "PIX_LOCK_TIMEOUT" in shown
    code, out, _ = pix_json("status", "--json", cwd=repo)
    assert code == 0 and out["snapshots"][0]["files"] == 2


def test_a_pipe_is_not_told_of_the_wait(repo, holders):
    holders(repo / ".pix.db", "immediate", 6)
    started = time.monotonic()
    code, _, err = pix("index", cwd=repo)
    assert code == 0, err
    # (Not a speed check: it proves pix waited past the 2 s a terminal would be told at.)
    assert time.monotonic() - started > 3
    assert "waiting for" not in err


def test_past_pix_lock_timeout_the_command_fails_with_exit_5_and_writes_nothing(repo, holders):
    holders(repo / ".pix.db", "immediate", 60)
    code, out, err = pix_json("index", "--json", cwd=repo, env={"PIX_LOCK_TIMEOUT": "0.5"})
    assert code == 5, err
    assert out["error"]["code"] == "conflict" and "busy" in out["error"]["message"]
    code, _, err = pix("index", cwd=repo, env={"PIX_LOCK_TIMEOUT": "0.5"})
    assert code == 5 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    code, out, _ = pix_json("status", "--json", cwd=repo)  # readers are not locked out
    assert code == 0 and out["snapshots"][0]["files"] == 1


@pytest.mark.parametrize("value", ["soon", "-1", "inf", "nan"])
def test_a_bad_pix_lock_timeout_is_refused_in_one_line(repo, value):
    code, _, err = pix("query", "rain", cwd=repo, env={"PIX_LOCK_TIMEOUT": value})
    assert code == 2
    assert err.strip() == (
        f"pix: error: PIX_LOCK_TIMEOUT must be a number of seconds, 0 or more, not {value!r} "
        "(unset it to wait 60 s)"
    )


def test_a_locked_shard_is_a_warning_and_the_others_answer(tmp_path, embedder, holders):
    repos = {"weather": {"weather.py": WEATHER}, "tables": {"tables.py": TABLES}}
    for name, files in repos.items():
        index_repository(str(new_repo(tmp_path / name, files)), embedder=embedder)
    (tmp_path / "pix.toml").write_text('[[repo]]\npath = "weather"\n\n[[repo]]\npath = "tables"\n')
    holders(tmp_path / "tables" / ".pix.db", "exclusive", 60)
    quick = {"PIX_LOCK_TIMEOUT": "0.5"}
    code, out, err = pix_json(
        "query", "average temperature", "--workspace", str(tmp_path), "--json", env=quick
    )
    assert code == 0, err
    assert {r["repo"] for r in out["results"]} == {"weather"}
    assert any(
        w.startswith("repository tables did not answer: the database is busy")
        for w in out["warnings"]
    )
    # status and discover too (an audit: both failed whole, exit 5).
    ws = ["--workspace", str(tmp_path)]
    code, out, err = pix_json("status", *ws, "--json", env=quick)
    assert code == 0, err
    entries = {entry["name"]: entry for entry in out["repos"]}
    assert entries["tables"]["error"]["code"] == "conflict" and not entries["tables"]["fresh"]
    assert entries["weather"]["fresh"]
    code, out, err = pix_json("discover", "-l", "t=celsius", *ws, "--json", env=quick)
    assert code == 0, err
    assert any(w.startswith("repository tables did not answer") for w in out["warnings"])
    # Alone, the locked database is the answer's error: exit 5, not a traceback.
    code, out, err = pix_json("query", "rows", "--json", cwd=tmp_path / "tables", env=quick)
    assert code == 5 and out["error"]["code"] == "conflict"
