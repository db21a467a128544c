"""A database damaged, deleted or replaced: refused with the fix, rebuilt, followed by a server.

Real files, real damage: a page in the middle of the file is overwritten with zeros, the
database is deleted or rebuilt while a real MCP stdio server has it open.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import anyio
import apsw
import pytest
from conftest import AREA, GEOMETRY, GIT_ENV, GREETING, indexed_repo, new_repo, pix, pix_json
from test_interrupt import assert_complete, code_files, count
from test_mcp import call, connect, error

from pix import alias
from pix.index import index_repository
from pix.store.rebuild import rebuild

FILES = {"shapes/geometry.py": GEOMETRY, "hello.py": GREETING}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, embedder) -> tuple[Path, Path]:
    return indexed_repo(tmp_path_factory.mktemp("damage"), FILES, embedder)


@pytest.fixture
def env(indexed, tmp_path) -> tuple[Path, Path]:
    """(repository, its database as the repository's own .pix.db) for one test."""
    root, db = indexed
    repo = tmp_path / "repo"
    shutil.copytree(root, repo)
    shutil.copy(db, repo / ".pix.db")
    return repo, repo / ".pix.db"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def zero_page(db: Path, table: str | None = None) -> tuple[int, int]:
    """Overwrite one b-tree leaf page with zeros: the middle one of the file (not the
    schema's, which a damaged page there makes unreadable as a whole), or one of `table`'s.
    Returns its number and the file's page count."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        size, total = conn.execute(
            "SELECT page_size, page_count FROM pragma_page_size, pragma_page_count"
        ).fetchone()
        pages = [
            n
            for n, name in conn.execute(
                "SELECT pageno, name FROM dbstat WHERE pagetype = 'leaf' "
                "AND name <> 'sqlite_schema' ORDER BY pageno"
            )
            if table is None or name == table
        ]
    finally:
        conn.close()
    page = pages[len(pages) // 2]
    with db.open("r+b") as fh:
        fh.seek((page - 1) * size)
        fh.write(bytes(size))
    return page, total


def test_a_read_that_meets_a_damaged_page_names_the_fix(env):
    """query, pack and run said only "the database is corrupt", where status and index
    named `pix index --rebuild` (audit)."""
    repo, db = env
    zero_page(db, "blob")
    for command in (["query", AREA], ["pack", AREA, "--budget", "500"]):
        code, envelope, err = pix_json(*command, "--json", cwd=repo)
        assert code == 4, (command, err)
        assert "pix index --rebuild" in envelope["error"]["hint"], envelope
        assert str(db) in envelope["error"]["message"]  # which database (a workspace has many)


def test_a_zeroed_page_is_refused_with_the_fix_and_rebuild_swaps_in_a_whole_index(env):
    repo, db = env
    code, _, err = pix("alias", "add", "area", AREA, "--file", cwd=repo)
    assert code == 0, err
    page, pages = zero_page(db)
    assert 1 < page < pages  # in the middle of the file
    damaged = digest(db)

    # (alias add and remove wrote into it: audit)
    for command in (["index"], ["status"], ["alias", "add", "b", "x"], ["alias", "rm", "area"]):
        code, out, err = pix(*command, cwd=repo)
        assert code == 4, (command, err)
        assert "damaged" in err and "pix index --rebuild" in err
        assert err.count("\n") == 1 and "Traceback" not in err
    code, envelope, _ = pix_json("status", "--json", cwd=repo)
    assert code == 4 and envelope["error"]["code"] == "unusable_database"
    assert "pix index --rebuild" in envelope["error"]["hint"]
    assert digest(db) == damaged  # refused before a byte was written

    code, report, err = pix_json("index", "--rebuild", "--json", cwd=repo)
    assert code == 0, err
    assert "saved aliases kept: 1" in err
    assert report["rebuilt"] == {
        "aliasesKept": 1,
        "aliasesUnreadable": None,
        "commitsNotRebuilt": [],
    }
    assert not list(repo.glob(".pix.db.rebuild*"))
    assert_complete(db)
    code, status, err = pix_json("status", "--json", cwd=repo)
    assert code == 0, err
    assert status["workTree"]["changed"] == 0  # the rebuild's own files were never indexed
    code, answer, err = pix_json("run", "area", "--json", cwd=repo)
    assert code == 0, err
    assert answer["results"][0]["file"] == "shapes/geometry.py"


def test_rebuild_says_so_when_the_saved_aliases_cannot_be_read(env):
    repo, db = env
    code, _, err = pix("alias", "add", "area", AREA, "--file", cwd=repo)
    assert code == 0, err
    zero_page(db, "alias")
    code, _, err = pix("index", cwd=repo)
    assert code == 4 and "pix index --rebuild" in err
    code, report, err = pix_json("index", "--rebuild", "--json", cwd=repo)
    assert code == 0, err
    assert "could not be read" in err and "they are lost" in err
    assert "kept: 0" not in err  # it said "kept: 0", then "they are lost" (audit)
    assert report["rebuilt"]["aliasesKept"] == 0 and report["rebuilt"]["aliasesUnreadable"]
    code, listed, err = pix_json("alias", "list", "--json", cwd=repo)
    assert code == 0 and listed["aliases"] == [], err
    assert_complete(db)


def test_a_database_cut_short_is_damaged_and_rebuilt(env):
    # A file cut short (a full disk, a copy stopped halfway): SQLite cannot read even its
    # schema. It was called "not a pix database", with advice to delete it, and --rebuild
    # refused it; it is an SQLite file, so it is damaged and --rebuild replaces it.
    repo, db = env
    conn = apsw.Connection(str(db))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    with db.open("r+b") as fh:
        fh.truncate(db.stat().st_size * 9 // 10)
    code, out, err = pix("status", cwd=repo)
    assert code == 4, err
    assert "is damaged" in err and "pix index --rebuild" in err and "not a pix" not in err
    code, report, err = pix_json("index", "--rebuild", "--static-only", "--json", cwd=repo)
    assert code == 0, err
    assert report["rebuilt"]["aliasesUnreadable"] and "they are lost" in err
    code, status, err = pix_json("status", "--json", cwd=repo)
    assert code == 0 and status["chunks"] > 0, err


def test_rebuild_never_replaces_a_file_that_is_not_a_pix_database(env, tmp_path):
    repo, _ = env
    foreign = tmp_path / "foreign.db"
    conn = apsw.Connection(str(foreign))
    conn.execute("CREATE TABLE notes(text)")
    conn.close()
    before = digest(foreign)
    code, _, err = pix("index", "--rebuild", "--db", str(foreign), cwd=repo)
    assert code == 4 and "not a pix database" in err
    assert digest(foreign) == before


def run(scenario) -> None:
    try:
        anyio.run(scenario)
    except BaseExceptionGroup as group:  # show the failed assertion, not the task groups
        leaf: BaseException = group
        while isinstance(leaf, BaseExceptionGroup):
            leaf = leaf.exceptions[0]
        raise leaf from None


def remove(db: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)


def test_a_server_follows_a_replaced_database_and_reports_a_deleted_one(env):
    repo, db = env
    query = {"query": AREA, "mode": "file", "noContent": True}

    async def scenario() -> None:
        async with connect(repo) as client:
            assert (await call(client, "alias_list", {}))["json"]["aliases"] == []
            # Replaced (a rebuild in a terminal): the server reads the new file.
            code, _, err = pix("index", "--rebuild", "--quiet", cwd=repo)
            assert code == 0, err
            code, _, err = pix("alias", "add", "fresh", AREA, "--file", cwd=repo)
            assert code == 0, err
            listed = (await call(client, "alias_list", {}))["json"]["aliases"]
            assert [a["name"] for a in listed] == ["fresh"]
            spec = {"query": "greet", "mode": "chunk"}
            await call(client, "alias_add", {"name": "mine", "spec": spec})
            code, out, _ = pix("alias", "list", cwd=repo)
            assert code == 0 and "mine" in out  # the server's write went to the new file
            assert (await call(client, "query", query))["json"]["results"]

            # Deleted: the CLI's "no pix index" error, for reads and writes alike.
            remove(db)
            for tool, args in (
                ("query", query),
                ("alias_list", {}),
                ("alias_add", {"name": "lost", "spec": spec}),
                ("alias_remove", {"name": "mine"}),
                ("status", {}),
            ):
                text, envelope = await error(client, tool, args)
                assert envelope["error"]["code"] == "not_indexed", (tool, text)
                assert text.startswith(f"no pix index at {db}")
            assert not db.exists()
            # The index tool builds a new one, and the server uses it.
            await call(client, "index", {})
            answer = (await call(client, "query", query))["json"]
            assert answer["results"][0]["file"] == "shapes/geometry.py"

    run(scenario)


def test_an_index_written_to_a_database_deleted_meanwhile_is_not_a_success(tmp_path):
    repo = new_repo(tmp_path / "repo", code_files(80, 6))
    db = repo / ".pix.db"
    code, _, err = pix("index", "--no-embed", cwd=repo)
    assert code == 0, err

    async def scenario() -> None:
        async with connect(repo) as client:
            async with anyio.create_task_group() as group:
                result: dict = {}

                async def index() -> None:
                    result["answer"] = await client.call_tool("index", {})

                group.start_soon(index)
                # Embedding is under way (inputs claimed): delete the database.
                while not count(db, "SELECT count(*) FROM embed_lease"):
                    await anyio.sleep(0.02)
                remove(db)
            answer = result["answer"]
            assert answer.is_error, answer.content[0].text
            assert answer.structured_content["error"]["code"] == "not_indexed"
            assert "was deleted while indexing" in answer.content[0].text

    run(scenario)
    assert not db.exists()


def test_a_whole_database_in_a_folder_that_cannot_be_written_is_read_not_called_corrupt(
    env, tmp_path
):
    # A database in WAL mode is read through a -shm file beside it. In a read-only folder SQLite
    # cannot make one: pix called a whole index corrupt and advised deleting it; then it said
    # it could not open it. It now reads it as it stands (tests/test_read_only.py: a read-only
    # mount). Made read-only by its mode, or as root (whom modes do not stop) immutable with
    # chattr.
    repo, db = env
    folder = tmp_path / "readonly"
    folder.mkdir()
    shutil.copy(db, folder / ".pix.db")
    before = digest(folder / ".pix.db")
    if os.geteuid() != 0:  # an ordinary user: the folder's mode is enough
        folder.chmod(0o555)
        undo = ["chmod", "755", str(folder)]
    elif subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0:
        undo = ["chattr", "-i", str(folder)]
    else:
        pytest.skip("root, and chattr +i is not allowed here")
    try:
        code, out, err = pix("query", "area", "--json", "--db", str(folder / ".pix.db"), cwd=repo)
        assert code == 0, err
        assert json.loads(out)["results"][0]["path"] == "shapes/geometry.py"
        code, out, err = pix("alias", "add", "a", "area", "--db", str(folder / ".pix.db"), cwd=repo)
        assert code == 4 and err.startswith(f"pix: error: cannot write {folder / '.pix.db'}"), err
        assert "corrupt" not in err and "delete" not in err and err.count("\n") == 1
    finally:
        subprocess.run(undo, check=True)
    assert digest(folder / ".pix.db") == before


def unwritable(path: Path) -> list[str]:
    """Make `path` a file pix cannot write (as root too, whom modes do not stop: chattr +i);
    the command that undoes it."""
    if os.geteuid() != 0:
        path.chmod(0o444)
        return ["chmod", "644", str(path)]
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("root, and chattr +i is not allowed here")
    return ["chattr", "-i", str(path)]


def test_reading_a_database_pix_cannot_write_leaves_nothing_beside_it(env):
    """In a writable folder SQLite made the -wal and -shm with the file's read-only mode; they
    outlived the read and failed its owner's next `pix index` with "unexpected ReadOnlyError"
    (audit). The file is now read immutable, as in a read-only folder."""
    repo, db = env
    undo = unwritable(db)
    try:
        for command in (["query", "area", "--json"], ["status"], ["discover", "-l", "a=area"]):
            code, out, err = pix(*command, cwd=repo)
            assert code == 0, err
        beside = [p.name for p in repo.iterdir() if p.name.startswith(".pix.db-")]
        assert beside == []
    finally:
        subprocess.run(undo, check=True)
    assert pix("index", "--static-only", cwd=repo)[0] == 0


def test_a_read_only_file_left_beside_the_database_is_named_exit_4(env):
    """Every writer refuses it before writing (review: gc and the alias writes failed with
    "unexpected ReadOnlyError", exit 1); a read still answers."""
    repo, db = env
    shm = repo / ".pix.db-shm"
    shm.write_bytes(bytes(32768))  # what a read leaves: the WAL index, whole pages of it
    undo = unwritable(shm)
    try:
        refused = [
            pix(*command, cwd=repo)
            for command in (
                ["index", "--static-only"],
                ["gc"],
                ["alias", "add", "b", "area"],
                ["alias", "rm", "b"],
            )
        ]
        read = pix("query", "area", cwd=repo)
    finally:
        subprocess.run(undo, check=True)
    for code, _, err in refused:
        assert code == 4 and err.startswith(f"pix: error: cannot write {db}: {shm} beside"), err
        assert f"remove {shm}" in err and err.count("\n") == 1
    assert read[0] == 0, read[2]


def test_rebuild_keeps_the_aliases_saved_while_it_built(env):
    # The aliases were read when the rebuild started and the new file swapped in at the end:
    # one saved or removed meanwhile was lost, its command having said it was done.
    repo, db = env
    assert pix("alias", "add", "kept", "say hello", cwd=repo)[0] == 0
    assert pix("alias", "add", "dropped", "area", cwd=repo)[0] == 0

    def build(fresh: Path) -> None:
        index_repository(str(repo), str(fresh), embed=False)
        # meanwhile, another pix changes the aliases of the database in use
        alias.add_at("added", {"query": "shapes and areas", "mode": "file"}, cwd=str(repo))
        alias.remove_at("dropped", cwd=str(repo))

    rebuild(db, build)
    code, out, err = pix_json("alias", "list", "--json", cwd=repo)
    assert code == 0, err
    assert [a["name"] for a in out["aliases"]] == ["added", "kept"]


def test_a_second_rebuild_while_one_runs_is_refused_and_the_first_completes(env):
    """The second deleted the first's fresh file and both failed, the second with exit 3
    naming the internal file (audit). Now the second is a conflict, exit 5, and the first
    goes on."""
    repo, db = env
    seen = {}

    def build(fresh: Path) -> None:
        index_repository(str(repo), str(fresh), embed=False)
        seen["second"] = pix("index", "--rebuild", "--static-only", cwd=repo)
        seen["fresh survived"] = fresh.exists()

    rebuild(db, build)
    code, out, err = seen["second"]
    assert code == 5 and err.startswith("pix: error: another `pix index --rebuild` is running")
    assert err.count("\n") == 1 and seen["fresh survived"]
    code, out, err = pix_json("status", "--json", cwd=repo)
    assert code == 0, err


def test_an_alias_saved_during_a_rebuild_is_kept_or_reported_never_lost(env):
    # Another writer holds the lock; `pix alias add` waits for it, `pix index --rebuild` runs.
    # Whichever gets the lock first, the alias is either in the rebuilt database and its
    # command said "saved", or its command failed with a conflict (exit 5): never "saved" and
    # gone, as before (the rebuild swapped in the aliases it read when it started).
    repo, db = env
    holder = apsw.Connection(str(db))
    holder.execute("BEGIN IMMEDIATE")
    command = [sys.executable, "-P", "-m", "pix.cli"]
    run = {"cwd": repo, "env": {**os.environ, **GIT_ENV}, "text": True}
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    waiting = subprocess.Popen([*command, "alias", "add", "late", "area", "--json"], **pipes, **run)
    rebuilding = subprocess.Popen(
        [*command, "index", "--rebuild", "--static-only", "--json"], **pipes, **run
    )
    try:
        time.sleep(1.5)  # both started: the alias waits for the lock, the rebuild builds
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    out, err = waiting.communicate(timeout=120)
    _, rebuild_err = rebuilding.communicate(timeout=120)
    assert rebuilding.returncode == 0, rebuild_err
    code, listed, _ = pix_json("alias", "list", "--json", cwd=repo)
    kept = "late" in [a["name"] for a in listed["aliases"]]
    if waiting.returncode == 0:
        assert kept, out
    else:
        assert waiting.returncode == 5, (out, err)
        assert json.loads(out)["error"]["code"] == "conflict" and not kept
