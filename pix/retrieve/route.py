"""The router: a query's shape decides how much each channel counts.

Shapes, checked in this order (issue first):
- path:       looks like a file path or name (`src/app.py`, `core/`, `termui.py`)
- identifier: one code name (`Session.request`, `get_user`, `parseJSON`, `HTTPServer`)
- issue:      a whole report: long, or several lines with code or a traceback (evidence.py)
- howto:      one line of two words or more that names a programming language, as one asks a
              web search (`python merge two dicts`, `how to flatten a list in java`)
- keywords:   one to three plain words (`redirect cookies`)
- question:   anything longer, natural language (`why are cookies lost on redirect`)

The weights are the whole policy, in one table (and READING, dense's weight in the
refinement's second pass), measured on the development set
(bench/quality.py). Dense understands phrasing (static is its stand-in, for chunks the
transformer has not embedded yet); BM25 matches words; ident matches definition names and their
parts; path matches path components.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pix.retrieve.evidence import is_issue

CHANNELS = ("dense", "static", "bm25", "ident", "path", "evidence", "component", "log")
# evidence (files an issue names), component (files a change's component names) and log (files
# that past commits of matching subjects changed) are fused after the SQL (pix/retrieve/named.py)
SQL_CHANNELS = CHANNELS[:5]

# static is the transformer's stand-in on the chunks it has not embedded yet (a chunk has one of
# the two vectors, never both). It weighs a quarter of READING, the dense weight it meets on a
# static-only database (a third of a question's DENSE on a partly embedded one): measured
# static-only on the 16 commit sets (bench/devbench.py --static-only), weighing it as dense
# scored a mean nDCG@10 / MRR@10 of 0.647 / 0.621, below no static channel at all (0.658 /
# 0.638); 0.5 gave 0.663 / 0.642, 0.25 0.666 / 0.648. The static table is a weak judge of code,
# so it may add a vote, never outvote BM25. Once a chunk has its transformer vector, it is
# searched by dense instead.
STATIC = 0.25
# log: the files that past commits of matching subjects changed (pix/retrieve/commit_log.py),
# for the shapes a change description takes.
LOG = 0.5
# dense for questions and keywords: the transformer's nearest chunks of the whole corpus weigh
# DENSE, and READING in the refinement's second pass (pix/retrieve/refine.py), which runs only
# while some of the first pass's best candidates have no vector: there the transformer reads
# those candidates, and on a database that is fully static its votes fall only on chunks the
# other channels found (partly embedded, the first pass's dense candidates count at READING too;
# not measured). Measured with every chunk embedded (bench/weights_bench.py, bench/README.md
# "forty-first session"): 0.75 against 1.0 lifts the 14 language sets' mean nDCG@10 / MRR@10 by
# 0.004 / 0.004, questions-more by 0.006 / 0.006 and the five commitloc-more sets by 0.008 on
# average, and costs the 480 developers' questions 0.002 / 0.001; in the second pass of
# static-only databases 0.75 cost requests 0.013 / 0.018 and questions-more 0.004 / 0.006.
DENSE = 0.75
READING: dict[str, float] = {"question": 1.0, "keywords": 1.0}
WEIGHTS: dict[str, dict[str, float]] = {
    "path": {"dense": 0.5, "static": STATIC, "bm25": 0.5, "ident": 0.5, "path": 2.0},
    "identifier": {"dense": 0.5, "static": STATIC, "bm25": 1.0, "ident": 1.5, "path": 0.5},
    # component: the files a change description's component names (`router: ...`,
    # pix/retrieve/component.py); a query that names none leaves the channel empty. 1.0
    # measured against 0.5, 1.5 and 2.0 on the 14 language commit sets (bench/README.md).
    "keywords": {
        "dense": DENSE,
        "static": STATIC,
        "bm25": 1.0,
        "ident": 0.5,
        "path": 0.5,
        "component": 1.0,
        "log": LOG,
    },
    "question": {
        "dense": DENSE,
        "static": STATIC,
        "bm25": 1.0,
        "ident": 0.25,
        "path": 0.25,
        "component": 1.0,
        "log": LOG,
    },
    # A how-to asks for what code does in words the code rarely uses ("merge two dicts"), so
    # BM25's matches are weak evidence and its votes bury the transformer's. Measured on
    # CoSQA's 313 web-search questions over 552 functions (bench/weights_bench.py): BM25 at 1.0
    # 0.868 / 0.832 nDCG@10 / MRR@10, 0.6 0.883 / 0.850, 0.5 0.885 / 0.854, 0.4 0.888 / 0.857,
    # dense alone 0.882 / 0.849; no other set moved by more than 0.004 (bench/README.md). 0.5
    # was parity on one machine only: with the vectors embedded on another CPU it measured
    # 0.880 / 0.847 against dense alone's 0.883 / 0.851, and 0.4 0.887 / 0.856 (0.3 0.889 /
    # 0.858), no other set moving ("sixteenth session").
    "howto": {"dense": 1.0, "static": STATIC, "bm25": 0.4, "ident": 0.25, "path": 0.25},
    "issue": {
        "dense": 1.0,
        "static": STATIC,
        "bm25": 1.5,
        "ident": 0.5,
        "path": 0.25,
        "evidence": 1.0,
    },
}

_PATHLIKE = re.compile(r"^[\w.\-]*(/[\w.\-]*)+$|^[\w\-]+\.[A-Za-z0-9]{1,5}$")
_IDENTIFIER = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*(?:\(\))?$")
_CODE_NAME = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]|_|\.|::|#|\(\)")
_FILE_EXTENSION = re.compile(
    r"\.(py|pyi|js|jsx|ts|tsx|go|rs|java|c|h|cc|cpp|hpp|rb|md|rst|txt|json|ya?ml|toml|cfg|ini"
    r"|html|css|sh|sql)$"
)


# Languages a how-to names to say what its answer is written in. Not the shells (in a shell
# project "bash" and "zsh" are what the code is about: "fix bash completion of ..."), nor words
# that are also plain English or single letters (go, c, r).
LANGUAGE_NAMES = frozenset(
    """python java javascript typescript golang rust ruby php kotlin scala swift csharp
    c# c++ cpp haskell elixir erlang lua perl julia dart ocaml clojure""".split()
)
# A language with its version is a compatibility note ("Python <= 3.8", "Swift 5.7"), and a
# query that opens with a component ("python: fix ...", "Console: Fix PHP Doc") is a commit
# subject: neither is a how-to.
_VERSION = re.compile(r"\s*(?:[<>=~^]+\s*)?v?\d")
_WORD = re.compile(r"\S+")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")
COMPONENT = re.compile(r"^([\w./,\- ]{1,30}):\s")  # "router: ...", "Bash completion: ..."
_STRIP = ".,;:!?()[]'\"`"


# Verbs that open a change description ("Fix crash when ...", "Don't reset ..."): the most
# frequent first words of the development commit sets, less those a how-to question opens
# with too (check, get, set, show, return, do: "check if a file exists python").
CHANGE_VERBS = frozenset(
    """fix fixes fixed fixing add adds added adding allow allows don't dont use uses remove removes
    removed avoid support supports handle handles improve improves make implement implemented
    update updated skip accept prevent enable disable include ignore change ensure preserve keep
    respect introduce backport revert rename refactor replace deprecate drop bump correct clean
    cleanup simplify move expose emit warn hide""".split()
)


def describes_change(query: str) -> bool:
    """Does the query read as a change to make (a commit subject): a change verb first, or a
    component prefix (`router: ...`)?"""
    words = query.split()
    return bool(words) and (
        words[0].lower().strip(",.:") in CHANGE_VERBS or bool(COMPONENT.match(query))
    )


@dataclass(frozen=True)
class Route:
    shape: str
    weights: dict[str, float]


def shape_of(query: str) -> str:
    q = query.strip()
    if is_issue(q):
        return "issue"
    words = q.split()
    if len(words) == 1:
        if _PATHLIKE.match(q) and (_FILE_EXTENSION.search(q) or "/" in q):
            return "path"
        if _IDENTIFIER.match(q) and (_CODE_NAME.search(q) or q.isidentifier()):
            # A lone plain word (`cookies`) is a keyword; a code-shaped one is an identifier.
            return "identifier" if _CODE_NAME.search(q) else "keywords"
        if _PATHLIKE.match(q):
            return "path"
    # A how-to is one line, as typed into a search box; a short report that mentions "C++"
    # and "python" in its prose is a question.
    if len(words) > 1 and "\n" not in q and names_language(q):
        return "howto"
    if len(words) <= 3:
        return "keywords"
    return "question"


def names_language(query: str) -> bool:
    """Does the query name a programming language as a how-to does? Not in a version, a quoted
    span (a command: 'php app/console') or a commit subject that opens with its component.
    (shape_of asks it only of queries of two words or more.)"""
    if COMPONENT.match(query):
        return False
    text = _QUOTED.sub(" ", query)
    return any(
        word.group().lower().strip(_STRIP) in LANGUAGE_NAMES
        and not _VERSION.match(text, word.end())
        for word in _WORD.finditer(text)
    )


def reading(first: Route) -> Route:
    """The route of a refined second pass: dense at its READING weight for the query's shape
    (a channel the query turned off stays off)."""
    if not first.weights.get("dense") or first.shape not in READING:
        return first
    return Route(first.shape, {**first.weights, "dense": READING[first.shape]})


def route(query: str, channels: list[str] | None = None) -> Route:
    """Weights for this query; `channels` keeps only the named ones (the others weigh 0)."""
    shape = shape_of(query)
    weights = dict(WEIGHTS[shape])
    if channels is not None:
        weights = {name: (w if name in channels else 0.0) for name, w in weights.items()}
    return Route(shape, weights)
