"""Masking secrets at output: the stored text stays intact, what is shown is masked.

A `Masker` holds one file's lines (split on '\n' as the chunker counts them) and the same lines
with every secret that `redact.find_secrets` found in the WHOLE file replaced, segment by
segment, with `[REDACTED:kind]`. Finding secrets in the whole file, not in the piece shown,
matters: a chunk may begin in the middle of a private key, where nothing in the piece alone
looks like one. A secret that spans lines is masked on each of its lines, so line numbers,
citations and line counts stay true.

`Redactions` collects which secrets an answer showed (each counted once, however many pieces
of it were shown) and reports them as the response's `redactionSummary`.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterable
from itertools import accumulate

from pix.output.redact import Secret, find_secrets

Occurrence = tuple[int, str]  # (index of the secret in its file, kind)


def placeholder(kind: str) -> str:
    return f"[REDACTED:{kind}]"


class Masker:
    def __init__(
        self, text: str, language: str | None = None, secrets: list[Secret] | None = None
    ) -> None:
        self.chars = len(text)
        self.ends_with_newline = text.endswith("\n")
        lines = text.split("\n")
        if self.ends_with_newline:
            lines.pop()
        self.raw = lines
        self.masked = list(lines)
        self.found: dict[int, list[Occurrence]] = {}  # 0-based line -> secrets on it
        if secrets is None:  # a caller that already looked passes what it found
            secrets = find_secrets(text, language) if text else []
        if not secrets:
            return
        starts = [0, *accumulate(len(line) + 1 for line in lines)]
        segments: dict[int, list[tuple[int, int, str]]] = {}
        for index, secret in enumerate(secrets):
            first = bisect.bisect_right(starts, secret.start) - 1
            last = bisect.bisect_right(starts, max(secret.end - 1, secret.start)) - 1
            for row in range(first, min(last, len(lines) - 1) + 1):
                a = max(secret.start - starts[row], 0)
                b = min(secret.end - starts[row], len(lines[row]))
                if b > a:
                    segments.setdefault(row, []).append((a, b, secret.kind))
                    self.found.setdefault(row, []).append((index, secret.kind))
        for row, parts in segments.items():
            line = lines[row]
            for a, b, kind in sorted(parts, reverse=True):  # right to left keeps offsets valid
                line = line[:a] + placeholder(kind) + line[b:]
            self.masked[row] = line

    @property
    def line_count(self) -> int:
        return len(self.raw)

    def lines(self, first: int, last: int, reveal: bool = False) -> list[str]:
        """Lines first..last (1-based, inclusive), masked unless `reveal`."""
        source = self.raw if reveal else self.masked
        return source[max(first, 1) - 1 : max(last, 0)]

    def text(self, first: int, last: int, reveal: bool = False) -> str:
        """Lines first..last joined by '\n', as the chunker stores a chunk's text."""
        return "\n".join(self.lines(first, last, reveal))

    def whole(self, reveal: bool = False) -> str:
        """The file's text (masked unless `reveal`), ending as the file ends."""
        text = "\n".join(self.raw if reveal else self.masked)
        return text + "\n" if self.ends_with_newline else text

    def secrets_in(self, first: int, last: int) -> set[Occurrence]:
        """The secrets that lines first..last (1-based) show some part of."""
        return {
            occ for row in range(max(first, 1) - 1, max(last, 0)) for occ in self.found.get(row, ())
        }

    def column(self, line: int, col: int) -> int:
        """Where column `col` of a raw line lands in its masked form: unchanged before the
        first masked character, the same distance from the line's end after it."""
        raw, masked = self.raw[line - 1], self.masked[line - 1]
        prefix = len(os.path.commonprefix([raw, masked]))
        if col <= prefix:
            return col
        return max(prefix, min(col + len(masked) - len(raw), len(masked)))


class Redactions:
    """What one answer masked (or, with `reveal`, would have masked): `redactionSummary`."""

    def __init__(self, reveal: bool = False) -> None:
        self.reveal = reveal
        self._seen: dict[tuple[str, int], str] = {}

    def add(self, blob: str, occurrences: Iterable[Occurrence]) -> None:
        for index, kind in occurrences:
            self._seen[(blob, index)] = kind

    def summary(self) -> dict:
        by_kind: dict[str, int] = {}
        for kind in self._seen.values():
            by_kind[kind] = by_kind.get(kind, 0) + 1
        return {
            "masked": not self.reveal,
            "total": len(self._seen),
            "byKind": dict(sorted(by_kind.items())),
        }
