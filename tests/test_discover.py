"""`pix discover`: hypotheses x roots over the trigram index, statuses, ranking, bounds, scope.

Tiny real git repositories in tmp_path, indexed for real (keyword phase only: discover needs no
embeddings). Every response is checked against schema/discover-response.v1.json.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest
from conftest import pix, pix_json, write

from pix.discover import discover, render_text
from pix.discover import engine as discover_engine
from pix.discover.fragments import fts_expression, needs_line_break, regex_plan
from pix.errors import UsageError
from pix.gc import gc
from pix.store import open_store

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schema"
RESPONSE = jsonschema.Draft202012Validator(
    json.loads((SCHEMA_DIR / "discover-response.v1.json").read_text(encoding="utf-8"))
)
ERROR = jsonschema.Draft202012Validator(
    json.loads((SCHEMA_DIR / "error.v1.json").read_text(encoding="utf-8"))
)

APP = """\
import os


class SessionStore:
    def load_session(self, key):
        return self.backend.get(key)

    def save_session(self, key, value):
        self.backend[key] = value
"""
TEST_APP = """\
from app.store import SessionStore


def test_load_session():
    assert SessionStore().load_session("k") is None
"""
DOCS = "# Sessions\n\nCall load_session to read one.\n"


def run(repo: Path, **request) -> dict:
    response = discover(request, cwd=str(repo))
    RESPONSE.validate(response)
    render_text(response)  # every response renders
    return response


def lit(ident: str, pattern: str, **extra) -> dict:
    return {"id": ident, "pattern": pattern, "mode": "literal", **extra}


def rx(ident: str, pattern: str, **extra) -> dict:
    return {"id": ident, "pattern": pattern, "mode": "regex", **extra}


def cells(response: dict) -> dict[tuple[str, str], dict]:
    return {(c["hypothesis"], c["root"]): c for c in response["matrix"]}


@pytest.fixture
def repo(make_repo, index):
    repo = make_repo(
        {"app/store.py": APP, "tests/test_store.py": TEST_APP, "docs/sessions.md": DOCS}
    )
    index(repo, embed=False)
    return repo


def test_literal_and_regex_across_roots(repo):
    r = run(
        repo,
        queries=[lit("load", "load_session"), rx("cls", r"class\s+Session\w+")],
        roots=["app", "tests", "docs"],
        outputMode="detailed",
    )
    by_path = {c["path"]: c for c in r["candidates"]}
    assert list(by_path) == ["app/store.py", "tests/test_store.py", "docs/sessions.md"]
    top = by_path["app/store.py"]
    assert top["hypotheses"] == ["load", "cls"] and top["roots"] == ["app"]
    assert [(e["hypothesis"], e["line"]) for e in top["excerpts"]] == [("load", 5), ("cls", 4)]
    assert top["excerpts"][0]["text"] == "def load_session(self, key):"
    m = cells(r)
    assert m[("load", "app")]["status"] == "matched" and m[("load", "app")]["complete"]
    assert m[("cls", "docs")]["status"] == "no_matches" and m[("cls", "docs")]["complete"]
    # the trigrams of `class` and `Session` are all in the test file's text only across words
    # (`SessionStore`, no `class`): narrowed out or verified out, never a match
    assert m[("cls", "tests")]["status"] == "no_matches"
    narrowing = {h["id"]: h["narrowing"] for h in r["coverage"]["hypotheses"]}
    assert narrowing["load"] == {"method": "trigram", "fragments": [["load_session"]]}
    assert narrowing["cls"] == {"method": "trigram", "fragments": [["class", "Session"]]}
    assert r["nextRead"] == {
        "path": "app/store.py",
        "startLine": 1,
        "endLine": 9,
        "reason": "rank 1: matches load, cls",
    }


def test_ranking_is_deterministic_with_path_ties(make_repo, index):
    repo = make_repo(
        {
            "b.py": "alpha\n",  # one hypothesis, one line
            "a.py": "alpha\n",  # the same evidence: path order breaks the tie
            "c.py": "alpha\nalpha\nalpha\n",  # one hypothesis, more lines
            "z.py": "alpha\nbeta\n",  # two hypotheses outrank any number of lines
            "src/d.py": "alpha\n",  # in two roots
        }
    )
    index(repo, embed=False)
    request = {"queries": [lit("a", "alpha"), lit("b", "beta")], "roots": [".", "src"]}
    first = run(repo, **request)
    order = [c["path"] for c in first["candidates"]]
    assert order == ["z.py", "src/d.py", "c.py", "a.py", "b.py"]
    assert [c["rank"] for c in first["candidates"]] == [1, 2, 3, 4, 5]
    assert first["candidates"][1]["roots"] == [".", "src"]
    assert first["candidates"][2]["matchCount"] == 3
    again = run(repo, **request)
    assert again["candidates"] == first["candidates"] and again["nextRead"] == first["nextRead"]
    # maxCandidates cuts the list, never the count
    short = run(repo, **request, maxCandidates=2)
    assert [c["path"] for c in short["candidates"]] == order[:2]
    assert short["totalCandidates"] == 5


def test_invalid_regex_is_scoped_to_its_hypothesis(repo):
    r = run(
        repo,
        queries=[rx("bad", "load_(session"), lit("ok", "save_session")],
        roots=["app"],
        outputMode="detailed",
    )
    m = cells(r)
    assert m[("bad", "app")]["status"] == "invalid_regex"
    assert "missing )" in m[("bad", "app")]["reason"]
    assert m[("ok", "app")]["status"] == "matched"
    assert [h["id"] for h in r["incompleteHypotheses"]] == ["bad"]
    assert r["coverage"]["absenceEvidence"] == []
    assert [c["path"] for c in r["candidates"]] == ["app/store.py"]


def test_roots_outside_the_repository_are_scoped_diagnostics(repo, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    write(outside, {"x.py": "load_session = 1\n"})
    os.symlink(outside, repo / "escape")  # a link in the tree that leaves it
    os.symlink(repo / "app", repo / "inner")  # a link that stays inside: searched as app
    r = run(
        repo,
        queries=[lit("load", "load_session")],
        roots=["../", str(outside), "escape", "escape/x.py", "inner", "missing", "app"],
        outputMode="detailed",
    )
    roots = {x["root"]: x for x in r["coverage"]["roots"]}
    assert roots["../"]["diagnostic"]["code"] == "outside_repository"
    assert roots[str(outside)]["diagnostic"]["code"] == "outside_repository"
    assert roots["escape"]["diagnostic"]["code"] == "escapes_repository"
    assert roots["escape/x.py"]["diagnostic"]["code"] == "escapes_repository"
    assert roots["inner"]["status"] == "searched" and roots["inner"]["path"] == "app"
    assert roots["missing"]["status"] == "root_missing"
    assert roots["app"]["diagnostic"]["code"] == "duplicate_root"  # the same folder as inner
    m = cells(r)
    assert [m[("load", name)]["status"] for name in roots] == [
        "skipped", "skipped", "skipped", "skipped", "matched", "root_missing", "skipped",
    ]  # fmt: skip
    # nothing outside the repository is ever read
    assert all(not c["path"].startswith(("..", "/", "escape")) for c in r["candidates"])
    assert [c["path"] for c in r["candidates"]] == ["app/store.py"]


def test_a_root_named_twice_is_listed_once_on_its_candidates(repo):
    # `--root app --root app`: the second is skipped as a duplicate, yet every candidate
    # listed "roots": ["app", "app"] (audit).
    r = run(repo, queries=[lit("load", "load_session")], roots=["app", "app", "."])
    assert r["candidates"] and all(
        c["roots"] == ["app", "."] for c in r["candidates"] if c["path"].startswith("app/")
    )
    assert all(len(set(c["roots"])) == len(c["roots"]) for c in r["candidates"])


def test_limits_make_cells_partial_and_snippets_are_cut(make_repo, index):
    repo = make_repo(
        {
            "many.py": "hit\n" * 5,
            "one.py": "x = 1  # hit\n",
            "two.py": "hit\nhit\n",
            "long.py": "x = '" + "y" * 300 + " needle " + "z" * 300 + "'\n",
        }
    )
    index(repo, embed=False)
    r = run(repo, queries=[lit("h", "hit")], maxMatchesPerFile=2, outputMode="detailed")
    cell = cells(r)[("h", ".")]
    assert cell["status"] == "partial" and cell["limitsHit"] == ["maxMatchesPerFile"]
    assert not cell["complete"] and r["incompleteHypotheses"][0]["id"] == "h"
    assert {c["path"]: c["matchCount"] for c in r["candidates"]} == {
        "many.py": 2, "two.py": 2, "one.py": 1,
    }  # fmt: skip
    r = run(repo, queries=[lit("h", "hit")], maxMatchesPerSearch=3, outputMode="detailed")
    cell = cells(r)[("h", ".")]
    assert cell["status"] == "partial" and "maxMatchesPerSearch" in cell["limitsHit"]
    assert cell["matchingLines"] == 3 and cell["searchedFiles"] < cell["candidateFiles"]
    # a long line is cut around the match and marked; the search itself was complete
    r = run(repo, queries=[lit("n", "needle")], snippetLength=40, outputMode="detailed")
    (excerpt,) = r["candidates"][0]["excerpts"]
    assert excerpt["truncated"] and "needle" in excerpt["text"] and len(excerpt["text"]) == 40
    assert excerpt["text"].startswith("…") and excerpt["text"].endswith("…")
    assert cells(r)[("n", ".")]["status"] == "matched"


def test_time_budget_marks_cells_timeout(repo, monkeypatch):
    clock = iter(range(0, 10_000, 1))  # every look at the clock: one more second
    monkeypatch.setattr(discover_engine.time, "monotonic", lambda: float(next(clock)))
    r = run(
        repo,
        queries=[rx("any", r"\w+"), lit("load", "load_session")],
        roots=["app", "tests"],
        timeBudgetMs=2500,
        outputMode="detailed",
    )
    statuses = {k: c["status"] for k, c in cells(r).items()}
    assert "timeout" in statuses.values()
    assert statuses[("load", "tests")] == "timeout"
    assert r["coverage"]["complete"] == sum(
        s in ("matched", "no_matches") for s in statuses.values()
    )
    assert all(not c["complete"] for c in r["matrix"] if c["status"] == "timeout")


def test_a_regex_that_backtracks_without_end_stops_at_the_budget(make_repo, index):
    # `(a|aa)+$` over 38 a's and a `!` takes Python's `re` about 14 s here (1.6 times more for
    # each further `a`, hours at 60): the cell must stop at the 300 ms budget, mid-file.
    repo = make_repo({"a.txt": "a" * 38 + "!\n", "b.py": "NEEDLE = 1\n"})
    index(repo, embed=False)
    r = run(
        repo,
        queries=[rx("slow", r"(a|aa)+$"), lit("ok", "NEEDLE")],
        timeBudgetMs=300,
        outputMode="detailed",
    )
    slow = cells(r)[("slow", ".")]
    assert slow["status"] == "timeout" and not slow["complete"]
    assert "matching a.txt" in slow["reason"]
    assert r["elapsedMs"] < 5000
    # A pattern the `regex` module runs at once stays exact (no false timeout).
    quick = run(repo, queries=[rx("q", r"(a+)+!$")], timeBudgetMs=300, outputMode="detailed")
    assert cells(quick)[("q", ".")]["status"] == "matched"


def test_patterns_regex_reads_otherwise_than_re_stay_exact(make_repo, index):
    # Matching runs under the `regex` module. `[[:alpha:]]foo` is a POSIX class there, but `re`
    # (whose reading the trigram narrowing follows) requires `]fo`: narrowed so, the file was
    # dropped and the cell reported a complete absence. A NUL would end FTS5's reading of the
    # trigram query. A repeat count `regex` would build out in memory is refused.
    repo = make_repo({"a.py": "def xfoo():\n    pass\n"})
    index(repo, embed=False)
    r = run(
        repo,
        queries=[
            rx("posix", "[[:alpha:]]foo"),
            lit("nul", "xfo\u0000od"),
            rx("nulrx", "x\u0000"),
            rx("huge", "xa{100000000}"),
            rx("nested", "(?:a{1000}){1000}x"),
        ],
        outputMode="detailed",
    )
    m = cells(r)
    assert m[("posix", ".")]["status"] == "matched"
    assert [c["path"] for c in r["candidates"]] == ["a.py"]
    assert m[("nul", ".")]["status"] == "no_matches" and m[("nulrx", ".")]["complete"]
    for name in ("huge", "nested"):
        assert m[(name, ".")]["status"] == "invalid_regex"
        assert "repeat counts make" in m[(name, ".")]["reason"]


def test_recommended_filtering_is_disclosed_and_native_only_keeps_all(make_repo, index):
    repo = make_repo(
        {
            "src/main.py": "token = 1\n",
            "vendor/lib/six.py": "token = 2\n",
            "build/lib/main.py": "token = 3\n",
            "node_modules/pkg/index.js": "var token = 4;\n",
            "src/api.generated.ts": "const token = 5;\n",
            ".cache/x.txt": "token\n",
        }
    )
    index(repo, embed=False)
    rec = run(repo, queries=[lit("t", "token")])
    (root,) = rec["coverage"]["roots"]
    assert root["filter"]["decision"] == "applied"
    assert root["filter"]["excluded"] == {"generated": 1, "vendored": 2, "cache": 1, "build": 1}
    assert root["filter"]["excludedFolders"]["build"] == ["build/"]
    assert root["filter"]["excludedFolders"]["vendored"] == ["node_modules/", "vendor/"]
    assert [c["path"] for c in rec["candidates"]] == ["src/main.py"]
    native = run(repo, queries=[lit("t", "token")], filterMode="native-only")
    (root,) = native["coverage"]["roots"]
    assert root["filter"] == {"decision": "native", "excluded": {}, "excludedFolders": {}}
    assert len(native["candidates"]) == 6
    # an explicitly requested vendored root is searched, and the bypass is said
    bypass = run(repo, queries=[lit("t", "token")], roots=["vendor"])
    assert bypass["coverage"]["roots"][0]["filter"]["decision"] == "bypassed"
    assert [c["path"] for c in bypass["candidates"]] == ["vendor/lib/six.py"]
    # the indexer's own skips are disclosed per root, and globs narrow further
    globbed = run(repo, queries=[lit("t", "token")], globs=["*.py", "!build/"],
                  filterMode="native-only")  # fmt: skip
    assert [c["path"] for c in globbed["candidates"]] == ["src/main.py", "vendor/lib/six.py"]
    assert globbed["coverage"]["roots"][0]["globExcluded"] == 4


def test_absence_evidence_only_for_complete_cells(make_repo, index):
    repo = make_repo({"a/x.py": "present\n", "b/y.py": "other\n", "c/z.py": "hit\n" * 3})
    index(repo, embed=False)
    write(repo, {"c/new.py": "absent_word\n"})  # stale: added after indexing
    r = run(
        repo,
        queries=[lit("abs", "absent_word"), lit("hit", "hit"), rx("bad", "(")],
        roots=["a", "b", "c", "../x"],
        maxMatchesPerFile=1,
        outputMode="detailed",
    )
    evidence = {(a["hypothesis"], a["root"]) for a in r["coverage"]["absenceEvidence"]}
    # complete no_matches cells only: not the stale root c, not the invalid regex, not the
    # skipped root, not the partial cell
    assert evidence == {("abs", "a"), ("abs", "b"), ("hit", "a"), ("hit", "b")}
    m = cells(r)
    assert m[("abs", "c")]["status"] == "no_matches" and not m[("abs", "c")]["complete"]
    assert m[("hit", "c")]["status"] == "partial"
    assert r["coverage"]["complete"] == 4


def test_files_the_indexer_skipped_make_their_cells_partial(make_repo, index):
    """Issue 10 (17): "absent" only over files that were searched. A file in a cell's scope
    that the indexer skipped (not UTF-8, too large, a secret) makes the cell partial, naming
    it; binary files do not (no text search reads them), nor does a lock file that recommended
    filtering leaves out anyway."""
    repo = make_repo(
        {
            "src/app.py": "def handler():\n    return 1\n",
            "src/legacy.txt": b"caf\xe9 handler\n",  # Latin-1: not_text
            "src/big.log": "handler line\n" * 200,  # 2,600 bytes, over max_bytes below
            "src/package-lock.json": '{"lockfileVersion": 3}\n',  # generated
            "docs/guide.md": "# Guide\n\nNothing to see.\n",
            "docs/logo.png": b"\x89PNG\r\n\x1a\n\0\0\0",  # binary
            ".env": "API_TOKEN=abc\n",  # secret
        }
    )
    index(repo, embed=False, max_bytes=1000)
    request = {
        "queries": [lit("absent", "zzz_nowhere"), lit("hit", "handler")],
        "roots": [".", "src", "docs"],
        "outputMode": "detailed",
    }
    r = run(repo, **request)
    m = cells(r)
    evidence = {(a["hypothesis"], a["root"]) for a in r["coverage"]["absenceEvidence"]}
    # The png is not text, so docs was searched whole; src and . hold unsearched files.
    assert evidence == {("absent", "docs"), ("hit", "docs")}
    for hypothesis in ("absent", "hit"):
        cell = m[(hypothesis, "src")]
        assert cell["status"] == "partial" and not cell["complete"]
        assert cell["unsearchedFiles"] == 2
        assert "src/big.log (too_large), src/legacy.txt (not_text)" in cell["reason"]
    assert m[("hit", "src")]["matchedFiles"] == 1  # what was searched still matched
    assert m[("absent", ".")]["unsearchedFiles"] == 3  # .env, big.log, legacy.txt
    roots = {root["root"]: root for root in r["coverage"]["roots"]}
    assert roots["."]["unsearched"] == {
        "count": 3,
        "files": [
            {"path": ".env", "reason": "secret"},
            {"path": "src/big.log", "reason": "too_large"},
            {"path": "src/legacy.txt", "reason": "not_text"},
        ],
        "truncated": False,
    }
    assert roots["docs"]["unsearched"]["count"] == 0 and roots["docs"]["indexSkipped"] == {
        "binary": 1
    }
    text = render_text(r)
    assert "absent (complete search, no match): absent in docs, hit in docs\n" in text
    assert "never searched, so its cells are partial: src/big.log (too_large)" in text
    # Out of the globs' scope, a skipped file does not count; native-only filtering adds the
    # generated lock file the recommended filter leaves out.
    only_py = run(repo, **{**request, "globs": ["*.py"]})
    assert ("absent", "src") in {
        (a["hypothesis"], a["root"]) for a in only_py["coverage"]["absenceEvidence"]
    }
    native = run(repo, **{**request, "filterMode": "native-only"})
    assert cells(native)[("absent", "src")]["unsearchedFiles"] == 3
    assert "src/package-lock.json (generated)" in cells(native)[("absent", "src")]["reason"]


def test_the_hint_names_the_flag_the_user_typed(make_repo, index, tmp_path):
    """Issue 10 (18): from flags, the text hint and a bad value name --max-candidates; from a
    JSON request they name maxCandidates."""
    repo = make_repo({f"m{i}.py": "alpha = 1\n" for i in range(3)})
    index(repo, embed=False)
    code, out, err = pix("discover", "-l", "a=alpha", "--max-candidates", "1", cwd=repo)
    assert code == 0, err
    assert "… 2 more (raise --max-candidates)" in out
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"queries": [lit("a", "alpha")], "maxCandidates": 1}))
    code, out, err = pix("discover", "--input", str(request), cwd=repo)
    assert code == 0, err
    assert "… 2 more (raise maxCandidates)" in out
    code, out, err = pix("discover", "-l", "a=alpha", "--max-candidates", "60", cwd=repo)
    assert code == 2
    assert err == "pix: error: --max-candidates must be 1-50, not 60\n"


def test_stale_files_are_reported(repo):
    write(repo, {"app/store.py": APP + "\ndef extra_session(): pass\n", "app/new.py": "x\n"})
    (repo / "docs" / "sessions.md").unlink()
    r = run(
        repo,
        queries=[lit("load", "load_session")],
        roots=["app", "tests"],
        outputMode="detailed",
    )
    assert r["stale"] == {
        "count": 3,
        "files": ["app/new.py", "app/store.py", "docs/sessions.md"],
        "truncated": False,
    }
    assert any("changed since this snapshot" in w for w in r["warnings"])
    top = {c["path"]: c for c in r["candidates"]}
    assert top["app/store.py"]["stale"] and not top["tests/test_store.py"]["stale"]
    m = cells(r)
    assert m[("load", "app")]["staleFiles"] == 2 and not m[("load", "app")]["complete"]
    assert m[("load", "tests")]["complete"]  # nothing under tests changed
    # the index answers for what it holds: the new function is not found until re-indexed
    r = run(repo, queries=[lit("x", "extra_session")], roots=["app"])
    assert r["candidates"] == [] and r["coverage"]["absenceEvidence"] == []


def test_matching_is_exact_line_oriented_and_case_aware(make_repo, index):
    repo = make_repo(
        {
            "a.txt": "Hello World\nhello world\n",
            "b.txt": "foo\n  bar\n",
            "c.txt": "HELLO\n",
            "crlf.txt": b"one\r\ntwo hello\r\n",
            "quote.txt": 'say "hi" now\n',
        }
    )
    index(repo, embed=False)
    r = run(repo, queries=[lit("cs", "hello"), lit("ci", "HELLO", caseSensitive=False)])
    by = {c["path"]: c for c in r["candidates"]}
    assert by["a.txt"]["hypotheses"] == ["cs", "ci"] and by["a.txt"]["matchCount"] == 3
    assert by["c.txt"]["hypotheses"] == ["ci"]
    assert [e["line"] for e in by["crlf.txt"]["excerpts"]] == [2, 2]
    r = run(repo, queries=[rx("nl", r"foo\nbar"), lit("nl2", "foo\n  bar")], outputMode="detailed")
    assert [c["status"] for c in r["matrix"]] == ["invalid_regex", "error"]  # never no_matches
    r = run(repo, queries=[rx("empty", "^")])  # every line, and no line after the last one
    assert {c["path"]: c["matchCount"] for c in r["candidates"]}["b.txt"] == 2
    r = run(repo, queries=[lit("q", 'say "hi"')])  # quotes survive the FTS5 expression
    assert [c["path"] for c in r["candidates"]] == ["quote.txt"]
    # `\s+` may run over a line break; matches never join lines (ripgrep's default)
    r = run(repo, queries=[rx("join", r"foo\s+bar"), rx("ci", r"(?i)hello world")])
    assert [c["path"] for c in r["candidates"]] == ["a.txt"]
    assert r["candidates"][0]["matchCount"] == 2


def test_regex_fragment_extractor():
    assert regex_plan(r"class\s+Session\w+") == [["class", "Session"]]
    assert regex_plan(r"load_(session|store)") == [["load_"]]
    assert regex_plan(r"fo|barbaz") is None  # one branch has no 3-character run
    assert regex_plan(r"fooo|barbaz") == [["fooo"], ["barbaz"]]
    assert regex_plan(r"colou?r") == [["colo"]]  # an optional character ends the run
    assert regex_plan(r"ab+cde") == [["cde"]]  # '+' keeps its character, ends the run
    assert regex_plan(r"x{0,3}abc\.py") == [["abc.py"]]
    assert regex_plan(r"[a-z]+_id\b") == [["_id"]]
    assert regex_plan(r"[a-z]+_i\b") is None
    assert regex_plan(r"\w+\(\)") is None
    assert regex_plan(r"(?x) a b c d") is None  # verbose: spaces are not literal
    assert regex_plan(r"(?i)Hello") == [["Hello"]]
    assert regex_plan(r"a{2}bcd") == [["bcd"]]
    assert regex_plan(r"\x41BCD") == [["BCD"]]
    assert needs_line_break(r"foo\nbar") and not needs_line_break(r"foo[^\n]bar")
    assert fts_expression([["abcd"], ['q"uo']]) == '("abc" AND "bcd") OR ("q""u" AND """uo")'


def test_a_comment_group_and_verbose_line_breaks_are_read_as_python_reads_them():
    # `(?#...)` is nothing: the `?` after it makes the c optional, so `xabz` matches
    assert regex_plan(r"xabc(?#optional c)?z") == [["xab"]]
    assert regex_plan(r"abc(?#x(y)def") == [["abcdef"]]  # a comment ends at its first ')'
    assert regex_plan(r"foo(?#|bar)baz") == [["foobaz"]]  # no alternation inside one
    assert regex_plan(r"(?#note\)xyz)hello") == [["hello"]]  # an escaped ')' ends nothing
    # in verbose mode a line break typed as itself is whitespace the regex ignores, not one
    # it needs; the escape \n still needs one, and a comment's text is no part of a match
    assert not needs_line_break("(?x) foo \n bar  # name\n")
    assert needs_line_break(r"(?x)foo\(\):\n")
    assert not needs_line_break("(?x)foo # a \\n in a comment\nbar")


def test_caseless_narrowing_keeps_what_regex_matches(make_repo, index):
    """SQLite's trigram folding keeps i apart from U+0130 and I from U+0131, and hundreds of
    non-ASCII letters from their other case, where IGNORECASE matches them: narrowing must
    not drop those files (a 'complete' no_matches would be false absence evidence)."""
    repo = make_repo(
        {
            "tr.txt": 'renk = "kırmızı"\n',
            "tr2.txt": 'x = "DİKKAT"\n',
            "tr3.txt": 'x = "İnitial value"\n',
            "geo.txt": 'BASLIK = "ᲡᲐᲥᲐᲠᲗᲕᲔᲚᲝ"\n',
            "other.txt": "nothing here\n",
        }
    )
    index(repo, embed=False)
    queries = [
        lit("up", "KIRMIZI", caseSensitive=False),
        lit("dik", "dikkat", caseSensitive=False),
        lit("geo", "საქართველო", caseSensitive=False),
        rx("rx", r"KIRMIZ\w", caseSensitive=False),
        rx("inline", r"(?i)initial"),  # caseless by its own flag
    ]
    r = run(repo, queries=queries, outputMode="detailed")
    found = {c["path"]: c["hypotheses"] for c in r["candidates"]}
    assert found == {
        "tr.txt": ["up", "rx"], "tr2.txt": ["dik"], "geo.txt": ["geo"], "tr3.txt": ["inline"],
    }  # fmt: skip
    narrowing = {h["id"]: h["narrowing"] for h in r["coverage"]["hypotheses"]}
    assert narrowing["up"]["method"] == "trigram"  # i and I spelled both ways, still narrowed
    assert narrowing["geo"]["method"] == "scan"  # every letter cased outside ASCII
    assert fts_expression([["kIr"]], caseless=True) == '(("kIr" OR "kır"))'
    assert fts_expression([["kIr"]]) == '("kIr")'


def test_a_root_that_is_no_usable_path_is_its_own_diagnostic(repo):
    """A NUL byte or a name longer than the file system takes (JSON and MCP can send both)
    is diagnosed for that root; the others are still searched."""
    r = run(
        repo,
        queries=[lit("load", "load_session")],
        roots=["app", "src\u0000x", "a" * 300],
        outputMode="detailed",
    )
    roots = {x["root"]: x for x in r["coverage"]["roots"]}
    assert roots["app"]["status"] == "searched"
    assert roots["src\u0000x"]["status"] == "root_missing"
    assert roots["a" * 300]["status"] == "root_missing"
    assert [c["path"] for c in r["candidates"]] == ["app/store.py"]


def test_an_absolute_root_through_a_link_to_the_repository_is_inside_it(repo, tmp_path):
    link = tmp_path / "via-link"
    os.symlink(repo, link)  # a shell's logical $PWD, macOS's /tmp -> /private/tmp
    r = run(repo, queries=[lit("load", "load_session")], roots=[str(link / "app")])
    root = r["coverage"]["roots"][0]
    assert root["status"] == "searched" and root["path"] == "app"
    assert [c["path"] for c in r["candidates"]] == ["app/store.py"]


def test_trigram_rows_follow_blobs(repo):
    db = repo / ".pix.db"
    assert texts_and_trigrams_agree(db) == 3
    r = run(repo, queries=[lit("load", "load_session")])
    # two matching lines outrank one; then path order
    assert [c["path"] for c in r["candidates"]] == [
        "tests/test_store.py", "app/store.py", "docs/sessions.md",
    ]  # fmt: skip
    # pix gc drops a blob's trigrams with it; a changed file gets its own
    write(repo, {"app/store.py": "changed\n"})
    from pix.index import index_repository

    index_repository(str(repo), embed=False)
    assert texts_and_trigrams_agree(db) == 4
    gc(str(repo))
    assert texts_and_trigrams_agree(db) == 3
    r = run(repo, queries=[lit("load", "load_session"), lit("new", "changed")])
    assert [c["path"] for c in r["candidates"]] == [
        "tests/test_store.py", "app/store.py", "docs/sessions.md",
    ]  # fmt: skip
    assert [c["hypotheses"] for c in r["candidates"]] == [["load"], ["new"], ["load"]]


def texts_and_trigrams_agree(db) -> int:
    """How many file texts the database holds, after FTS5 checked its trigram index
    against them (the integrity-check command raises on any difference)."""
    store = open_store(db, create=False)
    try:
        conn = store.conn
        conn.execute("INSERT INTO blob_trigram(blob_trigram, rank) VALUES ('integrity-check', 1)")
        return conn.execute("SELECT count(*) FROM blob").fetchone()[0]
    finally:
        store.close()


def test_request_validation():
    with pytest.raises(UsageError, match="'mode' is a required property"):
        discover({"queries": [{"id": "a", "pattern": "x"}]})
    with pytest.raises(UsageError, match="used twice"):
        discover({"queries": [lit("a", "x"), lit("a", "y")]})
    with pytest.raises(UsageError, match="Additional properties"):
        discover({"queries": [lit("a", "x")], "limit": 3})


def test_cli_roots_are_relative_to_the_folder_pix_runs_in(repo):
    """`--root` as a shell means it (audit: from a subfolder, `--root ../helper` was "outside
    the repository" and `--root .` searched all of it); --input's roots stay relative to the
    repository's top level, as the schema says."""
    code, body, err = pix_json("discover", "-l", "load=load_session", "--json",
                               "--root", ".", "--root", "../tests", "--root", "store.py",
                               cwd=repo / "app")  # fmt: skip
    assert code == 0, err
    RESPONSE.validate(body)
    roots = {x["root"]: x for x in body["coverage"]["roots"]}
    assert list(roots) == ["app", "tests", "app/store.py"]
    assert all(x["status"] == "searched" for x in roots.values())
    assert [c["path"] for c in body["candidates"]] == ["app/store.py", "tests/test_store.py"]
    code, body, _ = pix_json("discover", "-l", "load=load_session", "--json", "--root", ".",
                             "--cwd", str(repo / "tests"), cwd=repo)  # fmt: skip
    assert [x["root"] for x in body["coverage"]["roots"]] == ["tests"]
    request = {"queries": [lit("load", "load_session")], "roots": ["tests"]}
    code, body, _ = pix_json("discover", "--input", "-", "--json", cwd=repo / "app",
                             stdin=json.dumps(request))  # fmt: skip
    assert code == 0 and [c["path"] for c in body["candidates"]] == ["tests/test_store.py"]


def test_cli_roots_from_a_folder_reached_through_a_link(repo, tmp_path):
    link = tmp_path / "link"
    link.symlink_to(repo, target_is_directory=True)
    code, body, err = pix_json("discover", "-l", "load=load_session", "--json",
                               "--root", ".", "--cwd", str(link / "app"), cwd=tmp_path)  # fmt: skip
    assert code == 0, err
    assert [x["root"] for x in body["coverage"]["roots"]] == ["app"]


def test_roots_of_another_folders_database_are_its_trees(repo, tmp_path):
    """--db naming another repository's database, asked from a folder outside it: roots are
    that repository's (audit: `roots: ["src"]` was "no longer exists in the work tree")."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    request = {"queries": [lit("load", "load_session")], "roots": ["tests"]}
    response = discover(request, db=str(repo / ".pix.db"), cwd=str(elsewhere))
    RESPONSE.validate(response)
    (root,) = response["coverage"]["roots"]
    assert root["status"] == "searched" and root["path"] == "tests"
    assert [c["path"] for c in response["candidates"]] == ["tests/test_store.py"]


def test_cli_roots_with_another_folders_database_are_read_from_the_folder_pix_runs_in(
    repo, tmp_path
):
    """--db naming a repository's database from a folder outside it: `--root` is still the
    shell's path (audit: from the repository's parent, `--root repo` was "does not exist",
    and `--root app` searched the repository's app/ though the shell's app/ is another
    folder)."""
    parent = repo.parent
    (parent / "app").mkdir(exist_ok=True)  # a folder beside the repository, not in it
    db = str(repo / ".pix.db")
    code, body, err = pix_json("discover", "-l", "load=load_session", "--json", "--db", db,
                               "--root", repo.name, "--root", f"{repo.name}/tests",
                               "--root", "app", cwd=parent)  # fmt: skip
    assert code == 0, err
    RESPONSE.validate(body)
    roots = [(x["root"], x["path"], x["status"]) for x in body["coverage"]["roots"]]
    assert roots[:2] == [(".", ".", "searched"), ("tests", "tests", "searched")]
    assert roots[2][0] == str(parent / "app") and roots[2][2] == "skipped"
    assert body["coverage"]["roots"][2]["diagnostic"]["code"] == "outside_repository"
    # the database kept in a folder beside the repository's, asked from their parent: that
    # folder is not the repository's tree, whose paths the roots still name (review)
    kept = parent / "dbs" / "kept.db"
    code, _, err = pix("index", "--static-only", "--quiet", "--db", str(kept), cwd=repo)
    assert code == 0, err
    code, body, err = pix_json("discover", "-l", "load=load_session", "--json", "--db",
                               str(kept.relative_to(parent)), "--root", f"{repo.name}/tests",
                               cwd=parent)  # fmt: skip
    assert code == 0, err
    assert [(x["path"], x["status"]) for x in body["coverage"]["roots"]] == [("tests", "searched")]
    assert [c["path"] for c in body["candidates"]] == ["tests/test_store.py"]


def test_cli_short_form_json_and_exit_codes(repo, tmp_path):
    code, out, err = pix("discover", "-l", "load=load_session", "-r", r"cls=class\s+\w+",
                         "--root", "app", "--root", "../x", cwd=repo)  # fmt: skip
    assert code == 0, err
    assert "1. app/store.py  [load, cls]" in out and "app/store.py:5" in out
    assert "next read: app/store.py lines 1-9" in out and "outside the repository" in out
    code, body, _ = pix_json("discover", "-l", "load=load_session", "--json", "--detailed",
                             cwd=repo)  # fmt: skip
    assert code == 0
    RESPONSE.validate(body)
    assert body["matrix"] and body["candidates"][0]["path"] == "tests/test_store.py"
    # --input: the same request as JSON; a missing mode is a validation error (exit 2)
    request = {"queries": [lit("load", "load_session")], "roots": ["tests"]}
    code, body, _ = pix_json("discover", "--input", "-", "--json", cwd=repo,
                             stdin=json.dumps(request))  # fmt: skip
    assert code == 0 and [c["path"] for c in body["candidates"]] == ["tests/test_store.py"]
    missing_mode = {"queries": [{"id": "q", "pattern": "load_session"}]}
    code, body, _ = pix_json("discover", "--input", "-", "--json", cwd=repo,
                             stdin=json.dumps(missing_mode))  # fmt: skip
    assert code == 2 and body["error"]["code"] == "bad_input"
    ERROR.validate(body)
    assert "mode" in body["error"]["message"]
    code, _, err = pix("discover", "-l", "no_equals_sign", cwd=repo)
    assert code == 2 and "ID=PATTERN" in err and "(-l name=no_equals_sign)" in err
    code, _, err = pix("discover", "-l", "a=", cwd=repo)  # the hint was `-l name=a=` (audit)
    assert code == 2 and err.endswith("(-l a=TEXT)\n")
    code, _, err = pix("discover", "--input", "-", "-l", "a=b", cwd=repo, stdin="{}")
    assert code == 2
    bare = tmp_path / "bare"
    bare.mkdir()
    code, body, _ = pix_json("discover", "-l", "a=abc", "--json", cwd=bare)
    assert code == 3 and body["error"]["code"] == "not_indexed"


def test_a_root_with_a_newline_in_its_name_stays_on_its_line(repo):
    write(repo, {"odd\nname.py": "load_session = None\n"})
    code, out, err = pix("discover", "-l", "load=load_session", "--root", "odd\nname.py",
                         "--detailed", cwd=repo)  # fmt: skip
    assert code == 0, err
    assert '"odd\\nname.py"' in out
    assert not any(line.startswith("name.py") for line in out.splitlines()), out
    warning = [line for line in err.splitlines() if "changed since" in line]
    assert len(warning) == 1 and '"odd\\nname.py"' in warning[0], err
