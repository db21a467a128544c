"""Exact strings: a phrase of the query that occurs word for word in the repository puts the
chunks holding it first.

Phrases (`phrases_of`): the whole query, and each quoted span of it ("...", '...', `...`, “...”;
a single quote right after a letter is an apostrophe), when it is one line of MIN_CHARS to
MAX_CHARS characters, of MIN_WORDS words or more and as many word tokens. A pasted error
message, log line or constant is often all the query there is; a one-word span (`choose()`,
`--group`, `NO_COLOR`) is a name, which the identifier and BM25 channels already weigh, and
which tests and docs repeat.

Occurs exactly: case-sensitive, within one line, on word boundaries (a phrase that starts or
ends with a letter, digit or `_` must not be the middle of a longer word there). An FTS5 phrase
query on `chunk_fts` narrows (the phrase's tokens in a row: stemmed and case-folded, a superset),
and each candidate chunk is verified on its stored text. The stored text
has its secrets masked (pix.ingest.mask), so the phrase is masked the same way first: a pasted
line holding a secret finds the line showing `[REDACTED:kind]`, and no part of a secret can
ever match, so what matches cannot spell one out.

A lone word (`lone_word`: the query is one token, such as `setbusytimeout`) is a phrase too
when nothing else answers it (`_answered_otherwise`: no file or folder of that name, no
definition or declaration of it, not a common word): the name is only used here (called,
imported, configured), and the files that hold it, literally, are what was asked for. The
meaning channels' weak nearest chunks stood out above them. A defined name is the definition
step's (its callers hold it as often as its definition does), a module's name the path
channel's (the files importing it hold it, the module seldom does).

Which holders count: files of every role but docs. Documentation quotes commit subjects, option
names and messages verbatim (a changelog lists every change by its subject), so an occurrence
there says little about where the thing lives: on the commit-subject sets, lifting changelogs
cost up to 0.15 MRR per set (bench/phrase_bench.py --sweep). Docs are not even read (their
changelogs are the largest files to verify). A phrase held by more than MAX_FILES files narrows
nothing and is left out ("common").

Every chunk holding a phrase joins the fused list through the `phrase` channel: rank 1, score =
the number of the query's phrases it holds, and a weight that lifts any such chunk above every
chunk without one, whatever the path priors and the ranking stage: 1 + the most any chunk or
file can score (pix.retrieve.rank.ceiling) / the smallest prior factor. Among themselves,
phrase chunks keep the order their other evidence and priors give them.

A whole issue report does not take the step (`enabled`) but a milder one (`rank_quoted`): its
quoted spans of ISSUE_MIN_WORDS words or more give the chunks holding one a single vote in the
same channel, a rank 1 at ISSUE_WEIGHT.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from pix.ingest.mask import PLACEHOLDER, mask
from pix.ingest.redact import may_hold_secret
from pix.retrieve import define, evidence, lift, tested
from pix.retrieve.hits import Hit
from pix.retrieve.route import Route
from pix.store import define_sql, phrase_sql, texts
from pix.store.db import Store
from pix.store.fts import fts_string

CHANNEL = lift.PHRASE
MIN_CHARS = 12
MIN_WORDS = 2
MAX_CHARS = 200
LONE_WORD_CHARS = 4  # a lone word shorter than this is too common to say where to look
_QUALIFIER = re.compile(r"\.|::|#|:|->")
_LONE_WORD = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|#|:|->)[A-Za-z_$][\w$]*)*")
MAX_PHRASES = 8  # quoted spans of a long query: the longest are the most specific
MAX_FILES = 5
MAX_CANDIDATES = 500  # chunk rows matching the FTS5 phrase: more, and it is common anyway
UNLIFTED_ROLES = frozenset({"docs"})
CASE_SENSITIVE = True  # bench/phrase_bench.py --sweep measures the other choices too

_TOKEN = re.compile(r"\w+")
_QUOTED = re.compile(
    r'"([^"\n]+)"'
    r"|(?<![\w'])'([^'\n]+)'(?![\w'])"
    r"|`([^`\n]+)`"
    r"|“([^”\n]+)”"
)


@dataclass(frozen=True)
class Phrase:
    text: str  # as matched: the query's text with its secrets masked
    source: str  # 'query' (the whole query) | 'quoted'


@dataclass
class PhraseReport:
    """What one phrase found: for the query-level explanation."""

    phrase: Phrase
    status: str = "absent"  # 'matched' | 'absent' | 'common'
    files: int | None = 0  # holders that count (not docs); None: too many candidates to count

    def describe(self) -> dict:
        return {
            "text": self.phrase.text,
            "source": self.phrase.source,
            "status": self.status,
            "files": self.files,
        }


@dataclass
class Evidence(lift.Location):
    """The phrases one chunk (at one path) holds, and the chunk itself."""

    phrases: set[int] = field(default_factory=set)
    line: int = 0  # the first line holding one of them


def enabled(channels: list[str] | None, shape: str) -> bool:
    """Asked for by name, or by default except for a whole issue report: its quoted spans are
    what the reporter ran and saw, rarely where the fix goes (on the 116 issueloc reports the
    step cost 0.019 MRR@10 and 0.025 Acc@3; the issue route weighs its evidence itself)."""
    if channels is not None:
        return CHANNEL in channels
    return shape != "issue"


def _stored_form(text: str) -> str | None:
    """The text as the index would store it: secrets masked (code rules: no language); None
    when little else is left (a pasted secret alone would match every masked secret)."""
    if not may_hold_secret(text):
        return text
    masked = mask(text, None).text
    rest = PLACEHOLDER.sub("", masked)
    return masked if len(rest.strip()) >= MIN_CHARS else None


def qualifies(text: str) -> bool:
    return (
        "\n" not in text
        and MIN_CHARS <= len(text) <= MAX_CHARS
        and len(text.split()) >= MIN_WORDS
        and len(_TOKEN.findall(text)) >= MIN_WORDS  # what the FTS5 phrase query narrows by
    )


def phrases_of(query: str, lone_word: bool = False) -> list[Phrase]:
    """The query's phrases: the whole query if it qualifies, then its quoted spans that do,
    longest first (at most MAX_PHRASES in all), each once. `lone_word`: a query of one name
    or word, nothing defining it found, is its own phrase."""
    text = query.strip()
    word = lone_word_of(text) if lone_word else None
    if word is not None:
        return [] if may_hold_secret(word) else [Phrase(word, "query")]
    return _phrases([(text, "query")] + [(span, "quoted") for span in _quoted_spans(query)])


def _quoted_spans(query: str) -> list[str]:
    """The query's quoted spans, longest first (ties in query order)."""
    spans = []
    for m in _QUOTED.finditer(query):
        span = next(g for g in m.groups() if g is not None).strip()
        spans.append((-len(span), m.start(), span))
    return [span for _, _, span in sorted(spans)]


def _phrases(candidates: list[tuple[str, str]]) -> list[Phrase]:
    """The (text, source) candidates that qualify, in their order, each once, at most
    MAX_PHRASES."""
    found: dict[str, Phrase] = {}
    for text, source in candidates:
        stored = _stored_form(text) if qualifies(text) else None
        if stored is not None:
            found.setdefault(stored, Phrase(stored, source))
    return list(found.values())[:MAX_PHRASES]


# An issue report's quoted messages: the step above is off for reports, whose quoted spans are
# mostly what the reporter ran and saw, yet a message quoted whole (`"Please enter a valid path
# name"`) is often printed by the very file the fix goes in. Spans of ISSUE_MIN_WORDS words or
# more (a shorter one is mostly a name or a value, which BM25 and the identifier channel weigh)
# found word for word in a file that is not docs add a rank 1 at ISSUE_WEIGHT to the chunks
# holding them, as a name inside a question adds its definition (pix.retrieve.define
# EMBEDDED): one more vote, never above everything. Like that vote it counts as a step's
# (pix.retrieve.lift.lifted): a test holding the quoted line lends nothing to the file it tests,
# and `pix pack` never cuts the chunk as low-scoring (counted or not, the 116 reports' figures
# are the same static-only). On the 116 issueloc reports with every chunk embedded Acc@1 0.534
# -> 0.552, MRR@10 0.776 -> 0.785; static-only 0.560 -> 0.569, 0.769 -> 0.773; no report lower
# (bench/README.md, "forty-second session"); weights 0.5 and 2.0 moved the same reports.
ISSUE_MIN_WORDS = 3
ISSUE_WEIGHT = 1.0


def quoted_enabled(channels: list[str] | None, shape: str) -> bool:
    """By default for a whole issue report (the step above, asked for by name, replaces it)."""
    return channels is None and shape == "issue"


def quoted_weight(channels: list[str] | None, shape: str, query: str) -> float:
    """The most the vote can add to a chunk (ISSUE_WEIGHT's rank 1) when the report quotes a
    message that may count, else 0: what a workspace's shard ceilings allow for
    (pix.shard_probe.ceiling)."""
    if not (ISSUE_WEIGHT and quoted_enabled(channels, shape)):
        return 0.0
    return ISSUE_WEIGHT if issue_phrases(query) else 0.0


def issue_phrases(query: str) -> list[Phrase]:
    """A report's quoted spans of ISSUE_MIN_WORDS words or more, longest first, read as the
    issue route reads the report (pix.retrieve.evidence.clean: no HTML comments, screenshots
    or environment sections)."""
    spans = _quoted_spans(evidence.clean(query))
    return _phrases([(s, "quoted") for s in spans if len(s.split()) >= ISSUE_MIN_WORDS])


def rank_quoted(
    store: Store,
    snapshot_id: int,
    query: str,
    hits: list[Hit],
    paths: list[str] | None,
    fusion: str,
    priors: bool,
) -> tuple[list[Hit], list[dict], float]:
    """The issue report's quoted messages after fusion: the hits reordered (a chunk holding
    one or more gains one rank 1 at ISSUE_WEIGHT: one vote however many it holds, so that
    a report quoting eight messages of one file cannot outvote every channel), what each
    phrase found, and the channel's weight (0 when no chunk gained the vote)."""
    phrases = issue_phrases(query) if ISSUE_WEIGHT else []  # 0: the step is off
    if not phrases:
        return hits, [], 0.0
    found, reports = find(store, snapshot_id, phrases, paths)
    entries = _entries(found, phrases, ISSUE_WEIGHT, fusion, vote=True)
    ranked = lift.add_channel(hits, CHANNEL, entries, priors)
    return ranked, [r.describe() for r in reports], ISSUE_WEIGHT if entries else 0.0


def _pattern(text: str) -> re.Pattern[str]:
    left = r"(?<!\w)" if re.match(r"\w", text[0]) else ""
    right = r"(?!\w)" if re.match(r"\w", text[-1]) else ""
    return re.compile(left + re.escape(text) + right, 0 if CASE_SENSITIVE else re.IGNORECASE)


def fts_phrase(text: str) -> str:
    """The FTS5 query for a phrase: its tokens in a row, in the chunk text column (FTS5 cuts
    the quoted string with the table's own tokenizer, so the tokens are the index's)."""
    return "text : " + fts_string(text)


def find(
    store: Store, snapshot_id: int, phrases: list[Phrase], paths: list[str] | None
) -> tuple[dict[tuple[str, int], Evidence], list[PhraseReport]]:
    """Where each phrase occurs exactly in the snapshot (within `paths`, if given; never in
    docs): the chunks holding one, keyed by (path, chunk id), and what each phrase found."""
    conn = store.conn
    base = {
        "snapshot": snapshot_id,
        "paths": json.dumps(paths) if paths is not None else None,
        "unlifted": json.dumps(sorted(UNLIFTED_ROLES)),
        "limit": MAX_CANDIDATES + 1,
    }
    reports = [PhraseReport(p) for p in phrases]
    read: dict[int, str] = {}  # blob id -> stored text, read once per call
    evidence: dict[tuple[str, int], Evidence] = {}
    for index, phrase in enumerate(phrases):
        rows = conn.execute(
            phrase_sql.PHRASE_CANDIDATES, {**base, "fts": fts_phrase(phrase.text)}
        ).fetchall()
        if len(rows) > MAX_CANDIDATES:
            reports[index].status, reports[index].files = "common", None
            continue
        pattern = _pattern(phrase.text)
        found: dict[tuple[str, int], tuple[Evidence, int]] = {}
        lines: dict[int, int | None] = {}  # chunk id -> first line holding the phrase
        for path, chunk_id, blob_id, sha, start, end, first, last, kind, symbol, lang in rows:
            if chunk_id not in lines:
                if blob_id not in read:
                    read[blob_id] = texts.text_by_id(conn, blob_id)
                text = read[blob_id]
                m = pattern.search(text, first, last)
                lines[chunk_id] = None if m is None else start + text.count("\n", first, m.start())
            line = lines[chunk_id]
            if line is not None:
                ev = evidence.get((path, chunk_id)) or Evidence(
                    path, chunk_id, sha, start, end, kind, symbol, lang, line=line
                )
                found[(path, chunk_id)] = (ev, line)
        holders = {path for path, _ in found}
        reports[index].files = len(holders)
        if len(holders) > MAX_FILES:
            reports[index].status = "common"
            continue
        if holders:
            reports[index].status = "matched"
        for key, (ev, line) in found.items():
            ev.phrases.add(index)
            ev.line = min(ev.line, line)
            evidence[key] = ev
    return evidence, reports


def phrase_weight(route: Route, priors: bool, weighed: bool = False) -> float:
    """A weight that lifts every phrase chunk above every chunk (and file) without a phrase
    (pix.retrieve.lift.above_all), the definition step's channel included when it ran.
    `weighed`: the history prior weighs this query."""
    return lift.above_all(route.weights, priors, weighed, tested.most_share(priors))


def apply(
    hits: list[Hit],
    evidence: dict[tuple[str, int], Evidence],
    phrases: list[Phrase],
    route: Route,
    fusion: str,
    priors: bool,
    weighed: bool = False,
) -> list[Hit]:
    """The fused list with the phrase channel added: chunks holding a phrase gain its
    contribution (those the other channels missed join the list), and the list is ordered again
    the way the retrieval statement orders it (score, path, line, chunk)."""
    found = _entries(evidence, phrases, phrase_weight(route, priors, weighed), fusion)
    return lift.add_channel(hits, CHANNEL, found, priors)


def _entries(
    evidence: dict[tuple[str, int], Evidence],
    phrases: list[Phrase],
    weight: float,
    fusion: str,
    vote: bool = False,
) -> dict[tuple[str, int], tuple[Evidence, dict]]:
    """Each holding chunk's phrase channel entry: rank 1 at `weight`, scored by how many of
    the phrases it holds, or 1 however many for a `vote`."""
    return {
        key: (
            ev,
            lift.entry(
                weight,
                fusion,
                1 if vote else len(ev.phrases),
                phrases=[phrases[i].text for i in sorted(ev.phrases)],
                line=ev.line,
            ),
        )
        for key, ev in evidence.items()
    }


def rank_phrases(
    store: Store,
    snapshot_id: int,
    query: str,
    route: Route,
    hits: list[Hit],
    paths: list[str] | None,
    fusion: str,
    priors: bool,
    weighed: bool = False,
) -> tuple[list[Hit], list[dict]]:
    """The phrase step after fusion: the hits reordered, and what each phrase found.
    `weighed`: the history prior will weigh the list."""
    phrases, evidence, reports = holding(store, snapshot_id, query, paths)
    if not phrases:
        return hits, []
    ranked = apply(hits, evidence, phrases, route, fusion, priors, weighed)
    return ranked, [r.describe() for r in reports]


def lone_word_of(query: str) -> str | None:
    """The query's one name or word (`setbusytimeout`, `` `Obj.method()` ``: backticks and a
    call's parentheses dropped, as the definition step drops them), or None."""
    text = query.strip().strip("`").removesuffix("()")
    if len(text) < LONE_WORD_CHARS or not _LONE_WORD.fullmatch(text):
        return None
    return text


# A path component or file name holding the term, in the snapshot: the query names a file or
# folder (`euckrprober`, `f2py.auxfuncs`), which the path channel answers.
NAMES_A_PATH = """
SELECT 1 FROM path_term t JOIN path p ON p.id = t.path_id
WHERE t.term IN (SELECT value FROM json_each(:terms))
  AND EXISTS (SELECT 1 FROM snapshot_file f WHERE f.snapshot_id = :snapshot AND f.path = p.path)
LIMIT 1
"""


def _answered_otherwise(store: Store, snapshot_id: int, word: str) -> bool:
    """Whether another step answers the lone word better than its literal holders would:
    - a file or folder it names (the path channel: a module seldom holds its own name, the
      files importing it do);
    - a definition or declaration of its last part, in any file (gitsigns' `throttle_async`,
      assigned as a field, is not the definition step's, and its callers hold the name as
      often as its definition does);
    - a word in more chunks than the phrase step would read (`self`, `import`): common, and
      finding that out reads every candidate first."""
    parts = [p for p in _QUALIFIER.split(word) if p]
    if parts[-1].lower() in define.FILE_PARTS:
        return True  # `auxfuncs.py`: a file name
    terms = json.dumps([p.lower() for p in parts])
    if store.conn.execute(NAMES_A_PATH, {"terms": terms, "snapshot": snapshot_id}).fetchone():
        return True
    params = {
        "snapshot": snapshot_id, "names": json.dumps([parts[-1]]), "declared": 1,
        "paths": None, "unlifted": "[]", "limit": 1,
    }  # fmt: skip
    if store.conn.execute(define_sql.DEFINING_CHUNKS, params).fetchone() is not None:
        return True
    stats = evidence.term_stats(store.conn)
    stats.refresh()
    stem = stats.stem(parts[-1])
    return stem is not None and stats.doc_count(stem) > MAX_CANDIDATES


def holding(
    store: Store, snapshot_id: int, query: str, paths: list[str] | None
) -> tuple[list[Phrase], dict[tuple[str, int], Evidence], list[PhraseReport]]:
    """The query's phrases, the chunks holding one (those the step lifts), and what each
    phrase found."""
    word = lone_word_of(query)
    lone = word is not None and not _answered_otherwise(store, snapshot_id, word)
    phrases = phrases_of(query, lone)
    if not phrases:
        return [], {}, []
    evidence, reports = find(store, snapshot_id, phrases, paths)
    return phrases, evidence, reports
