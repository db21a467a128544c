"""A database pix can read but not write: a read-only mount, another user's checkout.

A WAL database is read through a -shm file beside it, which a read-only folder cannot hold:
every command failed with "unexpected ReadOnlyError" (exit 1), reads included (audit). Reads
now answer; writes are refused with one line, exit 4, and the file is left as it was.

The read-only folder is a real read-only bind mount, made in a user and mount namespace
(`unshare -rm`), so that the test runs the same as root (whom file modes do not stop) and as
any other user.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import AREA, GEOMETRY, GIT_ENV, GREETING, indexed_in_place, pix

FILES = {"shapes/geometry.py": GEOMETRY, "hello.py": GREETING}
# Mount the folder ($0) on itself read-only, then run pix in it.
MOUNT_READ_ONLY = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && cd "$0" && exec "$@"'


def namespaces_available() -> bool:
    try:
        done = subprocess.run(["unshare", "-rm", "true"], capture_output=True, check=False)
    except FileNotFoundError:
        return False
    return done.returncode == 0


pytestmark = pytest.mark.skipif(
    not namespaces_available(), reason="needs unshare -rm (user and mount namespaces)"
)


def read_only(root: Path, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    """pix run in `root` with `root` mounted read-only: (exit code, stdout, stderr)."""
    command = [sys.executable, "-P", "-m", "pix.cli", *args]
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", MOUNT_READ_ONLY, str(root), *command],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
    )
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def root(tmp_path, embedder) -> Path:
    return indexed_in_place(tmp_path, FILES, embedder)


def digest(root: Path) -> str:
    return hashlib.sha256((root / ".pix.db").read_bytes()).hexdigest()


def test_reads_answer_as_they_do_where_pix_can_write(root):
    for args, key in (
        (("query", AREA, "--json"), "results"),
        (("pack", AREA, "--budget", "2000", "--json"), "spans"),
    ):
        code, out, err = read_only(root, *args)
        assert code == 0, err
        assert json.loads(out)[key] == json.loads(pix(*args, cwd=root)[1])[key]
    code, out, err = read_only(root, "status", "--json")
    assert code == 0, err
    assert json.loads(out)["snapshots"][0]["files"] == 2
    code, out, err = read_only(root, "alias", "list", "--json")
    assert code == 0 and json.loads(out) == {"aliases": []}, err


def test_writes_are_refused_in_one_line_and_leave_the_file_as_it_was(root):
    before = digest(root)
    for args in (("index",), ("index", "--rebuild"), ("alias", "add", "area", AREA), ("gc",)):
        code, out, err = read_only(root, *args)
        assert code == 4, (args, err)
        assert err.startswith(f"pix: error: cannot write {root / '.pix.db'}"), err
        assert "copy it to a writable folder" in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1, err
    assert digest(root) == before


def test_a_first_index_in_a_read_only_folder_is_refused_before_writing(make_repo):
    # With no database yet, `pix index` wrote .git/info/exclude first and failed with
    # "unexpected OSError: [Errno 30]", exit 1 (audit).
    repo = make_repo({"m.py": "def apple_function():\n    pass\n"})
    exclude = (repo / ".git" / "info" / "exclude").read_bytes()
    code, out, err = read_only(repo, "index")
    assert code == 4, err
    assert err.startswith(f"pix: error: cannot create {repo / '.pix.db'}: pix cannot write"), err
    assert len(err.strip().splitlines()) == 1
    assert not (repo / ".pix.db").exists()
    assert (repo / ".git" / "info" / "exclude").read_bytes() == exclude


def test_a_database_in_folders_yet_to_be_made_under_a_read_only_one_is_refused_first(make_repo):
    # The repository writable, its folder `sealed` not: `--db sealed/deep/x.db` added the
    # database to .git/info/exclude before failing to make the folders (review).
    repo = make_repo({"m.py": "def apple_function():\n    pass\n"})
    (repo / "sealed").mkdir()
    exclude = (repo / ".git" / "info" / "exclude").read_bytes()
    seal = MOUNT_READ_ONLY.replace('"$0"', '"$0/sealed"').replace('cd "$0/sealed"', 'cd "$0"')
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", seal, str(repo), sys.executable, "-P", "-m", "pix.cli",
         "index", "--db", "sealed/deep/x.db"],
        capture_output=True, text=True, env={**os.environ, **GIT_ENV},
    )  # fmt: skip
    assert done.returncode == 4, done.stderr
    assert done.stderr.startswith("pix: error: cannot create"), done.stderr
    assert (repo / ".git" / "info" / "exclude").read_bytes() == exclude


def test_a_refresh_is_skipped_with_a_warning_and_the_index_answers(root):
    (root / "hello.py").write_text(GREETING + "\n\ndef wave():\n    pass\n", encoding="utf-8")
    code, out, err = read_only(root, "query", AREA, "--refresh", "--json")
    assert code == 0, err
    warnings = json.loads(out)["warnings"]
    assert any(w.startswith("refresh skipped: pix cannot write") for w in warnings), warnings
    assert any("hello.py" in w for w in warnings), warnings  # still named as changed
    # The MCP server refreshes before every query by default: it answers all the same.
    session = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "query", "arguments": {"query": AREA, "mode": "file"}}},
    ]  # fmt: skip
    code, out, err = read_only(root, "mcp", stdin="".join(json.dumps(m) + "\n" for m in session))
    assert code == 0, err
    answer = {reply["id"]: reply for reply in map(json.loads, out.splitlines())}[2]["result"]
    assert not answer.get("isError"), answer
    payload = json.loads(answer["content"][0]["text"])
    assert payload["results"][0]["file"] == "shapes/geometry.py"
    assert any(w.startswith("refresh skipped") for w in payload["warnings"])


def test_a_repository_git_refuses_as_another_users_is_named_not_read_as_a_folder(root):
    # Read as a plain folder, it was indexed without its history and a query's --at HEAD
    # said it was no git repository.
    env = {"GIT_TEST_ASSUME_DIFFERENT_OWNER": "1"}
    code, out, err = pix("status", cwd=root, env=env)
    assert code == 2, err
    assert "git refuses to read the repository" in err and "safe.directory" in err, err
    assert len(err.strip().splitlines()) == 1


def test_a_server_reads_what_the_owner_writes_behind_the_read_only_mount(root):
    # Opened immutable, the file was read as it was at the start: once the owner re-indexed
    # it in place (outside the mount), every later call failed "damaged" (review). The server
    # now sees the file's size and mtime move and opens it again.
    command = [sys.executable, "-P", "-m", "pix.cli", "mcp"]
    server = subprocess.Popen(
        ["unshare", "-rm", "sh", "-c", MOUNT_READ_ONLY, str(root), *command],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, **GIT_ENV},
    )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None

    def ask(ident: int, query: str) -> dict:
        arguments = {"query": query, "mode": "file"}
        call = {"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                "params": {"name": "query", "arguments": arguments}}  # fmt: skip
        server.stdin.write(json.dumps(call) + "\n")
        server.stdin.flush()
        reply = json.loads(server.stdout.readline())
        assert reply["id"] == ident and not reply["result"].get("isError"), reply
        return json.loads(reply["result"]["content"][0]["text"])

    try:
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "t", "version": "0"}}}  # fmt: skip
        server.stdin.write(json.dumps(initialize) + "\n")
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 1
        assert ask(2, AREA)["results"][0]["file"] == "shapes/geometry.py"
        (root / "tides.py").write_text(
            "def predict_tide_height(moon_phase):\n    return moon_phase * 2\n", encoding="utf-8"
        )
        assert pix("index", cwd=root)[0] == 0  # the owner, where the file can be written
        answer = ask(3, "predict tide height from the moon phase")
        assert answer["results"][0]["file"] == "tides.py", answer
        # The owner's own server holds the file open: its next commit stays in the -wal,
        # and the file itself does not change until a checkpoint (review).
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD_OPEN, str(root / ".pix.db")],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
            (root / "comets.py").write_text(
                "def comet_tail_length(distance_to_sun):\n    return 1 / distance_to_sun\n",
                encoding="utf-8",
            )
            before = (root / ".pix.db").stat()
            assert pix("index", "--static-only", cwd=root)[0] == 0
            after = (root / ".pix.db").stat()
            assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
            answer = ask(4, "length of a comet's tail by its distance to the sun")
            assert answer["results"][0]["file"] == "comets.py", answer
        finally:
            holder.kill()
            holder.wait()
    finally:
        server.stdin.close()
        assert server.wait(timeout=60) == 0


# A writer's connection left open (the owner's own server): SQLite checkpoints and removes
# the -wal only when the last connection closes.
HOLD_OPEN = """
import sys, time, apsw
conn = apsw.Connection(sys.argv[1])
conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
print("open", flush=True)
time.sleep(120)
"""
