"""What a pattern requires literally, as an FTS5 trigram expression that narrows candidates.

The trigram table (migrations/003_trigram.sql) keeps no positions, so a literal is narrowed by
the AND of its trigrams: a superset of the blobs that contain it, and every candidate is
verified on its text afterwards. Narrowing must never lose a blob that can match; it may keep
too many.

The regex extractor is deliberately small (a tokenizer, not a parser):
  * a top-level alternation `a|b` needs one of its branches: OR over the branches;
  * inside a branch, the runs of literal characters outside groups and classes are all
    required: AND over the runs of 3 or more characters. A character made optional by `?`, `*`
    or `{0,n}` is dropped from its run; `+` and `{n,m}` (n >= 1) keep it and end the run.
  * groups, classes, `.`, anchors and class escapes (\\w, \\d, \\b ...) end a run and are
    skipped whole (a group may be optional or hold an alternation: assuming nothing is safe).
  * it gives up (None: no usable fragment, the caller scans) when a branch has no run of 3+
    characters, or on verbose mode `(?x)`, where spaces are not literal.
"""

from __future__ import annotations

import re

from pix.store.fts import fts_string

MIN_FRAGMENT = 3  # the trigram tokenizer indexes nothing shorter
# Escapes that stand for one literal character.
_CHAR_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_QUANTIFIER = re.compile(r"\{(\d*)(,(\d*))?\}")
_VERBOSE = re.compile(r"\(\?[aiLmsux]*x")


def literal_plan(text: str) -> list[list[str]] | None:
    """A literal needs itself: one branch, one fragment, or None when it is too short."""
    return [[text]] if len(text) >= MIN_FRAGMENT else None


def regex_plan(pattern: str) -> list[list[str]] | None:
    """OR over branches of AND over required literal fragments; None when there is none."""
    if _VERBOSE.search(pattern):
        return None
    branches = _split_top_level(pattern)
    if branches is None:
        return None
    plan = []
    for branch in branches:
        runs = _literal_runs(branch)
        if runs is None:
            return None
        fragments = [run for run in runs if len(run) >= MIN_FRAGMENT]
        if not fragments:
            return None  # this branch can match without any literal: nothing narrows
        plan.append(fragments)
    return plan


def needs_line_break(pattern: str) -> bool:
    """Whether every branch of a regex requires a line break outside groups and classes:
    such a regex cannot match within one line (a break inside a group is not seen here). In
    verbose mode `(?x)` a line break typed as itself is whitespace the regex ignores; `\\n`
    still needs one."""
    if _VERBOSE.search(pattern):
        pattern = _strip_verbose(pattern)
    branches = _split_top_level(pattern)
    if not branches:
        return False
    for branch in branches:
        runs = _literal_runs(branch)
        if runs is None or not any("\n" in run or "\r" in run for run in runs):
            return False
    return True


# The trigram table folds case as SQLite does, and a caseless hypothesis is matched by the
# `regex` module's IGNORECASE, which also matches i to U+0130 (İ) and I to U+0131 (ı); SQLite
# keeps those apart. No other ASCII letter differs (checked over every code point). Outside
# ASCII hundreds of letters do (Georgian, Cherokee, Latin Extended-D), so a caseless
# fragment is cut at every cased non-ASCII character instead (`caseless_plan`).
_CASELESS_ALSO = {"i": "İ", "I": "ı"}


def caseless_plan(plan: list[list[str]]) -> list[list[str]] | None:
    """A plan for a case-insensitive match: each fragment cut at its cased non-ASCII
    characters, the pieces of MIN_FRAGMENT+ kept; None when a branch keeps none."""
    out = []
    for fragments in plan:
        kept = []
        for fragment in fragments:
            piece: list[str] = []
            for c in [*fragment, ""]:
                if c and (c.isascii() or c.lower() == c.upper()):
                    piece.append(c)
                    continue
                if len(piece) >= MIN_FRAGMENT:
                    kept.append("".join(piece))
                piece = []
        if not kept:
            return None
        out.append(kept)
    return out


def _trigram_match(trigram: str, caseless: bool) -> str:
    variants = [""]
    for c in trigram:
        spelled = c + (_CASELESS_ALSO.get(c, "") if caseless else "")
        variants = [v + s for v in variants for s in spelled]
    if len(variants) == 1:
        return fts_string(trigram)
    return "(" + " OR ".join(map(fts_string, variants)) + ")"


def fts_expression(plan: list[list[str]], caseless: bool = False) -> str:
    """The FTS5 MATCH text for a plan: each fragment as the AND of its distinct trigrams
    (for a caseless match, a trigram with i or I as any of its spellings the table keeps
    apart)."""
    ors = []
    for fragments in plan:
        trigrams: dict[str, None] = {}
        for fragment in fragments:
            for i in range(len(fragment) - MIN_FRAGMENT + 1):
                trigrams[fragment[i : i + MIN_FRAGMENT]] = None
        ands = " AND ".join(_trigram_match(t, caseless) for t in trigrams)
        ors.append(f"({ands})")
    return " OR ".join(ors)


def _skip_class(p: str, i: int) -> int | None:
    """Index just past the character class that starts at p[i] == '['."""
    j = i + 1
    if j < len(p) and p[j] == "^":
        j += 1
    if j < len(p) and p[j] == "]":  # a leading ']' is literal
        j += 1
    while j < len(p):
        if p[j] == "\\":
            j += 2
            continue
        if p[j] == "]":
            return j + 1
        j += 1
    return None


def _skip_group(p: str, i: int) -> int | None:
    """Index just past the group that starts at p[i] == '(' (nested groups, classes and
    escapes inside are skipped)."""
    depth = 0
    j = i
    while j < len(p):
        c = p[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            end = _skip_class(p, j)
            if end is None:
                return None
            j = end
            continue
        if c == "(" and p.startswith("(?#", j):
            end = _comment_end(p, j)
            if end is None:
                return None
            if depth == 0:
                return end
            j = end
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return None


def _comment_end(p: str, i: int) -> int | None:
    """Index just past the comment group that starts at p[i:i + 3] == '(?#': its first ')'
    that no backslash escapes (`re` reads `(?#a\\)b)` as one comment)."""
    j = i + 3
    while j < len(p):
        if p[j] == "\\":
            j += 2
        elif p[j] == ")":
            return j + 1
        else:
            j += 1
    return None


def _strip_verbose(p: str) -> str:
    """A verbose-mode pattern as it reads without its whitespace and `#` comments (outside
    classes, unescaped): what remains is what a match needs."""
    out: list[str] = []
    i = 0
    while i < len(p):
        c = p[i]
        if c == "\\":
            out.append(p[i : i + 2])
            i += 2
        elif c == "[":
            end = _skip_class(p, i)
            if end is None:
                return p
            out.append(p[i:end])
            i = end
        elif c == "#":
            end = p.find("\n", i)
            i = len(p) if end < 0 else end + 1
        elif c.isspace():
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _split_top_level(p: str) -> list[str] | None:
    """The branches of a top-level alternation (one branch when there is none)."""
    branches, start, j = [], 0, 0
    while j < len(p):
        c = p[j]
        if c == "\\":
            j += 2
        elif c == "[":
            end = _skip_class(p, j)
            if end is None:
                return None
            j = end
        elif c == "(":
            end = _skip_group(p, j)
            if end is None:
                return None
            j = end
        elif c == "|":
            branches.append(p[start:j])
            start = j = j + 1
        else:
            j += 1
    branches.append(p[start:])
    return branches


def _escape_length(p: str, i: int) -> int:
    """Characters taken by the non-literal escape at p[i] == '\\'."""
    d = p[i + 1]
    if d == "x":
        return 4
    if d == "u":
        return 6
    if d == "U":
        return 10
    if d == "N":
        end = p.find("}", i)
        return end - i + 1 if end > 0 else 2
    if d.isdigit():  # a backreference or an octal escape
        j = i + 1
        while j < len(p) and j < i + 4 and p[j].isdigit():
            j += 1
        return j - i
    return 2  # \w \d \s \b \B \A \Z and their negations


def _literal_runs(p: str) -> list[str] | None:
    """The literal runs a branch requires, in order."""
    runs: list[str] = []
    cur: list[str] = []
    last_literal = False  # does cur end with the atom a quantifier would apply to?

    def end_run() -> None:
        if cur:
            runs.append("".join(cur))
            cur.clear()

    i = 0
    while i < len(p):
        c = p[i]
        if c == "\\":
            if i + 1 >= len(p):
                return None
            d = p[i + 1]
            if not d.isalnum():  # an escaped metacharacter or punctuation: itself
                cur.append(d)
                last_literal = True
                i += 2
            elif d in _CHAR_ESCAPES:
                cur.append(_CHAR_ESCAPES[d])
                last_literal = True
                i += 2
            else:
                end_run()
                last_literal = False
                i += _escape_length(p, i)
            continue
        if p.startswith("(?#", i):
            # A comment is nothing: a quantifier after it applies to the atom before it
            # (`abc(?#note)?` makes the c optional), so the run goes on through it.
            end = _comment_end(p, i)
            if end is None:
                return None
            i = end
            continue
        if c in "[(":
            end = _skip_class(p, i) if c == "[" else _skip_group(p, i)
            if end is None:
                return None
            end_run()
            last_literal = False
            i = end
            continue
        if c in "*?+{":
            minimum = 0 if c in "*?" else 1
            length = 1
            if c == "{":
                m = _QUANTIFIER.match(p, i)
                if m is None or (m.group(1) == "" and m.group(2) is None):
                    cur.append(c)  # not a quantifier: Python reads a lone '{' literally
                    last_literal = True
                    i += 1
                    continue
                minimum = int(m.group(1) or 0)
                length = m.end() - i
            if minimum == 0 and last_literal and cur:
                cur.pop()  # the character may be absent
            end_run()
            last_literal = False
            i += length
            if i < len(p) and p[i] in "?+":  # lazy or possessive
                i += 1
            continue
        if c in ".^$)":
            end_run()
            last_literal = False
            i += 1
            continue
        cur.append(c)
        last_literal = True
        i += 1
    end_run()
    return runs
