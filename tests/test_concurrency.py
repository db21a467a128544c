"""Several pix processes on one database: real processes at once, leases in the database.

The proof that no input is embedded twice comes from the processes themselves: each reports
how many distinct inputs it ran through the model (`embedded`), and the sum over all of them
equals the number of distinct inputs in the database, every chunk having exactly one vector.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from conftest import GIT_ENV, new_repo, pix, pix_json
from test_interrupt import assert_complete, code_files, count, start
from test_mcp import call, connect

from pix.index import index_repository
from pix.ingest.vectors import embed_pending
from pix.store import open_store
from pix.store.lease import Leases

PROCESSES = 4


def inputs(db: Path) -> int:
    return count(db, "SELECT count(DISTINCT embed_key) FROM chunk")


def test_four_indexers_at_once_embed_every_input_once(tmp_path):
    # Enough inputs (~600, several claims) that the others are still loading the model's
    # session when the first has finished a claim: with 200 one process sometimes ran all.
    repo = new_repo(tmp_path / "repo", code_files(300, 6))
    db = repo / ".pix.db"
    # All four start on no database at all: the migrations race too.
    procs = [
        subprocess.Popen(
            [sys.executable, "-P", "-m", "pix.cli", "index", "--json"],
            cwd=repo,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **GIT_ENV},
        )
        for _ in range(PROCESSES)
    ]
    reports, errs = [], []
    for proc in procs:
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err
        reports.append(json.loads(out))
        errs.append(err)
    runs = [r["embedded"] for r in reports]
    print(f"\nmodel runs per process: {runs}; distinct inputs: {inputs(db)}")
    assert sum(runs) == inputs(db) > 128  # more than one claim's worth
    assert all(r["embedPending"] == 0 for r in reports)
    assert_complete(db)
    # The others said why they did not embed everything themselves.
    assert any("another pix is embedding" in err for err in errs), errs


def test_first_indexes_at_once_all_succeed(tmp_path):
    """Six processes create one database at once: the read-only look before opening waits for
    the one switching the new file to WAL (it failed with "database is locked" in ~40% of
    opens), and each migration is applied once."""
    repo = new_repo(tmp_path / "repo", code_files(3, 2))
    procs = [start("index", "--no-embed", "--json", cwd=repo) for _ in range(6)]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, out + err
    db = repo / ".pix.db"
    assert count(db, "SELECT count(*) FROM migration") == count(
        db, "SELECT count(DISTINCT name) FROM migration"
    )
    assert count(db, "PRAGMA integrity_check") == "ok"


def test_an_indexer_takes_over_the_work_of_a_killed_one_at_once(tmp_path):
    repo = new_repo(tmp_path / "repo", code_files(60, 6))
    db = repo / ".pix.db"
    code, _, err = pix("index", "--no-embed", cwd=repo)
    assert code == 0, err
    proc = start("index", cwd=repo)
    deadline = time.monotonic() + 300
    while count(db, "SELECT count(*) FROM embed_lease") == 0:
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    left = count(db, "SELECT count(*) FROM embed_lease")
    assert left > 0, "the killed process held leases"
    done = count(db, "SELECT count(*) FROM chunk_vec_rowids")
    started = time.monotonic()
    code, report, err = pix_json("index", "--json", cwd=repo)
    assert code == 0, err
    # Its owner is a dead process of this host: taken over without waiting for the expiry.
    assert "waiting" not in err
    print(f"\ntook over {left} leased inputs in {time.monotonic() - started:.1f} s")
    assert report["embedded"] == inputs(db) - done
    assert_complete(db)


def test_leases_of_live_owners_are_left_alone_until_they_expire(tmp_path, embedder):
    root = new_repo(tmp_path / "repo", code_files(4, 6))
    db = tmp_path / "index.db"
    report = index_repository(str(root), str(db), embed=False)
    store = open_store(db, create=False)
    try:
        conn = store.conn
        pending = [key for (key,) in conn.execute("SELECT DISTINCT embed_key FROM chunk")]
        assert len(pending) >= 3
        now = time.time()
        elsewhere = "INSERT INTO embed_lease VALUES (?, 4242, 'another-host', ?, ?)"
        with store.write():
            conn.execute(elsewhere, (pending[0], now - 100, now - 1))  # expired
            conn.execute(elsewhere, (pending[1], now, now + 5.0))  # live for 5 s
        claim = Leases(store).claim(pending, 100)
        assert set(claim.mine) == set(pending) - {pending[1]}
        assert claim.held == 1 and claim.settled == []
        with store.write():
            conn.execute("DELETE FROM embed_lease WHERE host <> 'another-host'")
        # The live lease's input is the other host's until the lease runs out, then anyone's:
        # embedding everything cannot end before that.
        assert embed_pending(store, report.snapshot_id, embedder=embedder) == len(pending)
        assert time.time() >= now + 5.0
        assert conn.execute("SELECT count(*) FROM embed_lease").fetchone()[0] == 0
    finally:
        store.close()


@pytest.mark.parametrize("servers", [PROCESSES])
def test_mcp_servers_refreshing_one_repository_share_the_work(tmp_path, servers):
    repo = new_repo(tmp_path / "repo", code_files(80, 6))
    db = repo / ".pix.db"
    code, _, err = pix("index", "--no-embed", cwd=repo)
    assert code == 0, err
    runs: list[int] = []
    answers: list[dict] = []

    async def one() -> None:
        async with connect(repo) as client:
            runs.append((await call(client, "index", {}))["json"]["embedded"])
            found = await call(client, "query", {"query": "scale the value", "mode": "chunk"})
            answers.append(found["json"])

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for _ in range(servers):
                group.start_soon(one)

    anyio.run(main)
    print(f"\nmodel runs per MCP server: {runs}; distinct inputs: {inputs(db)}")
    assert sum(runs) == inputs(db) > 0
    assert_complete(db)
    # Every server answers from the same complete index.
    assert all(a["results"] == answers[0]["results"] for a in answers)
    assert not any(w for a in answers for w in a["warnings"])
