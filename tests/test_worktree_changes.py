"""The work-tree check before every query: which files changed since the snapshot was indexed.

`scan.worktree_stats` stats the snapshot's paths while git lists the tree in its own process;
it must keep exactly the files the indexer's own listing (`scan.list_worktree`) keeps, and
`changed_files` must name every kind of change and nothing else.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import GIT_ENV, commit, git, new_repo, pix, write

import pix as pix_package
from pix import snapshot
from pix.errors import NotIndexedError, UsageError
from pix.index import index_repository
from pix.ingest import scan
from pix.query import QueryEngine, QueryRequest, refresh_first
from pix.shards import ShardSet, query_shards
from pix.shards_tools import discover_shards, status_shards
from pix.snapshot import changed_files, select_snapshot
from pix.status import status
from pix.workspace import load_workspace

FILES = {
    ".gitignore": "*.log\nbuild/\n",
    "src/app.py": "def main():\n    return 1\n",
    "src/util.py": "def helper():\n    return 2\n",
    "docs/guide.md": "# Guide\n\nRead me.\n",
    "keep.txt": "kept\n",
}


def reference(root: Path) -> dict[str, tuple[int, int]]:
    return {e.path: (e.size, e.mtime_ns) for e in scan.list_worktree(root).entries}


def changed(root: Path, db: Path) -> list[str]:
    engine = QueryEngine(db=str(db), cwd=str(root))
    try:
        with engine.store.read():
            snapshot = select_snapshot(engine.store, engine.target, None)
            return changed_files(engine.store, engine.target, snapshot)
    finally:
        engine.close()


def later(path: Path) -> None:
    """Move a file's mtime on without relying on the clock's resolution."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_the_check_keeps_exactly_what_the_indexer_lists(tmp_path):
    root = new_repo(tmp_path / "repo", FILES)
    write(root, {"new.py": "x = 1\n", "debug.log": "ignored\n", "build/out.py": "ignored\n"})
    (root / "src" / "link.py").symlink_to("app.py")
    (root / "keep.txt").unlink()  # tracked, gone from the work tree
    (root / "subdir_only").mkdir()
    for own in (".pix.db", ".pix.db-wal"):
        (root / own).write_bytes(b"not a file of the repository")
    listed = reference(root)
    assert "new.py" in listed and "src/link.py" in listed
    assert not {"keep.txt", "debug.log", "build/out.py", ".pix.db", ".pix.db-wal"} & set(listed)
    tracked = list(FILES)
    for known in ([], tracked, list(listed), tracked + ["gone/never.py", "build/out.py"]):
        assert scan.worktree_stats(root, known) == listed, known
    # A path the snapshot excludes (the database's own name, when it lives in the tree) too.
    excluded = frozenset({"src/util.py"})
    assert "src/util.py" not in scan.worktree_stats(root, tracked, excluded)


def test_a_listing_larger_than_a_pipe_is_read_whole(tmp_path):
    # 2,000 untracked paths of ~60 bytes: about twice what a pipe holds before git would stop.
    root = new_repo(tmp_path / "repo", FILES)
    many = {f"generated/module_with_a_rather_long_name_{i:05d}.py": "" for i in range(2000)}
    write(root, many)
    listed = scan.worktree_stats(root, list(FILES))
    assert listed == reference(root)
    assert set(many) <= set(listed)


def test_not_a_git_work_tree_is_a_clear_error(tmp_path, monkeypatch):
    # git must not find a repository above the temp folder, wherever that folder lives.
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    with pytest.raises(UsageError, match="git ls-files failed"):
        scan.worktree_stats(tmp_path, [])


def test_changed_files_names_every_kind_of_change_and_nothing_else(tmp_path):
    root = new_repo(tmp_path / "repo", FILES)
    db = tmp_path / "index.db"
    index_repository(str(root), str(db), embed=False)
    assert changed(root, db) == []

    write(root, {"src/app.py": "def main():\n    return 10\n"})  # content (and size)
    write(root, {"src/util.py": "def helper():\n    return 3\n"})  # content, not size
    later(root / "docs" / "guide.md")  # touched: same bytes, new mtime (git: unchanged)
    (root / "keep.txt").unlink()  # deleted
    write(root, {"notes/new.py": "y = 2\n"})  # untracked, not ignored
    write(root, {"debug.log": "ignored\n", "build/x.py": "ignored\n"})  # ignored
    (root / ".pix.db-wal").write_bytes(b"pix's own")
    assert changed(root, db) == ["keep.txt", "notes/new.py", "src/app.py", "src/util.py"]

    commit(root, "the changes")  # committing changes no file on disk
    assert changed(root, db) == ["keep.txt", "notes/new.py", "src/app.py", "src/util.py"]
    index_repository(str(root), str(db), embed=False)
    assert changed(root, db) == []


def test_a_plain_folder_is_checked_without_git(tmp_path):
    root = tmp_path / "folder"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n", encoding="utf-8")
    db = tmp_path / "index.db"
    index_repository(str(root), str(db), embed=False)
    assert changed(root, db) == []
    (root / "b.py").write_text("def b():\n    return 2\n", encoding="utf-8")
    assert changed(root, db) == ["b.py"]


def test_a_file_that_became_a_symlink_of_its_own_size_is_a_change(tmp_path):
    """Its target holds the same bytes, and a link to "abc.py" is six bytes as `x = 1` is: the
    link is not followed (nor would one out of the repository be)."""
    root = new_repo(tmp_path / "repo", {"a.py": "x = 1\n", "abc.py": "x = 1\n"})
    db = tmp_path / "index.db"
    index_repository(str(root), str(db), embed=False)
    (root / "a.py").unlink()
    (root / "a.py").symlink_to("abc.py")
    assert os.lstat(root / "a.py").st_size == len("x = 1\n")
    assert changed(root, db) == ["a.py"]


def test_a_repository_copied_or_moved_with_its_database_is_checked_by_content(tmp_path):
    """Its snapshot is of the old folder and every mtime differs: a file is a change when its
    bytes are (audit: a copy at another commit, or a moved folder, warned of nothing)."""
    root = new_repo(tmp_path / "repo", FILES)
    old = git(root, "rev-parse", "HEAD")
    write(root, {"src/app.py": "def main():\n    return 100\n"})
    commit(root, "later")
    index_repository(str(root), embed=False)
    same = tmp_path / "same"
    shutil.copytree(root, same, copy_function=shutil.copy)  # new mtimes, same bytes
    assert os.stat(same / "keep.txt").st_mtime_ns != os.stat(root / "keep.txt").st_mtime_ns
    assert changed(same, same / ".pix.db") == []
    git(same, "checkout", "-q", old)  # the copy at another commit
    assert changed(same, same / ".pix.db") == ["src/app.py"]
    moved = tmp_path / "moved"
    root.rename(moved)
    write(moved, {"src/util.py": "def helper():\n    return 20\n"})
    assert changed(moved, moved / ".pix.db") == ["src/util.py"]
    report = status(cwd=str(moved))
    assert report["workTree"] == {"indexed": True, "changed": 1, "changedPaths": ["src/util.py"]}


def test_a_database_named_with_db_whose_tree_is_gone_judges_no_other_folder(tmp_path):
    """Only a folder's own .pix.db, copied or moved with it, is checked against the folder it
    is in. A database --db names (its tree on another machine, or moved away), or a
    workspace's bare `db` entry, is not: the folder pix runs in read as changed throughout,
    and a server's auto-refresh indexed that folder into it (review)."""
    root = new_repo(tmp_path / "repo", FILES)
    db = tmp_path / "data" / "a.pix.db"
    index_repository(str(root), str(db), embed=False)
    root.rename(tmp_path / "gone")
    here = new_repo(tmp_path / "here", {"unrelated.py": "x = 1\n"})
    assert changed(here, db) == []
    engine = QueryEngine(db=str(db), cwd=str(here))
    try:
        request = QueryRequest(query="helper")
        assert refresh_first(engine, request, [], auto=True) == (None, [])
        assert [r["path"] for r in engine.query(request)["results"]][:1] == ["src/util.py"]
    finally:
        engine.close()


def test_a_workspaces_bare_db_entry_named_pix_db_judges_no_folder(tmp_path):
    """Its shard runs in the database's folder, which is no tree of it, whatever the file is
    called (second review: `db = "data/api/.pix.db"` read every file as changed, and a
    server's auto-refresh indexed data/api into it, after which it answered nothing)."""
    root = new_repo(tmp_path / "repo", FILES)
    db = tmp_path / "data" / "api" / ".pix.db"
    index_repository(str(root), str(db), embed=False)
    (tmp_path / "pix.toml").write_text('[[repo]]\nname = "api"\ndb = "data/api/.pix.db"\n')
    shards = ShardSet(load_workspace(tmp_path))
    try:
        request = QueryRequest(query="helper", mode="file")
        answer = query_shards(shards, request, auto_refresh=True)
        assert "refreshed" not in answer, answer
        assert not [w for w in answer["warnings"] if "changed" in w], answer["warnings"]
        assert [r["file"] for r in answer["results"]][:1] == ["src/util.py"]
    finally:
        shards.close()
    hypothesis = {"id": "h", "pattern": "helper", "mode": "literal"}
    discovered = discover_shards(load_workspace(tmp_path), {"queries": [hypothesis]})
    assert not [w for w in discovered["warnings"] if "changed" in w], discovered["warnings"]
    shards = ShardSet(load_workspace(tmp_path))
    try:  # asked to refresh, it says why it does not (third review: it indexed data/api)
        answer = query_shards(shards, QueryRequest(query="helper", mode="file", refresh=True))
        assert "refreshed" not in answer and [r["file"] for r in answer["results"]][:1] == [
            "src/util.py"
        ]
        assert any("bare db entry" in w for w in answer["warnings"]), answer["warnings"]
    finally:
        shards.close()
    report = status_shards(load_workspace(tmp_path))["repos"][0]
    # No tree to judge: not one of the folder's files is called changed.
    assert report["status"]["workTree"]["changed"] == 0, report
    # Run in that folder, the database inside it is the folder's own, as the README has it (a
    # repository copied with its .pix.db refreshes into it): its files are all gone there.
    assert changed(db.parent, db) == sorted(FILES)


def test_a_symlink_that_became_a_file_of_its_own_size_is_a_change(tmp_path):
    """Audit: a link skipped as `symlink` is judged by its size, and a file of the link's
    size in its place ("z=1\\n" for a link to "a.py") was no change."""
    root = new_repo(tmp_path / "repo", {"a.py": "def real():\n    pass\n"})
    (root / "l.py").symlink_to("a.py")
    commit(root, "link")
    db = tmp_path / "index.db"
    index_repository(str(root), str(db), embed=False)
    assert changed(root, db) == []
    later(root / "a.py")  # the link's target touched: no change of the link
    (root / "l.py").unlink()
    (root / "l.py").symlink_to("a.py")  # the link made again: a new mtime, the same link
    assert changed(root, db) == []
    (root / "l.py").unlink()
    (root / "l.py").write_text("z=1\n", encoding="utf-8")
    assert os.lstat(root / "l.py").st_size == len("a.py")
    assert "l.py" in changed(root, db)


def test_a_skipped_file_is_judged_by_size_only_when_its_bytes_did_not_skip_it(tmp_path):
    """A binary file may turn into text at the same size (review): a new mtime is a change.
    One skipped for its size is the same file at the same size."""
    root = new_repo(tmp_path / "repo", {"a.py": "x = 1\n", "blob.dat": "\0" * 8 + "\n"})
    write(root, {"big.txt": "y" * 2000 + "\n"})
    commit(root, "big")
    db = tmp_path / "index.db"
    index_repository(str(root), str(db), embed=False, max_bytes=1000)
    assert changed(root, db) == []
    (root / "blob.dat").write_text("abcdefgh\n")  # the same nine bytes, now text
    later(root / "big.txt")
    assert changed(root, db) == ["blob.dat"]


def test_a_file_skipped_for_its_bytes_is_judged_by_content_when_touched(tmp_path):
    """Audit: a binary or generated file had no blob id, so a `touch`, a checkout there and
    back or a lock file rewritten with the same bytes counted as a change (the README says
    they are none). Migration 010 keeps its blob id; a secret file keeps none."""
    root = new_repo(
        tmp_path / "repo",
        {"a.py": "x = 1\n", "logo.png": "\x89PNG\0\0data\n", "package-lock.json": "{}\n"},
    )
    db = tmp_path / "index.db"
    index_repository(str(root), str(db), embed=False)
    engine = QueryEngine(db=str(db), cwd=str(root))
    try:
        rows = dict(engine.store.conn.execute("SELECT path, blob_sha FROM skipped").fetchall())
    finally:
        engine.close()
    assert rows["logo.png"] == git(root, "rev-parse", "HEAD:logo.png")
    later(root / "logo.png")
    (root / "package-lock.json").write_text("{}\n", encoding="utf-8")  # the same bytes
    later(root / "package-lock.json")
    assert changed(root, db) == []
    (root / "logo.png").write_bytes(b"\x89PNG\0\0date\n")  # same size, other bytes
    later(root / "logo.png")
    assert changed(root, db) == ["logo.png"]


def test_past_the_read_budget_a_touched_file_counts_as_changed(tmp_path, monkeypatch):
    """The bytes one check reads are bounded (snapshot.READ_BUDGET): the files read are the
    first in path order, so the answer is the same every time."""
    root = new_repo(tmp_path / "repo", {f"m{i}.py": f"value = {i}\n" for i in range(4)})
    db = tmp_path / "index.db"
    index_repository(str(root), str(db), embed=False)
    for i in range(4):
        later(root / f"m{i}.py")
    assert changed(root, db) == []
    monkeypatch.setattr(snapshot, "READ_BUDGET", 2 * len("value = 0\n"))
    assert changed(root, db) == ["m2.py", "m3.py"] == changed(root, db)


def test_a_moved_repository_with_its_database_under_another_name_inside_is_checked(tmp_path):
    """`--db .pix/index.db` inside the tree is the folder's own too (second review: only
    `.pix.db` was, and such a moved repository warned of nothing)."""
    root = new_repo(tmp_path / "repo", FILES)
    index_repository(str(root), str(root / ".pix" / "index.db"), embed=False)
    moved = tmp_path / "moved"
    root.rename(moved)
    write(moved, {"src/util.py": "def helper():\n    return 20\n"})
    assert changed(moved, moved / ".pix" / "index.db") == ["src/util.py"]


def test_another_repositorys_database_kept_inside_the_folder_is_not_its_own(tmp_path):
    """R keeps S's database under tools/ (third review): a server's auto-refresh indexed R
    into it. A database under another name than .pix.db is the folder's own only when the
    snapshot's folder is gone or holds the same file (a move, a copy)."""
    s = new_repo(tmp_path / "s", FILES)
    r = new_repo(tmp_path / "r", {"main.py": "def main():\n    pass\n"})
    db = r / "tools" / "s.db"
    index_repository(str(s), str(db), embed=False)
    assert changed(r, db) == []
    engine = QueryEngine(db=str(db), cwd=str(r))
    try:
        request = QueryRequest(query="helper")
        assert refresh_first(engine, request, [], auto=True) == (None, [])
    finally:
        engine.close()


NOBODY = 65534


def _as_nobody(root: Path):
    """As root (who enters every folder), a function that makes a child `nobody`, to whom
    `root` is given; None when the suite runs as another user, who is shut out of a folder
    by its mode alone. pytest.skip where nobody cannot run this very pix in `root` (a
    checkout or temp folder nobody may not enter, a user namespace without that uid)."""
    if os.geteuid() != 0:
        return None

    def drop() -> None:
        os.setgid(NOBODY)
        os.setuid(NOBODY)

    for path in [root.parent, *root.parent.rglob("*")]:
        os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
    try:
        probe = subprocess.run(
            [sys.executable, "-P", "-c", "import pix; print(pix.__file__)"],
            preexec_fn=drop,
            capture_output=True,
            text=True,
            cwd=root,
        )
    except (OSError, subprocess.SubprocessError):
        pytest.skip("cannot run pix as nobody here")
    if probe.returncode != 0 or probe.stdout.strip() != pix_package.__file__:
        pytest.skip("nobody cannot run this pix here")
    return drop


def test_a_file_behind_a_folder_this_user_cannot_enter_is_skipped_unreadable():
    """Audit: a tracked file in a folder pix may not enter was taken for deleted: no skipped
    row, the tree 'unchanged', and discover called its words absent after a complete search.
    Review: at every depth below that folder."""
    base = Path(tempfile.mkdtemp(prefix="pix-closed-"))
    try:
        files = {
            "ok.py": "def ok():\n    pass\n",
            "closed/c.py": "def closed_fn():\n    pass\n",
            "closed/sub/d.py": "def nested_fn():\n    pass\n",
            "linked/sub/e.py": "def linked_fn():\n    pass\n",
        }
        root = new_repo(base / "repo", files)
        # a folder replaced by a link to a folder nobody may enter: its files are deleted, as
        # git sees them, not unreadable (review)
        shutil.rmtree(root / "linked")
        (base / "private").mkdir()
        (root / "linked").symlink_to(base / "private")
        drop = _as_nobody(root)
        for closed in (root / "closed", base / "private"):
            if drop is not None:
                os.chown(closed, 0, 0)
            closed.chmod(0o700 if drop is not None else 0o000)
        env = {**os.environ, **GIT_ENV, "HOME": str(base)}

        def run(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run(
                [sys.executable, "-P", "-m", "pix.cli", *args],
                cwd=root,
                env=env,
                preexec_fn=drop,
                capture_output=True,
                text=True,
            )

        done = run("index", "--static-only")
        assert done.returncode == 0, done.stderr
        status = json.loads(run("status", "--json").stdout)
        assert status["workTree"]["changed"] == 0, status
        for name, path in (("closed_fn", "closed/c.py"), ("nested_fn", "closed/sub/d.py")):
            found = json.loads(run("discover", "-l", f"a={name}", "--json").stdout)
            [hypothesis] = found["incompleteHypotheses"]  # not evidence of absence
            [cell] = hypothesis["cells"]
            assert cell["status"] == "partial" and f"{path} (unreadable)" in cell["reason"]
        (root / "closed").chmod(0o755)
        with sqlite3.connect(root / ".pix.db") as conn:
            skipped = conn.execute("SELECT path, reason FROM skipped").fetchall()
        assert sorted(skipped) == [
            ("closed/c.py", "unreadable"),
            ("closed/sub/d.py", "unreadable"),
            ("linked", "symlink"),
        ]
        # once the folder opens, its files are a change, and an index reads them
        assert json.loads(run("status", "--json").stdout)["workTree"]["changed"] == 2
    finally:
        for path in [base, *base.rglob("*")]:
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o755)
        shutil.rmtree(base)


def test_without_git_every_command_says_so_in_one_line(tmp_path):
    """Audit: with no git on PATH, pix index (even of a plain folder) failed with
    "unexpected FileNotFoundError: [Errno 2] No such file or directory: 'git'"."""
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    for args in (["index", "--static-only"], ["query", "x"]):
        code, _, err = pix(*args, cwd=tmp_path, env={"PATH": str(tmp_path / "no-bin")})
        assert code == 1, err
        assert err.splitlines() == [
            "pix: error: git is not installed: pix runs it to list and read repositories "
            "(install git, or put it on PATH)"
        ]


def test_the_stale_warning_of_pix_run_names_what_run_accepts(tmp_path):
    """Audit: `pix run NAME` said "run with --refresh", and `pix run NAME --refresh` is
    "No such option". The advice names `pix index`, which brings the snapshot up to date."""
    root = new_repo(tmp_path / "repo", FILES)
    assert pix("index", "--static-only", cwd=root)[0] == 0
    assert pix("alias", "add", "helpers", "helper function", "--file", cwd=root)[0] == 0
    write(root, {"src/util.py": "def helper():\n    return 3\n"})
    code, _, err = pix("run", "helpers", cwd=root)
    assert code == 0, err
    [warning] = [line for line in err.splitlines() if "changed since" in line]
    assert "`pix index` includes them" in warning and "run with --refresh" not in warning
    assert pix("run", "helpers", "--refresh", cwd=root)[0] == 2  # run takes no --refresh
    assert pix("index", "--static-only", cwd=root)[0] == 0
    code, _, err = pix("run", "helpers", cwd=root)
    assert code == 0 and "changed since" not in err, err


def test_the_nearest_indexed_ancestor_named_is_one_at_can_ask(tmp_path):
    """Audit: a work tree indexed with uncommitted changes records its commit, which --at
    refuses (not that commit's content); the hint for a later commit named it all the same."""
    root = new_repo(tmp_path / "repo", FILES)
    first = git(root, "rev-parse", "HEAD")
    write(root, {"src/extra.py": "def extra():\n    return 4\n"})  # untracked: a dirty tree
    db = tmp_path / "index.db"
    index_repository(str(root), str(db), embed=False)
    second = commit(root, "extra")

    def hint_at(sha: str) -> str:
        engine = QueryEngine(db=str(db), cwd=str(root))
        try:
            with engine.store.read(), pytest.raises(NotIndexedError) as caught:
                select_snapshot(engine.store, engine.target, sha)
            return caught.value.hint or ""
        finally:
            engine.close()

    assert "ancestor" not in hint_at(second)
    index_repository(str(root), str(db), embed=False, at=first)
    assert hint_at(second).endswith(f"the nearest indexed ancestor is {first} (not queried)")
