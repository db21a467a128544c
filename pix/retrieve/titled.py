"""The titled-file step (issue reports): a file the report's title names.

A report's title says in a few words what it is about, and often names the module by its
subject: "Inherited classes not correctly documented when mocked" (sphinx/ext/autodoc/
mock.py), "needs_extensions checks versions using strings" (sphinx/extension.py), '"center"
kwarg ignored when manually iterating over DataArrayRolling' (xarray/core/rolling.py). The
rest of the report (prose, code, a traceback) pulls towards the repository's hub, whose
chunks touch everything, and the hub came first in each of those. Among the first
TITLED_TOP files, a source file whose name (without its extension) is a word of the title,
or a part of one of its compound words, gains WEIGHT x the first file's score.

Words and names are compared lower-cased, after a light English inflection strip (mocked ->
mock, extensions -> extension; only where four letters or more remain), and a name that
says a file's role in its package rather than its subject (`__init__`, `index`, `mod`,
`utils`: the tested-file step's generic names) names nothing; a first line of more than
MAX_TITLE_WORDS words is no title. A report whose traceback has a frame in one of those
first files is left alone: the frame says where the error surfaced, which the title, in the
reporter's words, cannot overrule.

Measured (bench/README.md, "thirty-second session"), issueloc's 116 reports static-only:
Acc@1 / Acc@3 / Acc@5 0.517 / 0.672 / 0.750 -> 0.560 / 0.681 / 0.767, MRR@10 0.745 -> 0.769;
five reports first that were second or third (sphinx three, xarray two), none lost from
first, one a place lower (seaborn's, 3rd -> 4th); WEIGHT 0.15-0.3 all gain (0.543-0.560
Acc@1). Without the inflection strip 0.543, whole words of the title only (no parts) 0.534.
With the transformer, on the 98 reports of the seven repositories embedded then: Acc@1 / Acc@5
0.480 / 0.776 -> 0.500 / 0.796, MRR@10 0.754 -> 0.765. No query of the other development sets
(commit subjects, questions, exact strings) takes the issue route, so none of them moves.
"""

from __future__ import annotations

import re

from pix.ingest.terms import IDENTIFIER, STOPWORDS, split_identifier
from pix.retrieve.evidence import clean, framed_files, title_of
from pix.retrieve.frames import frames
from pix.retrieve.hits import Hit, revised
from pix.retrieve.tested import GENERIC_NAMES, file_stem

TITLED_TOP = 20
WEIGHT = 0.2
# Which query shapes it serves (pix/retrieve/route.py).
SHAPES = frozenset({"issue"})
MIN_WORD = 3  # shorter words and parts name no file (`xr`, `io`, the `t` of doesn't)
# A first line of more words is a pasted paragraph, not a title (issueloc's 116 titles have
# 2-16 words, 123 characters at most), and would name files by chance.
MAX_TITLE_WORDS = 30
# An exception's name says what went wrong, not where: TypeError names no types.py.
_EXCEPTION = re.compile(r"(Error|Exception|Warning)$")


def enabled(channels: list[str] | None, shape: str) -> bool:
    """By default, for the shapes it serves; never when the request names its channels (it
    then asks for those alone)."""
    return channels is None and shape in SHAPES


def most_share(channels: list[str] | None, shape: str) -> float:
    """The most the step adds to a file, as a share of the most a file scores without it (a
    workspace skips a repository by its ceiling, pix/shard_probe.py): WEIGHT x the first
    file's score, which is at most that."""
    return WEIGHT if enabled(channels, shape) else 0.0


def base_form(word: str) -> str:
    """A word without a light English inflection, and without a final e, so that the forms
    of one word meet: mocked, mocks -> mock; caching, cache -> cach; properties, property ->
    property; parsing, parse -> pars; class, classes -> class. An ending is stripped only
    where four letters or more remain (`uses`, `bus` stay), and an s only after a letter
    other than s or u (`process`, `status` stay)."""
    word = word.lower().strip("_")
    if word.endswith("ies") and len(word) >= 6:
        return word[:-3] + "y"
    if word.endswith(("ing", "ed")) and len(word) >= 6 + word.endswith("ing"):
        word = word[: -3 if word.endswith("ing") else -2]
    elif word.endswith(("sses", "ches", "shes", "xes")) and len(word) >= 6:
        word = word[:-2]  # `classes` is class + es; `modules` is module + s (below)
    elif len(word) >= 5 and word.endswith("s") and word[-2] not in "su":
        word = word[:-1]
    return word[:-1] if word.endswith("e") and len(word) >= 5 else word


def title_words(title: str) -> frozenset[str]:
    """The base forms of the title's words and of their parts (`DataArrayRolling` -> data,
    array, roll, dataarrayroll); none when the line is too long to be a title. Two words
    run together (`type hints` -> typehint) and names compared without their separators
    (`ndarray_mixin.py` for `NdarrayMixin`) gained nothing on issueloc and cost a report
    (bench/README.md, "thirty-second session")."""
    found = IDENTIFIER.findall(title)
    if len(found) > MAX_TITLE_WORDS:
        return frozenset()
    out: set[str] = set()
    plain = [w for w in found if len(w) >= MIN_WORD and w.lower() not in STOPWORDS]
    for word in plain:
        out.add(base_form(word))
        if not _EXCEPTION.search(word):
            out.update(base_form(p) for p in split_identifier(word) if len(p) >= MIN_WORD)
    return frozenset(out)


def name_word(path: str) -> str | None:
    """The base form of a file's name without its extension (`sphinx/ext/autodoc/mock.py` ->
    mock, `autodoc_typehints.py` -> autodoc_typehint, the title word it meets whole), or
    None for a generic name, which says nothing of the file's subject."""
    stem = file_stem(path).lower().strip("_.")
    if not stem or stem in GENERIC_NAMES:
        return None
    return base_form(stem)


def lift_titled(query: str, files: list[Hit]) -> list[Hit]:
    """`files` (ranked) with the bonus added to each source file among the first
    TITLED_TOP whose name the title holds, ranked again (rank: `titled`, the bonus);
    unchanged when a traceback frame of the report is in one of those files."""
    if not files or WEIGHT <= 0:
        return files
    top = files[:TITLED_TOP]
    # The report as evidence.py reads it (no template comment, no screenshot), cleaned once
    # a query (evidence.clean keeps it).
    text = clean(query)
    words = title_words(title_of(text))
    named = {
        f.path for f in top
        if f.role == "source" and name_word(f.path) in words
    }  # fmt: skip
    if not named or framed_files(frames(text), [f.path for f in top]):
        return files
    bonus = WEIGHT * files[0].score
    out = [
        revised(f, score=f.score + bonus, rank={**f.rank, "titled": bonus})
        if f.path in named
        else f
        for f in files
    ]
    return sorted(out, key=lambda h: (-h.score, h.path))
