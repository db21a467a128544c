"""`pix index --workspace W --ray`: a workspace of real git repositories embedded on a real
local Ray instance (2 CPUs), compared with plain `pix index` run repository by repository.

Identical files in several repositories are one embedding input (their embed key): the
distributed run embeds each once for the whole workspace. Ctrl-C leaves every database
consistent and the next run finishes; a plain `pix index` running at the same time shares the
work through the leases instead of embedding an input twice.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import apsw
import jsonschema
import pytest
import sqlite_vec
from conftest import GIT_ENV, default_sigint, new_repo, pix, pix_json

from pix.interrupt import MESSAGE
from pix.schemas import bundled

RAY = ("--ray", "--ray-cpus", "2")
START_SECONDS = 300.0

SHARED = {
    # The same text in every repository (a vendored helper, a licence header...).
    "vendor/retry.py": "def retry(call, attempts=3):\n"
    "    '''Call again until it works or the attempts run out.'''\n"
    "    for attempt in range(attempts):\n"
    "        try:\n"
    "            return call()\n"
    "        except OSError:\n"
    "            if attempt == attempts - 1:\n"
    "                raise\n",
    "docs/CONTRIBUTING.md": "# Contributing\n\nRun the tests before you send a change.\n\n"
    "## Style\n\nFormat the code with the project's formatter.\n",
}


def modules(tag: str, files: int, functions: int) -> dict[str, str]:
    """Modules of distinct small functions: one embedding input each."""
    return {
        f"{tag}/m{i}.py": "\n\n".join(
            f"def {tag}_{i}_{j}(value, scale={j}):\n"
            f"    '''Step {j} of {tag} module {i}: scale the value and report it.'''\n"
            f"    result = value * scale + {i}\n"
            f"    print('{tag} {i} {j}', result)\n"
            f"    return result\n"
            for j in range(functions)
        )
        for i in range(files)
    }


def workspace(base: Path, repos: dict[str, dict[str, str]]) -> Path:
    """Git repositories under base, listed in base/pix.toml."""
    lines = []
    for name, files in repos.items():
        new_repo(base / name, files)
        lines.append(f'[[repo]]\npath = "{name}"\n')
    (base / "pix.toml").write_text("".join(lines), encoding="utf-8")
    return base


def copy_workspace(source: Path, target: Path) -> Path:
    """The same repositories, without their databases: what a plain index starts from."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".pix.db*"))
    return target


def connect(db: Path) -> apsw.Connection:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    return conn


def one(db: Path, statement: str):
    conn = connect(db)
    try:
        return conn.execute(statement).fetchone()[0]
    finally:
        conn.close()


def vectors_by_chunk(db: Path) -> dict[tuple[str, int], bytes]:
    """Each chunk's transformer vector, keyed by (blob sha, chunk seq): ids differ by run."""
    conn = connect(db)
    try:
        rows = conn.execute(
            "SELECT b.sha, c.seq, v.embedding FROM chunk c JOIN blob b ON b.id = c.blob_id "
            "JOIN chunk_vec v ON v.chunk_id = c.id"
        ).fetchall()
    finally:
        conn.close()
    return {(sha, seq): bytes(vector) for sha, seq, vector in rows}


def embed_keys(db: Path) -> set[int]:
    conn = connect(db)
    try:
        return {key for (key,) in conn.execute("SELECT DISTINCT embed_key FROM chunk")}
    finally:
        conn.close()


def assert_complete(db: Path) -> None:
    assert one(db, "PRAGMA integrity_check") == "ok"
    chunks = one(db, "SELECT count(*) FROM chunk")
    assert chunks > 0
    assert one(db, "SELECT count(*) FROM chunk_vec_rowids") == chunks
    assert one(db, "SELECT count(*) FROM chunk_vec_static_rowids") == 0
    assert one(db, "SELECT count(*) FROM embed_lease") == 0


def start(*args: str, cwd: Path, yielding: bool = False) -> subprocess.Popen:
    """pix in a child process; `yielding`: at the lowest priority on one core, so that a run
    started beside it finds work left (it still finishes, only later)."""

    def prepare() -> None:
        default_sigint()
        if yielding:
            os.nice(19)
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

    return subprocess.Popen(
        [sys.executable, "-P", "-m", "pix.cli", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **GIT_ENV},
        preexec_fn=prepare,
    )


def wait_for_vectors(proc: subprocess.Popen, db: Path) -> None:
    """Until the running process has committed some transformer vectors to `db`."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        if db.exists():
            try:
                if one(db, "SELECT count(*) FROM chunk_vec_rowids"):
                    return
            except apsw.Error:
                pass  # not made yet
        time.sleep(0.05)
    raise AssertionError("no vector was ever committed")


def ray_processes_of(pid: int) -> list[int]:
    """Processes of the Ray session a driver started (its session folder ends in its pid)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if f"_{pid}/" in cmdline and "session_" in cmdline:
                found.append(int(entry.name))
    return found


def test_ray_embeds_shared_texts_once_and_matches_plain_index(tmp_path):
    repos = {
        "api": {**SHARED, **modules("api", 3, 3)},
        "web": {**SHARED, **modules("web", 2, 3)},
        "tools": {**SHARED, "api/m0.py": modules("api", 1, 3)["api/m0.py"]},
    }
    ws = workspace(tmp_path / "ws", repos)
    plain = copy_workspace(ws, tmp_path / "plain")

    code, report, err = pix_json("index", "--workspace", str(ws), *RAY, "--json", cwd=tmp_path)
    assert code == 0, err
    jsonschema.validate(report, bundled("index-workspace-response.v1.json"))
    dbs = {name: ws / name / ".pix.db" for name in repos}
    for db in dbs.values():
        assert_complete(db)
    keys = {name: embed_keys(db) for name, db in dbs.items()}
    every = set().union(*keys.values())
    shared = {key for key in every if sum(key in k for k in keys.values()) > 1}
    assert shared  # the shared files and api/m0.py
    assert report["ray"] == "local" and report["workers"] == 2
    assert report["wanted"] == sum(len(k) for k in keys.values())
    assert report["inputs"] == len(every)
    assert report["shared"] == len(shared)
    assert report["embedded"] == len(every)  # each distinct text once, for all three
    assert report["swept"] == 0
    assert [repo["name"] for repo in report["repos"]] == list(repos)
    assert all(repo["report"]["embedPending"] == 0 for repo in report["repos"])

    # Plain `pix index`, repository by repository: the same vectors, byte for byte.
    code, plain_report, err = pix_json("index", "--workspace", str(plain), "--json", cwd=tmp_path)
    assert code == 0, err
    jsonschema.validate(plain_report, bundled("index-workspace-response.v1.json"))
    assert plain_report["ray"] is None
    assert plain_report["embedded"] == sum(len(k) for k in keys.values())
    for name in repos:
        ours, theirs = vectors_by_chunk(dbs[name]), vectors_by_chunk(plain / name / ".pix.db")
        assert ours and ours == theirs, name
        for question in ("retry until the attempts run out", "scale the value and report it"):
            answers = []
            for root in (ws / name, plain / name):
                code, out, err = pix_json("query", question, "--json", cwd=root)
                assert code == 0, err
                answers.append(out["results"])
            assert answers[0] == answers[1] and answers[0], (name, question)


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_leaves_every_database_consistent_and_the_next_run_finishes(tmp_path, signum, code):
    # SIGTERM too: ray.init replaces pix's handler with one that exits at once (review).
    # 960 inputs, ~8 blocks of 128: the signal comes while blocks are left (with half as many,
    # on a machine shared with another test process, it once came after the last block)
    ws = workspace(
        tmp_path / "ws",
        {"one": {**SHARED, **modules("one", 80, 6)}, "two": {**SHARED, **modules("two", 80, 6)}},
    )
    dbs = [ws / "one" / ".pix.db", ws / "two" / ".pix.db"]
    proc = start("index", "--workspace", str(ws), *RAY, cwd=tmp_path)
    wait_for_vectors(proc, dbs[1])  # both are prepared, and embedding is under way
    sent = time.monotonic()
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=120)
    delay, err = time.monotonic() - sent, err.decode()
    print(f"\n{signum.name} during pix index --ray: exit {proc.returncode} after {delay:.3f} s")
    assert proc.returncode == code, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == MESSAGE.strip()
    deadline = time.monotonic() + 30
    while ray_processes_of(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ray_processes_of(proc.pid) == []  # Ray's processes went with the driver

    with_vector: set[int] = set()
    for db in dbs:
        assert one(db, "PRAGMA integrity_check") == "ok"
        # a chunk has a vector of one tier or none: no half-written block
        both = one(
            db,
            "SELECT count(*) FROM chunk_vec_rowids v "
            "JOIN chunk_vec_static_rowids s ON s.rowid = v.rowid",
        )
        assert both == 0
        conn = connect(db)
        with_vector |= {
            key
            for (key,) in conn.execute(
                "SELECT DISTINCT c.embed_key FROM chunk c JOIN chunk_vec v ON v.chunk_id = c.id"
            )
        }
        conn.close()
    every = set().union(*(embed_keys(db) for db in dbs))
    missing = every - with_vector
    assert with_vector and missing, "the signal should have come in the middle of embedding"

    code, report, err = pix_json("index", "--workspace", str(ws), *RAY, "--json", cwd=tmp_path)
    assert code == 0, err
    for db in dbs:
        assert_complete(db)
    # What any database had committed was not embedded again, in it or in another one.
    assert report["embedded"] + report["swept"] == len(missing)
    assert report["inputs"] == len(missing)


def test_a_concurrent_plain_index_shares_the_work_through_leases(tmp_path):
    ws = workspace(
        tmp_path / "ws",
        {"small": modules("small", 4, 4), "big": modules("big", 500, 6)},
    )
    big = ws / "big"
    db = big / ".pix.db"
    # Yielding: at full speed on an idle machine it once embedded all of big before Ray had
    # started, and there was no overlap to test (CI, 2026-12-05).
    plain = start("index", "--json", cwd=big, yielding=True)
    # Once the plain index holds leases in big's database, the distributed run starts.
    deadline = time.monotonic() + START_SECONDS
    while not (db.exists() and _leases(db)):
        assert plain.poll() is None and time.monotonic() < deadline, plain.communicate()
        time.sleep(0.05)
    code, report, err = pix_json("index", "--workspace", str(ws), *RAY, "--json", cwd=tmp_path)
    assert code == 0, err
    out, plain_err = plain.communicate(timeout=600)
    assert plain.returncode == 0, plain_err.decode()
    theirs = json.loads(out)
    assert_complete(db)
    assert_complete(ws / "small" / ".pix.db")
    every = embed_keys(db) | embed_keys(ws / "small" / ".pix.db")
    ours = report["embedded"] + report["swept"]
    small = len(embed_keys(ws / "small" / ".pix.db"))
    print(
        f"\nray found {report['wanted'] - small} of big's inputs pending and embedded "
        f"{ours - small} of them; the plain index embedded {theirs['embedded']}"
    )
    # The distributed run came while the plain one was at work in big's database...
    assert report["wanted"] > small
    # ... and no input ran through the model twice: the two runs add up to the inputs.
    assert ours + theirs["embedded"] == len(every)
    assert theirs["embedded"] > 0


def _leases(db: Path) -> int:
    try:
        return one(db, "SELECT count(*) FROM embed_lease")
    except apsw.Error:
        return 0


def test_ray_options_are_checked_before_anything_starts(tmp_path):
    ws = workspace(tmp_path / "ws", {"one": SHARED})
    for args, says in (
        (("--ray",), "--ray needs --workspace"),
        (("--workspace", str(ws), "--db", str(tmp_path / "x.db")), "exclusive with --db"),
        (("--workspace", str(ws), "--ray", "auto", "--ray-cpus", "2"), "--ray-cpus"),
        (("--workspace", str(tmp_path / "nowhere"), "--ray"), "no such workspace"),
        (("--workspace", str(ws), "--ray", "127.0.0.1:1"), "cannot reach Ray at 127.0.0.1:1"),
    ):
        code, out, err = pix("index", *args, cwd=tmp_path)
        assert code == 2, (args, err)
        assert says in err and len(err.strip().splitlines()) == 1, (args, err)
    assert not (ws / "one" / ".pix.db").exists()


def test_a_repository_that_fails_is_named_and_the_others_are_indexed(tmp_path):
    """`pix index --workspace` stopped at the first repository that failed, losing the
    others' work and naming no repository (second audit)."""
    ws = workspace(tmp_path / "ws", {"one": SHARED, "two": SHARED, "three": SHARED})
    (ws / "two" / ".pix.db").write_bytes(b"not a database at all" * 50)
    code, report, err = pix_json(
        "index", "--workspace", str(ws), "--static-only", "--json", cwd=tmp_path
    )
    assert code == 0, err
    jsonschema.validate(report, bundled("index-workspace-response.v1.json"))
    assert [r["name"] for r in report["repos"]] == ["one", "three"]
    assert report["skipped"]["two"].startswith("failed: ")
    assert "not a pix database" in report["skipped"]["two"]
    assert (ws / "three" / ".pix.db").exists()
    for name in ("one", "three"):  # nothing indexed at all: the first failure is the answer
        (ws / name / ".pix.db").unlink()
        (ws / name / ".pix.db").write_bytes(b"x" * 100)
    code, _, err = pix("index", "--workspace", str(ws), "--static-only", cwd=tmp_path)
    assert code == 4 and "not a pix database" in err.strip().splitlines()[-1]
