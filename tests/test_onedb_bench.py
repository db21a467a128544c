"""bench/onedb_bench.py: the one repository holding every shard's tree, and "foreign first"."""

from __future__ import annotations

from conftest import git, new_repo, write

from bench.onedb_bench import foreign_first, one_repository
from pix.index import index_repository
from pix.query import QueryEngine, QueryRequest
from pix.workspace import Shard


def test_one_repository_holds_each_shards_tracked_files_under_its_name(tmp_path):
    a = new_repo(tmp_path / "a", {"src/parse.py": "def parse_header():\n    pass\n"})
    b = new_repo(
        tmp_path / "b",
        {".gitignore": "*.log\n", "lib/route.js": "function matchRoute() {}\n"},
    )
    # Tracked though its name is ignored (devcorpora.snapshot commits every file so): kept.
    write(b, {"keep.log": "kept\n"})
    git(b, "add", "-f", "keep.log")
    git(b, "commit", "-q", "-m", "a tracked log")
    write(a, {"scratch.py": "untracked = True\n"})  # not tracked: not part of the shard
    shards = [Shard("a", a, tmp_path / "a.db"), Shard("b", b, tmp_path / "b.db")]
    tree = one_repository(shards, tmp_path / "one")
    listed = git(tree, "ls-files").splitlines()
    assert listed == ["a/src/parse.py", "b/.gitignore", "b/keep.log", "b/lib/route.js"]
    assert git(tree, "status", "--porcelain") == ""
    # Built once: a second call finds it and copies nothing.
    write(a, {"src/new.py": "x = 1\n"})
    git(a, "add", "-A")
    git(a, "commit", "-q", "-m", "more")
    assert one_repository(shards, tmp_path / "one") == tree
    assert "a/src/new.py" not in git(tree, "ls-files").splitlines()

    db = tmp_path / "all.db"
    index_repository(str(tree), str(db), embed=False)
    engine = QueryEngine(db=str(db), cwd=str(tree))
    try:
        answer = engine.query(QueryRequest(query="parse_header", mode="file", no_content=True))
    finally:
        engine.close()
    assert answer["results"][0]["file"] == "a/src/parse.py"


def test_foreign_first_counts_questions_whose_first_file_is_another_repositorys():
    runs = [
        (["a/x.py", "b/y.py"], ["a/x.py"]),  # own first
        (["b/y.py", "a/x.py"], ["a/x.py"]),  # another repository first
        (["a/z.py"], ["a/x.py"]),  # own repository first, wrong file: not foreign
        ([], ["a/x.py"]),  # nothing found: not foreign either
    ]
    assert foreign_first(runs) == 0.25
    assert foreign_first([]) == 0.0
