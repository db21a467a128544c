"""FTS5 query text from user text: the one place that quotes it.

A double-quoted FTS5 string keeps FTS5's syntax (AND, NEAR, *, ^, parentheses) out of what a
user typed; a quote inside is doubled. A NUL ends FTS5's reading of a string ("unterminated
string"), so it becomes a space, which separates tokens as it would in the text. No stored
text holds a NUL (such files are binary, never indexed), so nothing that matched is lost.
"""

from __future__ import annotations


def fts_string(text: str) -> str:
    """`text` as one quoted FTS5 string (a phrase of its tokens)."""
    return '"' + text.replace("\x00", " ").replace('"', '""') + '"'
