"""Exact verification of one hypothesis on one file's text: matching lines and excerpts.

Matches are line-oriented, like ripgrep without --multiline: a file's result is the set of
lines on which the pattern matches, each counted once. A regex match that runs over a line
break (`\\s+` can) is searched again within the line where it started, so it never joins lines.

Patterns are Python `re` syntax (checked by `re`, so its error messages and what it accepts),
run by the `regex` module, which takes a timeout: Python's `re` cannot be interrupted, and one
pattern that backtracks catastrophically (`(a|aa)+$` over a long line of a's) would run for
hours past the request's time budget. `regex` also defuses many such patterns outright
(`(a+)+$` answers at once). Where the two read a pattern otherwise, matching follows `regex`:
POSIX classes in a set (`[[:alpha:]]`, which `re` reads as a set of `[:alph` then `]`, with a
"Possible nested set" warning) are classes, as in ripgrep, and such a pattern is not narrowed
by the literal fragments `re`'s reading would require (`nested_set`); Unicode details differ
(`\\w` holds combining marks and not `²`; case-insensitive `i` no longer matches Turkish `ı`).
`regex` builds a counted repeat out in memory (`a{100000000}` never finishes compiling), so a
pattern whose nested repeat counts multiply past MAX_REPEAT is refused as invalid.
"""

from __future__ import annotations

import re
import re._parser
import time
import warnings
from dataclasses import dataclass, field

import regex

from pix.discover.fragments import needs_line_break
from pix.discover.request import Hypothesis

EXCERPTS_KEPT = 2  # per file and hypothesis: what the compact output can show
# The most copies a pattern's nested counted repeats may make (`(?:a{100}){100}` makes 10,000):
# `regex` compiles each out in memory (a{1000000}: 0.4 s and 273 MB).
MAX_REPEAT = 10_000
_REPEATS = (re._parser.MAX_REPEAT, re._parser.MIN_REPEAT, re._parser.POSSESSIVE_REPEAT)


def repeat_copies(parsed: object) -> int:
    """The largest product of nested repeat counts in a pattern `re._parser` parsed (an
    open-ended repeat counts its minimum: `a{5,}` builds five copies and a loop)."""
    most = 1
    for op, arg in parsed:  # type: ignore[attr-defined]
        if op in _REPEATS:
            low, high, sub = arg
            count = low if high == re._parser.MAXREPEAT else high
            most = max(most, max(count, 1) * repeat_copies(sub))
        elif op is re._parser.SUBPATTERN:
            most = max(most, repeat_copies(arg[-1]))
        elif op is re._parser.BRANCH:
            most = max([most, *(repeat_copies(branch) for branch in arg[1])])
        elif op in (re._parser.ASSERT, re._parser.ASSERT_NOT):
            most = max(most, repeat_copies(arg[1]))
        elif op is re._parser.GROUPREF_EXISTS:
            most = max([most, *(repeat_copies(b) for b in arg[1:] if b is not None)])
        elif op is re._parser.ATOMIC_GROUP:
            most = max(most, repeat_copies(arg))
    return most


@dataclass(frozen=True)
class Excerpt:
    line: int
    text: str
    truncated: bool
    column: int = 0  # where the match starts in the whole line: re-cut a masked line there


@dataclass
class FileResult:
    """What one hypothesis found in one file, up to the per-file limit."""

    lines: list[int] = field(default_factory=list)
    excerpts: list[Excerpt] = field(default_factory=list)
    limited: bool = False  # more matching lines exist beyond the per-file limit


class Matcher:
    """A compiled hypothesis. `error` is set (and nothing matches) when it cannot run."""

    def __init__(self, hypothesis: Hypothesis) -> None:
        self.hypothesis = hypothesis
        self.error: str | None = None
        self.literal: str | None = None
        self.regex: regex.Pattern[str] | None = None
        self.nested_set = False  # `re` and `regex` read a set otherwise: never narrowed
        flags = regex.MULTILINE | (0 if hypothesis.case_sensitive else regex.IGNORECASE)
        if hypothesis.mode == "literal":
            if "\n" in hypothesis.pattern or "\r" in hypothesis.pattern:
                self.error = "a literal with a line break cannot match: matches are within a line"
            elif hypothesis.case_sensitive:
                self.literal = hypothesis.pattern  # str.find is faster than a regex for this
            else:
                self.regex = regex.compile(
                    regex.escape(hypothesis.pattern), flags, cache_pattern=False
                )
            return
        try:
            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always", FutureWarning)
                re.compile(hypothesis.pattern)
                parsed = re._parser.parse(hypothesis.pattern)
            self.nested_set = any("nested set" in str(w.message) for w in said)
            copies = repeat_copies(parsed)
            if copies > MAX_REPEAT:
                self.error = (
                    f"invalid regex: its repeat counts make {copies:,} copies (at most "
                    f"{MAX_REPEAT:,})"
                )
                return
            # Not kept in regex's own cache: a server would hold every pattern ever asked.
            self.regex = regex.compile(hypothesis.pattern, flags, cache_pattern=False)
        except (re.error, regex.error, OverflowError, RecursionError, MemoryError) as exc:
            self.error = f"invalid regex: {exc}"
            return
        if needs_line_break(hypothesis.pattern):  # as ripgrep refuses `\n` without -U
            self.error = "the regex needs a line break, and matches are within one line"

    def _search(
        self, text: str, pos: int, endpos: int, deadline: float | None = None
    ) -> tuple[int, int] | None:
        """The next match's span; TimeoutError once `deadline` (time.monotonic()) passes."""
        if self.literal is not None:
            at = text.find(self.literal, pos, endpos)
            return None if at < 0 else (at, at + len(self.literal))
        assert self.regex is not None
        if deadline is None:
            m = self.regex.search(text, pos, endpos)
        else:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the time budget ran out")
            m = self.regex.search(text, pos, endpos, timeout=left)
        return None if m is None else m.span()

    def matches(self, line: str) -> bool:
        """Whether the hypothesis matches within this one line."""
        return self.error is None and self._search(line, 0, len(line)) is not None

    def scan(
        self, text: str, max_lines: int, snippet_length: int, deadline: float | None = None
    ) -> FileResult:
        """Matching lines of `text` (1-based), at most `max_lines`, with the first excerpts.
        Raises TimeoutError once `deadline` (time.monotonic()) passes mid-file."""
        result = FileResult()
        n = len(text)
        pos = 0
        line = 1
        counted_to = 0  # newlines before this offset are counted in `line`
        while pos <= n:
            span = self._search(text, pos, n, deadline)
            if span is None:
                break
            start, end = span
            if start == n and (n == 0 or text[n - 1] == "\n"):
                break  # after the last line break (or in an empty file) there is no line
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", start)
            if line_end < 0:
                line_end = n
            if end > line_end:  # ran over a line break: look again inside this line only
                span = self._search(text, start, line_end, deadline)
                if span is None:
                    pos = line_end + 1
                    continue
                start, end = span
            if len(result.lines) == max_lines:
                result.limited = True  # one more matching line exists
                break
            line += text.count("\n", counted_to, start)
            counted_to = start
            result.lines.append(line)
            if len(result.excerpts) < EXCERPTS_KEPT:
                result.excerpts.append(
                    excerpt(text[line_start:line_end], start - line_start, line, snippet_length)
                )
            pos = line_end + 1
        return result


def excerpt(line_text: str, column: int, line: int, length: int) -> Excerpt:
    """The line without its indentation, cut to `length` characters around the match."""
    at = column
    stripped = line_text.lstrip()
    column -= len(line_text) - len(stripped)
    stripped = stripped.rstrip()
    if len(stripped) <= length:
        return Excerpt(line, stripped, False, at)
    # Keep some text before the match for context, the rest after it.
    begin = max(0, min(column - length // 4, len(stripped) - length))
    text = stripped[begin : begin + length]
    if begin > 0:
        text = "…" + text[1:]
    if begin + length < len(stripped):
        text = text[:-1] + "…"
    return Excerpt(line, text, True, at)
