"""The history prior: `pix index` counts each file's commits of the year before the snapshot's
commit (pix/ingest/history.py), and a query that describes a change or a problem weighs files
by them (pix/retrieve/history.py).

A real git repository in a temp folder whose commits carry chosen dates, indexed with the real
model into real SQLite; answers through pix.query and the real command line, validated against
schema/query-response.v2.json.

History (days before the newest commit, which is "now" for the counts):
- 900: every file added
- 600, 550, 500: obsolete.py changed (more than a year before the newest commit)
- 90, 60, 30, 10: retry_hot.py changed (the newest commit is the one 10 days ago)
retry_cold.py holds the same retry loop as retry_hot.py (their texts differ only in trailing
blank lines, so every channel scores them alike); errors.py holds a message.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import apsw
import jsonschema
import pytest
from conftest import GEOMETRY, GIT_ENV, pix, pix_json, write

from pix.index import index_repository
from pix.ingest import history as counting
from pix.query import QueryEngine, QueryRequest
from pix.retrieve import history, lift, route, tested
from pix.retrieve.hits import Hit, order
from pix.retrieve.rank import by_file

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[1] / "schema" / "query-response.v2.json").read_text()
)
DAY = 86_400
NOW = 1_780_000_000  # the newest commit's time; the counts never read the clock

RETRY = '''def retry_with_backoff(call, attempts=5, base=0.2):
    """Call again after a failure, waiting twice as long each attempt."""
    import time

    for attempt in range(attempts):
        try:
            return call()
        except ConnectionError:
            time.sleep(base * 2**attempt)
    return call(){tail}
'''
ERRORS = 'def give_up():\n    raise RuntimeError("retries exhausted for this call")\n'
CHANGE = "Fix retry with backoff waiting too long between attempts"
QUESTION = "how does the retry with backoff wait between attempts"


def commit_at(repo: Path, days_ago: int, message: str) -> str:
    stamp = f"@{NOW - days_ago * DAY} +0000"
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    for args in (["add", "-A"], ["commit", "-q", "-m", message]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)
    return subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture(scope="module")
def repo(tmp_path_factory, embedder) -> tuple[Path, Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("history") / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    files = {
        "retry_hot.py": RETRY.format(tail=""),
        "retry_cold.py": RETRY.format(tail=""),
        "errors.py": ERRORS,
        "obsolete.py": "VERSION = 0\n",
        "shapes.py": GEOMETRY,
    }
    write(root, files)
    shas = {"first": commit_at(root, 900, "initial")}
    for n, days in enumerate((600, 550, 500), 1):
        write(root, {"obsolete.py": f"VERSION = {n}\n"})
        shas[f"obsolete{n}"] = commit_at(root, days, f"bump {n}")
    for n, days in enumerate((90, 60, 30, 10), 1):
        write(root, {"retry_hot.py": RETRY.format(tail="\n" * n)})
        shas[f"hot{n}"] = commit_at(root, days, f"tweak {n}")
    db = root.parent / "index.db"
    index_repository(str(root), str(db), embedder=embedder)
    return root, db, shas


def counts(db: Path, snapshot_id: int | None = None) -> dict[str, int | None]:
    """Path -> recent_commits of a snapshot (default: the work tree's)."""
    conn = apsw.Connection(str(db))
    try:
        if snapshot_id is None:
            (snapshot_id,) = conn.execute(
                "SELECT max(id) FROM snapshot WHERE kind != 'commit'"
            ).fetchone()
        return dict(
            conn.execute(
                "SELECT path, recent_commits FROM snapshot_file WHERE snapshot_id = ?",
                (snapshot_id,),
            ).fetchall()
        )
    finally:
        conn.close()


def ask(db: Path, root: Path, text: str, **options) -> dict:
    engine = QueryEngine(db=str(db), cwd=str(root))
    try:
        return engine.query(QueryRequest(query=text, mode="file", explain=True, **options))
    finally:
        engine.close()


def test_index_counts_the_commits_of_the_year_before_the_snapshot(repo):
    root, db, _ = repo
    # retry_hot.py: 4 changes within the year before the newest commit; obsolete.py's 3 are
    # older than that; the others were only added, 900 days before.
    assert counts(db) == {
        "retry_hot.py": 4, "retry_cold.py": 0, "errors.py": 0, "obsolete.py": 0, "shapes.py": 0,
    }  # fmt: skip


def test_an_old_commit_counts_its_own_past(repo, embedder):
    root, db, shas = repo
    index_repository(str(root), str(db), embedder=embedder, at=shas["obsolete3"])
    conn = apsw.Connection(str(db))
    (snapshot_id,) = conn.execute(
        "SELECT id FROM snapshot WHERE commit_sha = ?", (shas["obsolete3"],)
    ).fetchone()
    conn.close()
    # 500 days ago: the year before holds obsolete.py's three changes, not retry_hot.py's later
    # ones; the initial commit (900 days) is outside it.
    assert counts(db, snapshot_id) == {
        "retry_hot.py": 0, "retry_cold.py": 0, "errors.py": 0, "obsolete.py": 3, "shapes.py": 0,
    }  # fmt: skip


def test_a_change_description_weighs_files_by_their_history(repo):
    root, db, _ = repo
    with_prior = ask(db, root, CHANGE)
    assert with_prior["explain"]["history"] is True
    by_file = {r["file"]: r for r in with_prior["results"]}
    hot, cold = by_file["retry_hot.py"]["explain"], by_file["retry_cold.py"]["explain"]
    assert (hot["rank"]["commits"], cold["rank"]["commits"]) == (4, 0)
    assert hot["rank"]["history"] == pytest.approx(history.factor(4), abs=1e-6)
    assert cold["rank"]["history"] == pytest.approx(history.factor(0), abs=1e-6)
    assert history.factor(0) < history.factor(4) < 1.0 == history.factor(history.CAP)
    # Source files (role factor 1.0): the prior is the history factor, nothing else.
    assert hot["prior"] == pytest.approx(history.factor(4), abs=1e-3)
    # The recently changed copy of the loop leads; without the prior the two tie and the path
    # orders them, as for a question about how the code works.
    assert [r["file"] for r in with_prior["results"][:2]] == ["retry_hot.py", "retry_cold.py"]
    question = ask(db, root, QUESTION)
    assert question["explain"]["history"] is False
    assert [r["file"] for r in question["results"][:2]] == ["retry_cold.py", "retry_hot.py"]
    assert all("history" not in r["explain"]["rank"] for r in question["results"])
    for answer in (with_prior, question):
        jsonschema.validate(answer, SCHEMA)


REPORT = """Retry with backoff waits far too long between attempts

When the server is down, `retry_with_backoff` keeps sleeping longer and longer:

```
Traceback (most recent call last):
  File "client.py", line 3, in <module>
    retry_with_backoff(fetch)
ConnectionError: [Errno 111] Connection refused
```

I expected it to give up after a few seconds.
"""


def test_an_issue_report_keeps_its_first_file_and_weighs_the_rest(repo, monkeypatch):
    """The two copies of the loop tie, and the path puts retry_cold.py (no commit this year)
    first: a report's first file is not weighed, so it stays first; every other file is."""
    root, db, _ = repo
    assert route.shape_of(REPORT) == "issue"
    answer = ask(db, root, REPORT)
    jsonschema.validate(answer, SCHEMA)
    assert answer["explain"]["history"] is True
    first, *rest = answer["results"]
    assert first["file"] == "retry_cold.py" and "history" not in first["explain"]["rank"]
    by_file = {r["file"]: r["explain"]["rank"] for r in rest}
    assert by_file["retry_hot.py"]["history"] == pytest.approx(history.factor(4), abs=1e-6)
    assert all(rank["history"] < 1.0 for rank in by_file.values())
    # Every file weighed, the recently changed copy would have taken the first place.
    monkeypatch.setattr(history, "KEEPS_FIRST", frozenset())
    assert ask(db, root, REPORT)["results"][0]["file"] == "retry_hot.py"


def _hit(path: str, chunk_id: int, score: float) -> Hit:
    return Hit(path, chunk_id, "sha", 1, 2, "code", None, score, score, "source", "python", {})


def test_a_report_is_left_unweighed_rather_than_lose_its_first_file(repo, monkeypatch):
    """File mode adds a file's further chunks above the weakest candidate's score; weighing
    lowers that score, so retry_hot.py (factor 1.0 at CAP 4, five chunks) would pass
    errors.py (one chunk, kept). The report is then left as it was."""
    root, db, _ = repo
    monkeypatch.setattr(history, "CAP", 4)
    conn = apsw.Connection(str(db))
    (snapshot_id,) = conn.execute("SELECT max(id) FROM snapshot WHERE kind != 'commit'").fetchone()
    hot = [_hit("retry_hot.py", 10 + n, s) for n, s in enumerate((0.99, 0.2, 0.2, 0.2, 0.2))]
    hits = sorted([_hit("errors.py", 1, 1.0), *hot, _hit("obsolete.py", 2, 0.19)], key=order)
    assert by_file(hits)[0].path == "errors.py"
    try:
        assert history.weigh(conn, snapshot_id, hits, "issue") == (hits, False)
        # Without the weakest candidate the floor stays: weighed, errors.py still first.
        fewer = [h for h in hits if h.path != "obsolete.py"]
        weighed, done = history.weigh(conn, snapshot_id, fewer, "issue")
        assert done and by_file(weighed)[0].path == "errors.py"
        assert "history" not in weighed[0].rank and weighed[1].rank["commits"] == 4
    finally:
        conn.close()


def test_no_priors_turns_the_history_prior_off(repo):
    root, db, _ = repo
    plain = ask(db, root, CHANGE, priors=False)
    assert plain["explain"]["history"] is False
    assert all("history" not in r["explain"]["rank"] for r in plain["results"])
    assert plain["results"][0]["file"] == "retry_cold.py"


def test_an_exact_phrase_still_comes_first(repo):
    """The phrase step lifts above every score: the file holding the message (no commit this
    year) comes first, in chunk mode and file mode, and keeps its history factor."""
    root, db, _ = repo
    text = 'Fix "retries exhausted for this call" raised too early'
    for mode in ("chunk", "file"):
        engine = QueryEngine(db=str(db), cwd=str(root))
        try:
            answer = engine.query(QueryRequest(query=text, mode=mode, explain=True))
        finally:
            engine.close()
        first = answer["results"][0]
        assert first.get("file", first.get("path")) == "errors.py"
        assert "phrase" in first["explain"]["channels"]
        assert first["explain"]["rank"]["history"] == pytest.approx(history.factor(0), abs=1e-6)
        # Every hit is weighed once, lifted or not, and the lift allows for the smallest factor.
        assert all("history" in r["explain"]["rank"] for r in answer["results"])
        route = answer["explain"]["weights"]
        weight = first["explain"]["channels"]["phrase"]["weight"]
        lent = tested.most_share(True)  # what a test may lend a file after the ranking stage
        assert weight == pytest.approx(lift.above_all(route, True, weighed=True, lent=lent))
    # A question is not weighed, and its lift is what it was before the prior.
    question = 'where is "retries exhausted for this call" raised'
    engine = QueryEngine(db=str(db), cwd=str(root))
    try:
        answer = engine.query(QueryRequest(query=question, explain=True))
    finally:
        engine.close()
    first = answer["results"][0]
    assert answer["explain"]["history"] is False and "history" not in first["explain"]["rank"]
    assert first["explain"]["channels"]["phrase"]["weight"] == pytest.approx(
        lift.above_all(answer["explain"]["weights"], True, lent=tested.most_share(True))
    )


def test_a_snapshot_counted_before_the_column_existed_is_counted_on_the_next_index(
    repo, tmp_path, embedder
):
    root, db, _ = repo
    mine = tmp_path / "old.db"
    conn = apsw.Connection(str(db))
    conn.execute("VACUUM INTO ?", (str(mine),))
    conn.close()
    conn = apsw.Connection(str(mine))
    conn.execute("UPDATE snapshot_file SET recent_commits = NULL")  # as migration 008 leaves it
    conn.close()
    plain = ask(mine, root, CHANGE)
    assert all("history" not in r["explain"]["rank"] for r in plain["results"])
    report = index_repository(str(root), str(mine), embedder=embedder)
    assert report.new_blobs == 0  # nothing changed: the same snapshot, now counted
    assert counts(mine)["retry_hot.py"] == 4


def test_a_folder_without_git_has_no_counts(tmp_path, embedder):
    folder = tmp_path / "plain"
    write(folder, {"retry.py": RETRY.format(tail="")})
    index_repository(str(folder), embedder=embedder)
    assert set(counts(folder / ".pix.db").values()) == {None}
    answer = ask(folder / ".pix.db", folder, CHANGE)
    assert answer["explain"]["history"] is False
    assert all("history" not in r["explain"]["rank"] for r in answer["results"])


def test_an_old_commit_snapshot_is_counted_on_the_next_index(repo, tmp_path, embedder):
    root, db, shas = repo
    mine = tmp_path / "old-commit.db"
    conn = apsw.Connection(str(db))
    conn.execute("VACUUM INTO ?", (str(mine),))
    conn.close()
    index_repository(str(root), str(mine), embedder=embedder, at=shas["hot2"])
    conn = apsw.Connection(str(mine))
    (snapshot_id,) = conn.execute(
        "SELECT id FROM snapshot WHERE commit_sha = ?", (shas["hot2"],)
    ).fetchone()
    conn.execute("UPDATE snapshot_file SET recent_commits = NULL WHERE snapshot_id = ?",
                 (snapshot_id,))  # fmt: skip
    conn.close()
    index_repository(str(root), str(mine), embedder=embedder, at=shas["hot2"])
    # 60 days ago: retry_hot.py's changes of 90 and 60 days; obsolete.py's last (500) is older.
    assert counts(mine, snapshot_id)["retry_hot.py"] == 2
    assert counts(mine, snapshot_id)["obsolete.py"] == 0


def test_odd_paths_merges_and_empty_commits_are_counted_right(tmp_path):
    repo = tmp_path / "odd"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    write(repo, {"a.py": "A = 1\n"})
    commit_at(repo, 30, "a")
    stamp = f"@{NOW - 5 * DAY} +0000"  # the merge and the empty commit: dated, not today
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "empty"],
                   check=True, env=env)  # fmt: skip
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-b", "side"], check=True)
    write(repo, {"\nleading newline.py": "B = 1\n", "we\x01ird.py": "C = 1\n"})
    commit_at(repo, 20, "side")
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "main"], check=True)
    write(repo, {"a.py": "A = 2\n"})
    commit_at(repo, 10, "a again")
    subprocess.run(["git", "-C", str(repo), "merge", "-q", "--no-edit", "side"],
                   check=True, env=env)  # fmt: skip
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()  # fmt: skip
    assert counting.recent_changes(repo, head) == {
        "a.py": 2, "\nleading newline.py": 1, "we\x01ird.py": 1,
    }  # fmt: skip


def test_the_command_line_explains_the_prior(repo):
    root, db, _ = repo
    code, out, err = pix_json("query", CHANGE, "--db", str(db), "--file", "--json", "--explain",
                              cwd=root)  # fmt: skip
    assert code == 0, err
    jsonschema.validate(out, SCHEMA)
    assert out["explain"]["history"] is True
    assert out["results"][0]["explain"]["rank"]["commits"] == 4
    code, text, err = pix("query", CHANGE, "--db", str(db), "--file", "--explain", cwd=root)
    assert code == 0, err
    assert "(source, 4 commit(s) in the past year: x0.757)" in text
    assert "history prior" in text.splitlines()[-2] + text.splitlines()[-1]


@pytest.mark.parametrize(
    "text, change",
    [
        ("Fix crash when the config file is empty", True),
        ("router: allow trailing slashes", True),
        ("Don't reset the cursor on resize", True),
        ("how does the router match a path", False),
        ("where is the retry delay computed", False),
        ("check if a file exists python", False),
        ("RetryPolicy", False),
    ],
)
def test_what_reads_as_a_change(text, change):
    assert route.describes_change(text) is change


def test_an_edited_work_tree_keeps_its_commit_counts(repo, tmp_path, embedder, monkeypatch):
    """A re-index after an edit (same commit) writes a new snapshot with the previous one's
    counts, without reading the history again; a file no commit has seen counts 0."""
    root, _, _ = repo
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(root), str(clone)], check=True)
    db = tmp_path / "clone.db"
    index_repository(str(clone), str(db), embedder=embedder)

    real = counting.recent_changes
    asked = []

    def by_name_only(root, sha, paths=()):
        if not paths:
            raise AssertionError("the whole history was read again")
        asked.append(list(paths))
        return real(root, sha, paths)

    monkeypatch.setattr(counting, "recent_changes", by_name_only)
    write(clone, {"retry_cold.py": RETRY.format(tail="# edited\n"), "draft.py": "X = 1\n"})
    index_repository(str(clone), str(db), embedder=embedder)
    assert counts(db) == {
        "retry_hot.py": 4, "retry_cold.py": 0, "errors.py": 0, "obsolete.py": 0, "shapes.py": 0,
        "draft.py": 0,
    }  # fmt: skip
    assert asked == [["draft.py"]]  # only the file the last snapshot had not counted


def test_a_file_skipped_by_the_last_snapshot_is_counted_when_it_comes_back(
    repo, tmp_path, embedder
):
    # `--max-bytes` lowered then raised (or a file deleted and restored) at the same commit:
    # the file had no count in the snapshot between, and was counted 0 commits (audit).
    root, _, _ = repo
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(root), str(clone)], check=True)
    db = tmp_path / "clone.db"
    index_repository(str(clone), str(db), embed=False)
    first = counts(db)
    assert first["retry_hot.py"] == 4 and first["obsolete.py"] == 0  # bumps of 500+ days ago
    small = index_repository(str(clone), str(db), max_bytes=40, embed=False)
    assert small.skipped == {"too_large": 4}  # all but obsolete.py
    index_repository(str(clone), str(db), embed=False)
    assert counts(db) == first
    (clone / "retry_hot.py").unlink()
    index_repository(str(clone), str(db), embed=False)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", "retry_hot.py"], check=True)
    index_repository(str(clone), str(db), embed=False)
    assert counts(db) == first


def test_a_re_index_that_keeps_its_snapshot_reads_no_history(repo, tmp_path, embedder, monkeypatch):
    """Nothing changed (every MCP refresh): the counted snapshot is kept, nothing is counted."""
    root, _, _ = repo
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(root), str(clone)], check=True)
    db = tmp_path / "clone.db"
    first = index_repository(str(clone), str(db), embedder=embedder)

    def unread(*args):
        raise AssertionError("the history was read for a kept snapshot")

    monkeypatch.setattr(counting, "snapshot_counts", unread)
    again = index_repository(str(clone), str(db), embedder=embedder)
    assert again.snapshot_id == first.snapshot_id
    assert counts(db)["retry_hot.py"] == 4


def test_a_file_counted_by_name_counts_a_side_branchs_commits_as_the_whole_pass_does(
    tmp_path,
):
    # `git log -- path` simplifies history: a side branch whose change a merge took from the
    # other parent dropped out, so a re-counted file had fewer commits than a fresh index
    # gives it (a reviewer: 2 against 4).
    repo = tmp_path / "merged"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)

    def git_(*args: str) -> None:
        env = {**os.environ, **GIT_ENV}
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)

    write(repo, {"big.py": "A = 1\n" * 20})
    commit_at(repo, 40, "start")
    git_("checkout", "-q", "-b", "side")
    write(repo, {"big.py": "A = 2\n" * 20})
    commit_at(repo, 30, "side change")
    git_("checkout", "-q", "main")
    write(repo, {"big.py": "A = 2\n" * 20})
    commit_at(repo, 20, "same change on main")
    git_("merge", "-q", "--no-edit", "side")
    fresh = tmp_path / "fresh.db"
    index_repository(str(repo), str(fresh), embed=False)
    again = tmp_path / "again.db"
    index_repository(str(repo), str(again), max_bytes=10, embed=False)
    index_repository(str(repo), str(again), embed=False)
    assert counts(again) == counts(fresh) == {"big.py": 3}
