"""An issue report citing `#12` names the files the past commits citing #12 changed: the fix
of the issue it follows up, the pull request it says broke something (the evidence channel,
pix/retrieve/evidence.py; the commits from the snapshot's git log, pix/retrieve/commit_log.py).

A real git repository in a temp folder, indexed with the real model into real SQLite at its
head and at its first commit (two snapshots of one database). Six renderers hold the same
code under different names, so nothing in the report's words tells them apart; its history,
oldest first:
- "initial": every file added
- "Render a one-element tuple with its comma (#12)": shapes/tuples.py and CHANGES.rst
- "Support Python 3.12": shapes/lists.py (cites no number: 3.12 is a version)
- "Merge the mapping fix from acme/other#12": shapes/maps.py (another repository's #12)
- "Fix #30: sets keep their order": shapes/sets.py and shapes/order.py
- "Bytes are written as literals (#40)": shapes/bytes.py
- "Keep the comma of nested tuples (#44)": shapes/tuples.py
- "Merge pull request #50 from someone/lists": a branch's "Write lists with brackets"
  (shapes/lists.py), merged without fast-forward: the merge cites the number, the commit does
  not, and the merge's change is what its first parent did not have
- "Keep the order of mappings" (shapes/maps.py), whose message's body says "Closes #60."

A second repository, `old`, holds a fix of #70 behind more commits than the log keeps.
"""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import jsonschema
import pytest
from conftest import RENDERER, RENDERER_KINDS, commit, evidence_scores, git, write

from pix.index import index_repository
from pix.ingest import commit_log as ingest_log
from pix.output.render import explain_line
from pix.query import QueryEngine, QueryRequest
from pix.retrieve import commit_log, evidence

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[1] / "schema" / "query-response.v2.json").read_text()
)
# Long enough to be read as a report; its words fit every renderer alike.
REPORT = """Values are rendered wrongly in signatures {cites}

**Describe the bug**
A value of the default argument is written as source text, and the text is not what the
code says. The renderer drops a separator that the value needs, so the documentation
shows a different value from the one the function has. It happens with nested values and
with values of one item alike, in every output format we tried.

**To Reproduce**
Write a function whose default is a value of one item, build the documentation and look
at the rendered signature.
"""


@pytest.fixture(scope="module")
def repo(tmp_path_factory, embedder) -> tuple[Path, Path, str]:
    """(work tree, database, the first commit's sha)."""
    root = tmp_path_factory.mktemp("cited") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, {f"shapes/{k}.py": RENDERER.format(kind=k) for k in RENDERER_KINDS})
    write(root, {"CHANGES.rst": "Changes\n=======\n"})
    first = commit(root, "initial")
    for kinds, subject in [
        (["tuples", "CHANGES"], "Render a one-element tuple with its comma (#12)"),
        (["lists"], "Support Python 3.12"),
        (["maps"], "Merge the mapping fix from acme/other#12"),
        (["sets", "order"], "Fix #30: sets keep their order"),
        (["bytes"], "Bytes are written as literals (#40)"),
        (["tuples"], "Keep the comma of nested tuples (#44)"),
    ]:
        for kind in kinds:
            path = root / ("CHANGES.rst" if kind == "CHANGES" else f"shapes/{kind}.py")
            path.write_text(path.read_text() + f"# {subject}\n")
        commit(root, subject)
    git(root, "checkout", "-q", "-b", "side")
    (root / "shapes/lists.py").write_text(RENDERER.format(kind="lists") + "# brackets\n")
    commit(root, "Write lists with brackets")
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "-m", "Merge pull request #50 from someone/lists", "side")
    (root / "shapes/maps.py").write_text(RENDERER.format(kind="maps") + "# ordered\n")
    commit(root, "Keep the order of mappings\n\nThey came out sorted.\nCloses #60.")
    db = root.parent / "index.db"
    index_repository(str(root), str(db), at=first, embedder=embedder)
    index_repository(str(root), str(db), embedder=embedder)
    return root, db, first


@pytest.fixture(scope="module")
def engine(repo):
    root, db, _ = repo
    engine = QueryEngine(db=str(db), cwd=str(root))
    yield engine
    engine.close()


def rows(db: Path, statement: str) -> list[tuple]:
    """What a statement reads from the database, as sqlite3 would show it."""
    conn = apsw.Connection(str(db))
    try:
        return conn.execute(statement).fetchall()
    finally:
        conn.close()


def named(engine: QueryEngine, cites: str, **options) -> dict[str, float]:
    """Files the evidence channel names, and the evidence score of each."""
    request = QueryRequest(REPORT.format(cites=cites), mode="file", explain=True, **options)
    return evidence_scores(engine, request)


def test_the_numbers_a_report_cites():
    text = REPORT.format(cites="(a followup to #7964, see #8265 and #7964 again)")
    assert evidence.extract(text).cited == ["7964", "8265"]
    # another repository's, HTML entities, a number led by 0, a colour, a list marker, a link's
    # fragment: none cites this repository's
    other = "numpy/numpy#1234 &#1234; &amp;#8212; #012 #fff #1 y#55 https://host/page#12"
    assert evidence.extract(REPORT.format(cites=other)).cited == []
    # a CSS colour of digits; a code block's comment
    css = "color: #333; and\n```\nx = 1  #12 items\n```\nsee #77"
    assert evidence.extract(REPORT.format(cites=css)).cited == ["77"]
    many = " ".join(f"#{n}" for n in range(10, 30))
    assert evidence.extract(REPORT.format(cites=many)).cited == [
        str(n) for n in range(10, 10 + evidence.CITED_NUMBERS)
    ]


def test_a_cited_number_names_the_code_its_commit_changed(engine):
    # the commit changed CHANGES.rst too, as most fixes do: a changelog names no code
    assert list(named(engine, "(a followup to #12)")) == ["shapes/tuples.py"]
    result = engine.query(QueryRequest(REPORT.format(cites="(a followup to #12)"), mode="file"))
    assert result["results"][0]["file"] == "shapes/tuples.py"


def test_a_version_or_another_repositorys_number_names_nothing(engine):
    # "#13" is cited by no commit; 3.12 and acme/other#12 hold the number 12 but do not cite it
    assert named(engine, "(a followup to #13)") == {}
    assert "shapes/lists.py" not in named(engine, "(a followup to #12)")
    assert "shapes/maps.py" not in named(engine, "(a followup to #12)")


def test_a_commit_shares_its_weight_among_all_it_changed(engine):
    pair = named(engine, "(since #30 this is broken)")
    assert set(pair) == {"shapes/sets.py", "shapes/order.py"}
    alone = named(engine, "(since #40 this is broken)")
    assert pair["shapes/sets.py"] == pair["shapes/order.py"] == alone["shapes/bytes.py"] / 2
    # #12 changed the changelog beside the code: the code's share is still half
    assert named(engine, "(a followup to #12)")["shapes/tuples.py"] == alone["shapes/bytes.py"] / 2


def test_a_file_two_cited_commits_changed_is_one_mention(engine):
    both = named(engine, "(see #12 and #44)")["shapes/tuples.py"]
    assert both == named(engine, "(see #44)")["shapes/tuples.py"] == evidence.CITED_WEIGHT


def test_a_merge_cites_what_its_branch_changed(engine, repo):
    assert list(named(engine, "(broken since #50)")) == ["shapes/lists.py"]
    _, db, _ = repo
    merge = rows(
        db,
        "SELECT f.path FROM log_commit c JOIN log_commit_file f ON f.commit_id = c.id"
        " WHERE c.subject LIKE 'Merge pull request #50%'",
    )
    assert merge == [("shapes/lists.py",)]


def test_a_git_without_merge_diffs_reads_the_log_without_merges(repo, monkeypatch):
    """git before 2.31 refuses --diff-merges: the log is read as before merges were, and
    recorded by that rule, never lost."""
    root, _, _ = repo
    merged = ingest_log.from_git(root, "HEAD")
    monkeypatch.setattr(ingest_log, "MERGE_DIFF", "--diff-merges=no-such-mode")
    plain = ingest_log.from_git(root, "HEAD")
    subjects = {c[2] for c in merged.commits}
    assert "Merge pull request #50 from someone/lists" in subjects
    assert {c[2] for c in plain.commits} == subjects - {"Merge pull request #50 from someone/lists"}
    assert merged.rule == ingest_log.rule() != plain.rule == ingest_log.rule(merges=False)


def test_a_path_filter_keeps_the_files_out_and_the_shares_as_they_were(engine, repo):
    assert "shapes/tuples.py" not in named(engine, "(a followup to #12)", ignore_paths=["shapes/"])
    _, db, _ = repo
    conn = apsw.Connection(str(db))
    try:
        (head,) = conn.execute("SELECT max(id) FROM snapshot").fetchone()
        (within,) = commit_log.cited_changes(conn, head, ["30"], ["shapes/sets.py"])
        assert (within.total, within.paths) == (2, ("shapes/sets.py",))
        (whole,) = commit_log.cited_changes(conn, head, ["30"], None)
        assert (whole.total, whole.paths) == (2, ("shapes/order.py", "shapes/sets.py"))
        assert whole.subject == "Fix #30: sets keep their order"
    finally:
        conn.close()
    narrowed = named(engine, "(since #30)", only_paths=["shapes/sets.py"])
    assert narrowed == {"shapes/sets.py": named(engine, "(since #30)")["shapes/sets.py"]}


def test_the_explanation_names_the_citing_commits(engine, repo):
    request = QueryRequest(REPORT.format(cites="(see #12 and #44)"), mode="file", explain=True)
    response = engine.query(request)
    jsonschema.validate(response, SCHEMA)
    top = response["results"][0]
    assert top["file"] == "shapes/tuples.py"
    said = top["explain"]["channels"]["evidence"]["commits"]
    assert [c["subject"] for c in said] == [
        "Keep the comma of nested tuples (#44)",
        "Render a one-element tuple with its comma (#12)",
    ]  # newest first
    root, _, _ = repo
    assert said[0]["sha"] == git(root, "rev-parse", "HEAD~2")[:12]
    assert said[0]["sha"][:8] in explain_line(top)
    # a file named only by other evidence (a path) lists no commits
    named_path = engine.query(
        QueryRequest(REPORT.format(cites="in shapes/maps.py"), mode="file", explain=True)
    )
    jsonschema.validate(named_path, SCHEMA)
    maps = next(r for r in named_path["results"] if r["file"] == "shapes/maps.py")
    assert "commits" not in maps["explain"]["channels"]["evidence"]


def test_a_snapshot_cites_only_its_own_past(engine, repo):
    _, _, first = repo
    assert named(engine, "(a followup to #12)", at=first) == {}


def test_without_the_step_nothing_is_cited(engine, monkeypatch):
    monkeypatch.setattr(evidence, "STEPS", evidence.STEPS - {"cited"})
    assert named(engine, "(a followup to #12)") == {}


def test_the_same_report_gives_the_same_bytes(engine, repo):
    root, db, _ = repo
    request = QueryRequest(REPORT.format(cites="(since #30)"), mode="file", explain=True)
    again = QueryEngine(db=str(db), cwd=str(root))
    try:
        assert json.dumps(engine.query(request)) == json.dumps(again.query(request))
    finally:
        again.close()


def test_a_number_the_message_body_cites_counts(engine, repo):
    assert list(named(engine, "(the fix of #60 broke this)")) == ["shapes/maps.py"]
    _, db, _ = repo
    cited = rows(
        db,
        "SELECT n.number, c.subject FROM log_commit_citation n"
        " JOIN log_commit c ON c.id = n.commit_id ORDER BY n.number",
    )
    assert cited == [
        (12, "Render a one-element tuple with its comma (#12)"),
        (30, "Fix #30: sets keep their order"),
        (40, "Bytes are written as literals (#40)"),
        (44, "Keep the comma of nested tuples (#44)"),
        (50, "Merge pull request #50 from someone/lists"),
        (60, "Keep the order of mappings"),
    ]  # not 3.12, not acme/other#12


@pytest.fixture(scope="module")
def old(tmp_path_factory, embedder) -> tuple[Path, Path]:
    """A repository whose fix of #70 is older than the newest LIMIT commits the log keeps
    (LIMIT 2 here), and its database."""
    root = tmp_path_factory.mktemp("old") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, {f"shapes/{k}.py": RENDERER.format(kind=k) for k in RENDERER_KINDS})
    commit(root, "initial")
    (root / "shapes/sets.py").write_text(RENDERER.format(kind="sets") + "# sorted\n")
    commit(root, "Fix #70: render sets sorted")
    for n in range(3):
        (root / "shapes/bytes.py").write_text(RENDERER.format(kind="bytes") + f"# {n}\n")
        commit(root, f"Tidy the bytes renderer, step {n}")
    db = root.parent / "index.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ingest_log, "LIMIT", 2)
        index_repository(str(root), str(db), embedder=embedder)
    return root, db


def test_a_fix_older_than_the_log_is_still_cited(old):
    root, db = old
    engine = QueryEngine(db=str(db), cwd=str(root))
    try:
        assert list(named(engine, "(a followup to #70)")) == ["shapes/sets.py"]
    finally:
        engine.close()
    conn = apsw.Connection(str(db))
    try:
        links = conn.execute(
            "SELECT c.subject, l.newest FROM snapshot_log_commit l"
            " JOIN log_commit c ON c.id = l.commit_id ORDER BY c.subject"
        ).fetchall()
        (log_commits,) = conn.execute("SELECT log_commits FROM snapshot").fetchone()
        (snapshot,) = conn.execute("SELECT id FROM snapshot").fetchone()
        # the log channel reads the log alone: the old fix's words find nothing there
        found = commit_log.log_files(conn, snapshot, "sets OR sorted", None)
    finally:
        conn.close()
    assert links == [
        ("Fix #70: render sets sorted", 0),
        ("Tidy the bytes renderer, step 1", 1),
        ("Tidy the bytes renderer, step 2", 1),
    ]
    assert log_commits == 2
    assert found == []
