"""How a path is written in text meant for a terminal: one line, whatever bytes the file
system allowed in its name."""

from __future__ import annotations

import json

# Line breaks to str.splitlines that JSON leaves as they are.
_UNICODE_BREAKS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def shown_path(path: str) -> str:
    """A path as text output shows it: as it is, or, when it holds a control character or a
    line break (a newline in a file name would split a header in two), quoted with escapes
    as git quotes such names."""
    if any(ord(c) < 32 or ord(c) == 127 or c in _UNICODE_BREAKS for c in path):
        quoted = json.dumps(path, ensure_ascii=False)
        for char, escape in _UNICODE_BREAKS.items():
            quoted = quoted.replace(char, escape)
        return quoted
    return path


def path_sample(paths: list[str], n: int = 3) -> str:
    """The first `n` of `paths` for a one-line message, each as shown_path shows it."""
    return ", ".join(map(shown_path, paths[:n])) + (" …" if len(paths) > n else "")
