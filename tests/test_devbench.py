"""bench/devbench.py --build-only: it builds the cached databases other benches read, so it
refuses to build into a folder that goes with the run, and for the sets that have no database of
their own it builds those of the repositories they ask."""

from __future__ import annotations

import apsw
import pytest
from conftest import commit, git, new_repo, write

from bench import devbench, devsets
from pix.index import index_repository
from pix.store.db import open_store


def test_build_only_needs_reuse(capsys):
    with pytest.raises(SystemExit) as exit_:
        devbench.main(["--sets", "cosqa", "--build-only"])
    assert exit_.value.code == 2
    assert "--build-only needs --reuse" in capsys.readouterr().err


def test_sets_without_a_database_need_those_of_the_repositories_they_ask():
    """--build-only and --costs read `needed`: the questions' own repositories (pytest,
    seaborn) are built too, and a database that two sets ask is named once."""
    questions = devbench.needed(["questions"])
    assert {"pytest", "seaborn", "tmux"} <= set(questions)
    assert "questions" not in questions and len(questions) == len(set(questions))
    lang = devsets.committed_sets("commitloc")
    assert set(devbench.needed(["exact"])) <= set(lang)
    both = devbench.needed(["tmux", "exact", "questions", "cosqa"])
    assert both[0] == "tmux" and both[-1] == "cosqa"
    assert both.count("tmux") == 1 and set(questions) <= set(both)
    # the second question set asks its own commitloc-more repositories, none of the 14
    more = devbench.needed(["questions-more"])
    assert set(more) == {"apollo-client", "mobx", "hyper", "leveldb", "spdlog"}
    assert not set(more) & set(lang) and "questions-more" in devbench.expand("all")


def test_a_cached_commit_snapshot_without_counts_is_indexed_again(tmp_path):
    """--reuse skips the commits a cached database holds, but not one written before the
    history counts (migration 008): indexed again, it is counted, and skipped from then on."""
    repo = new_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    first = git(repo, "rev-parse", "HEAD")
    write(repo, {"a.py": "A = 2\n"})
    second = commit(repo)
    db = tmp_path / "cached.db"
    for sha in (first, second):
        index_repository(str(repo), str(db), at=sha, embed=False)
    assert devbench.indexed_commits(db) == {first, second}
    conn = apsw.Connection(str(db))
    conn.execute(
        "UPDATE snapshot_file SET recent_commits = NULL WHERE snapshot_id = "
        "(SELECT id FROM snapshot WHERE commit_sha = ?)",
        (first,),
    )
    conn.close()
    assert devbench.indexed_commits(db) == {second}
    index_repository(str(repo), str(db), at=first, embed=False)
    assert devbench.indexed_commits(db) == {first, second}


def test_a_cached_commit_snapshot_whose_log_another_rule_read_is_indexed_again(tmp_path):
    """Nor one whose git log an older pix read by another rule (migration 012's log_rule):
    indexed again, its log is read by this pix's rule, and it is skipped from then on."""
    repo = new_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    sha = git(repo, "rev-parse", "HEAD")
    db = tmp_path / "cached.db"
    index_repository(str(repo), str(db), at=sha, embed=False)
    assert devbench.indexed_commits(db) == {sha}
    conn = apsw.Connection(str(db))
    conn.execute("UPDATE snapshot SET log_rule = 'newest 1000 commits of 1-5 files'")
    conn.close()
    assert devbench.indexed_commits(db) == set()
    index_repository(str(repo), str(db), at=sha, embed=False)
    assert devbench.indexed_commits(db) == {sha}
    with open_store(db, create=False) as store, store.write():
        # as a cache written before migration 012 reads: no log_rule to ask for (pix's own
        # connection: the schema's views need the functions it registers)
        store.conn.execute("DELETE FROM migration WHERE name = '012_log_rule'")
        store.conn.execute("ALTER TABLE snapshot DROP COLUMN log_rule")
    assert devbench.indexed_commits(db) == set()
