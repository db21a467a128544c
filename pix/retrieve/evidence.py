"""Issue-shaped queries: a title, prose, code and tracebacks, as an agent hands them over.

Such a query carries hard evidence beside its prose: stack frames (pix/retrieve/frames.py),
file paths, dotted module names, identifiers in backticks or code blocks. A path that names a
file of the snapshot is the strongest hint there is, so resolved files form a channel of their
own (`evidence`), fused by the same reciprocal-rank rule after the SQL channels. Identifiers
that are definitions in the index feed the identifier channel; the prose feeds BM25 only
through its most selective terms (a few hundred OR-ed terms reward any long chunk that holds
many common words); the embedding reads the text in windows (pix/retrieve/windows.py).

Every rule here is general (syntax of tracebacks, paths and code, document frequencies of the
index), none depends on one repository.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache

import apsw

from pix.ingest.commit_log import CITATION
from pix.ingest.terms import STOPWORDS, query_terms, split_identifier
from pix.retrieve import exports, links
from pix.retrieve.commit_log import Cited
from pix.retrieve.frames import Frame, frames, has_frames, without_frames
from pix.retrieve.members import qualified
from pix.retrieve.priors import path_role

# A query is issue-shaped when it is long or has the layout of a report (several lines, with
# code or a traceback); a short question stays a question.
ISSUE_MIN_CHARS = 400
ISSUE_MIN_LINES = 4

BM25_TERMS = 12  # the most selective prose terms BM25 searches for (bench/issue_bench.py)
TITLE_TERMS = 8  # the title's terms go first: it names the problem
COMMON_SHARE = 0.05  # terms in more than this share of chunks carry next to nothing
COMMON_MIN_DOCS = 50  # (in a small index every term is in a large share of few chunks)

# What a mention is worth as file evidence, before being shared among the files it may name.
FRAME_WEIGHT = 3.0
DEEPEST_FRAME_BONUS = 1.0  # the innermost in-repository frame is where the error surfaced
PATH_WEIGHT = 2.0
# A link to a file of the repository on its code host (pix/retrieve/links.py) points at the
# code as a path does. Not tuned.
LINK_WEIGHT = PATH_WEIGHT
MODULE_WEIGHT = 1.5
REPEAT_WEIGHT = 0.25  # each further mention of the same file
# A past commit whose message cites an issue or pull request the report cites (`a followup to
# #7964`, `since #5692`): the code files it changed, the weight shared among all it changed (the
# channel fuses by rank, so the share orders the commit's files below a frame's or a path's).
# As much as a dotted module name: a cited commit says where related work went, less surely
# than a traceback says where the error is. Not tuned: 20 of issueloc's 116 reports cite a
# number, 3 of them reach a gold file.
CITED_WEIGHT = 1.5
CITED_NUMBERS = 8  # the first numbers a report cites that are looked up (in one statement)
MAX_CANDIDATES = 3  # a bare name matching more files than this names none of them

_EXT = (
    r"(?:py|pyi|pyx|pxd|c|h|cc|cpp|hpp|js|jsx|ts|tsx|go|rs|java|kt|rb|php|cs|swift|sh|lua"
    r"|cfg|ini|toml|ya?ml|json|rst|md|txt|html|css|j2|jinja2?)"
)
_PATH = re.compile(
    r"(?<![\w.])((?:[A-Za-z]:)?(?:[\w.\-]+[/\\])*[\w\-]+\." + _EXT + r")(?![\w/\\])"
    r"|(?<![\w.])((?:[\w\-]+/){1,}[\w\-]+)(?=[/\s:,)'\"`]|$)"
)
_DOTTED = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?![\w(]*\.\w)")
_BACKTICK = re.compile(r"`([^`\n]{2,120})`")
_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.S)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CODE_USE = re.compile(
    r"\b([A-Za-z_]\w*)\s*\(|\.([A-Za-z_]\w*)|\b(?:import|from|def|class)\s+([A-Za-z_]\w*)"
)
_CODE_SHAPED = re.compile(r"_|[a-z][A-Z]|[A-Z]{2}[a-z]")


_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
# A screenshot pasted into a report: an HTML <img> tag or a markdown image, with its alt text
# ("スクリーンショット 2020-05-30") and attachment URL. Its words (img, width, alt, src, png,
# githubusercontent) are HTML's, and BM25 matched them to the files that write <img> tags:
# 13 of issueloc's 41 sphinx reports carry one, and for "The default value for positional
# only argument has vanished" graphviz.py and a theme's layout.html came first.
_IMAGE = re.compile(r"<img\b[^>]*>|!\[[^\]\n]*\]\([^)\s]*\)", re.I)
# A link's words (github, com, blob, blank_template, a host's name) are rare in code, so they
# won BM25 term slots of a third of issueloc's reports while naming nothing of the repository;
# only the file a link points at (a blob URL's `nanops.py`) is kept for the term selection.
_URL = re.compile(r"\bhttps?://[^\s)>\]]+", re.I)
_URL_FILE = re.compile(r"/([\w.-]+\.[A-Za-z]{1,5})(?:[#?][^/]*)?$")


def _url_file(m: re.Match) -> str:
    """What a link says of the repository: the file it points at, if any (a blob URL)."""
    f = _URL_FILE.search(m.group(0))
    return f" {f.group(1)} " if f and not f.group(1).endswith((".html", ".htm", ".php")) else " "


# A heading: a markdown one, or a line that is only a bold phrase (`**Environment:**`). Read
# line by line (a regular expression over the whole text backtracks quadratically on long
# lines of spaces), never inside a code fence (`# pip freeze` there is a shell comment).
_MARKDOWN_HEADING = re.compile(r"#{1,6}[ \t]+(.*)")
_BOLD_HEADING = re.compile(r"\*\*([^*]+)\*\*:?")
# A collapsed block's title (`<details><summary>Output of <tt>xr.show_versions()</tt></summary>`)
# heads what it hides as a heading does: xarray's template puts its version dump in one, under
# a "Versions" heading that is not about the environment by itself.
_SUMMARY = re.compile(r"(?:<details>\s*)?<summary>(.*)</summary>", re.I)
_TAG = re.compile(r"<[^>]*>")
HEADING_CHARS = 120
# Sections that describe the reporter's machine (issue templates ask for them): operating
# system, installed packages, the output of a show_versions. Their words are the names every
# version report prints (requests' "System Information" is the output of requests/help.py,
# which then ranked first for two of requests' seven issues). Headings that say only
# "version" stay: pylint's "Pylint version" sections cost 0.06 MRR@10 there when dropped. A
# heading names such a section only when it is short (three words at most, a parenthesis
# aside): "Reproducing in a clean environment" is about the bug.
_DUMP = re.compile(r"show_versions|installed (?:packages|versions)|pip (?:freeze|list)", re.I)
_ENVIRONMENT = re.compile(
    rf"\b(environment|system (?:info|information|details)|{_DUMP.pattern})\b", re.I
)
_PARENTHESIS = re.compile(r"\([^)]*\)")


def _heading(line: str) -> str | None:
    """The text of a heading line, or None."""
    line = line.strip()
    if len(line) > HEADING_CHARS:
        return None
    m = _MARKDOWN_HEADING.fullmatch(line) or _BOLD_HEADING.fullmatch(line)
    if m:
        return m.group(1).strip(" \t#:")
    m = _SUMMARY.fullmatch(line)
    return _TAG.sub("", m.group(1)).strip(" \t:") if m else None


def _about_environment(heading: str) -> bool:
    words = [w for w in _PARENTHESIS.sub(" ", heading).split() if any(c.isalnum() for c in w)]
    return len(words) <= 3 and bool(_ENVIRONMENT.search(heading))


def clean(query: str) -> str:
    """The issue as it reads on the page and as it speaks about the code: HTML comments (issue
    templates' instructions, hidden when rendered) are no part of what the reporter wrote, nor
    are screenshots' tags, and a section about the reporter's environment (from its heading to
    the next heading that is not about it) names no file of the repository. The first line
    (the title) stays."""
    # An issue is read four times a query (evidence, BM25 terms, both embeddings).
    return _clean(query, "environment" in STEPS, "images" in STEPS)


@lru_cache(maxsize=16)
def _clean(query: str, environment: bool, images: bool) -> str:
    query = _COMMENT.sub(" ", query)
    if images:
        query = _IMAGE.sub(" ", query)
    if not environment:
        return query
    kept, dropping, fenced, first = [], False, False, True
    for line in query.splitlines(keepends=True):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        heading = None if fenced or first else _heading(line)
        if heading is not None:
            # Within such a section a heading that names a version dump continues it ("# Paste
            # the output of xr.show_versions() here"); to start one, a heading must be short.
            within = dropping and bool(_DUMP.search(heading))
            dropping = within or _about_environment(heading)
        if not dropping:
            kept.append(line)
        first = first and not line.strip()
    return "".join(kept)


def is_issue(query: str) -> bool:
    q = query.strip()
    if "shape" not in STEPS:
        return False
    if len(q) >= ISSUE_MIN_CHARS:
        return True
    lines = [line for line in q.splitlines() if line.strip()]
    return len(lines) >= ISSUE_MIN_LINES and ("`" in q or has_frames(q))


@dataclass
class Evidence:
    """What an issue names outright, in order of first mention."""

    title: str
    frames: list[Frame] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)
    # Names the report's code binds to modules (`import xarray as xr`: xr -> xarray).
    bound: dict[str, str] = field(default_factory=dict)
    # Issue and pull-request numbers the report cites (`#7964`), at most CITED_NUMBERS.
    cited: list[str] = field(default_factory=list)
    # What links to files on a code host hold after their host and repository: a ref, then
    # the path (`df052e7/xarray/coding/variables.py`; links.linked_file finds where it starts).
    linked: list[str] = field(default_factory=list)

    @property
    def expanded(self) -> list[str]:
        """The dotted names as the report's code binds them (`xr.where` -> `xarray.where`)."""
        return [exports.expand(name, self.bound) for name in self.modules]


def _add(items: list[str], item: str) -> None:
    if item and item not in items:
        items.append(item)


def extract(query: str) -> Evidence:
    """Frames, paths, dotted names and code identifiers of an issue text."""
    query = clean(query)
    ev = Evidence(title_of(query), frames(query), bound=exports.aliases(query))
    for frame in ev.frames:
        if frame.function and frame.function.isidentifier():
            _add(ev.identifiers, frame.function)
    frame_paths = {f.path for f in ev.frames}
    text = without_frames(query)
    for m in _PATH.finditer(text):
        path = (m.group(1) or m.group(2)).replace("\\", "/")
        if "://" in text[max(0, m.start() - 12) : m.start() + 3] or path in frame_paths:
            continue  # URLs name web pages, not files of the repository
        _add(ev.paths, path)
    for link in links.links_in(text):
        _add(ev.linked, link)
    # Outside code blocks: there `#` opens a comment or a colour (`color: #333`), not a link.
    for number in CITATION.findall(_FENCE.sub(" ", text)):
        if len(ev.cited) < CITED_NUMBERS:
            _add(ev.cited, number)
    spans = [m.group(1) for m in _BACKTICK.finditer(query)]
    fences = [m.group(1) for m in _FENCE.finditer(query)]
    for m in _DOTTED.finditer(text):
        name = m.group(1)
        start = m.start()
        if "://" in text[max(0, start - 12) : start] or "/" in text[max(0, start - 1) : start]:
            continue
        _add(ev.modules, name)
    # A short span in backticks names code; a fence may hold prose or output as well, so only
    # the words it uses as code count (called, an attribute, imported, defined, assigned).
    for span in spans:
        if len(span.split()) <= 3:
            for word in _IDENT.findall(span):
                if len(word) > 2 and word.lower() not in STOPWORDS:
                    _add(ev.identifiers, word)
    for fence in fences:
        for m in _CODE_USE.finditer(fence):
            word = m.group(1) or m.group(2) or m.group(3)
            if len(word) > 2 and word.lower() not in STOPWORDS:
                _add(ev.identifiers, word)
    for name in ev.modules:
        for word in name.split("."):
            if len(word) > 2:
                _add(ev.identifiers, word)
    for word in _IDENT.findall(text):
        if _CODE_SHAPED.search(word.strip("_")) and len(word) > 3:
            _add(ev.identifiers, word)
    return ev


# --- files: what the evidence names in the snapshot -------------------------------------------


def _suffix_index(paths: list[str]) -> dict[str, list[str]]:
    """Every path under each of its suffixes (`a/b/c.py` under `c.py`, `b/c.py`, `a/b/c.py`)."""
    index: dict[str, list[str]] = {}
    for path in paths:
        parts = path.split("/")
        for i in range(len(parts)):
            index.setdefault("/".join(parts[i:]), []).append(path)
    return index


def _resolve(mention: str, index: dict[str, list[str]], whole: bool = False) -> list[str]:
    """The files a mentioned path names: the longest suffix of the mention that is a suffix
    of some snapshot path (`/usr/lib/python3/site-packages/pkg/mod.py` -> `pkg/mod.py`,
    `mod.py` -> `src/pkg/mod.py`). A one-component match of a deep mention is too weak
    (`/home/me/test.py` names no `test.py` of the repository). `whole`: only the mention
    as a whole (a dotted name is a module path only if every component matches)."""
    parts = [p for p in mention.split("/") if p not in ("", ".")]
    for i in range(1 if whole else len(parts)):
        suffix = "/".join(parts[i:])
        found = index.get(suffix)
        if found:
            if len(parts) - i == 1 and len(parts) > 2:
                return []
            return found
    return []


def _module_paths(name: str) -> list[str]:
    """Paths a dotted name may live in, longest prefix first (`pkg.mod.Class.method` ->
    `pkg/mod/Class/method.py`, ..., `pkg/mod.py`, `pkg/mod/__init__.py`)."""
    parts = name.split(".")
    out = []
    for n in range(len(parts), 1, -1):
        stem = "/".join(parts[:n])
        out += [stem + ".py", stem + "/__init__.py"]
    return out


def framed_files(in_frames: list[Frame], paths: list[str]) -> set[str]:
    """The files of `paths` that one of the traceback frames is in, resolved as the evidence
    channel resolves them (an installed `site-packages/shop/pricing.py` is
    `src/shop/pricing.py`; a deep frame's file name alone names nothing)."""
    index = _suffix_index(paths)
    found = (_resolve(frame.path, index) for frame in in_frames)
    return {path for named in found if len(named) <= MAX_CANDIDATES for path in named}


def evidence_files(
    ev: Evidence,
    paths: list[str],
    python: exports.Files | None = None,
    cited: dict[str, list[Cited]] | None = None,
    members: dict[str, list[tuple[str, int]]] | None = None,
) -> list[tuple[str, float, int | None]]:
    """Files of `paths` the evidence names: (path, score, a line it names or None), best
    first, ties by path. `python`: the whole snapshot's files, for the re-exports of packages
    (without it a dotted name names only the module file it spells). `cited`: the code files
    of `paths` that past commits citing a number the report cites changed, with those commits
    (`cited_files`). `members`: the files defining each `Class.member` the report names, with
    a line (pix/retrieve/members.py)."""
    index = _suffix_index(paths)
    held = set(paths)
    mentions: dict[str, list[float]] = {}
    line: dict[str, int] = {}

    def credit(found: list[str], weight: float) -> bool:
        if not found or len(found) > MAX_CANDIDATES:
            return False
        for path in found:
            mentions.setdefault(path, []).append(weight / len(found))
        return True

    in_repo = [(f, _resolve(f.path, index)) for f in ev.frames]
    in_repo = [(f, found) for f, found in in_repo if found and len(found) <= MAX_CANDIDATES]
    for n, (frame, found) in enumerate(in_repo):
        bonus = DEEPEST_FRAME_BONUS if n == len(in_repo) - 1 else 0.0
        credit(found, FRAME_WEIGHT + bonus)
        for path in found:
            line[path] = frame.line  # the innermost frame in the file
    for mention in ev.paths:
        credit(_resolve(mention, index), PATH_WEIGHT)
    # A file linked twice (at two commits, or from a title repeated in the body) is one mention.
    linked = (links.linked_file(link, held) for link in ev.linked) if "links" in STEPS else ()
    for found in dict.fromkeys(f for f in linked if f):
        credit([found], LINK_WEIGHT)
    for name in ev.expanded:
        # A package's function is where it is defined (`xarray.where`: core/computation.py,
        # which a path filter may hold without xarray/__init__.py); a module's own file else.
        defined = exports.exported(name, python) if python and "exports" in STEPS else None
        if defined is not None:
            if defined[0] in held:
                credit([defined[0]], MODULE_WEIGHT)
                if defined[1]:
                    line.setdefault(defined[0], defined[1])
            continue
        # `Card.fromstring` is a method of a class before it is a module path.
        defining = (members or {}).get(qualified(name) or "", [])
        defining = [(path, first) for path, first in defining if path in held]
        if credit([path for path, _ in defining], MODULE_WEIGHT):
            for path, first in defining:
                line.setdefault(path, first)
            continue
        for candidate in _module_paths(name):
            if credit(_resolve(candidate, index, whole=True), MODULE_WEIGHT):
                break
    # A commit names the code it changed (pix keeps citing commits of up to 20 files), one
    # mention a file however many cited commits changed it.
    for path, commits in (cited or {}).items():
        mentions.setdefault(path, []).append(max(CITED_WEIGHT / c.total for c in commits))
    # A file's strongest mention counts, each further one a little: an import of a module the
    # traceback passes through must not outweigh the frame where the error surfaced.
    score = {p: max(w) + REPEAT_WEIGHT * (len(w) - 1) for p, w in mentions.items()}
    ranked = sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))
    return [(path, s, line.get(path)) for path, s in ranked]


def cited_files(cited: Iterable[Cited]) -> dict[str, list[Cited]]:
    """The code files the cited commits changed (their `paths`: those the snapshot holds,
    within the request's path filter), each with those commits (in their order): never the
    changelog or the build files that nearly every fix touches (sphinx's CHANGES: 128 of the
    147 commits citing a number)."""
    out: dict[str, list[Cited]] = {}
    for commit in cited:
        for path in commit.paths:
            if path_role(path) not in ("docs", "config"):
                out.setdefault(path, []).append(commit)
    return out


# --- terms: what BM25 and the identifier channel search for -----------------------------------

_VOCAB = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.pix_chunk_vocab USING fts5vocab(main, chunk_fts, row)"
)
TERM_DOCS = "SELECT term, doc FROM temp.pix_chunk_vocab WHERE term = ?"
CHUNK_TOTAL = "SELECT max(id) FROM chunk"  # a cheap size of the index (chunk ids only grow)
DEFINED = """
SELECT DISTINCT term FROM symbol
WHERE whole = 1 AND declared = 0 AND term IN (SELECT value FROM json_each(:terms))
"""


class TermStats:
    """Document frequencies of FTS terms (porter stems) for one connection, memoised: reading a
    common term's posting list costs about a millisecond, and an issue has a hundred terms.
    The memo is dropped when the index grows, so answers never depend on what was asked
    before."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn
        self.tokenize = conn.fts5_tokenizer("porter", ["unicode61", "tokenchars", "_"])
        conn.execute(_VOCAB)
        self.size = 0
        self.docs: dict[str, int] = {}

    def stem(self, term: str) -> str | None:
        tokens = self.tokenize(term.encode(), apsw.FTS5_TOKENIZE_QUERY, None)
        return tokens[0][2] if len(tokens) == 1 else None

    def refresh(self) -> int:
        size = self.conn.execute(CHUNK_TOTAL).fetchone()[0] or 0
        if size != self.size:
            self.size, self.docs = size, {}
        return size

    def doc_count(self, stem: str) -> int:
        if stem not in self.docs:
            row = self.conn.execute(TERM_DOCS, (stem,)).fetchone()
            self.docs[stem] = row[1] if row else 0
        return self.docs[stem]


_STATS: dict[int, TermStats] = {}


def term_stats(conn: apsw.Connection) -> TermStats:
    stats = _STATS.get(id(conn))
    if stats is None or stats.conn is not conn:
        stats = _STATS[id(conn)] = TermStats(conn)
    return stats


def select_terms(
    conn: apsw.Connection, query: str, title: str, limit: int | None = None
) -> list[str]:
    """The query terms BM25 searches for: the title's first, then the rest by selectivity
    (idf, times 1 + log of how often the issue repeats the word), terms absent from the
    index or in more than COMMON_SHARE of its chunks dropped. Ties keep query order."""
    limit = limit or BM25_TERMS
    stats = term_stats(conn)
    total = max(stats.refresh(), 1)
    query = clean(query)
    if "urls" in STEPS:
        query = _URL.sub(_url_file, query)
    terms = query_terms(query)
    counts = Counter(t.lower() for t in re.findall(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+", query))
    title_terms = set(query_terms(title))
    scored = []
    for pos, term in enumerate(terms):
        stem = stats.stem(term)
        docs = stats.doc_count(stem) if stem else 0
        common = docs > max(COMMON_SHARE * total, COMMON_MIN_DOCS)
        if not docs or common or len(term) < 2 or term.isdigit():
            continue
        idf = math.log(total / docs)
        weight = idf * (1.0 + math.log(max(counts.get(term, 1), 1)))
        scored.append((term in title_terms, weight, -pos, term))
    titled = sorted((s for s in scored if s[0]), key=lambda s: (-s[1], -s[2]))[:TITLE_TERMS]
    chosen = [s[3] for s in titled]
    for s in sorted(scored, key=lambda s: (-s[1], -s[2])):
        if len(chosen) >= limit:
            break
        if s[3] not in chosen:
            chosen.append(s[3])
    order = {t: i for i, t in enumerate(terms)}
    return sorted(chosen, key=order.__getitem__)


def path_words(ev: Evidence) -> list[str]:
    """File names (without extension) the issue's frames and paths mention: what the path
    channel matches beside the selected terms."""
    out: list[str] = []
    for path in [f.path for f in ev.frames] + ev.paths:
        stem = path.rsplit("/", 1)[-1].split(".", 1)[0].lower()
        if len(stem) > 2 and stem not in out:
            out.append(stem)
    return out


def ident_terms(conn: apsw.Connection, ev: Evidence) -> tuple[list[str], list[str]]:
    """(terms, code_terms) for the identifier channel: the evidence's identifiers that name a
    definition of the index, and the parts of its compound ones."""
    names = [w.lower() for w in ev.identifiers]
    defined = {row[0] for row in conn.execute(DEFINED, {"terms": json.dumps(sorted(set(names)))})}
    terms = [n for n in dict.fromkeys(names) if n in defined]
    parts: list[str] = []
    for word in ev.identifiers:
        if word.lower() in defined:
            for part in [word.lower(), *split_identifier(word)]:
                if part not in parts and part not in STOPWORDS:
                    parts.append(part)
    return terms, parts


# A report asks for a fix, and fixes land in code: prose and configuration files echo an issue's
# words (a changelog, tox.ini, CI files) far more often than they are what it is about.
NONCODE = frozenset(
    {"rst", "text", "markdown", "yaml", "ini", "cfg", "toml", "json", "make", "batch", "xml"}
)
NONCODE_FACTOR = 0.5


def demote_noncode(hits: list) -> list:
    """Hits in prose and configuration languages multiplied by NONCODE_FACTOR, re-ordered."""
    out = [replace(h, score=h.score * NONCODE_FACTOR) if h.language in NONCODE else h for h in hits]
    out.sort(key=lambda h: (-h.score, h.path, h.start_line, h.chunk_id))
    return out


# The steps an issue-shaped query takes; bench/issue_bench.py removes one at a time to measure
# what each is worth. Nothing else changes this.
STEPS = frozenset(
    {
        "shape",
        "terms",
        "ident",
        "files",
        "kinds",
        "windows",
        "title",
        "environment",
        "images",
        "urls",
        "exports",
        "cited",
        "links",
        "members",
    }
)


def title_of(text: str) -> str:
    """An issue's title: its first line that is not blank (a report starts with it)."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")
