"""The development-set builder's rules (bench/devsets.py) on a real git history, and Acc@k."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from bench import devbench, devcorpora, devsets, metrics
from tests.conftest import GIT_ENV


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, check=True,
                   capture_output=True)  # fmt: skip


def _commit(work: Path, subject: str, files: dict[str, str | None]) -> None:
    for path, text in files.items():
        target = work / path
        if text is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", subject)


@pytest.fixture
def mirrors(tmp_path: Path) -> Path:
    """A bare mirror of a small Go project's history, laid out as <owner>+<name>/repo."""
    work = tmp_path / "work"
    work.mkdir()
    _git(work, "init", "-q", "-b", "main")
    _commit(work, "Initial layout", {"src/parser.go": "package p\n", "README.md": "x\n"})
    _commit(
        work,
        "Add the parser options for quoting",
        {"src/parser.go": "package p\n// quoting\n", "src/parser_test.go": "package p\n"},
    )
    _commit(
        work,
        "Fix crash when the input is empty (#12)",
        {"src/parser.go": "package p\n// empty\n", "CHANGELOG.md": "fixed\n"},
    )
    _commit(work, "Bump version to 1.2.3 for the release", {"src/version.go": "package p\n"})
    _commit(work, "fix(cli): handle a missing flag value", {"src/cli.go": "package p\n"})
    _commit(work, "Fix typo in the parser comment please", {"src/parser.go": "package p\n"})
    _commit(
        work,
        "Add a big feature touching many files",
        {f"src/f{i}.go": "package p\n" for i in range(4)},
    )
    _commit(work, "Fix the old helper before it goes", {"src/old.go": "package p\n"})
    _commit(work, "Fix the old helper by removing it", {"src/old.go": None})
    _commit(work, "Fix only the tests of the parser", {"src/parser_test.go": "package q\n"})
    _commit(work, "Fix it", {"src/cli.go": "package p\n// short\n"})
    root = tmp_path / "mirrors"
    (root / "acme+tool").mkdir(parents=True)
    subprocess.run(
        ["git", "clone", "--bare", "-q", str(work), str(root / "acme+tool" / "repo")], check=True
    )
    return root


def test_build_set_keeps_only_fix_and_feature_commits_on_1_to_3_existing_source_files(
    mirrors: Path, tmp_path: Path
) -> None:
    devcorpora.set_mirrors(str(mirrors))
    try:
        spec = devsets.RepoSet("tool", "acme/tool", "Go", "go")
        meta = devsets.build_set(spec, out=tmp_path / "sets")
    finally:
        devcorpora.set_mirrors(None)
    rows = [json.loads(line) for line in (tmp_path / "sets/tool/queries.jsonl").open()]
    got = {r["query"]: r["gold_files"] for r in rows}
    assert got == {
        "Add the parser options for quoting": ["src/parser.go"],
        "Fix crash when the input is empty": ["src/parser.go"],
        "cli: handle a missing flag value": ["src/cli.go"],
    }
    assert {r["subject"] for r in rows} >= {"fix(cli): handle a missing flag value"}
    assert meta["counts"]["queries"] == 3
    head = devcorpora.git_out(mirrors / "acme+tool" / "repo", "rev-parse", "HEAD").strip()
    assert meta["pinned_commit"] == head
    # Deterministic: the same history gives the same bytes.
    first = (tmp_path / "sets/tool/queries.jsonl").read_bytes()
    devcorpora.set_mirrors(str(mirrors))
    try:
        devsets.build_set(spec, out=tmp_path / "sets")
    finally:
        devcorpora.set_mirrors(None)
    assert (tmp_path / "sets/tool/queries.jsonl").read_bytes() == first


def test_snapshot_is_the_pinned_tree_as_one_reproducible_commit(
    mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIX_BENCH_CACHE", str(tmp_path / "cache"))
    devcorpora.set_mirrors(str(mirrors))
    try:
        sha = devcorpora.git_out(mirrors / "acme+tool/repo", "rev-parse", "HEAD~3").strip()
        snap = devcorpora.snapshot("acme/tool", sha)
    finally:
        devcorpora.set_mirrors(None)
    files = subprocess.run(
        ["git", "-C", str(snap), "ls-files"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert "src/old.go" in files and "src/f0.go" in files  # HEAD~3 still has the old helper
    log = subprocess.run(
        ["git", "-C", str(snap), "log", "--format=%H %an %s"],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert len(log) == 1 and log[0].split()[1] == "bench" and sha in log[0]


@pytest.mark.parametrize(
    ("subject", "ok"),
    [
        ("Fix crash when the input is empty", True),
        ("feat(router): support wildcard media types", True),
        ('Revert "Fix crash when the input is empty"', False),
        ("chore(deps): update actions/checkout to v5", False),
        ("Bump serde from 1.0.1 to 1.0.2", False),
        ("Fix typo in the docs of Parser", False),
        ("Fix it now", False),  # fewer than 4 words
        ("Refactor the option parser for clarity", False),
        ("Release 1.58.0 with the new parser", False),
    ],
)
def test_subject_rules(subject: str, ok: bool) -> None:
    assert devsets.subject_ok(subject) is ok


def test_query_text_drops_prefixes_and_pull_request_numbers() -> None:
    assert devsets.query_text("fix(ssh): complete hosts (#1234)") == "ssh: complete hosts"
    assert devsets.query_text("feat: add a --json flag") == "add a --json flag"
    assert devsets.query_text("[Console] Fix the table") == "Console: Fix the table"
    assert devsets.query_text("bug #40427 [Console] Stop it") == "Console: Stop it"
    assert devsets.query_text("bts: New completion, thanks") == "bts: New completion, thanks"
    assert devsets.query_text("- fix mutt sed errors") == "fix mutt sed errors"


@pytest.mark.parametrize(
    ("path", "ecosystem", "source"),
    [
        ("src/terminal.go", "go", True),
        ("src/terminal_test.go", "go", False),
        ("javalin/src/main/java/io/javalin/Javalin.java", "jvm", True),
        ("javalin/src/test/java/io/javalin/TestJavalin.kt", "jvm", False),
        ("src/Polly.Core/Retry/RetryHelper.cs", "csharp", True),
        ("test/Polly.Core.Tests/Retry/RetryHelperTests.cs", "csharp", False),
        ("completions/ssh", "bash", True),
        ("test/t/test_ssh.py", "bash", False),
        ("lib/sidekiq/client.rb", "ruby", True),
        ("spec/client_spec.rb", "ruby", False),
        ("src/router/reg-exp-router/router.ts", "typescript", True),
        ("src/router/reg-exp-router/router.test.ts", "typescript", False),
        ("docs/guide/index.ts", "typescript", False),
        ("CHANGELOG.md", "go", False),
        ("libexec/rbenv-exec", "bash-tool", True),
        ("test/exec.bats", "bash-tool", False),
        ("app/controllers/devise/sessions_controller.rb", "ruby-engine", True),
        ("test/rails_app/app/models/user.rb", "ruby-engine", False),
    ],
)
def test_source_files_per_ecosystem(path: str, ecosystem: str, source: bool) -> None:
    assert devsets.is_source(path, devsets.ECOSYSTEMS[ecosystem]) is source


def test_exact_string_literals_skip_apostrophes_and_markup() -> None:
    text = "msg := \"could not create CPU profile: %w\"; // don't place it if it won't\n"
    found = [m.group(1) for m in devsets.DOUBLE_QUOTED.finditer(text)]
    assert found == ["could not create CPU profile: %w"]
    assert not list(devsets.SINGLE_QUOTED.finditer("don't place signs if it won't fit"))
    assert devsets.good_literal("No Redis pool available for Sidekiq::Client")
    assert not devsets.good_literal("<div class='x'>{name}</div> here")
    assert not devsets.good_literal("too short")


def test_acc_at_k_needs_every_gold_file() -> None:
    ranked = ["a.py", "b.py", "a.py", "c.py"]
    assert metrics.all_at(ranked, ["a.py", "c.py"], 2) == 0.0
    assert metrics.all_at(ranked, ["a.py", "c.py"], 3) == 1.0  # repeats are dropped first
    scores = metrics.score(ranked, ["b.py"], ks=(1,), acc_ks=(1, 3))
    assert scores["acc@1"] == 0.0 and scores["acc@3"] == 1.0 and scores["mrr@10"] == 0.5


@pytest.mark.parametrize("name", ["questions", "questions-more"])
def test_the_committed_questions_are_well_formed(name: str) -> None:
    meta, rows = devsets.load_set(name)
    assert meta["kind"] == "questions" and len(rows) == meta["counts"]["queries"]
    assert devsets.question_problems(rows) == []
    # every question names a committed set whose corpus it is asked on, at that set's pin
    for row in rows:
        assert row["pinned_commit"] == devsets.load_set(row["set"])[0]["pinned_commit"]
    assert devsets.committed_sets("questions") == ["questions", "questions-more"]


def test_question_checks_catch_bad_rows() -> None:
    row = {"id": "x-q01", "set": "x", "kind": "symbol", "gold_files": ["src/parser.go"]}
    rows = [dict(row, id=f"x-q{i:02}") for i in range(10)]
    rows += [dict(row, id=f"x-c{i:02}", kind="concept") for i in range(12)]
    rows += [dict(row, id=f"x-a{i:02}", kind="architecture") for i in range(8)]
    files = {"x": {"src/parser.go"}}
    assert devsets.question_problems(rows, files) == []
    rows[0] = dict(rows[0], gold_files=["src/gone.go"])
    rows[1] = dict(rows[1], id=rows[2]["id"])
    rows[3] = dict(rows[3], gold_files=[])
    rows.pop()
    problems = devsets.question_problems(rows, files)
    assert "duplicate ids" in problems
    assert any("gold not at the pinned commit: ['src/gone.go']" in p for p in problems)
    assert any("0 gold files" in p for p in problems)
    assert any("kinds" in p for p in problems)


def test_a_new_cached_database_takes_the_vectors_of_another_indexers(
    tmp_path: Path, monkeypatch, embedder
) -> None:
    from pix.index import index_repository
    from pix.store import open_store
    from tests.conftest import new_repo

    monkeypatch.setenv("PIX_BENCH_CACHE", str(tmp_path / "cache"))
    repo = new_repo(
        tmp_path / "repo",
        {"a.py": "def alpha():\n    return 1\n", "b.py": "def beta(x):\n    return x * 2\n"},
    )
    model = devcorpora.model_key()
    old = tmp_path / "cache" / "devdbs" / f"{model}-oldchunker" / "set.db"
    new = tmp_path / "cache" / "devdbs" / f"{model}-newchunker" / "set.db"
    for db in (old, new):
        db.parent.mkdir(parents=True)
    index_repository(str(repo), str(old), embedder=embedder)
    index_repository(str(repo), str(new), embed=False)
    vectors = "SELECT c.embed_key, v.embedding FROM chunk c JOIN chunk_vec v ON v.chunk_id = c.id"
    with open_store(str(old), create=False) as store:
        want = sorted(store.conn.execute(vectors).fetchall())
    assert devcorpora.seed_vectors(new, "set.db") == len(want) == 2
    with open_store(str(new), create=False) as store:
        assert sorted(store.conn.execute(vectors).fetchall()) == want
        assert store.conn.execute("SELECT count(*) FROM chunk_vec_static").fetchone() == (0,)
    assert devcorpora.seed_vectors(new, "set.db") == 0  # nothing is left to seed


def test_every_language_of_the_14_sets_has_a_second_set() -> None:
    """A second repository in each language, so that a language's figure is the mean of two
    projects or more (bench/spread_bench.py's language table): `--sets pairs` for twelve
    languages, the commitloc-more sets for TypeScript and Rust (and C++, a fifteenth)."""
    pairs = devsets.committed_sets("commitloc-pair")
    firsts = devsets.committed_sets("commitloc")
    more = devsets.committed_sets("commitloc-more")
    language = {n: devsets.load_set(n)[0]["language"] for n in [*firsts, *pairs, *more]}
    first = {language[n] for n in firsts}
    assert len(first) == 14 and len({language[n] for n in pairs}) == len(pairs) == 12
    assert {language[n] for n in pairs} | {language[n] for n in more} >= first
    assert devbench.expand("pairs") == pairs
    lang, by_name = devbench.commit_sets()  # devbench asks each in a table of its own
    assert set(pairs) | set(more) == by_name and not by_name & lang
    for name in pairs:
        meta, rows = devsets.load_set(name)
        assert devsets.REPO_SETS[name].kind == "commitloc-pair"
        assert len(rows) >= devsets.MIN_QUERIES and len(rows) == meta["counts"]["queries"]


def test_a_tree_is_written_without_the_blobs_its_mirror_lacks(tmp_path: Path) -> None:
    """A fetched mirror may list its largest files without their objects: the tree a bench
    writes out holds every other file, at its path (a space or a name that is not UTF-8 too),
    as committed."""
    from tests.conftest import new_repo

    repo = new_repo(
        tmp_path / "repo",
        {"a.c": "int a;\n", "big/b.c": "int b;\n", "big/kept c.c": "int k;\n"},
    )
    odd = os.fsencode(repo) + b"/big/caf\xe9.c"  # Latin-1, as an old repository may hold
    with open(odd, "wb") as fh:
        fh.write(b"int c;\n")
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, env={**os.environ, **GIT_ENV})
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "odd name"], check=True,
                   env={**os.environ, **GIT_ENV})  # fmt: skip
    sha = devcorpora.git_out(repo / ".git", "rev-parse", "HEAD").strip()
    blob = devcorpora.git_out(repo / ".git", "rev-parse", "HEAD:big/b.c").strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    assert devcorpora.absent_blobs(repo / ".git", sha) == ["big/b.c"]
    # the same tree minus the absent file, as a commit (what devbench indexes for issueloc)
    complete = devcorpora.complete_commit(repo, sha)
    listed = devcorpora.git_out(repo / ".git", "ls-tree", "-r", "--name-only", complete)
    assert complete != sha and "big/b.c" not in listed.split("\n") and "a.c" in listed
    for folder in (None, "big"):
        out = tmp_path / f"tree-{folder}"
        devcorpora.write_tree(repo / ".git", sha, out, folder=folder)
        assert not (out / "big" / "b.c").exists()
        assert (out / "big" / "kept c.c").read_text() == "int k;\n"
        with open(os.fsencode(out) + b"/big/caf\xe9.c", "rb") as fh:
            assert fh.read() == b"int c;\n"
        assert (out / "a.c").exists() is (folder is None)
