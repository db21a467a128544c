"""The outline step (pix/retrieve/outline.py): an issue report's first files are
judged as wholes by their path and defined names, read by the real static tier.

A real repository in a temp dir, indexed for real; the report names no file and no defined
name, so only the outline can tell the LaTeX writer (whose names are all about tables,
figures and LaTeX) from files that mention tables once.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import OTHER_TOOLS, indexed_in_place

from pix.ingest.static import StaticEmbedder
from pix.query import QueryRequest, query
from pix.retrieve import outline, tested, titled
from pix.retrieve.hits import Hit


def method(name: str, opens: str, lines: int = 14) -> str:
    """A method long enough to be a chunk of its own."""
    body = "".join(f"        self.body.append({opens!r} + str({i}))\n" for i in range(lines))
    return f"    def {name}(self, node):\n{body}\n"


# The module a table's LaTeX is written by: its names say tables, cells and tabulars.
LATEX = "class TableWriter:\n" + "".join(
    method(name, "\\begin")
    for name in ("visit_table", "depart_table", "merge_cells", "span_rows", "close_tabular")
)
HTML = '''\
class HTMLTranslator:
    """Writes the document as HTML."""

    def visit_paragraph(self, node):
        self.body.append("<p>")

    def visit_link(self, node):
        self.body.append("<a>")
'''
CONFIG = '''\
def read_config(path):
    """Read the project's settings. A table in the settings file may have cells merged
    across rows; the tabular environment of such a table, in the PDF build, is closed."""
    return load(path)


def default_config():
    return {"tables": True}
'''
STRINGS = """\
def pad(text, width):
    return text.ljust(width)


def trim(text):
    return text.strip()
"""
LOGGING = """\
def warn(message):
    print("warning:", message)


def debug(message):
    print("debug:", message)
"""
REPORT = """\
Merged cells in a table break the PDF build

**Describe the bug**
When a table has cells merged across rows, the generated PDF is broken: the cells overlap
and the tabular environment does not close.

**To Reproduce**
Build the docs with the PDF builder, with a table that merges two cells of a column.

**Expected behavior**
The merged cells span their rows.

```
Traceback (most recent call last):
  File "build.py", line 3, in <module>
    settings = read_config("docs.cfg")
ValueError: the tabular environment of a table is not closed
```
"""
FILES = {
    **OTHER_TOOLS,  # the outlines a report's files stand out among
    "writers/latex.py": LATEX,
    "writers/html.py": HTML,
    "project/config.py": CONFIG,
    "util/strings.py": STRINGS,
    "util/logging.py": LOGGING,
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory, embedder):
    return indexed_in_place(tmp_path_factory.mktemp("outline"), FILES, embedder)


def ask(repo, text: str, top: int = 5) -> dict:
    request = QueryRequest(query=text, mode="file", top=top, explain=True)
    return query(request, cwd=str(repo))


def test_an_issue_report_lifts_the_file_whose_outline_stands_out(repo):
    response = ask(repo, REPORT)
    assert response["explain"]["shape"] == "issue"
    lifted = {r["file"]: r["explain"]["rank"]["outline"] for r in response["results"]
              if "outline" in r["explain"]["rank"]}  # fmt: skip
    assert lifted and max(lifted, key=lifted.get) == "writers/latex.py"
    first = response["results"][0]
    assert first["file"] == "writers/latex.py"
    # The bonus is on top of the strongest chunk's score: the prior is still that chunk's
    # score over its fused score.
    explain = first["explain"]
    chunk_score = explain["score"] - explain["rank"]["evidence"] - explain["rank"]["outline"]
    assert explain["prior"] == pytest.approx(chunk_score / explain["fused"], abs=1e-3)


def test_the_text_explain_line_adds_the_bonus(repo):
    from pix.output.render import explain_line

    first = ask(repo, REPORT)["results"][0]
    assert f"outline +{first['explain']['rank']['outline']:.4f}" in explain_line(first)


def test_the_step_changes_the_order_it_is_measured_on(repo, monkeypatch):
    lifted = [r["file"] for r in ask(repo, REPORT, top=20)["results"]]
    monkeypatch.setattr(outline, "SHAPES", frozenset())
    plain = [r["file"] for r in ask(repo, REPORT, top=20)["results"]]
    assert sorted(lifted) == sorted(plain)  # the same files, another order
    assert lifted.index("writers/latex.py") < plain.index("writers/latex.py")


@pytest.mark.parametrize(
    ("text", "options"),
    [
        ("tables in latex output", {}),  # keywords: not an issue report
        (REPORT, {"channels": ["bm25", "dense", "static"]}),  # channels named: those alone
    ],
)
def test_other_shapes_and_named_channels_are_left_alone(repo, text, options):
    request = QueryRequest(query=text, mode="file", top=5, explain=True, **options)
    response = query(request, cwd=str(repo))
    assert response["results"]
    assert all("outline" not in r["explain"]["rank"] for r in response["results"])


def test_in_chunk_mode_each_files_strongest_chunk_carries_its_outline_bonus(repo):
    files = query(QueryRequest(REPORT, mode="file", top=20, explain=True), cwd=str(repo))
    chunks = query(QueryRequest(REPORT, top=50, explain=True), cwd=str(repo))
    bonus = {r["file"]: r["explain"]["rank"].get("outline") for r in files["results"]}
    carrying = [r for r in chunks["results"] if "outline" in r["explain"]["rank"]]
    assert carrying and any(r["explain"]["rank"]["outline"] > 0 for r in carrying)
    assert len({r["path"] for r in carrying}) == len(carrying)  # one chunk a file
    for r in carrying:
        assert r["explain"]["rank"]["outline"] == bonus[r["path"]]


def test_the_same_report_gives_the_same_bytes(repo):
    assert ask(repo, REPORT) == ask(repo, REPORT)


def hit(path: str, sha: str, score: float) -> Hit:
    return Hit(path, 1, sha, 1, 2, "function", None, score, score, "source", "python", {})


class Names:
    """A connection stand-in answering OUTLINE_NAMES from a dict (unit tests of the
    arithmetic; the SQL runs for real in the tests above)."""

    def __init__(self, names: dict[str, list[str]]) -> None:
        self.names = names

    def execute(self, statement: str, params: dict):
        assert statement == outline.OUTLINE_NAMES
        return [(sha, n) for sha in sorted(self.names) for n in self.names[sha]]


def test_fewer_than_three_outlines_change_nothing():
    files = [hit("a.py", "1", 1.0), hit("b.py", "2", 0.9), hit("c.py", "3", 0.8)]
    conn = Names({"1": ["visit_table"], "2": ["pad"]})
    assert outline.lift_outlines(conn, StaticEmbedder(), REPORT, "issue", files) == files


def test_only_the_first_files_are_read_and_a_bonus_never_goes_below_zero():
    files = [hit(f"f{i}.py", str(i), 1.0 - i / 100) for i in range(30)]
    names = {str(i): ["pad", "trim"] for i in range(30)}
    names["2"] = ["visit_table", "depart_table", "visit_multirow_cell", "LaTeXTranslator"]
    names["25"] = names["2"]  # past OUTLINE_TOP: not read
    out = outline.lift_outlines(Names(names), StaticEmbedder(), REPORT, "issue", files)
    by_path = {h.path: h for h in out}
    assert out[0].path == "f2.py" and by_path["f2.py"].rank["outline"] > 0
    assert "outline" not in by_path["f25.py"].rank
    assert all(h.score >= files[int(h.path[1:-3])].score for h in out)


def test_a_bonus_stays_within_the_share_a_workspace_ceiling_allows():
    """One outline that matches and the rest alike is the most the step can give (Samuelson's
    inequality); `most_share`, which a workspace's ceilings add (pix/shard_probe.py), holds
    it, and is near it, so the bound is not slack."""
    files = [hit(f"f{i:02}.py", str(i), 1.0) for i in range(outline.OUTLINE_TOP)]
    names = {str(i): ["pad", "trim"] for i in range(outline.OUTLINE_TOP)}
    names["7"] = ["visit_table", "depart_table", "visit_multirow_cell", "LaTeXTranslator"]
    out = outline.lift_outlines(Names(names), StaticEmbedder(), REPORT, "issue", files)
    bonus = max(h.rank.get("outline", 0.0) for h in out)
    share = outline.most_share(None, "issue")
    assert 0.9 * share < bonus <= share
    assert outline.most_share(["bm25"], "issue") == 0.0


def at_their_most() -> tuple[float, list[Hit]]:
    """The outline and tested steps at their most: the first file's score is the most any
    file scores, its test scores the test prior x that, and only their two outlines match."""
    most = 1.0
    files = [
        hit("pkg/tables.py", "0", most),
        replace(hit("tests/test_tables.py", "1", 0.3), role="test"),
    ]
    files += [hit(f"pkg/m{i:02}.py", str(i), most) for i in range(2, outline.OUTLINE_TOP)]
    names = {str(i): ["pad", "trim"] for i in range(outline.OUTLINE_TOP)}
    names["0"] = names["1"] = ["visit_table", "depart_table", "visit_multirow_cell"]
    steps = outline.lift_outlines(Names(names), StaticEmbedder(), REPORT, "issue", files)
    return most, tested.lend(steps)


def test_a_file_and_the_test_that_lends_to_it_stay_within_the_ceiling_together():
    """The outline and tested steps together, at their most: the first file's score is the
    most any file scores, its test scores the test prior x that, and only their two outlines
    match. The workspace ceiling's share (pix/shard_probe.py) holds the file's total and is
    near it (review: each bonus bounded alone, 2.61 x, was slack; the two z-scores share one
    set of outlines, so together at most sqrt(2n - 4), 2.2 x)."""
    most, out = at_their_most()
    total = next(h.score for h in out if h.path == "pkg/tables.py")
    lent = tested.lend_weight(True)
    bound = most * (1 + tested.most_share(True) + outline.most_share(None, "issue", lent))
    assert 0.9 * bound < total <= bound * (1 + 1e-9)  # (pix/shards.py allows rounding too)


def test_a_file_the_title_names_stays_within_the_ceiling_with_the_other_steps():
    """The titled-file step after the outline and tested steps, at their most: the report's
    title ("... a table ...") names pkg/tables.py, the first file, which gains WEIGHT x its own
    score; the ceiling's share (pix/shard_probe.py) holds it and is not slack."""
    most, steps = at_their_most()
    out = titled.lift_titled(REPORT, steps)
    first = out[0]
    assert first.path == "pkg/tables.py" and first.rank["titled"] > 0
    lent = tested.lend_weight(True)
    bound = (
        most
        * (1 + tested.most_share(True) + outline.most_share(None, "issue", lent))
        * (1 + titled.most_share(None, "issue"))
    )
    assert 0.9 * bound < first.score <= bound * (1 + 1e-9)
