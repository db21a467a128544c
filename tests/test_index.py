"""pix index: snapshots, incremental work, skips, resumability, refusals."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import apsw
import pytest
from conftest import commit, default_sigint, git, pix, pix_json, write

from pix.errors import DatabaseError, NotIndexedError, UsageError
from pix.index import index_repository
from pix.ingest.vectors import embed_pending
from pix.store import open_store
from pix.store.db import known_migrations

PY = '''\
import os


def read_config(path):
    """Read the configuration file."""
    with open(path) as fh:
        return fh.read()


class Session:
    def request(self, method, url):
        return method, url
'''


def rows(db: Path, statement: str, *params):
    store = open_store(db, create=False)
    try:
        return store.conn.execute(statement, params).fetchall()
    finally:
        store.close()


def test_index_creates_searchable_embedded_snapshot(make_repo, index):
    repo = make_repo({"app.py": PY, "README.md": "# Title\n\nSome words.\n"})
    report = index(repo)
    db = repo / ".pix.db"
    assert report.files == 2 and report.new_blobs == 2 and report.embed_pending == 0
    assert report.kind == "worktree" and report.branch == "main" and not report.dirty
    assert report.commit == git(repo, "rev-parse", "HEAD")
    chunks = rows(db, "SELECT count(*) FROM chunk")[0][0]
    assert rows(db, "SELECT count(*) FROM chunk_vec")[0][0] == chunks > 0
    names = {r[0] for r in rows(db, "SELECT name FROM symbol WHERE whole = 1")}
    assert {"read_config", "Session", "request"} <= names
    terms = rows(
        db,
        "SELECT term, whole FROM symbol WHERE chunk_id ="
        " (SELECT chunk_id FROM symbol WHERE name = 'read_config') ORDER BY term",
    )
    assert {("config", 0), ("read", 0), ("read_config", 1)} <= set(terms)
    # identifier parts are indexed: read_config is findable by 'config'
    hit = rows(
        db,
        "SELECT c.symbol FROM chunk_fts f JOIN chunk c ON c.id = f.rowid "
        "WHERE chunk_fts MATCH 'config'",
    )
    assert hit
    # the text is stored once per git blob id, as pix reads it; chunks are ranges of it
    blob = git(repo, "rev-parse", "HEAD:app.py")
    (text,) = rows(db, "SELECT text FROM blob_text WHERE sha = ?", blob)[0]
    assert text == PY
    pieces = rows(
        db,
        "SELECT t.text, c.start_line, c.end_line FROM chunk_text t JOIN chunk c ON c.id = t.id"
        " JOIN blob b ON b.id = c.blob_id WHERE b.sha = ? ORDER BY c.seq",
        blob,
    )
    lines = PY.split("\n")
    assert pieces and all(t == "\n".join(lines[a - 1 : b]) for t, a, b in pieces)
    # FTS5 agrees with the text it reads through the chunk_text view
    rows(db, "INSERT INTO chunk_fts(chunk_fts, rank) VALUES ('integrity-check', 1)")
    meta = dict(rows(db, "SELECT key, value FROM meta"))
    assert meta["model.name"] == "all-MiniLM-L6-v2-onnx-int8-dynamic"
    assert meta["model.dims"] == "384" and meta["static.dims"] == "256"
    applied = [r[0] for r in rows(db, "SELECT name FROM migration ORDER BY name")]
    assert applied[0] == "001_initial"
    assert applied == list(known_migrations())


def test_own_database_never_indexed_nor_dirty(make_repo, index):
    repo = make_repo({"a.py": "x = 1\n"})
    index(repo)
    report = index(repo)  # the .pix.db, -wal and -shm now exist in the tree
    assert report.files == 1 and not report.dirty
    paths = [r[0] for r in rows(repo / ".pix.db", "SELECT path FROM snapshot_file")]
    assert paths == ["a.py"]


def test_incremental_reindex_touches_one_file(make_repo, index):
    repo = make_repo({f"m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(5)})
    index(repo)
    db = repo / ".pix.db"
    before = rows(db, "SELECT id, blob_id FROM chunk ORDER BY id")
    write(repo, {"m3.py": "def f3():\n    return 'changed'\n"})
    report = index(repo)
    assert report.new_blobs == 1 and report.reused_files == 4
    assert report.embedded == 1 and report.dirty
    after = rows(db, "SELECT id, blob_id FROM chunk ORDER BY id")
    assert after[: len(before)] == before  # nothing re-chunked
    # one snapshot of the work tree: the old one was replaced
    assert rows(db, "SELECT count(*) FROM snapshot")[0][0] == 1


def test_identical_chunks_embedded_once(make_repo, index):
    body = "def same():\n    return 'identical text'\n"
    repo = make_repo({"a.py": body, "b/a.py": body, "c.py": body.replace("\n", "\r\n")})
    report = index(repo)
    # a.py and b/a.py are one blob; c.py differs in bytes (CRLF) but its chunk text is the same
    assert report.new_blobs == 2
    assert report.embedded == 1
    db = repo / ".pix.db"
    assert rows(db, "SELECT count(*) FROM chunk_vec")[0][0] == 2


def test_skipped_files_with_reasons(make_repo, index):
    repo = make_repo(
        {
            "ok.py": "print('ok')\n",
            "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00binary",
            "big.txt": "x" * 2000 + "\n",
            ".env": "API_KEY=abc\n",
            "deploy/id_rsa": "not really a key\n",
            "keys/server.txt": (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n"
            ),
            ".env.example": "API_KEY=\n",
            "web/app.min.js": "var a=1;" * 400,
            "gen.py": "# Code generated by protoc. DO NOT EDIT.\nx = 1\n",
            "packed.txt": ("y" * 900 + " ") * 10,
        }
    )
    report = index(repo, max_bytes=1500)
    skipped = dict(rows(repo / ".pix.db", "SELECT path, reason FROM skipped"))
    assert skipped == {
        "logo.png": "binary",
        "big.txt": "too_large",
        ".env": "secret",
        "deploy/id_rsa": "secret",
        "keys/server.txt": "secret",
        "web/app.min.js": "too_large",
        "gen.py": "generated",
        "packed.txt": "too_large",
    }
    assert report.files == 2  # ok.py and .env.example


def test_minified_and_generated_without_size_limit(make_repo, index):
    repo = make_repo(
        {
            "web/app.min.js": "var a=1;" * 400,
            "dist.js": ";".join(f"v{i}=function(){{return {i}}}" for i in range(300)),
            "package-lock.json": '{"name": "x"}\n',
        }
    )
    index(repo)
    skipped = dict(rows(repo / ".pix.db", "SELECT path, reason FROM skipped"))
    assert skipped == {
        "web/app.min.js": "generated",
        "dist.js": "minified",
        "package-lock.json": "generated",
    }


def test_symlinks_are_not_followed(make_repo, index, tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text("SECRET_OUTSIDE = 1\n")
    repo = make_repo({"a.py": "x = 1\n"})
    (repo / "link.py").symlink_to(outside)
    commit(repo)
    index(repo)
    db = repo / ".pix.db"
    assert dict(rows(db, "SELECT path, reason FROM skipped")) == {"link.py": "symlink"}
    assert not rows(db, "SELECT 1 FROM chunk_text WHERE text LIKE '%SECRET_OUTSIDE%'")


def test_a_tracked_file_behind_a_symlinked_folder_is_gone_not_read(make_repo, index, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "settings.py").write_text("OUTSIDE_THE_REPOSITORY = 1\n")
    repo = make_repo({"conf/settings.py": "INSIDE = 1\n", "a.py": "x = 1\n"})
    index(repo)
    shutil.rmtree(repo / "conf")
    (repo / "conf").symlink_to(outside)  # git now sees conf/settings.py deleted
    report = index(repo)
    db = repo / ".pix.db"
    assert not rows(db, "SELECT 1 FROM chunk_text WHERE text LIKE '%OUTSIDE_THE_REPOSITORY%'")
    files = rows(db, "SELECT path FROM snapshot_file WHERE snapshot_id = ?", report.snapshot_id)
    assert [p for (p,) in files] == ["a.py"]
    assert report.dirty
    code, out, err = pix("query", "OUTSIDE_THE_REPOSITORY", "--channel", "bm25", cwd=repo)
    assert code == 0 and "settings.py" not in out, err


def test_text_in_utf16_is_not_text_rather_than_binary(make_repo, index):
    repo = make_repo(
        {
            "notes.txt": b"\xff\xfe" + "utf sixteen words\r\n".encode("utf-16-le"),
            "big_endian.txt": b"\xfe\xff" + "more words".encode("utf-16-be"),
            "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00binary",
            "a.py": "x = 1\n",
        }
    )
    index(repo)
    assert dict(rows(repo / ".pix.db", "SELECT path, reason FROM skipped")) == {
        "big_endian.txt": "not_text",
        "logo.png": "binary",
        "notes.txt": "not_text",
    }


def test_a_checkout_while_the_files_are_read_makes_the_snapshot_dirty(make_repo):
    from pix.index import _dirty
    from pix.ingest import scan
    from pix.locate import locate

    repo = make_repo({"a.py": "x = 1\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, {"a.py": "x = 2\n"})
    commit(repo, "feature")
    listing = scan.list_worktree(repo)  # what index_repository reads the files by
    assert not _dirty(locate(str(repo)), listing)
    git(repo, "checkout", "-q", "main")  # clean again, but at another commit
    assert git(repo, "status", "--porcelain") == ""
    assert _dirty(locate(str(repo)), listing)


def test_a_sparse_checkout_is_not_taken_for_its_commit(make_repo, index):
    repo = make_repo({"a/x.py": "def in_a():\n    return 1\n", "b/y.py": "SPARSE_B = 1\n"})
    git(repo, "sparse-checkout", "set", "a")
    assert not (repo / "b").exists()
    report = index(repo)
    assert report.dirty  # b/y.py is the commit's, and not in this snapshot
    code, out, err = pix("query", "SPARSE_B", "--at", "HEAD", cwd=repo)
    assert code == 3 and "sparse checkout" in err, (out, err)


def test_an_assume_unchanged_edit_is_not_taken_for_its_commit(make_repo, index):
    repo = make_repo({"config.py": "DEBUG = False\n", "a.py": "x = 1\n"})
    git(repo, "update-index", "--assume-unchanged", "config.py")
    write(repo, {"config.py": "DEBUG = True  # LOCAL_EDIT\n"})
    assert git(repo, "status", "--porcelain") == ""  # git does not see the edit
    assert index(repo).dirty


def test_a_name_that_is_not_utf8_is_skipped_and_the_rest_indexed(make_repo, index, tmp_path):
    # git and the file system give such a name as bytes SQLite cannot store as text: the file
    # is skipped as unreadable under its name with \\x escapes, never the whole tree.
    repo = make_repo({"ok.py": "KEPT_NAME = 1\n"})
    (Path(os.fsdecode(os.fsencode(repo) + b"/caf\xe9.py"))).write_text("HIDDEN_NAME = 2\n")
    commit(repo)
    report = index(repo)
    assert report.files == 1 and report.skipped == {"unreadable": 1}
    db = repo / ".pix.db"
    assert rows(db, "SELECT path, reason FROM skipped") == [("caf\\xe9.py", "unreadable")]
    code, out, _ = pix_json("query", "KEPT_NAME", "--json", cwd=repo)
    assert code == 0 and out["results"][0]["path"] == "ok.py"
    assert out["warnings"] == []  # the skipped name reads as unchanged, not as a change
    at = index(repo, at=git(repo, "rev-parse", "HEAD"))
    assert at.files == 1 and at.skipped == {"unreadable": 1}
    folder = tmp_path / "plain"
    folder.mkdir()
    (Path(os.fsdecode(os.fsencode(folder) + b"/caf\xe9.py"))).write_text("HIDDEN_NAME = 2\n")
    (folder / "ok.py").write_text("KEPT_NAME = 1\n")
    plain = index(folder)
    assert plain.files == 1 and plain.skipped == {"unreadable": 1}


def test_submodules_and_nested_repositories_are_recorded_as_skipped(make_repo, index, tmp_path):
    # git lists a submodule (and an untracked repository inside the tree) as a folder, not
    # its files: they were left out without a word. Now each is a skipped row, reason
    # `submodule`, in work trees, --at and plain folders, and reads as unchanged.
    lib = make_repo({"lib.py": "def library_function():\n    pass\n"}, name="lib")
    repo = make_repo({"app.py": "def app_function():\n    pass\n"}, name="app")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor/lib")
    commit(repo, "submodule")
    nested = make_repo({"n.py": "N = 1\n"}, name="nested")
    nested.rename(repo / "nested")
    report = index(repo, embed=False)
    assert report.files == 2 and report.skipped == {"submodule": 2}  # app.py, .gitmodules
    db = repo / ".pix.db"
    assert dict(rows(db, "SELECT path, reason FROM skipped")) == {
        "nested": "submodule",
        "vendor/lib": "submodule",
    }
    code, out, _ = pix_json("query", "app function", "--json", cwd=repo)
    assert code == 0 and not any("changed" in w for w in out["warnings"]), out["warnings"]
    code, text, _ = pix("status", cwd=repo)
    assert "skipped: submodule 2" in text
    code, _, err = pix("index", "--static-only", cwd=repo)
    assert "2 submodules or nested repositories are not indexed" in err
    at = index(repo, at="HEAD", embed=False)
    assert at.skipped == {"submodule": 1}  # the nested one is in no commit
    folder = tmp_path / "plain"
    write(folder, {"p.py": "P = 1\n"})
    shutil.copytree(lib, folder / "inner")
    assert index(folder, embed=False).skipped == {"submodule": 1}
    code, out, _ = pix_json("status", "--json", cwd=folder)
    assert out["workTree"]["changed"] == 0
    # A snapshot written before submodules were recorded (migration 009) is not stale for
    # them (a reviewer: every such repository read "2 file(s) changed" after the upgrade).
    store = open_store(db, create=False)
    with store.write() as conn:
        conn.execute("DELETE FROM skipped WHERE reason = 'submodule'")
    store.close()
    code, out, _ = pix_json("status", "--json", cwd=repo)
    assert code == 0 and out["workTree"]["changed"] == 0, out["workTree"]
    # A tracked file replaced by a folder, of files or empty, is a file gone, not a submodule;
    # a submodule not checked out (an empty folder .gitmodules names) is one.
    (repo / "app.py").unlink()
    write(repo, {"app.py/inner.py": "I = 1\n"})
    report = index(repo, embed=False)
    assert report.skipped == {"submodule": 2} and report.files == 2  # .gitmodules, inner.py
    shutil.rmtree(repo / "app.py")
    (repo / "app.py").mkdir()
    shutil.rmtree(repo / "vendor" / "lib")
    (repo / "vendor" / "lib").mkdir()
    report = index(repo, embed=False)
    assert report.skipped == {"submodule": 2} and report.files == 1  # .gitmodules


def test_a_database_of_an_older_pix_keeps_its_skipped_rows_when_migrated(tmp_path):
    # 009 makes the skipped table again to admit `submodule`: the rows an older pix wrote
    # come through, and the new reason is accepted.
    from pix.store import db as store_db

    path = tmp_path / "old.db"
    conn = store_db._connect(path, new=True)
    store_db._migrate(conn, ["009_skipped_submodule", "010_skipped_blob"])  # those before 009
    conn.execute(
        "INSERT INTO snapshot(id, kind, root, created_at, fingerprint) "
        "VALUES (1, 'worktree', '/r', '2026-01-01T00:00:00Z', 'f')"
    )
    conn.execute("INSERT INTO skipped VALUES (1, 'big.bin', 'binary', 10, 5)")
    conn.close()
    with pytest.raises(apsw.ConstraintError):
        older = apsw.Connection(str(path))
        older.execute("INSERT INTO skipped VALUES (1, 'lib', 'submodule', 0, 0)")
    older.close()
    store = open_store(path, create=False)
    try:
        applied = [r[0] for r in store.conn.execute("SELECT name FROM migration ORDER BY name")]
        assert applied == list(known_migrations())
        store.conn.execute("INSERT INTO skipped VALUES (1, 'lib', 'submodule', 0, 0, NULL)")
        assert store.conn.execute("SELECT * FROM skipped ORDER BY path").fetchall() == [
            (1, "big.bin", "binary", 10, 5, None),  # 010: no blob id until the next index
            (1, "lib", "submodule", 0, 0, None),
        ]
    finally:
        store.close()


def test_a_folder_or_database_path_that_is_not_utf8_is_bad_input(make_repo, tmp_path):
    # A file name that is not UTF-8 is skipped; the repository's own path or the database's
    # cannot be: they are stored as text. It was "unexpected UnicodeDecodeError", exit 1.
    odd = Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9"))
    odd.mkdir()
    git(odd, "init", "-q")
    (odd / "a.py").write_text("A = 1\n")
    for args, cwd in (
        (["index"], odd),
        (["query", "x", "--cwd", str(odd)], tmp_path),
        (["index", str(make_repo({"b.py": "B = 1\n"})), "--db", str(odd / "x.db")], tmp_path),
    ):
        code, out, err = pix(*args, cwd=cwd)
        assert code == 2 and out == "", (args, err)
        assert err.startswith("pix: error: the path ") and err.count("\n") == 1, err
        assert "not valid UTF-8 (the byte 0xe9)" in err
    assert not (odd / ".pix.db").exists() and not (odd / "x.db").exists()


def test_a_real_file_named_like_an_escaped_name_is_never_taken_for_unchanged(make_repo, index):
    # `caf\\xe9.py` is both the escaped form of a latin-1 name and a valid UTF-8 name: with
    # both files there, one stored name stands for two, and it must read as changed (else an
    # edit to the real file would go unseen).
    repo = make_repo({"caf\\xe9.py": "REAL_NAME = 1\n"})
    (Path(os.fsdecode(os.fsencode(repo) + b"/caf\xe9.py"))).write_text("HIDDEN_NAME = 2\n")
    commit(repo)
    index(repo, embed=False)
    code, out, _ = pix_json("status", "--json", cwd=repo)
    assert code == 0 and out["workTree"]["changedPaths"] == ["caf\\xe9.py"]


# A plain folder (no git): its .gitignore and the usual noise folders are left out.
PLAIN = {
    "src/deep/main.py": "def plain_folder_marker():\n    pass\n",
    ".gitignore": "*.log\nsecret_dir/\n",
    "debug.log": "noise\n",
    "secret_dir/x.py": "hidden = 1\n",
    "node_modules/lib/index.js": "module.exports = 1\n",
    "__pycache__/m.cpython-311.pyc": b"\x00\x01",
}


def test_non_git_folder_honours_gitignore_and_noise(tmp_path, index):
    folder = tmp_path / "plain"
    write(folder, PLAIN)
    report = index(folder)
    assert report.kind == "folder" and report.commit is None
    paths = [r[0] for r in rows(folder / ".pix.db", "SELECT path FROM snapshot_file ORDER BY path")]
    assert paths == [".gitignore", "src/deep/main.py"]


def test_a_subfolder_of_an_indexed_plain_folder_uses_its_index(tmp_path, index):
    folder = tmp_path / "plain"
    write(folder, PLAIN)
    index(folder)
    sub = folder / "src" / "deep"
    code, out, err = pix("query", "plain_folder_marker", "--channel", "bm25", cwd=sub)
    assert code == 0 and "src/deep/main.py" in out, err
    write(folder, {"src/other.py": "def second_marker():\n    pass\n"})
    assert pix("index", "--static-only", cwd=sub)[0] == 0  # updates the folder's index
    assert not (sub / ".pix.db").exists()
    code, out, err = pix("query", "second_marker", "--channel", "bm25", cwd=sub)
    assert code == 0 and "src/other.py" in out, err
    # Folders the index leaves out, or that were added since, are not its: they get their
    # own, as before, and the error names the folder whose index could take them.
    write(folder, {"added/new.py": "def third_marker():\n    pass\n"})
    for left_out in (folder / "node_modules" / "lib", folder / "secret_dir", folder / "added"):
        code, _, err = pix("query", "x", cwd=left_out)
        assert code == 3 and str(left_out / ".pix.db") in err, err
        assert f"the index of {folder.resolve()} does not hold this folder's files" in err, err
    code, _, err = pix("status", cwd=folder / "added")
    assert code == 3 and f"`pix index` in {folder.resolve()} adds new files" in err, err


def test_at_indexes_old_commit_exactly_with_dirty_worktree(make_repo, index):
    repo = make_repo({"a.py": "OLD_NAME = 1\n"})
    old = git(repo, "rev-parse", "HEAD")
    write(repo, {"a.py": "NEW_NAME = 2\n", "b.py": "added = 1\n"})
    commit(repo)
    write(repo, {"a.py": "UNCOMMITTED = 3\n"})  # dirty work tree must not leak into --at
    report = index(repo, at=old[:10])
    assert report.kind == "commit" and report.commit == old and report.files == 1
    db = repo / ".pix.db"
    texts = [
        r[0]
        for r in rows(
            db,
            "SELECT t.text FROM snapshot_file f JOIN blob b ON b.sha = f.blob_sha "
            "JOIN chunk c ON c.blob_id = b.id JOIN chunk_text t ON t.id = c.id "
            "WHERE f.snapshot_id = ?",
            report.snapshot_id,
        )
    ]
    assert texts == ["OLD_NAME = 1"]
    assert (repo / "a.py").read_text() == "UNCOMMITTED = 3\n"  # work tree untouched
    again = index(repo, at=old)
    assert again.snapshot_id == report.snapshot_id and again.new_blobs == 0


def test_at_skips_a_blob_the_clone_does_not_hold(make_repo, index):
    # A partial clone or a mirror without its large files lists blobs it cannot read: each is
    # skipped as unreadable and the rest of the commit is indexed.
    repo = make_repo({"a.py": "KEPT_NAME = 1\n", "big.bin.py": "ABSENT_NAME = 2\n"})
    sha = git(repo, "rev-parse", "HEAD:big.bin.py")
    (repo / ".git" / "objects" / sha[:2] / sha[2:]).unlink()
    report = index(repo, at=git(repo, "rev-parse", "HEAD"))
    assert report.files == 1 and report.skipped == {"unreadable": 1}
    texts = [r[0] for r in rows(repo / ".pix.db", "SELECT text FROM chunk_text")]
    assert texts == ["KEPT_NAME = 1"]


def test_a_bare_repository_indexes_commits_not_git_internals(make_repo, tmp_path):
    # A bare repository (or a .git folder) has no work tree: indexed as a plain folder it was
    # git's own files (hooks/*.sample, config). Its commits index with --at, from git objects.
    repo = make_repo({"a.py": "KEPT_NAME = 1\n"})
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    for where in (bare, bare / "objects", repo / ".git"):
        code, out, err = pix("index", "--static-only", cwd=where)
        assert code == 2, err
        assert "is a git repository with no work tree (bare)" in err and "--at REV" in err
        assert err.count("\n") == 1
    code, out, err = pix_json("index", "--static-only", "--at", "HEAD", "--json", cwd=bare)
    assert code == 0, err
    assert out["kind"] == "commit" and out["files"] == 1
    code, out, err = pix_json("query", "KEPT_NAME", "--at", "HEAD", "--json", cwd=bare / "refs")
    assert code == 0, err
    assert [r["path"] for r in out["results"]] == ["a.py"]
    paths = rows(bare / ".pix.db", "SELECT path FROM snapshot_file")
    assert paths == [("a.py",)]
    code, out, err = pix("query", "KEPT_NAME", cwd=bare)  # no --at: nothing to `pix index`
    assert code == 3 and "a bare repository has no work tree" in err


@pytest.mark.parametrize("rev", ["main", "HEAD~1", "a1b2c3d4e5f6..HEAD"])
def test_at_refuses_names_and_expressions(make_repo, index, rev):
    repo = make_repo({"a.py": "x = 1\n"})
    with pytest.raises(UsageError):
        index(repo, at=rev)


def test_line_coverage_and_text_forms(make_repo, index):
    files = {
        "crlf.py": "def a():\r\n    return 1\r\n\r\ndef b():\r\n    return 2",
        "uni.py": "# café ☕ naïve\ndef grüße():\n    return 'ünïcödé'\n",
        "nofinal.txt": "line one\nline two",
        "notes.md": "# One\n\ntext\n\n## Two\n\nmore text\n",
    }
    repo = make_repo(files)
    index(repo)
    db = repo / ".pix.db"
    for path, text in files.items():
        blob = rows(db, "SELECT blob_sha FROM snapshot_file WHERE path = ?", path)[0][0]
        spans = rows(
            db,
            "SELECT c.start_line, c.end_line, t.text FROM chunk c JOIN chunk_text t ON t.id = c.id"
            " JOIN blob b ON b.id = c.blob_id WHERE b.sha = ? ORDER BY c.seq",
            blob,
        )
        lines = text.replace("\r\n", "\n").split("\n")
        if lines[-1] == "":
            lines.pop()
        covered = set()
        for start, end, chunk_text in spans:
            assert chunk_text.rstrip("\n").split("\n") == lines[start - 1 : end]
            covered.update(range(start, end + 1))
        assert covered == set(range(1, len(lines) + 1)), path
        line_count = rows(db, "SELECT line_count FROM blob WHERE sha = ?", blob)[0][0]
        assert line_count == len(lines)


def test_interrupted_embedding_resumes_without_duplicates(make_repo, index, embedder):
    repo = make_repo(
        {
            f"pkg/m{i}.py": f"def function_{i}(x):\n    return x * {i}\n\n\n"
            f"class Thing{i}:\n    value = {i}\n"
            for i in range(30)
        }
    )
    db = repo / ".pix.db"
    report = index(repo, embed=False)
    assert report.embed_pending > 0
    store = open_store(db, create=False)
    try:
        done = embed_pending(store, report.snapshot_id, embedder=embedder, limit=5)
    finally:
        store.close()
    assert done == 5
    again = index(repo)
    assert again.embedded == report.embed_pending - 5 and again.embed_pending == 0
    chunks = rows(db, "SELECT count(*) FROM chunk")[0][0]
    assert rows(db, "SELECT count(*), count(DISTINCT chunk_id) FROM chunk_vec")[0] == (
        chunks,
        chunks,
    )


def test_killed_index_leaves_consistent_database(make_repo):
    repo = make_repo(
        {
            f"pkg/m{i}.py": "\n\n".join(
                f"def f_{i}_{j}(value):\n    '''Step {j} of module {i}.'''\n"
                f"    return value + {j}\n"
                for j in range(8)
            )
            for i in range(40)
        }
    )
    db = repo / ".pix.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pix.cli", "index", str(repo), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    embedded = 0
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.3)
        if db.exists():
            try:
                embedded = rows(db, "SELECT count(*) FROM chunk_vec")[0][0]
            except Exception:
                continue
            if embedded:
                break
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert embedded > 0, "the index should have committed some vectors before the kill"
    code, report, _ = pix_json("index", str(repo), "--json", "--quiet")
    assert code == 0 and report["embedPending"] == 0
    chunks = rows(db, "SELECT count(*) FROM chunk")[0][0]
    assert rows(db, "SELECT count(*), count(DISTINCT chunk_id) FROM chunk_vec")[0] == (
        chunks,
        chunks,
    )
    assert (
        rows(
            db,
            "SELECT count(*) FROM (SELECT blob_id, seq FROM chunk GROUP BY 1, 2 "
            "HAVING count(*) > 1)",
        )[0][0]
        == 0
    )
    assert rows(db, "PRAGMA integrity_check")[0][0] == "ok"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_corrupt_database_refused_untouched(make_repo, tmp_path):
    repo = make_repo({"a.py": "x = 1\n"})
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not a database at all" * 100)
    before = _digest(bad)
    code, out, err = pix("index", str(repo), "--db", str(bad))
    assert code == 4 and "Traceback" not in err and err.count("\n") == 1
    code, out, err = pix("query", "x", "--db", str(bad), "--cwd", str(repo))
    assert code == 4
    # Anyone's file (`--db /etc/passwd`): the advice is another --db first, never "delete it".
    assert "(pass --db with another file name; if it is a pix database that broke" in err
    assert _digest(bad) == before
    with pytest.raises(DatabaseError):
        index_repository(str(repo), db=str(bad), embed=False)


def test_a_folder_given_as_the_database_is_bad_input(make_repo, tmp_path):
    repo = make_repo({"a.py": "x = 1\n"})
    for command in (("index", str(repo)), ("query", "x", "--cwd", str(repo))):
        code, out, err = pix(*command, "--db", str(tmp_path))
        assert code == 2 and out == "" and err.count("\n") == 1, (command, err)
        assert f"the database path {tmp_path} names a folder, not a database file" in err
    assert list(tmp_path.iterdir()) == [repo]  # nothing written into the folder


def test_newer_or_foreign_database_refused_untouched(make_repo, index, tmp_path):
    repo = make_repo({"a.py": "x = 1\n"})
    index(repo, embed=False)
    db = repo / ".pix.db"
    store = open_store(db, create=False)
    with store.write():
        store.conn.execute("INSERT INTO migration VALUES ('999_future', 'x')")
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    before = _digest(db)
    with pytest.raises(DatabaseError, match="newer pix"):
        index_repository(str(repo), embed=False)
    code, out, err = pix_json("status", "--json", cwd=repo)
    assert code == 4 and out["error"]["code"] == "unusable_database"
    assert _digest(db) == before

    foreign = tmp_path / "foreign.db"
    other = apsw.Connection(str(foreign))  # someone else's SQLite database
    other.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
    other.close()
    before = _digest(foreign)
    with pytest.raises(DatabaseError, match="not a pix database"):
        index_repository(str(repo), db=str(foreign), embed=False)
    assert _digest(foreign) == before


def test_refused_database_leaves_its_folder_as_it_was(make_repo, tmp_path):
    """A read-only look at a database in WAL mode made its -wal and -shm and left them: each
    refused command added two files beside a file it promised not to touch."""
    repo = make_repo({"a.py": "x = 1\n"})
    code, out, err = pix("index", "--static-only", cwd=repo)
    assert code == 0, err
    newer = repo / ".pix.db"
    store = open_store(newer, create=False)
    with store.write():
        store.conn.execute("INSERT INTO migration VALUES ('099_future', 'x')")
    store.close()
    foreign = tmp_path / "foreign" / "other.db"  # another program's database, in WAL mode too
    foreign.parent.mkdir()
    other = apsw.Connection(str(foreign))
    other.execute("PRAGMA journal_mode = WAL").fetchall()
    other.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
    other.close()
    for db, refusal in ((newer, "written by a newer pix"), (foreign, "not a pix database")):
        listing = sorted(db.parent.iterdir())
        assert not db.with_name(db.name + "-wal").exists()  # closed: the last close removed it
        before = _digest(db)
        for command in (("query", "x"), ("status",), ("gc",), ("index", "--static-only")):
            code, out, err = pix(*command, "--db", str(db), cwd=repo)
            assert code == 4 and refusal in err and err.count("\n") == 1, (command, err)
            assert sorted(db.parent.iterdir()) == listing, command
            assert _digest(db) == before, command


HOT_JOURNAL = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
conn.execute("CREATE TABLE t(x)")
conn.commit()
conn.execute("PRAGMA cache_size = 1")  # spill the transaction into the file before it ends
conn.execute("BEGIN")
conn.executemany("INSERT INTO t VALUES (?)", [("x" * 500,)] * 2000)
os._exit(0)  # killed mid-transaction: the -journal beside the file is hot
"""


def test_interrupted_foreign_transaction_refused_untouched(make_repo, tmp_path):
    """Reading a file beside a hot -journal means rolling it back, which a read-only look
    cannot: that was an 'unexpected ReadOnlyError' and exit 1, not a refusal."""
    repo = make_repo({"a.py": "x = 1\n"})
    db = tmp_path / "other" / "rollback.db"
    db.parent.mkdir()
    subprocess.run([sys.executable, "-c", HOT_JOURNAL, str(db)], check=True)
    assert db.with_name(db.name + "-journal").stat().st_size > 0
    listing, before = sorted(db.parent.iterdir()), _digest(db)
    for command in (("query", "x"), ("status",)):
        code, out, err = pix(*command, "--db", str(db), cwd=repo)
        assert code == 4 and "interrupted transaction" in err and err.count("\n") == 1, err
        assert sorted(db.parent.iterdir()) == listing and _digest(db) == before, command


CRASHED_WAL_WRITER = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
conn.execute("PRAGMA journal_mode = WAL")
conn.execute("PRAGMA wal_autocheckpoint = 0")  # the commits stay in the -wal
conn.execute("CREATE TABLE t(x)")
conn.execute("INSERT INTO t VALUES (1)")
conn.commit()
os._exit(0)  # no close: the -wal and -shm stay beside the file
"""


def test_a_linked_database_is_looked_at_beside_its_target(tmp_path):
    """SQLite keeps -wal and -shm beside a link's target: a look that checked beside the link
    opened read-write and checkpointed another program's commits into its file."""
    target = tmp_path / "theirs" / "other.db"
    target.parent.mkdir()
    subprocess.run([sys.executable, "-c", CRASHED_WAL_WRITER, str(target)], check=True)
    assert target.with_name("other.db-wal").stat().st_size > 0
    # Outside git, pix looks for an index in the folders above: this one's is a link.
    plain = tmp_path / "plain"
    (plain / "sub").mkdir(parents=True)
    (plain / ".pix.db").symlink_to(target)
    # The -shm is shared memory that every reader writes its marks into: not compared.
    kept = ("other.db", "other.db-wal")
    before = sorted(target.parent.iterdir()), [_digest(target.parent / n) for n in kept]
    code, out, err = pix("status", cwd=plain / "sub")
    assert code != 0 and err.count("\n") == 1, err
    assert (sorted(target.parent.iterdir()), [_digest(target.parent / n) for n in kept]) == before


def test_a_file_too_short_for_sqlite_is_not_taken_over(make_repo, tmp_path):
    """SQLite reads a one-byte file as an empty database: pix index made it an index."""
    repo = make_repo({"a.py": "x = 1\n"})
    note = tmp_path / "notes" / "note.db"
    note.parent.mkdir()
    note.write_bytes(b"\n")
    code, out, err = pix("index", "--static-only", "--db", str(note), cwd=repo)
    assert code == 4 and "not SQLite" in err, err
    assert note.read_bytes() == b"\n" and list(note.parent.iterdir()) == [note]


def test_model_mismatch_refused(make_repo, index):
    repo = make_repo({"a.py": "x = 1\n"})
    index(repo, embed=False)
    db = repo / ".pix.db"
    store = open_store(db, create=False)
    with store.write():
        store.set_meta("model.name", "some-other-model")
    store.close()
    with pytest.raises(DatabaseError, match="another embedding model"):
        index_repository(str(repo), embed=False)
    code, out, err = pix("query", "x", cwd=repo)
    assert code == 4 and "another embedding model" in err


def test_missing_database_and_bad_paths(tmp_path):
    with pytest.raises(NotIndexedError):
        from pix.status import status

        status(db=str(tmp_path / "none.db"))
    assert not (tmp_path / "none.db").exists()
    code, out, err = pix("index", str(tmp_path / "missing"))
    assert code == 2 and "no such folder" in err
    code, out, err = pix("index", "--max-bytes", "zero")
    assert code == 2 and "Traceback" not in err


def test_a_database_path_whose_folder_cannot_be_made(make_repo):
    repo = make_repo({"a.py": "x = 1\n"})
    for db in (repo / "a.py" / "x.db", repo / "a.py" / "sub" / "x.db"):
        code, out, err = pix("index", "--static-only", "--db", str(db), cwd=repo)
        assert code == 4, err
        assert err == (
            f"pix: error: cannot create {db}: its folder {db.parent} cannot be made (a file is "
            "in the way) (pass --db with a path in a writable folder)\n"
        )
    assert (repo / "a.py").read_text() == "x = 1\n"


def test_status_and_gc(make_repo, index):
    repo = make_repo({"a.py": "def alpha():\n    return 1\n", "b.py": "def beta():\n    pass\n"})
    index(repo)
    code, status, _ = pix_json("status", "--json", cwd=repo)
    assert code == 0 and status["workTree"] == {"indexed": True, "changed": 0, "changedPaths": []}
    (snap,) = status["snapshots"]
    assert snap["files"] == 2 and snap["embeddedShare"] == 1.0 and snap["branch"] == "main"
    write(repo, {"a.py": "def alpha():\n    return 2\n"})
    code, status, _ = pix_json("status", "--json", cwd=repo)
    assert status["workTree"]["changed"] == 1 and status["workTree"]["changedPaths"] == ["a.py"]
    index(repo)
    code, gc, _ = pix_json("gc", "--json", cwd=repo)
    assert code == 0 and gc["removed"]["blobs"] == 1 and gc["removed"]["vectors"] >= 1
    db = repo / ".pix.db"
    assert rows(db, "SELECT count(*) FROM blob")[0][0] == 2
    assert (
        rows(db, "SELECT count(*) FROM chunk_vec")[0][0]
        == rows(db, "SELECT count(*) FROM chunk")[0][0]
    )


def test_reader_sees_last_committed_state_during_a_write(make_repo, index):
    repo = make_repo({"a.py": "def alpha():\n    return 1\n"})
    index(repo)
    db = repo / ".pix.db"
    writer = open_store(db, create=False)
    try:
        writer.conn.execute("BEGIN IMMEDIATE")
        writer.conn.execute("DELETE FROM snapshot_file")
        code, out, err = pix_json("query", "alpha", "--json", cwd=repo)
        assert code == 0, err
        assert [r["path"] for r in out["results"]] == ["a.py"]
        writer.conn.execute("ROLLBACK")
    finally:
        writer.close()


def test_progress_reports_rate_and_eta_on_a_terminal():
    import io

    from pix.progress import Progress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    progress = Progress(stream=stream)
    progress.start("embedding chunks", 10)
    progress.advance(10)
    progress.finish()
    assert "embedding chunks: 10/10" in stream.getvalue() and "/s" in stream.getvalue()
    assert "ETA" in stream.getvalue()
    quiet = io.StringIO()  # not a terminal: nothing
    progress = Progress(stream=quiet)
    progress.start("x", 3)
    progress.advance(3)
    progress.finish()
    assert quiet.getvalue() == ""


def test_reindex_reuses_vectors_of_identical_chunks(make_repo, index):
    body = "def shared_helper(value):\n    return value * 2\n"
    repo = make_repo({"a.py": body})
    index(repo)
    # a new file whose bytes differ (CRLF) but whose chunk text is the same: a new blob, no new
    # model run, its vector copied from the twin
    write(repo, {"twin.py": body.replace("\n", "\r\n")})
    report = index(repo)
    assert report.new_blobs == 1 and report.embedded == 0 and report.embed_pending == 0
    db = repo / ".pix.db"
    vectors = rows(db, "SELECT v.chunk_id, vec_to_json(v.embedding) FROM chunk_vec v")
    assert len(vectors) == 2 and vectors[0][1] == vectors[1][1]
    code, out, err = pix_json("query", "shared helper doubling", "--json", cwd=repo)
    assert code == 0, err
    assert {r["path"] for r in out["results"]} == {"a.py", "twin.py"}


def test_unchanged_tree_keeps_its_snapshot(make_repo, index):
    repo = make_repo({"a.py": "def alpha():\n    return 1\n", "logo.png": b"\x89PNG\x00\x00"})
    first = index(repo)
    again = index(repo)
    assert again.snapshot_id == first.snapshot_id and again.new_blobs == 0
    assert again.skipped == {"binary": 1}
    db = repo / ".pix.db"
    assert rows(db, "SELECT count(*) FROM snapshot")[0][0] == 1
    # same bytes, new mtime: a new snapshot records the new stat, or every query would warn
    path = repo / "a.py"
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    touched = index(repo)
    assert touched.snapshot_id != first.snapshot_id and touched.new_blobs == 0
    code, out, err = pix_json("query", "alpha", "--json", cwd=repo)
    assert code == 0 and out["warnings"] == []


def _database_files(db: Path) -> list[str]:
    return sorted(p.name for p in db.parent.glob(db.name + "*"))


def test_failed_first_index_leaves_no_database(make_repo, index, monkeypatch, tmp_path):
    import pix.store.content

    def broken(text, path):
        raise RuntimeError("chunker failed")

    repo = make_repo({"a.py": "x = 1\n"})
    with monkeypatch.context() as patch:
        patch.setattr(pix.store.content, "chunk_file", broken)
        with pytest.raises(RuntimeError, match="chunker failed"):
            index(repo)
        assert _database_files(repo / ".pix.db") == []
        custom = tmp_path / "elsewhere" / "custom.db"
        with pytest.raises(RuntimeError):
            index(repo, db=str(custom))
        assert _database_files(custom) == []
    # A database that existed before the run is never removed, with or without a snapshot.
    index(repo)
    write(repo, {"b.py": "y = 2\n"})
    with monkeypatch.context() as patch:
        patch.setattr(pix.store.content, "chunk_file", broken)
        with pytest.raises(RuntimeError):
            index(repo)
        assert rows(repo / ".pix.db", "SELECT count(*) FROM snapshot")[0][0] == 1
        empty = tmp_path / "empty.db"
        open_store(empty, create=True).close()  # a stub from a run that was killed
        with pytest.raises(RuntimeError):
            index(repo, db=str(empty))
        assert empty.exists()


def first_index_of_many_files(make_repo) -> tuple[Path, subprocess.Popen]:
    """A repository of 1,500 small files and a first `pix index` of it, just started."""
    repo = make_repo(
        {f"pkg/m{i}.py": f"def f_{i}(value):\n    return value + {i}\n" for i in range(1500)}
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "pix", "index", str(repo), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    return repo, proc


def test_interrupted_first_index_leaves_no_database(make_repo):
    repo, proc = first_index_of_many_files(make_repo)
    db = repo / ".pix.db"
    deadline = time.monotonic() + 120
    while not db.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proc.poll() is None, "the index ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert "Traceback" not in err
    assert _database_files(db) == []


def test_an_interrupted_first_index_keeps_a_database_another_process_has_open(make_repo):
    # A second `pix index` joins a first one on a new database; the first is interrupted. It
    # deleted the file it had made, under the second, which then lost its work (audit). A
    # connection of this test process stands for the second: the database must stay.
    repo, proc = first_index_of_many_files(make_repo)
    db = repo / ".pix.db"
    other = None
    deadline = time.monotonic() + 120
    while other is None and proc.poll() is None and time.monotonic() < deadline:
        try:
            conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READWRITE)
            conn.set_busy_timeout(5000)
            conn.execute("SELECT count(*) FROM migration").fetchall()  # migrated: pix's now
            other = conn
        except apsw.Error:
            time.sleep(0.01)
    assert proc.poll() is None, "the index ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "Traceback" not in err
    assert other is not None
    assert other.execute("SELECT count(*) FROM snapshot").fetchone()[0] == 0  # none recorded
    assert db.exists()
    other.close()
    code, out, err = pix_json("index", "--static-only", "--json", cwd=repo)
    assert code == 0 and out["files"] == 1500, err
