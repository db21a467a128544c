"""An issue report's `Class.member` names the file defining that member of that class
("`Card.fromstring` likely needs a similar treatment"): the evidence channel credits it as it
credits a dotted module name (pix/retrieve/evidence.py, pix/retrieve/members.py).

A real git repository in a temp folder, indexed with the real model into real SQLite. Four
classes in four files define the same method with the same body, so nothing but the class the
report names tells them apart; a Go file defines a method of a type of the same name, a
lower-case `path` class an `abspath` (as sphinx's testing helpers do).
"""

from __future__ import annotations

import pytest
from conftest import evidence_scores, opened_engine

from pix.query import QueryEngine, QueryRequest
from pix.retrieve import evidence, members

CLASSES = {"card": "Card", "header": "Header", "hdulist": "HDUList", "base": "_BaseHDU"}
PARSER = '''class {name}:
    """One part of a file's header."""

    @classmethod
    def fromstring(cls, data, sep=""):
        """Make one from its text."""
        items = [item for item in data.split(sep or None) if item]
        return cls(items)
'''
GO = """package fits

// Record is one line of a file's header.
type Record struct{ text string }

// Parse makes a record of its text.
func (r *Record) Parse(data string) error {
	r.text = data
	return nil
}
"""
PATH = '''class path(str):
    """A path that knows its own operations."""

    def abspath(self):
        return path(self)
'''
# A class too long for one chunk: its long methods are chunks of their own, its short ones
# merged with a neighbour (the chunker's minimum size), so `Parser.close`'s chunk is another
# member's.
LONG_METHOD = """
    def {name}(self, text):
        # Read the next block of the text, one card after another, keeping their order.
        cards = []
        for number, line in enumerate(text.splitlines()):
            if not line.strip():
                continue
            keyword, _, value = line.partition("=")
            cards.append((number, keyword.strip().upper(), value.strip()))
        self.cards.extend(cards)
        return cards
"""
PARSER_CLASS = (
    "class Parser:\n"
    "    # Cards read from a header's text.\n"
    + LONG_METHOD.format(name="parse")
    + "\n    def close(self):\n        self.cards = []\n"
    + LONG_METHOD.format(name="parse_more")
    + LONG_METHOD.format(name="parse_rest")
)
REPORT = """Reading a header from a byte string fails

**Describe the bug**
The method that makes a header from a string assumes text, so bytes read from a file in
binary mode are refused with an error that does not say why. {names}

**To Reproduce**
Open a file in binary mode, read its first block and make a header of it. The same block
read in text mode is accepted, and so is the same text typed in by hand.
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory, embedder):
    files = {f"fits/{stem}.py": PARSER.format(name=c) for stem, c in CLASSES.items()}
    files.update({"fits/record.go": GO, "fits/testing/path.py": PATH})
    files["fits/parser.py"] = PARSER_CLASS
    yield from opened_engine(tmp_path_factory, "members", files, embedder)


def named(engine: QueryEngine, names: str, paths: list[str] | None = None) -> dict[str, float]:
    """Files the evidence channel names, and the evidence score of each."""
    report = REPORT.format(names=names)
    request = QueryRequest(report, mode="file", explain=True, only_paths=paths or [])
    return evidence_scores(engine, request)


def test_which_dotted_names_are_a_class_member():
    assert members.qualified("Card.fromstring") == "Card.fromstring"
    assert members.qualified("fits.Card.fromstring") == "Card.fromstring"
    assert members.qualified("_BaseHDU.fromstring") == "_BaseHDU.fromstring"
    assert members.qualified("Card.__init__") == "Card.__init__"
    # a module's function, a bare name: no class is named
    assert members.qualified("os.path.abspath") is None
    assert members.qualified("fromstring") is None
    assert members.qualified("card.fromstring") is None


def test_a_class_member_names_the_file_defining_it(engine):
    assert evidence.is_issue(REPORT.format(names="So does fits.HDUList.fromstring."))
    assert named(engine, "`Card.fromstring` needs the same fix.") == {
        "fits/card.py": evidence.MODULE_WEIGHT
    }
    # through the package's name, and for a class with a leading underscore
    assert named(engine, "So does fits.HDUList.fromstring.") == {
        "fits/hdulist.py": evidence.MODULE_WEIGHT
    }
    assert named(engine, "And `_BaseHDU.fromstring`.") == {"fits/base.py": evidence.MODULE_WEIGHT}
    report = REPORT.format(names="See `Header.fromstring`.")
    result = engine.query(QueryRequest(report, mode="file"))
    assert result["results"][0]["file"] == "fits/header.py"


def test_a_method_of_another_language(engine):
    assert named(engine, "`Record.Parse` refuses it.") == {"fits/record.go": evidence.MODULE_WEIGHT}


def test_names_that_are_no_class_member_name_nothing(engine):
    # a module's function that a lower-case class happens to define, a member no class has,
    # a class that does not define the member
    names = "It calls os.path.abspath first, then `Card.tostring` and `Card.parse`."
    assert named(engine, names) == {}


def test_the_path_filter_holds(engine):
    assert named(engine, "`Card.fromstring` needs the same fix.", paths=["fits/header.py"]) == {}


def test_without_the_step_a_class_member_names_nothing(engine, monkeypatch):
    monkeypatch.setattr(evidence, "STEPS", evidence.STEPS - {"members"})
    assert named(engine, "`Card.fromstring` needs the same fix.") == {}


def test_a_short_method_merged_with_its_neighbour(engine):
    # the chunk defining `close` is named for another member of the class
    symbols = engine.store.conn.execute(
        "SELECT c.symbol FROM symbol s JOIN chunk c ON c.id = s.chunk_id"
        " WHERE s.term = 'close' AND s.whole = 1"
    ).fetchall()
    assert symbols and all(sym not in ("Parser", "Parser.close") for (sym,) in symbols)
    assert named(engine, "After `Parser.close` it fails.") == {
        "fits/parser.py": evidence.MODULE_WEIGHT
    }


def test_a_class_the_report_imports_under_another_name(engine):
    code = "```python\nfrom fits import Card as FitsCard\nFitsCard.fromstring(data)\n```"
    assert named(engine, code) == {"fits/card.py": evidence.MODULE_WEIGHT}
