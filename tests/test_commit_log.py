"""The log channel: `pix index` keeps the git log before the snapshot's commit (subjects and
changed files, pix/ingest/commit_log.py), and a change description's words matched against
those subjects name the files the matching commits changed (pix/retrieve/commit_log.py).

A real git repository in a temp folder, indexed with the real model into real SQLite, asked
through pix.query and the real command line. History, oldest first:
- "initial": every file added
- "ssh: complete hosts from known_hosts": completions/ssh.sh
- "scp: complete remote paths": completions/scp.sh
- "ssh: offer identity files after -i": completions/ssh.sh and lib/options.sh
- "sweep": seven files touched at once (more than MAX_FILES, held at 5 here: not kept)
- "docs: describe the options": README.md
The seven completions are the same loop over different names, so for a change that names no
command the fused channels cannot tell them apart: only the log says that changes to known
hosts land in completions/ssh.sh.
"""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import jsonschema
import pytest
from conftest import commit, git, new_repo, pix, pix_json, write

from pix.index import index_repository
from pix.ingest import commit_log as ingest_log
from pix.query import QueryEngine, QueryRequest
from pix.retrieve import commit_log, route

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[1] / "schema" / "query-response.v2.json").read_text()
)
COMMANDS = ("ssh", "scp", "rsync", "sftp", "curl", "wget", "ping")
COMPLETION = """_{name}_complete() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}}
    COMPREPLY=( $(compgen -W "--help --version --verbose" -- "$cur") )
}}
complete -F _{name}_complete {name}
"""
# Names no command: only the log ties "known hosts" to ssh.
CHANGE = "Fix completing user names before the known hosts"
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # a GitHub token's shape, made up


@pytest.fixture(scope="module", autouse=True)
def five_files_at_most():
    """The rule at a size these small histories exceed (pix keeps commits of up to 20 files)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ingest_log, "MAX_FILES", 5)
        yield


@pytest.fixture(scope="module")
def repo(tmp_path_factory, embedder) -> tuple[Path, Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("log") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    files = {f"completions/{n}.sh": COMPLETION.format(name=n) for n in COMMANDS}
    write(root, {**files, "lib/options.sh": "OPTIONS=(--help)\n", "README.md": "# tools\n"})
    shas = {"initial": commit(root, "initial")}
    write(root, {"completions/ssh.sh": COMPLETION.format(name="ssh") + "\n"})
    shas["hosts"] = commit(root, "ssh: complete hosts from known_hosts")
    write(root, {"completions/scp.sh": COMPLETION.format(name="scp") + "\n"})
    shas["scp"] = commit(root, "scp: complete remote paths")
    write(root, {"completions/ssh.sh": COMPLETION.format(name="ssh") + "\n\n"})
    write(root, {"lib/options.sh": "OPTIONS=(--help -i)\n"})
    shas["identity"] = commit(root, "ssh: offer identity files after -i")
    write(root, {f"completions/{n}.sh": COMPLETION.format(name=n) + "\n\n\n" for n in COMMANDS})
    shas["sweep"] = commit(root, "sweep: ssh scp rsync sftp curl wget ping")
    write(root, {"README.md": "# tools\n\nOptions.\n"})
    shas["docs"] = commit(root, "docs: describe the options")
    db = root.parent / "index.db"
    index_repository(str(root), str(db), embedder=embedder)
    return root, db, shas


@pytest.fixture
def one_module(tmp_path, embedder) -> tuple[Path, Path]:
    """A repository of one commit ("add the first module": a.py), indexed into index.db."""
    root = new_repo(tmp_path / "repo", {"a.py": "A = 1\n"}, "add the first module")
    db = tmp_path / "index.db"
    index_repository(str(root), str(db), embedder=embedder)
    return root, db


def rows(db: Path, sql: str, *params) -> list[tuple]:
    conn = apsw.Connection(str(db))
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def snapshot_log(db: Path, snapshot_id: int) -> dict[str, list[str]]:
    """Subject -> changed paths, of one snapshot's log."""
    out: dict[str, list[str]] = {}
    for subject, path in rows(
        db,
        """SELECT c.subject, f.path FROM snapshot_log_commit s
           JOIN log_commit c ON c.id = s.commit_id JOIN log_commit_file f ON f.commit_id = c.id
           WHERE s.snapshot_id = ? ORDER BY c.subject, f.path""",
        snapshot_id,
    ):
        out.setdefault(subject, []).append(path)
    return out


def worktree(db: Path) -> int:
    return rows(db, "SELECT max(id) FROM snapshot WHERE kind != 'commit'")[0][0]


def ask(db: Path, root: Path, text: str, **options) -> dict:
    engine = QueryEngine(db=str(db), cwd=str(root))
    try:
        return engine.query(QueryRequest(query=text, mode="file", explain=True, **options))
    finally:
        engine.close()


def test_index_keeps_the_log_of_commits_that_changed_a_few_files(repo):
    root, db, _ = repo
    snapshot_id = worktree(db)
    assert snapshot_log(db, snapshot_id) == {
        "docs: describe the options": ["README.md"],
        "scp: complete remote paths": ["completions/scp.sh"],
        "ssh: complete hosts from known_hosts": ["completions/ssh.sh"],
        "ssh: offer identity files after -i": ["completions/ssh.sh", "lib/options.sh"],
    }  # "initial" (9 files) and the sweep (7) changed more than MAX_FILES
    assert rows(db, "SELECT log_commits FROM snapshot WHERE id = ?", snapshot_id) == [(4,)]
    # FTS5 finds a subject by its words, as the README's example asks it
    found = rows(
        db,
        "SELECT c.subject FROM log_commit_fts JOIN log_commit c ON c.id = log_commit_fts.rowid"
        " WHERE log_commit_fts MATCH 'identity'",
    )
    assert found == [("ssh: offer identity files after -i",)]


def test_a_change_description_finds_the_files_its_kind_of_change_touched(repo):
    root, db, shas = repo
    # Without the path priors, and so without the history prior, which also knows that ssh.sh
    # changed most lately: what places it is the log alone.
    answer = ask(db, root, CHANGE, priors=False)
    jsonschema.validate(answer, SCHEMA)
    first = answer["results"][0]
    assert first["file"] == "completions/ssh.sh"
    log = first["explain"]["channels"]["log"]
    assert log["rank"] == 1
    assert [c["subject"] for c in log["commits"]] == ["ssh: complete hosts from known_hosts"]
    assert shas["hosts"].startswith(log["commits"][0]["sha"])
    assert answer["explain"]["weights"]["log"] == route.LOG
    # Without the channel the seven alike completions score within a few percent of each
    # other; the log puts ssh.sh clearly ahead.
    channels = ["dense", "static", "bm25", "ident", "path"]
    without = ask(db, root, CHANGE, channels=channels, priors=False)

    def lead(results: list[dict]) -> float:
        return (results[0]["score"] - results[1]["score"]) / results[0]["score"]

    assert lead(without["results"]) < 0.05
    assert lead(answer["results"]) > 0.15


def test_the_log_votes_by_subject_match_and_by_how_few_files_a_commit_changed(repo):
    root, db, _ = repo
    conn = apsw.Connection(str(db))
    try:
        files = commit_log.log_files(conn, worktree(db), '"hosts" OR "identity"', None)
    finally:
        conn.close()
    paths = [f.path for f in files]
    # both ssh commits vote for ssh.sh; options.sh only through the two-file commit, whose
    # vote each of its files takes divided by the square root of two
    assert paths == ["completions/ssh.sh", "lib/options.sh"]
    assert files[0].share == 1.0 and 0 < files[1].share < 1 / 2**0.5


def test_the_log_stays_within_the_path_filters(repo):
    root, db, _ = repo
    conn = apsw.Connection(str(db))
    try:
        files = commit_log.log_files(conn, worktree(db), '"ssh"', ["lib/options.sh"])
    finally:
        conn.close()
    assert [f.path for f in files] == ["lib/options.sh"]


def test_an_old_commit_reads_its_own_past(repo, embedder):
    root, db, shas = repo
    index_repository(str(root), str(db), at=shas["scp"], embedder=embedder)
    (snapshot_id,) = rows(db, "SELECT id FROM snapshot WHERE commit_sha = ?", shas["scp"])[0]
    assert snapshot_log(db, snapshot_id) == {
        "scp: complete remote paths": ["completions/scp.sh"],
        "ssh: complete hosts from known_hosts": ["completions/ssh.sh"],
    }
    # the identity commit came later: at this commit, nothing says options.sh
    answer = ask(db, root, "ssh: offer identity files", at=shas["scp"])
    voted = [r["file"] for r in answer["results"] if "log" in r["explain"]["channels"]]
    assert voted == ["completions/ssh.sh"]  # through the hosts commit, the one ssh commit then


def test_an_edit_keeps_the_log_and_gc_drops_what_no_snapshot_holds(tmp_path, embedder):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, {"a.py": "A = 1\n"})
    old = commit(root, "add the first module")
    write(root, {"b.py": "B = 2\n"})
    commit(root, "add the second module (#12)")
    db = tmp_path / "index.db"
    index_repository(str(root), str(db), embedder=embedder)
    first = worktree(db)
    write(root, {"b.py": "B = 3\n"})  # an edit: a new work-tree snapshot at the same commit
    index_repository(str(root), str(db), embedder=embedder)
    second = worktree(db)
    assert second != first
    assert snapshot_log(db, second) == {
        "add the first module": ["a.py"],
        "add the second module (#12)": ["b.py"],
    }
    index_repository(str(root), str(db), at=old, embedder=embedder)
    assert rows(db, "SELECT count(*) FROM log_commit") == [(2,)]
    assert rows(db, "SELECT number FROM log_commit_citation") == [(12,)]
    code, report, err = pix_json("gc", "--keep", "0", "--json", "--db", str(db), cwd=root)
    assert code == 0, err
    assert report["removed"]["logCommits"] == 0  # the work tree's log still holds both
    git(root, "checkout", "-q", "--orphan", "fresh")
    git(root, "rm", "-q", "--cached", "a.py")
    (root / "a.py").unlink()
    commit(root, "start over")
    index_repository(str(root), str(db), embedder=embedder)
    code, report, err = pix_json("gc", "--json", "--db", str(db), cwd=root)
    assert code == 0, err
    assert report["removed"]["logCommits"] == 2
    assert rows(db, "SELECT subject FROM log_commit") == [("start over",)]
    assert rows(db, "SELECT count(*) FROM log_commit_file") == [(1,)]
    assert rows(db, "SELECT count(*) FROM log_commit_citation") == [(0,)]  # #12's went with it
    assert rows(db, "INSERT INTO log_commit_fts(log_commit_fts) VALUES ('integrity-check')") == []


def test_a_snapshot_from_before_the_log_gains_it_at_the_next_index(one_module, embedder):
    root, db = one_module
    snapshot_id = worktree(db)
    conn = apsw.Connection(str(db))
    with conn:  # as migration 011 leaves a snapshot written before it
        conn.execute("DELETE FROM snapshot_log_commit")
        conn.execute("UPDATE snapshot SET log_commits = NULL, log_rule = NULL")
    conn.close()
    assert not ingest_log.is_current(apsw.Connection(str(db)), snapshot_id)
    index_repository(str(root), str(db), embedder=embedder)  # nothing changed: kept
    assert worktree(db) == snapshot_id
    assert snapshot_log(db, snapshot_id) == {"add the first module": ["a.py"]}


def test_a_folder_without_git_has_no_log_and_still_answers(tmp_path, embedder):
    root = tmp_path / "plain"
    write(root, {"ssh.sh": COMPLETION.format(name="ssh")})
    db = tmp_path / "index.db"
    index_repository(str(root), str(db), embedder=embedder)
    assert rows(db, "SELECT log_commits FROM snapshot") == [(None,)]
    answer = ask(db, root, CHANGE)
    assert answer["results"][0]["file"] == "ssh.sh"
    assert "log" not in answer["results"][0]["explain"]["channels"]


def test_the_channel_can_be_asked_alone_from_the_command_line(repo):
    root, db, _ = repo
    code, answer, err = pix_json(
        "query", "ssh: complete identity files and known hosts", "--file", "--json",
        "--channel", "log", "--explain", "--db", str(db),
        cwd=root,
    )  # fmt: skip
    assert code == 0, err
    assert [r["file"] for r in answer["results"]] == ["completions/ssh.sh", "lib/options.sh"]


def test_a_secret_in_a_subject_is_masked_before_it_is_stored(tmp_path, embedder):
    root = new_repo(tmp_path / "repo", {"ci.sh": "echo build\n"}, f"ci: stop leaking {TOKEN}")
    db = tmp_path / "index.db"
    index_repository(str(root), str(db), embedder=embedder)
    assert rows(db, "SELECT subject FROM log_commit") == [
        ("ci: stop leaking [REDACTED:github_token]",)
    ]
    assert TOKEN.encode() not in db.read_bytes()


def test_an_explanation_for_people_names_the_commit_that_matched(repo):
    root, db, shas = repo
    code, out, err = pix(
        "query", CHANGE, "--file", "--explain", "--no-content", "--db", str(db), cwd=root
    )
    assert code == 0, err
    first = out.split("\n── ")[0]
    assert first.startswith("── completions/ssh.sh")
    assert "log #1 score" in first
    assert f"({shas['hosts'][:8]} 'ssh: complete hosts from known_hosts')" in first


def test_a_newer_detector_masks_a_stored_subject_again(tmp_path, embedder, monkeypatch):
    from pix.ingest import mask, redact

    root = new_repo(tmp_path / "repo", {"ci.sh": "echo build\n"}, f"ci: stop leaking {TOKEN}")
    db = tmp_path / "index.db"
    with monkeypatch.context() as m:  # an older detector that knew no secret kind
        m.setattr(mask, "find_secrets", lambda text, language=None: [])
        m.setattr(redact, "VERSION", 1)
        index_repository(str(root), str(db), embedder=embedder)
    assert rows(db, "SELECT subject FROM log_commit") == [(f"ci: stop leaking {TOKEN}",)]
    index_repository(str(root), str(db), embedder=embedder)  # the real detector, newer
    assert rows(db, "SELECT subject FROM log_commit") == [
        ("ci: stop leaking [REDACTED:github_token]",)
    ]
    assert rows(db, "SELECT 1 FROM log_commit_fts WHERE log_commit_fts MATCH ?", TOKEN) == []
    rows(db, "INSERT INTO log_commit_fts(log_commit_fts) VALUES ('integrity-check')")


@pytest.fixture
def two_sizes(tmp_path) -> tuple[Path, Path]:
    """A repository whose log holds a two-file commit ("add both") and a one-file one
    ("touch a"), and where its database goes."""
    root = new_repo(tmp_path / "repo", {"a.py": "A = 1\n", "b.py": "B = 1\n"}, "add both")
    write(root, {"a.py": "A = 2\n"})
    commit(root, "touch a")
    return root, tmp_path / "index.db"


def index_by_rule(root: Path, db: Path, embedder, max_files: int) -> None:
    """`pix index` as a pix that keeps commits of 1 to `max_files` files."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ingest_log, "MAX_FILES", max_files)
        index_repository(str(root), str(db), embedder=embedder)


@pytest.mark.parametrize(
    ("older", "now", "subjects"),
    [(1, 5, ["add both", "touch a"]), (5, 1, ["touch a"])],
    ids=["narrower-rule-before", "wider-rule-before"],
)
def test_a_log_read_by_another_rule_is_read_again_at_the_same_commit(
    two_sizes, embedder, older, now, subjects
):
    """A re-index at the same commit keeps the last snapshot's log, unless another pix read
    it by another rule (an older pix kept commits of 1-5 files where this one keeps 1-20):
    then git is read again and the snapshot's links are replaced, not added to."""
    root, db = two_sizes
    index_by_rule(root, db, embedder, older)
    snapshot_id = worktree(db)
    index_by_rule(root, db, embedder, now)  # nothing changed: the snapshot is kept
    assert worktree(db) == snapshot_id
    assert sorted(snapshot_log(db, snapshot_id)) == subjects
    assert rows(db, "SELECT log_commits, log_rule FROM snapshot WHERE id = ?", snapshot_id) == [
        (
            len(subjects),
            f"newest 1000 commits of 1-{now} files, a merge by its first parent's diff"
            "; of the newest 5000 that may cite an issue, those that do",
        )
    ]


def test_an_edit_does_not_copy_a_log_of_another_rule(two_sizes, embedder):
    """An edit at the same commit writes a new snapshot, whose log is copied from the last
    one only if that one was read by this pix's rule."""
    root, db = two_sizes
    index_by_rule(root, db, embedder, 1)
    before = worktree(db)
    write(root, {"b.py": "B = 2\n"})
    index_by_rule(root, db, embedder, 5)
    edited = worktree(db)
    assert edited != before
    assert sorted(snapshot_log(db, edited)) == ["add both", "touch a"]
    write(root, {"b.py": "B = 3\n"})
    index_by_rule(root, db, embedder, 5)  # same rule: copied, the same commits
    assert sorted(snapshot_log(db, worktree(db))) == ["add both", "touch a"]


def test_a_log_read_before_the_rule_was_recorded_is_read_again(two_sizes, embedder):
    root, db = two_sizes
    index_by_rule(root, db, embedder, 1)
    snapshot_id = worktree(db)
    conn = apsw.Connection(str(db))
    with conn:  # as migration 012 leaves a snapshot whose log was read before it
        conn.execute("UPDATE snapshot SET log_rule = NULL")
    conn.close()
    index_by_rule(root, db, embedder, 1)
    assert rows(db, "SELECT log_rule FROM snapshot WHERE id = ?", snapshot_id) == [
        (
            "newest 1000 commits of 1-1 files, a merge by its first parent's diff; of the newest"
            " 5000 that may cite an issue, those that do",
        )
    ]


def test_a_snapshot_is_never_its_own_source(two_sizes, embedder):
    """Copying a snapshot's log onto itself would unlink it, copy nothing and record the
    empty log as read by this rule: never read again."""
    root, db = two_sizes
    index_by_rule(root, db, embedder, 5)
    snapshot_id = worktree(db)
    conn = apsw.Connection(str(db))
    with conn:
        ingest_log.write(
            conn, snapshot_id, ingest_log.Log(rule=ingest_log.rule(), source=snapshot_id)
        )
    conn.close()
    assert sorted(snapshot_log(db, snapshot_id)) == ["add both", "touch a"]


def test_a_log_copied_from_a_snapshot_gone_meanwhile_stays_unread(one_module):
    """The log of a re-index at the same commit is the last snapshot's, chosen before the
    write; should another pix replace that snapshot meanwhile, the new one's log is left
    unread (NULL) for the next index to read, never recorded as read and empty."""
    root, db = one_module
    source = worktree(db)
    conn = apsw.Connection(str(db))
    conn.execute("PRAGMA foreign_keys = ON")
    found = ingest_log.Log(rule=ingest_log.rule(), source=source)
    with conn:
        conn.execute("DELETE FROM snapshot WHERE id = ?", (source,))  # the other pix's doing
        conn.execute(
            "INSERT INTO snapshot(kind, root, commit_sha, branch, dirty, created_at, fingerprint)"
            " VALUES ('worktree', '/elsewhere', NULL, NULL, 0, '0', '')"
        )
        new = conn.last_insert_rowid()
        ingest_log.write(conn, new, found)
    assert not ingest_log.is_current(conn, new)
    conn.close()


def test_an_odd_file_name_is_stored_as_the_snapshot_stores_it(tmp_path, embedder):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, {"ok.py": "OK = 1\n"})
    (root / bytes_name()).write_text("X = 1\n")
    commit(root, "add the cafe module")
    db = tmp_path / "index.db"
    index_repository(str(root), str(db), embedder=embedder)
    stored = rows(db, "SELECT path FROM log_commit_file ORDER BY path")
    assert stored == [("caf\\xe9.py",), ("ok.py",)]  # readable UTF-8 text, as pix names it
    assert rows(db, "SELECT path FROM skipped") == [("caf\\xe9.py",)]  # (unreadable, skipped)


def bytes_name() -> str:
    """`café.py` in Latin-1: a name that is not UTF-8."""
    import os

    return os.fsdecode(b"caf\xe9.py")


def test_a_commit_snapshot_from_before_the_log_gains_it_when_indexed_again(repo, embedder):
    root, db, shas = repo
    index_repository(str(root), str(db), at=shas["hosts"], embedder=embedder)
    (snapshot_id,) = rows(db, "SELECT id FROM snapshot WHERE commit_sha = ?", shas["hosts"])[0]
    conn = apsw.Connection(str(db))
    with conn:  # as migration 011 leaves a snapshot written before it
        conn.execute("DELETE FROM snapshot_log_commit WHERE snapshot_id = ?", (snapshot_id,))
        conn.execute(
            "UPDATE snapshot SET log_commits = NULL, log_rule = NULL WHERE id = ?", (snapshot_id,)
        )
    conn.close()
    index_repository(str(root), str(db), at=shas["hosts"], embedder=embedder)
    assert snapshot_log(db, snapshot_id) == {
        "ssh: complete hosts from known_hosts": ["completions/ssh.sh"]
    }
