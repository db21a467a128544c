"""pix gc: unreferenced content goes, old commit snapshots go with --keep, the file shrinks,
and what stays answers exactly as before."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from conftest import GEOMETRY, GREETING, commit, pix_json, write

from pix.errors import UsageError
from pix.gc import gc
from pix.query import QueryRequest, query
from pix.schemas import bundled
from pix.store import open_store

RESPONSE = jsonschema.Draft202012Validator(bundled("gc-response.v1.json"))


def rows(db: Path, statement: str, *params):
    store = open_store(db, create=False)
    try:
        return store.conn.execute(statement, params).fetchall()
    finally:
        store.close()


def answer(repo: Path, at: str | None = None) -> list:
    response = query(QueryRequest("area of a circle", at=at, explain=True), cwd=str(repo))
    return [(r["path"], r["startLine"], r["score"], r["text"]) for r in response["results"]]


@pytest.fixture
def history(make_repo, index):
    """A repository with three commits, each indexed with --at, and the work tree indexed."""
    repo = make_repo({"geometry.py": GEOMETRY, "greeting.py": GREETING})
    shas = []
    for i in range(3):  # each commit rewrites step.py: the older versions are its own
        body = "".join(
            f"def step_{i}_{j}(x):\n    return x * {i * 1000 + j}\n\n" for j in range(80)
        )
        write(repo, {"step.py": body})
        shas.append(commit(repo, f"step {i}"))
        index(repo, at=shas[-1])
    index(repo)
    return repo, shas


def test_gc_keep_drops_old_commit_snapshots_and_returns_space(history):
    repo, shas = history
    db = repo / ".pix.db"
    newest = answer(repo, at=shas[-1])
    tree = answer(repo)
    assert rows(db, "SELECT count(*) FROM snapshot")[0][0] == 4
    code, report, err = pix_json("gc", "--keep", "1", "--json", cwd=repo)
    assert code == 0, err
    RESPONSE.validate(report)
    assert report["removed"]["snapshots"] == 2
    assert report["removed"]["blobs"] == 2 and report["removed"]["chunks"] > 0
    assert report["bytesAfter"] < report["bytesBefore"]
    assert report["bytesAfter"] == db.stat().st_size + (
        Path(str(db) + "-wal").stat().st_size if Path(str(db) + "-wal").exists() else 0
    )
    kinds = rows(db, "SELECT kind, commit_sha FROM snapshot ORDER BY id")
    assert [k for k, _ in kinds] == ["commit", "worktree"] and kinds[0][1] == shas[-1]
    # what stays answers byte for byte as before (vectors, FTS and text survive VACUUM)
    assert answer(repo, at=shas[-1]) == newest
    assert answer(repo) == tree
    for table in ("chunk_fts", "blob_trigram"):
        rows(db, f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
    assert rows(db, "PRAGMA integrity_check")[0][0] == "ok"
    # no orphans: every chunk has a blob, every symbol and vector a chunk
    assert (
        rows(db, "SELECT count(*) FROM symbol WHERE chunk_id NOT IN (SELECT id FROM chunk)")[0][0]
        == 0
    )
    assert (
        rows(db, "SELECT count(*) FROM chunk_vec WHERE chunk_id NOT IN (SELECT id FROM chunk)")[0][
            0
        ]
        == 0
    )


def test_gc_drops_content_of_replaced_work_tree_snapshots(make_repo, index):
    repo = make_repo({"geometry.py": GEOMETRY})
    index(repo)
    write(repo, {"geometry.py": GREETING})
    index(repo)
    db = repo / ".pix.db"
    assert rows(db, "SELECT count(*) FROM blob")[0][0] == 2
    report = gc(str(repo))
    assert report["removed"]["blobs"] == 1 and report["removed"]["chunks"] >= 1
    assert report["removed"]["snapshots"] == 0
    assert rows(db, "SELECT count(*) FROM blob")[0][0] == 1
    response = query(QueryRequest("say hello to a person", mode="file"), cwd=str(repo))
    assert [r["text"] for r in response["results"]] == [GREETING]


def test_gc_keep_beyond_sqlite_integers_keeps_every_snapshot(history):
    repo, _ = history
    code, report, err = pix_json("gc", "--keep", str(2**63), "--json", cwd=repo)
    assert code == 0, err  # was exit 1, "unexpected OverflowError" (audit)
    assert report["removed"]["snapshots"] == 0


def test_gc_refuses_a_negative_keep(make_repo, index):
    repo = make_repo({"geometry.py": GEOMETRY})
    index(repo)
    with pytest.raises(UsageError):
        gc(str(repo), keep=-1)
    code, _, err = pix_json("gc", "--keep", "-1", cwd=repo)
    assert code == 2 and "keep" in err


def pragma(db: Path, name: str) -> int:
    return rows(db, f"PRAGMA {name}")[0][0]


def test_index_gives_freed_pages_back(make_repo, index):
    """Every static vector is deleted when the transformer's replaces it: without incremental
    auto-vacuum those pages stayed in the file (15% of a fresh index of requests)."""
    repo = make_repo({"geometry.py": GEOMETRY, "greeting.py": GREETING})
    index(repo)
    db = repo / ".pix.db"
    assert rows(db, "SELECT count(*) FROM chunk_vec_static_rowids")[0][0] == 0
    assert pragma(db, "auto_vacuum") == 2  # incremental
    assert pragma(db, "freelist_count") == 0
    write(repo, {"greeting.py": GREETING.replace("hello", "good morning")})
    index(repo)  # the old chunks of greeting.py stay (the old snapshot is gone, gc drops them)
    assert pragma(db, "freelist_count") == 0


def test_gc_turns_on_incremental_vacuum_in_an_older_file(make_repo, index):
    repo = make_repo({"geometry.py": GEOMETRY})
    index(repo)
    db = repo / ".pix.db"
    store = open_store(db, create=False)
    store.conn.execute("PRAGMA auto_vacuum = NONE")
    store.conn.execute("VACUUM")  # as a file written before pix set it
    store.close()
    assert pragma(db, "auto_vacuum") == 0
    code, _, err = pix_json("gc", "--json", cwd=repo)
    assert code == 0, err
    assert pragma(db, "auto_vacuum") == 2


def test_gc_says_when_a_reader_keeps_the_space_from_coming_back(history, monkeypatch):
    """Another process in a read transaction holds the old pages: gc's checkpoint cannot
    truncate the WAL, the rewritten file waits there, and gc said nothing of it (audit)."""
    repo, _ = history
    db = repo / ".pix.db"
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(db)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert reader.stdout.readline().strip() == "reading"
        monkeypatch.setenv("PIX_LOCK_TIMEOUT", "1")
        code, report, err = pix_json("gc", "--keep", "0", "--json", cwd=repo)
    finally:
        reader.kill()
        reader.wait()
    assert code == 0, err
    RESPONSE.validate(report)
    assert report["warnings"] and "another process is reading the database" in err
    code, report, err = pix_json("gc", "--json", cwd=repo)  # the reader gone: it all comes back
    assert code == 0 and "warnings" not in report and report["bytesAfter"] < report["bytesBefore"]


READER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN")
conn.execute("SELECT count(*) FROM snapshot").fetchone()
print("reading", flush=True)
time.sleep(60)
"""


def test_gc_drops_the_old_folders_tree_a_copied_repository_left_behind(make_repo, index, tmp_path):
    """Kept for ever, it carried the other checkout's content and path (audit); it goes once
    the copy has a tree of its own, and never from a database another folder's --db names."""
    repo = make_repo({"geometry.py": GEOMETRY})
    index(repo)
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy)
    roots = "SELECT root FROM snapshot ORDER BY id"
    assert gc(str(copy))["removed"]["snapshots"] == 0  # its only tree: what it answers from
    write(copy, {"greeting.py": GREETING})
    index(copy)
    assert [r[0] for r in rows(copy / ".pix.db", roots)] == [str(repo), str(copy)]
    elsewhere = gc(str(tmp_path), db=str(copy / ".pix.db"))
    assert elsewhere["removed"]["snapshots"] == 0
    report = gc(str(copy))
    RESPONSE.validate(report)
    assert report["removed"]["snapshots"] == 1
    assert [r[0] for r in rows(copy / ".pix.db", roots)] == [str(copy)]
    response = query(QueryRequest("say hello to a person", mode="file"), cwd=str(copy))
    assert response["results"][0]["file"] == "greeting.py"


def test_status_and_gc_run_as_if_in_another_folder(make_repo, index, tmp_path):
    """--cwd, as query and mcp have it: an agent or a script need not cd into the repository."""
    repo = make_repo({"a.py": "x = 1\n"})
    index(repo, embed=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, report, err = pix_json("status", "--json", "--cwd", str(repo), cwd=elsewhere)
    assert code == 0, err
    assert report["root"] == str(repo) and report["db"] == str(repo / ".pix.db"), report
    code, report, err = pix_json("gc", "--json", "--cwd", str(repo), cwd=elsewhere)
    assert code == 0, err
    RESPONSE.validate(report)
    assert report["db"] == str(repo / ".pix.db")
    for command in ("status", "gc"):
        code, _, err = pix_json(command, "--cwd", str(tmp_path / "missing"), cwd=elsewhere)
        assert code == 2 and err.count("\n") == 1, err
