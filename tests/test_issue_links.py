"""An issue report's link to a file on its code host names that file ("handled at this place
(https://github.com/pydata/xarray/blob/df052e7/xarray/coding/variables.py#L311)"): the
evidence channel credits it as it credits a path the report names (pix/retrieve/evidence.py,
pix/retrieve/links.py).

A real git repository in a temp folder, indexed with the real model into real SQLite. Six
renderers hold the same code under different names, so nothing in the report's words tells
them apart; beside them a CONTRIBUTING.md and a .travis.yml, which issue templates and
other projects' links name.
"""

from __future__ import annotations

import pytest
from conftest import RENDERER, RENDERER_KINDS, evidence_scores, opened_engine

from pix.query import QueryEngine, QueryRequest
from pix.retrieve import evidence, links

REPORT = """Values are rendered wrongly in signatures

**Describe the bug**
A value of the default argument is written as source text, and the text is not what the
code says. The renderer drops a separator that the value needs, so the documentation
shows a different value from the one the function has. {links}

**To Reproduce**
Write a function whose default is a value of one item, build the documentation and look
at the rendered signature.
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory, embedder):
    files = {f"shapes/{k}.py": RENDERER.format(kind=k) for k in RENDERER_KINDS}
    files.update({"CONTRIBUTING.md": "# Contributing\n", ".travis.yml": "language: python\n"})
    yield from opened_engine(tmp_path_factory, "links", files, embedder)


def named(engine: QueryEngine, links: str) -> dict[str, float]:
    """Files the evidence channel names, and the evidence score of each."""
    request = QueryRequest(REPORT.format(links=links), mode="file", explain=True)
    return evidence_scores(engine, request)


def test_the_links_a_report_makes_to_files():
    text = REPORT.format(
        links="It is handled [here](https://github.com/o/r/blob/df052e7/pkg/mod.py#L311), see "
        "https://github.com/o/r/blame/main/pkg/a.py?plain=1, "
        "https://raw.githubusercontent.com/o/r/v1.2/pkg/b.py, "
        "https://gitlab.com/group/sub/r/-/blob/main/src/c%20d.py, "
        "https://bitbucket.org/o/r/src/abc/e.py. And https://github.com/o/r/raw/main/f.py, "
        "**https://github.com/o/r/blob/main/pkg/g.py**"
    )
    assert evidence.extract(text).linked == [
        "df052e7/pkg/mod.py",
        "main/pkg/a.py",
        "v1.2/pkg/b.py",
        "main/src/c d.py",
        "abc/e.py",
        "main/f.py",
        "main/pkg/g.py",
    ]
    # an issue, a pull request, a folder's page, a web page: none is a file of a repository
    pages = (
        "https://github.com/o/r/issues/12 https://github.com/o/r/pull/13 "
        "https://github.com/o/r/tree/main/pkg https://example.org/pkg/mod.py"
    )
    assert evidence.extract(REPORT.format(links=pages)).linked == []


def test_where_a_linked_path_starts():
    held = {"pkg/mod.py", "setup.py", "CONTRIBUTING.md", "tox.ini", "docs/usage.rst"}
    assert links.linked_file("df052e7/pkg/mod.py", held) == "pkg/mod.py"
    assert links.linked_file("release/4.x/pkg/mod.py", held) == "pkg/mod.py"  # a branch's /
    assert links.linked_file("main/setup.py", held) == "setup.py"
    # after a ref of several components, a top-level file alone is too weak a match
    assert links.linked_file("o/other/main/setup.py", held) is None
    assert links.linked_file("main/other/mod.py", held) is None  # not held whole
    # prose and build files: templates and other projects link theirs
    for linked in ("main/CONTRIBUTING.md", "main/tox.ini", "main/docs/usage.rst"):
        assert links.linked_file(linked, held) is None


def test_a_link_names_the_file_it_points_at(engine):
    link = "It is handled at https://github.com/someone/fork/blob/0a1b2c3/shapes/maps.py#L3"
    assert named(engine, link) == {"shapes/maps.py": evidence.LINK_WEIGHT}
    result = engine.query(QueryRequest(REPORT.format(links=link), mode="file"))
    assert result["results"][0]["file"] == "shapes/maps.py"


def test_links_to_prose_build_files_and_missing_files_name_nothing(engine):
    links = (
        "Read https://github.com/o/r/blob/main/CONTRIBUTING.md and "
        "https://github.com/other/project/blob/master/.travis.yml and "
        "https://github.com/o/r/blob/main/shapes/gone.py"
    )
    assert named(engine, links) == {}


def test_a_file_linked_twice_is_one_mention(engine):
    link = "https://github.com/o/r/blob/main/shapes/sets.py"
    once = named(engine, f"See {link}.")
    assert once == {"shapes/sets.py": evidence.LINK_WEIGHT}
    other = "https://github.com/o/r/blob/0a1b2c3/shapes/sets.py#L2"
    assert named(engine, f"See {link} and {other}.") == once
    # a path named in the text as well is a further mention
    both = named(engine, f"See {link}, in shapes/sets.py.")
    assert both == {"shapes/sets.py": evidence.LINK_WEIGHT + evidence.REPEAT_WEIGHT}


def test_without_the_step_a_link_names_nothing(engine, monkeypatch):
    monkeypatch.setattr(evidence, "STEPS", evidence.STEPS - {"links"})
    assert named(engine, "https://github.com/o/r/blob/main/shapes/maps.py") == {}
