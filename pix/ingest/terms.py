"""Identifier splitting: `getHTTPResponse2` -> get, http, response, 2.

Used on both sides: at index time to fill the FTS `parts` column and the symbol table, at query
time to turn a question into FTS terms. SQLite's stock tokenizer never sees camelCase boundaries,
so the split happens here and lands in an ordinary column.
"""

from __future__ import annotations

import re
from functools import lru_cache

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
# Boundaries inside one identifier: lower->Upper, UPPER->Upper+lower (HTTPServer), letter<->digit.
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

# Words that carry no retrieval signal in commit subjects and questions.
STOPWORDS = frozenset(
    """a an and are as at be but by can do does for from has have how i if in into is it its
    of on or so than that the their then there these this to was were what when where which
    who why will with without you your should would could not no via also
    """.split()
)


@lru_cache(maxsize=1 << 16)
def split_identifier(name: str) -> tuple[str, ...]:
    """Lower-cased parts of one identifier, in order. A plain word gives itself. Cached: the
    same names recur in every chunk of a repository (indexing split 400,000 words for
    pyinstaller's 8,000 chunks)."""
    return tuple(m.group(0).lower() for piece in name.split("_") for m in _PART.finditer(piece))


def identifier_parts(text: str) -> str:
    """Space-separated parts of compound identifiers in `text` that are not whole words of it,
    first occurrence order, each once. These are what FTS would otherwise never see."""
    found = IDENTIFIER.findall(text)
    words = {word.lower() for word in found}
    seen: set[str] = set()
    out: list[str] = []
    for word in dict.fromkeys(found):
        parts = split_identifier(word)
        if len(parts) < 2 or looks_like_data(parts):
            continue
        for part in parts:
            if part not in words and part not in seen:
                seen.add(part)
                out.append(part)
    return " ".join(out)


def looks_like_data(parts: tuple[str, ...] | list[str]) -> bool:
    """Base64, hex digests and other data fall apart at case and digit boundaries into pieces
    that are mostly one or two characters (`yb78nvIuxAYA` -> yb 78 nv iux ayaa): they are no
    names, and their pieces would only add noise (and bytes) to the index. Names have few
    such pieces (`getHTTPResponse2` -> get http response 2), and short names may have many
    (`IPv4Address`, `utf8_to_utf16`), so only words of 16 characters or more are judged."""
    short = sum(len(p) <= 2 for p in parts)
    return len(parts) >= 4 and 2 * short > len(parts) and sum(map(len, parts)) >= 16


def words_in_order(text: str) -> list[str]:
    """Distinct identifiers of `text`, first occurrence order."""
    seen: set[str] = set()
    out: list[str] = []
    for m in IDENTIFIER.finditer(text):
        word = m.group(0)
        if word not in seen:
            seen.add(word)
            out.append(word)
    return out


def query_terms(text: str) -> list[str]:
    """Lower-cased search terms of a question: each word, and the parts of compound words,
    without stopwords, first occurrence order."""
    out: list[str] = []
    seen: set[str] = set()
    for word in words_in_order(text):
        parts = split_identifier(word)
        candidates = [word.lower(), *([] if looks_like_data(parts) else parts)]
        for term in candidates:
            term = term.strip("_")
            if term and term not in STOPWORDS and term not in seen:
                seen.add(term)
                out.append(term)
    return out


# A name joined by hyphens (`Invoke-Mock`, PowerShell's verb-noun; Lisp's `with-open-file`).
_HYPHENATED = re.compile(r"(?<![\w-])[A-Za-z_]\w*(?:-[A-Za-z_]\w*)+(?![\w-])")


def hyphenated_names(text: str) -> list[str]:
    """Hyphen-joined words of a question, lower-cased, each once: the identifier channel
    matches them only as a definition's whole name (the FTS tokenizer splits them anyway)."""
    return list(dict.fromkeys(m.group(0).lower() for m in _HYPHENATED.finditer(text)))


def code_terms(text: str) -> list[str]:
    """Terms of the code-shaped words of a question (`get_user`, `parseJSON`, `Session.send`
    splits at the dot first): each such word lower-cased and its parts. A plain English word
    is not among them, so it can only match a definition by its whole name."""
    out: list[str] = []
    for word in words_in_order(text):
        parts = split_identifier(word)
        if len(parts) > 1:
            out.extend(t for t in [word.lower(), *parts] if t not in out)
    return out


def path_terms(path: str) -> list[str]:
    """Components of a path and their identifier parts, lower-cased, each once."""
    out: list[str] = []
    seen: set[str] = set()
    for component in re.split(r"[/\\.\-\s]+", path):
        if not component:
            continue
        for term in [component.lower(), *split_identifier(component)]:
            if term and term not in seen:
                seen.add(term)
                out.append(term)
    return out
