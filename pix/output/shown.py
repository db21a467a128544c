"""What an answer shows of a file: its stored lines, whose secrets were masked when indexed.

The database holds each file's text with every secret replaced by `[REDACTED:kind]` within its
line (pix.ingest.mask), and the `secret` table says which lines each masked secret covered. So
output needs no detector: a `ShownFile` serves the stored lines, and which secrets the shown
lines cover comes from those rows. With the owner's --show-secrets (`reveal`), the original
lines are read from the work tree or git objects (pix.ingest.scan.read_original); when neither
has the file any more, the masked lines are shown and the answer says so.

`Redactions` collects which secrets an answer showed (each counted once, however many pieces
of it were shown) and reports them as the response's `redactionSummary`.
"""

from __future__ import annotations

from collections.abc import Iterable

from pix.output.pathtext import path_sample

Occurrence = tuple[int, str]  # (the secret's seq in its blob, kind)


def split_lines(text: str) -> list[str]:
    """Lines as the chunker counts them: split on '\\n', no empty last line for a final '\\n'."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


class ShownFile:
    def __init__(
        self, text: str, secrets: list[tuple[int, str, int, int]], original: str | None = None
    ) -> None:
        self.chars = len(text)
        self.ends_with_newline = text.endswith("\n")
        self.masked = split_lines(text)
        self.original = split_lines(original) if original is not None else None
        self.found: dict[int, list[Occurrence]] = {}  # 1-based line -> secrets on it
        for seq, kind, first, last in secrets:
            for line in range(first, last + 1):
                self.found.setdefault(line, []).append((seq, kind))

    @property
    def line_count(self) -> int:
        return len(self.masked)

    def _source(self, reveal: bool) -> list[str]:
        return self.original if reveal and self.original is not None else self.masked

    def lines(self, first: int, last: int, reveal: bool = False) -> list[str]:
        """Lines first..last (1-based, inclusive), the originals with `reveal`."""
        return self._source(reveal)[max(first, 1) - 1 : max(last, 0)]

    def text(self, first: int, last: int, reveal: bool = False) -> str:
        """Lines first..last joined by '\\n', as the chunker cuts a chunk's text."""
        return "\n".join(self.lines(first, last, reveal))

    def whole(self, reveal: bool = False) -> str:
        text = "\n".join(self._source(reveal))
        return text + "\n" if self.ends_with_newline else text

    def secrets_in(self, first: int, last: int) -> set[Occurrence]:
        """The secrets that lines first..last (1-based) show some part of."""
        return {occ for line in range(max(first, 1), last + 1) for occ in self.found.get(line, ())}


class Redactions:
    """What one answer masked (or, with `reveal`, showed unmasked): `redactionSummary`."""

    def __init__(self, reveal: bool = False) -> None:
        self.reveal = reveal
        self._seen: dict[tuple[str, int], str] = {}
        # shown unmasked: reveal asked and the original of the secret's file was read
        self._revealed: set[tuple[str, int]] = set()
        # reveal asked, but the original of these files' shown secrets could not be read
        self._unrevealed: set[str] = set()

    def add(
        self, blob: str, occurrences: Iterable[Occurrence], shown: ShownFile, path: str
    ) -> None:
        """The secrets `occurrences` of file `path` (blob `blob`) that an answer showed some
        part of."""
        for seq, kind in occurrences:
            self._seen[(blob, seq)] = kind
            if not self.reveal:
                continue
            if shown.original is None:
                self._unrevealed.add(path)
            else:
                self._revealed.add((blob, seq))

    def warnings(self) -> list[str]:
        """With reveal: which files' shown secrets are masked all the same (no original here),
        as redactionSummary's `masked` says."""
        return unrevealed_warnings(self._unrevealed)

    def summary(self) -> dict:
        by_kind: dict[str, int] = {}
        for kind in self._seen.values():
            by_kind[kind] = by_kind.get(kind, 0) + 1
        return {
            "masked": not self.reveal or bool(self._unrevealed),
            "total": len(self._seen),
            # apart from `masked`, which is one flag for the answer: with --show-secrets some
            # files' originals may be read and others not, and the answer then holds both
            "revealed": len(self._revealed),
            "byKind": dict(sorted(by_kind.items())),
        }


def unrevealed_warnings(paths: Iterable[str]) -> list[str]:
    """What --show-secrets says of files holding a secret that it shows masked all the same:
    neither the work tree the database indexed nor its git objects hold their original text
    (a database copied to another machine)."""
    names = sorted(set(paths))
    if not names:
        return []
    return [
        f"{len(names)} file(s) shown masked: their original text is neither in the work tree "
        f"nor in git here ({path_sample(names)})"
    ]
