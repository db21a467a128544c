"""Masking secrets before anything is written: the database never holds one.

`mask(text, language)` replaces every secret that `redact.find_secrets` finds in the WHOLE
file with `[REDACTED:kind]`, segment by segment within each line it touches: a private key
that spans twenty lines becomes twenty masked lines, so line numbers, chunk boundaries and
citations stay those of the real file. What was masked is reported as line ranges and kinds,
never values (the `secret` table).

Masking a masked text again finds nothing new (placeholders are not secrets), which is what
lets `pix index` re-mask text written by an older detector: run the newer one over the stored
text and keep what it adds.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from itertools import accumulate

from pix.ingest.redact import CONFIG_LANGUAGES, find_secrets

PLACEHOLDER = re.compile(r"\[REDACTED:([a-z_]+)\]")


def placeholder(kind: str) -> str:
    return f"[REDACTED:{kind}]"


@dataclass(frozen=True)
class MaskedSecret:
    kind: str
    start_line: int  # 1-based, inclusive
    end_line: int


@dataclass(frozen=True)
class Masked:
    text: str
    secrets: tuple[MaskedSecret, ...]


def mask(text: str, language: str | None) -> Masked:
    """`text` with its secrets masked, and where they were."""
    found = find_secrets(text, language) if text else []
    if not found:
        return Masked(text, ())
    lines = text.split("\n")
    starts = [0, *accumulate(len(line) + 1 for line in lines)]
    segments: dict[int, list[tuple[int, int, str]]] = {}
    where = []
    for secret in found:
        first = bisect.bisect_right(starts, secret.start) - 1
        last = bisect.bisect_right(starts, max(secret.end - 1, secret.start)) - 1
        last = min(last, len(lines) - 1)
        for row in range(first, last + 1):
            a = max(secret.start - starts[row], 0)
            b = min(secret.end - starts[row], len(lines[row]))
            if b > a:
                segments.setdefault(row, []).append((a, b, secret.kind))
        where.append(MaskedSecret(secret.kind, first + 1, last + 1))
    for row, parts in segments.items():
        line = lines[row]
        for a, b, kind in sorted(parts, reverse=True):  # right to left keeps offsets valid
            line = line[:a] + placeholder(kind) + line[b:]
        lines[row] = line
    return Masked("\n".join(lines), tuple(where))


def widens(stored: str, language: str) -> bool:
    """Whether content stored as `stored` must be masked again for a path of `language`:
    config-style languages count bare values as secrets, so one content can hold more
    secrets at a config path than at a code path."""
    return language in CONFIG_LANGUAGES and stored not in CONFIG_LANGUAGES


def lines_masked(text: str) -> int:
    """How many placeholders a text shows (for tests and benchmarks)."""
    return len(PLACEHOLDER.findall(text))
