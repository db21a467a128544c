"""Path globs as `--only-path`, `--ignore-path` and discover's globs read them."""

from __future__ import annotations

import re


def glob_regex(pattern: str) -> re.Pattern[str]:
    """`*` within a folder, `**` across folders, `?` one character. A pattern without '/'
    matches a file name at any depth (`*.py`); one ending in '/' a whole folder."""
    anchored = "/" in pattern.rstrip("/")
    if pattern.endswith("/"):
        pattern += "**"
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            c = pattern[i]
            out.append("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c))
            i += 1
    return re.compile(("^" if anchored else r"(?:^|.*/)") + "".join(out) + "$")
