"""bench/baselines.py: the plain BM25 baseline reads each file's path and text, and a text
shared by several paths (or commits) keeps each path's own words."""

from __future__ import annotations

import subprocess

from conftest import commit, new_repo, write

from bench.baselines import BM25Files, SembleLexical


def test_one_text_at_two_paths_is_found_by_each_name(tmp_path):
    same = "TIMEOUT = 30\n"
    root = new_repo(tmp_path / "repo", {"alpha/thing.py": same, "zeta/widget.py": same})
    cache: dict = {}
    bm25 = BM25Files.from_git(root, "HEAD", cache=cache)
    assert bm25.rank("widget") == ["zeta/widget.py"]
    assert bm25.rank("thing") == ["alpha/thing.py"]
    assert sorted(bm25.rank("timeout")) == ["alpha/thing.py", "zeta/widget.py"]
    # a rename at the next commit: its text's words come from the cache, its path's do not
    write(root, {"zeta/gadget.py": same})
    (root / "zeta/widget.py").unlink()
    commit(root, "rename the widget")
    renamed = BM25Files.from_git(root, "HEAD", cache=cache)
    assert renamed.rank("gadget") == ["zeta/gadget.py"]
    assert renamed.rank("widget") == []


def test_docs_are_left_out_and_camel_case_words_split(tmp_path):
    root = new_repo(
        tmp_path / "repo",
        {
            "src/session.py": "def open_session(retryPolicy):\n    return retryPolicy\n",
            "README.md": "open a session with a retry policy\n",
        },
    )
    bm25 = BM25Files.from_git(root)
    assert bm25.paths == ["src/session.py"]
    assert bm25.rank("retry policy") == ["src/session.py"]


def test_the_peer_finds_nothing_in_a_tree_it_cannot_read(tmp_path):
    # rbenv's early commits: extensionless Bash scripts, no file semble knows the language of
    only_scripts = tmp_path / "scripts"
    (only_scripts / "libexec").mkdir(parents=True)
    (only_scripts / "libexec" / "rbenv-exec").write_text("#!/usr/bin/env bash\nexec ruby\n")
    peer = SembleLexical(only_scripts)
    assert peer.rank("exec ruby") == [] and peer.spans("exec ruby") == []
    (only_scripts / "lib.py").write_text("def exec_ruby():\n    return 'ruby'\n")
    assert SembleLexical(only_scripts).rank("exec ruby") == ["lib.py"]


def test_a_blob_the_mirror_lacks_is_left_out(tmp_path):
    # A fetched mirror may list its largest files without their objects: `ls-tree -l` says BAD.
    root = new_repo(tmp_path / "repo", {"kept.py": "WIDGET = 1\n", "gone.py": "GADGET = 2\n"})
    blob = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD:gone.py"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    (root / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    bm25 = BM25Files.from_git(root, "HEAD")
    assert bm25.rank("widget") == ["kept.py"] and bm25.rank("gadget") == []
