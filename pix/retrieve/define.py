"""Definitions: a name the query spells out puts the chunks that define it first.

A developer who types `CacheKey struct`, `where is parse_git_path implemented` or
`Oban.PerformError` wants the definition, not the files that use the name most. The fused
channels see the name as words: BM25 ranks the chunks that repeat it, and in file mode a file
that calls it from five chunks outscores the one that defines it in one (on the developers'
questions, bench/devsets/questions, a third of the symbol lookups had the defining file second
or lower). The identifier channel knows definitions, but RRF gives its first place barely more
than its tenth.

Names (`names_of`): the code-shaped words of the query (snake_case, camelCase, PascalCase of two
humps or more, SCREAMING_CASE: `_`, a lower-to-upper or an upper-lower-upper step), the last
part of a qualified name (`Obj:stage_hunks`, `Sidekiq::Client`, `Foo.bar`, `Foo#bar`: a
qualifier names where, the last part what), an identifier in backticks, and a query that is one
identifier and nothing else (`Router`); never a token the secret detector would mask. Spelled
exactly: the `symbol` table's `name`, case and all; English words in a sentence are never
names. The qualifier still narrows (`qualifiers_of`): of the chunks defining `resolve`, those
whose qualified name has the part `VueDependencyResolver`, or whose file is named for it, answer
`VueDependencyResolver.resolve` when there are any. Javalin's `resolve` of two other classes in
one file outscored it on that file's evidence; with the narrowing, javalin's developers'
questions gain +0.012 / +0.017 nDCG@10 / MRR@10 static-only, oban's and symfony-console's
commit subjects +0.004 / +0.005, and no set loses (bench/README.md, "sixteenth session").

Which definitions count: chunks of every role but docs that define the name
(pix.store.define_sql), when it is defined in at most MAX_FILES files; a name defined in more
(`new`, `init`, `run`) says nothing about where to look ("common").

How much: a query that is only names and words about definitions (`where is X defined`, `the
X class`, `find X`) lifts the defining chunks above every other chunk, as the phrase step does
(pix.retrieve.lift.above_all), and there a declared name (a constant, a field, an enum member:
`symbol.declared`) counts as a definition; a name inside a longer question adds EMBEDDED (a
rank 1 at weight 1.0, as BM25's first chunk of a question) to the chunks defining it,
declarations left out: a constant named in a sentence (`fix basicAuth's realm`) rarely says
where the change goes (on the language sets counting them cost hono 0.011 nDCG@10, the mean
0.002; the symbol lookups lost nothing).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from pix.ingest.chunk import definition_sites, has_grammar
from pix.ingest.mask import mask
from pix.ingest.redact import may_hold_secret
from pix.ingest.terms import STOPWORDS
from pix.output.shown import ShownFile
from pix.retrieve import lift, tested
from pix.retrieve.component import normal_name
from pix.retrieve.hits import Hit, revised
from pix.retrieve.route import Route
from pix.store import define_sql
from pix.store.db import Store

CHANNEL = lift.DEFINITION
MAX_FILES = 3
MAX_NAMES = 8
MAX_ROWS = 200
# Placing a name parses its file again at query time (about 3.5 MB/s here): not a file
# larger than this, in characters (about 75 ms).
PLACE_FILE_CHARS = 262_144
EMBEDDED = 1.0
UNLIFTED_ROLES = frozenset({"docs"})

_TOKEN = re.compile(r"[A-Za-z_$][\w$]*(?:(?:::|->|[.:#\\])[A-Za-z_$][\w$]*)*")
_SEPARATOR = re.compile(r"::|->|[.:#\\]")
_CODE_SHAPED = re.compile(r"[A-Za-z0-9]_|_[A-Za-z0-9]|[a-z0-9][A-Z]|[A-Z][a-z0-9]+[A-Z]")
_BACKTICKED = re.compile(r"`([^`\n]+)`")
_WORD = re.compile(r"[\w$]+")
# A dotted name whose last part is one of these is a file, not a member (`config.toml`).
FILE_PARTS = frozenset(
    """py pyi js jsx mjs cjs ts tsx go rs java kt kts c h cc cpp hpp cs rb php swift sh bash
    zsh fish lua ex exs hs scala sc sbt zig ml mli jl sql md rst txt json yaml yml toml cfg
    ini xml html css scss lock conf""".split()
)
# Words that ask for a definition without naming anything more about it.
DEFINITION_WORDS = frozenset(
    """define defined defines definition definitions declare declared declaration implement
    implemented implements implementation implementations find locate show look up lookup
    see get give me class classes struct structs type types function functions func fn fun
    method methods def trait traits interface interfaces enum enums module modules const
    constant constants variable var let macro macros protocol protocols record records object
    hook exception error alias typedef signature body source code located lives live""".split()
)


@dataclass
class Definition(lift.Location):
    """A chunk that defines some of the query's names (at one path)."""

    names: set[str] = field(default_factory=set)


def enabled(channels: list[str] | None, shape: str) -> bool:
    """Asked for by name, or by default except for a whole issue report (its code names what
    the reporter called; the issue route weighs those identifiers itself)."""
    if channels is not None:
        return CHANNEL in channels
    return shape != "issue"


def _parts(token: str) -> list[str]:
    """A qualified token's parts (`Sidekiq::Client#push` -> Sidekiq, Client, push)."""
    return [p for p in _SEPARATOR.split(token) if p]


def names_of(query: str) -> list[str]:
    """The names a query spells out, first occurrence order, each once (at most MAX_NAMES)."""
    text = query.strip()
    found: list[str] = []
    quoted = {span.strip().strip("()") for span in _BACKTICKED.findall(text)}
    alone = _TOKEN.fullmatch(text.strip("`").removesuffix("()"))
    for m in _TOKEN.finditer(text):
        token = m.group(0)
        parts = _parts(token)
        last = parts[-1]
        if len(parts) > 1:
            if last.lower() in FILE_PARTS or len(last) < 2:
                continue
            name = last
        elif _CODE_SHAPED.search(token) or token in quoted or alone:
            name = token
        else:
            continue
        if name not in found and not _secret(name):
            found.append(name)
    return found[:MAX_NAMES]


def qualifiers_of(query: str) -> dict[str, str]:
    """Last part -> the qualifier spelled just before it (`Sidekiq::Client#push`: push ->
    Client), for every qualified token of the query, the first qualifier of each; `find`
    reads it for the names of `names_of` only."""
    out: dict[str, str] = {}
    for m in _TOKEN.finditer(query):
        parts = _parts(m.group(0))
        if len(parts) > 1:
            out.setdefault(parts[-1], parts[-2])
    return out


def _qualified(path: str, symbol: str | None, qualifier: str) -> bool:
    """Whether a definition sits where the qualifier says: the chunk's qualified name has it
    as a part (`VueDependencyResolver.resolve`), or its file is named for it as a component
    names a file (`Client` -> lib/sidekiq/client.rb, `http_client` -> HttpClient.kt)."""
    if symbol and qualifier in _parts(symbol):
        return True
    return normal_name(path.rsplit("/", 1)[-1]) == normal_name(qualifier)


def _narrowed(rows: list[tuple], qualifiers: dict[str, str]) -> list[tuple]:
    """The rows, each qualified name's narrowed to the definitions its qualifier names when
    any does (else all of them: `Obj:stage_hunks` names a variable, not where it is)."""
    if not qualifiers:
        return rows
    fits = [
        name in qualifiers and _qualified(path, symbol, qualifiers[name])
        for path, _, _, _, _, _, symbol, _, name in rows
    ]
    narrowed = {row[-1] for row, fit in zip(rows, fits, strict=True) if fit}
    return [row for row, fit in zip(rows, fits, strict=True) if fit or row[-1] not in narrowed]


def _secret(name: str) -> bool:
    """A token the secret detector would mask (`ghp_...`): stored text never defines it, and
    the explanation must not repeat it."""
    return may_hold_secret(name) and mask(name, None).text != name


def only_names(query: str, names: list[str]) -> bool:
    """Whether the query is its names and words that ask for a definition, nothing more."""
    rest = query
    for m in sorted(_TOKEN.finditer(query), key=lambda m: -m.start()):
        parts = _parts(m.group(0))
        if parts[-1] in names:
            rest = rest[: m.start()] + " " + rest[m.end() :]
    words = [w.lower() for w in _WORD.findall(rest)]
    return all(w in STOPWORDS or w in DEFINITION_WORDS for w in words)


def find(
    store: Store,
    snapshot_id: int,
    names: list[str],
    paths: list[str] | None,
    declared: bool = True,
    qualifiers: dict[str, str] | None = None,
) -> tuple[dict[tuple[str, int], Definition], list[dict]]:
    """The chunks defining each name (never in docs; within `paths` if given), keyed by (path,
    chunk id), and what each name found: matched, absent or common (more than MAX_FILES
    files). `declared`: declared names count too (constants, fields: pix.ingest.declarations).
    `qualifiers` (name -> qualifier) narrow a name to the definitions its qualifier names."""
    rows = store.conn.execute(
        define_sql.DEFINING_CHUNKS,
        {
            "snapshot": snapshot_id,
            "names": json.dumps(names),
            "paths": json.dumps(paths) if paths is not None else None,
            "unlifted": json.dumps(sorted(UNLIFTED_ROLES)),
            "declared": int(declared),
            "limit": MAX_ROWS,
        },
    ).fetchall()
    rows = _narrowed(rows, qualifiers or {})
    files: dict[str, set[str]] = {name: set() for name in names}
    for row in rows:
        files[row[-1]].add(row[0])
    reports, found = [], {}
    for name in names:
        held = len(files[name])
        status = "absent" if not held else "common" if held > MAX_FILES else "matched"
        reports.append({"name": name, "status": status, "files": held})
    for path, chunk_id, sha, start, end, kind, symbol, language, name in rows:
        if not 0 < len(files[name]) <= MAX_FILES:
            continue
        key = (path, chunk_id)
        at = found.setdefault(
            key, Definition(path, chunk_id, sha, start, end, kind, symbol, language)
        )
        at.names.add(name)
    return found, reports


def definition_weight(route: Route, priors: bool, alone: bool, weighed: bool = False) -> float:
    """Above every chunk for a query of names alone (`weighed`: the history prior weighs
    it), a rank 1's worth at weight 1.0 inside a longer question."""
    if not alone:
        return EMBEDDED
    return lift.above_all(route.weights, priors, weighed, tested.most_share(priors))


def defining(
    store: Store, snapshot_id: int, query: str, paths: list[str] | None
) -> tuple[dict[tuple[str, int], Definition], list[dict], bool]:
    """The chunks the step lifts for this query (none: it lifts nothing), what each name
    found, and whether the query is names alone (then declared names count too)."""
    names = names_of(query)
    if not names:
        return {}, [], False
    alone = only_names(query, names)
    found, reports = find(store, snapshot_id, names, paths, alone, qualifiers_of(query))
    return found, reports, alone


def rank_definitions(
    store: Store,
    snapshot_id: int,
    query: str,
    route: Route,
    hits: list[Hit],
    paths: list[str] | None,
    fusion: str,
    priors: bool,
    weighed: bool = False,
) -> tuple[list[Hit], list[dict], float]:
    """The definition step after fusion: the hits reordered, what each name found, and the
    channel's weight (0 when nothing was lifted: a later step's ceiling counts it).
    `weighed`: the history prior will weigh the list."""
    found, reports, alone = defining(store, snapshot_id, query, paths)
    if not found:
        return hits, reports, 0.0
    weight = definition_weight(route, priors, alone, weighed)
    entries = {
        key: (at, lift.entry(weight, fusion, len(at.names), names=sorted(at.names)))
        for key, at in found.items()
    }
    return lift.add_channel(hits, CHANNEL, entries, priors), reports, weight


class Shows(Protocol):
    """What reads a file as answers show it (pix.query.QueryEngine, which keeps it for the
    answer that shows it next)."""

    def shown(self, blob: str, path: str) -> ShownFile: ...


def placed(hits: list[Hit], engine: Shows) -> list[Hit]:
    """The hits, each the step lifted saying where it defines the names (`Hit.defines`:
    (name, file line) in line order, the line that names it). A chunk's first line often is
    not: a decorator or comment above the name, or a neighbour's definition (small ones are
    merged into one chunk). Each file is parsed again once (pix.ingest.chunk.definition_sites),
    so only the hits an answer shows are placed, and none in a file over PLACE_FILE_CHARS or
    in a language no grammar reads."""
    sites: dict[str, dict[str, list[int]]] = {}  # blob -> its definition sites
    out = []
    for hit in hits:
        names = hit.channels.get(CHANNEL, {}).get("names", ())
        # A block is what pix index cut from a file its grammar did not read well enough.
        if not names or hit.kind == "block" or not has_grammar(hit.language):
            out.append(hit)
            continue
        if hit.blob_sha not in sites:
            text = engine.shown(hit.blob_sha, hit.path).whole()
            fits = len(text) <= PLACE_FILE_CHARS
            sites[hit.blob_sha] = definition_sites(text, hit.language) if fits else {}
        lines = []
        for name in names:  # its first site at or below the chunk's first line, if inside it
            rows = sites[hit.blob_sha].get(name, ())
            line = next((r + 1 for r in rows if r + 1 >= hit.start_line), 0)
            if line and line <= hit.end_line:
                lines.append((line, name))
        lines.sort()
        out.append(revised(hit, defines=tuple((n, line) for line, n in lines)) if lines else hit)
    return out


def placed_each(chosen: list[tuple], engines: Mapping[str, Shows]) -> list[tuple]:
    """A workspace's `chosen` (repository, hit, ...) with each repository's hits `placed`
    in one call, so that each file is parsed once."""
    by_repo: dict[str, list[Hit]] = {}
    for repo, hit, *_ in chosen:
        by_repo.setdefault(repo, []).append(hit)
    done = {repo: iter(placed(hits, engines[repo])) for repo, hits in by_repo.items()}
    return [(repo, next(done[repo]), *rest) for repo, _, *rest in chosen]
