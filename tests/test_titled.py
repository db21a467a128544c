"""The titled-file step (pix/retrieve/titled.py): a source file whose name is a
word of an issue report's title gains a share of the first file's score.

A real repository in a temp dir, indexed for real with the transformer: the report's body
is about documenting inherited classes, which the documenter (a larger file, first without
the step) is about; its title ends "when mocked", and pkg/mock.py is what the fix changes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import OTHER_TOOLS, commit, new_repo, write

from pix.index import index_repository
from pix.query import QueryRequest, query
from pix.retrieve import titled
from pix.retrieve.hits import Hit


def method(name: str, words: str, lines: int = 10) -> str:
    """A method long enough to be a chunk of its own."""
    body = "".join(f"        self.lines.append({words!r} + str({i}))\n" for i in range(lines))
    return f'    def {name}(self, obj):\n        """Document {words} of the class."""\n{body}\n'


DOCUMENTER = "class ClassDocumenter:\n" + "".join(
    method(name, words)
    for name, words in [
        ("document_bases", "the base classes of an inherited class"),
        ("document_members", "inherited members and their docstrings"),
        ("format_bases", "the bases shown as Bases: for each inherited class"),
    ]
)
MOCK = '''class MockObject:
    """A stand-in for a module that cannot be imported while the docs are built."""

    def __getattr__(self, name):
        return make_subclass(name, self.__name__)


def make_subclass(name, module):
    """What a base class from a stand-in module becomes when a class inherits from it."""
    return type(name, (MockObject,), {"__module__": module})


def mock(modules):
    """Insert stand-ins for `modules` into sys.modules."""
    for name in modules:
        install(name)
'''
FILES = {
    **OTHER_TOOLS,
    "pkg/documenter.py": DOCUMENTER,
    "pkg/mock.py": MOCK,
    # Its name is the title's word too, but it is documentation: the step lifts source only.
    "docs/mock.rst": "Mocking\n=======\n\nModules the build cannot import are mocked.\n",
}
REPORT = """\
Inherited classes not correctly documented when mocked

**Describe the bug**
A class that inherits from a class of a library the docs build cannot import is documented
with a wrong base: the "Bases:" line of the inherited class shows only the module, not the
base class itself.

**To Reproduce**
Document a class whose base class comes from a module the build replaces with a stand-in,
and build.

**Expected behavior**
The Bases: line names the base class of the inherited class.
"""


@pytest.fixture(scope="module")
def repo(tmp_path_factory, embedder) -> Path:
    root = new_repo(tmp_path_factory.mktemp("titled") / "repo", FILES)
    # The module has a history of its own (the history prior weighs a report's files by it;
    # the first file is not weighed).
    for i in range(16):
        write(root, {"pkg/mock.py": MOCK + f"\n# revision {i}\n"})
        commit(root, f"mock: revision {i}")
    index_repository(str(root), embedder=embedder)
    return root


def ask(repo: Path, text: str = REPORT, top: int = 6, **options) -> dict:
    request = QueryRequest(query=text, mode=options.pop("mode", "file"), top=top,
                           explain=True, **options)  # fmt: skip
    return query(request, cwd=str(repo))


def test_the_file_the_title_names_moves_ahead_of_the_hub(repo, monkeypatch):
    response = ask(repo)
    assert response["explain"]["shape"] == "issue"
    first = response["results"][0]
    assert first["file"] == "pkg/mock.py"
    bonus, weight = first["explain"]["rank"]["titled"], titled.WEIGHT
    monkeypatch.setattr(titled, "WEIGHT", 0.0)
    plain = ask(repo)["results"]
    assert plain[0]["file"] == "pkg/documenter.py"  # without the step the hub is first
    assert all("titled" not in r["explain"]["rank"] for r in plain)
    # The bonus is WEIGHT x the first file's score before the step.
    assert bonus == pytest.approx(weight * plain[0]["score"], rel=1e-3)
    was = next(r["score"] for r in plain if r["file"] == "pkg/mock.py")
    assert first["score"] == pytest.approx(was + bonus, rel=1e-3)


def test_only_the_named_source_file_gains_and_the_prior_still_adds_up(repo):
    results = ask(repo, top=20)["results"]
    gained = [r["file"] for r in results if "titled" in r["explain"]["rank"]]
    assert gained == ["pkg/mock.py"]  # not docs/mock.rst, nor a file the title does not name
    explain = results[0]["explain"]
    rank = explain["rank"]
    chunk_score = explain["score"] - rank["evidence"] - rank.get("outline", 0.0) - rank["titled"]
    assert explain["prior"] == pytest.approx(chunk_score / explain["fused"], abs=1e-3)


def test_the_text_explain_line_adds_the_bonus(repo):
    from pix.output.render import explain_line

    first = ask(repo)["results"][0]
    assert f"named in the title +{first['explain']['rank']['titled']:.4f}" in explain_line(first)


@pytest.mark.parametrize(
    ("text", "options"),
    [
        ("mocked modules and inherited classes", {}),  # keywords: not an issue report
        (REPORT, {"channels": ["bm25", "dense", "static"]}),  # channels named: those alone
    ],
)
def test_other_shapes_and_named_channels_are_left_alone(repo, text, options):
    response = ask(repo, text, **options)
    assert response["results"]
    assert all("titled" not in r["explain"]["rank"] for r in response["results"])


def test_in_chunk_mode_the_named_files_strongest_chunk_carries_the_bonus(repo):
    files = ask(repo)["results"]
    chunks = ask(repo, mode="chunk", top=20)["results"]
    carrying = [r for r in chunks if "titled" in r["explain"]["rank"]]
    assert [r["path"] for r in carrying] == ["pkg/mock.py"]
    named = next(r for r in files if r["file"] == "pkg/mock.py")
    assert carrying[0]["explain"]["rank"] == named["explain"]["rank"]
    assert carrying[0]["score"] == pytest.approx(named["score"], abs=1e-5)
    # the first chunks name the files in file mode's order
    assert list(dict.fromkeys(r["path"] for r in chunks))[:2] == [r["file"] for r in files[:2]]


def test_the_same_report_gives_the_same_bytes(repo):
    assert ask(repo) == ask(repo)


@pytest.mark.parametrize(
    ("words", "form"),
    [(("mocked", "mocks", "mock"), "mock"), (("extensions", "extension"), "extension"),
     (("caching", "caches", "cache", "cached"), "cach"), (("properties", "property"), "property"),
     (("classes", "class"), "class"), (("modules", "module"), "modul"),
     (("parsing", "parse", "parsed"), "pars"), (("Rolling", "rolling"), "roll"),
     (("iterating", "iterate"), "iterat"), (("status",), "status"), (("process",), "process"),
     (("uses",), "uses"), (("bus",), "bus"), (("s",), "s"), (("__init__",), "init"),
     (("types", "type"), "type")],
)  # fmt: skip
def test_the_forms_of_one_word_meet_in_one_base_form(words, form):
    assert {titled.base_form(w) for w in words} == {form}


def test_title_words_are_its_words_and_their_parts():
    words = titled.title_words('"center" kwarg ignored when iterating over date picker')
    assert {"center", "kwarg", "ignor", "iterat", "date", "picker"} <= words
    assert "datepicker" not in words  # neighbours are not run together
    words = titled.title_words("DataArrayRolling: a TypeError is raised in xr.io")
    assert {"dataarrayroll", "data", "array", "roll", "typeerror", "rais"} <= words
    # Stopwords and short words name nothing, nor the parts of an exception's name.
    assert not {"a", "is", "in", "xr", "io", "type", "error"} & words


def test_a_first_line_too_long_for_a_title_names_nothing():
    assert "mock" in titled.title_words("mocked " * titled.MAX_TITLE_WORDS)
    assert titled.title_words("mocked " * (titled.MAX_TITLE_WORDS + 1)) == frozenset()
    assert titled.title_words("") == frozenset()


@pytest.mark.parametrize(
    ("path", "word"),
    [("sphinx/ext/autodoc/mock.py", "mock"), ("xarray/core/rolling.py", "roll"),
     ("lib/Extensions.rb", "extension"), ("pkg/data_array.py", "data_array"),
     ("web/date-picker.tsx", "date-picker"), ("app/user.service.ts", "user.servic"),
     ("src/pkg/__init__.py", None), ("web/index.ts", None), ("src/utils.rs", None),
     ("Makefile", "makefil")],
)  # fmt: skip
def test_a_files_name_word_and_generic_names_that_name_nothing(path, word):
    assert titled.name_word(path) == word


def hit(path: str, score: float, role: str = "source") -> Hit:
    return Hit(path, 1, path, 1, 2, "function", None, score, score, role, "python", {})


def test_only_sources_among_the_first_files_gain_and_within_the_ceiling_share():
    files = [hit("pkg/hub.py", 1.0), hit("tests/mock.py", 0.95, "test")]
    files += [hit(f"pkg/m{i:02}.py", 0.9 - i / 100) for i in range(titled.TITLED_TOP)]
    files[5] = hit("pkg/mock.py", 0.85)
    files[7] = hit("docs/mock.md", 0.84, "doc")
    files.append(hit("other/mock.py", 0.1))  # past TITLED_TOP: not read
    out = titled.lift_titled("Classes documented wrong when mocked\n\nbody", files)
    gained = {h.path: h.rank["titled"] for h in out if "titled" in h.rank}
    assert gained == {"pkg/mock.py": pytest.approx(titled.WEIGHT * 1.0)}
    assert out[0].path == "pkg/mock.py"
    # The workspace ceiling's share (pix/shard_probe.py) holds the bonus and is not slack.
    assert gained["pkg/mock.py"] == pytest.approx(titled.most_share(None, "issue") * 1.0)
    assert titled.most_share(["bm25"], "issue") == 0.0
    assert titled.most_share(None, "question") == 0.0


def test_a_title_that_names_no_file_changes_nothing():
    files = [hit("pkg/hub.py", 1.0), hit("pkg/mock.py", 0.9)]
    assert titled.lift_titled("Bases shown wrong for inherited classes\n\nbody", files) == files


def test_a_traceback_that_places_the_error_in_a_first_file_overrules_the_title():
    """The frame says where the error surfaced; the title is the reporter's words
    (tests/test_issue_queries.py has the whole case: a title naming the cart, a traceback
    ending in the pricing module). Frames resolve as the evidence channel resolves them."""
    title = "Cart total is None with a coupon\n\n"
    frame = 'Traceback (most recent call last):\n  File "{}", line 8, in f\nTypeError: x\n'
    for layout in ("shop", "src/shop"):
        files = [hit(f"{layout}/pricing.py", 1.0), hit(f"{layout}/cart.py", 0.9)]
        assert titled.lift_titled(title + "body", files)[0].path == f"{layout}/cart.py"
        for framed in ("/usr/lib/python3.12/site-packages/shop/pricing.py", "pricing.py"):
            assert titled.lift_titled(title + frame.format(framed), files) == files
        elsewhere = title + frame.format("/usr/lib/python3.12/site-packages/other/lib.py")
        assert titled.lift_titled(elsewhere, files)[0].path == f"{layout}/cart.py"
    # A deep frame's file name alone is no frame in a file of the repository's root.
    files = [hit("app.py", 1.0), hit("cart.py", 0.9)]
    deep = title + frame.format("/usr/lib/python3.12/site-packages/flask/app.py")
    assert titled.lift_titled(deep, files)[0].path == "cart.py"


def test_the_title_is_read_from_the_cleaned_report():
    """An issue template's comment on the first line is no title (evidence.clean)."""
    files = [hit("pkg/hub.py", 1.0), hit("pkg/template.py", 0.9), hit("pkg/rolling.py", 0.85)]
    report = "<!-- Please fill in the template -->\nRolling windows ignore center\n\nbody"
    gained = [h.path for h in titled.lift_titled(report, files) if "titled" in h.rank]
    assert gained == ["pkg/rolling.py"]
