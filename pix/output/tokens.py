"""Counting a packet's size in the unit its budget is given in.

Tokens are counted with the embedding model's own tokenizer (models/tokenizer.json, BERT
WordPiece, lower-cased), without special tokens and without truncation, so the count is exact
for that tokenizer. Its pre-tokenizer splits on whitespace and punctuation, so no token spans a
line break: a text's count is the sum of its lines' counts, and a packet can be costed line by
line and checked once, whole, at the end.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from pix.ingest.embed import manifest
from pix.paths import MODELS_DIR

UNITS = ("tokens", "chars")


class Counter:
    """Sizes of lines and texts in one unit. `newline` is what a line break itself costs."""

    def __init__(self, unit: str) -> None:
        self.unit = unit
        self.newline = 1 if unit == "chars" else 0
        self._tokenizer = _tokenizer() if unit == "tokens" else None

    def describe(self) -> str:
        if self._tokenizer is None:
            return "characters (Unicode code points)"
        return f"{manifest()['name']} WordPiece tokens (models/tokenizer.json), no special tokens"

    def lines(self, lines: list[str]) -> np.ndarray:
        """Each line's size, line break excluded."""
        if self._tokenizer is None:
            return np.fromiter((len(line) for line in lines), dtype=np.int64, count=len(lines))
        encodings = self._tokenizer.encode_batch(lines, add_special_tokens=False)
        return np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(lines))

    def text(self, text: str) -> int:
        if self._tokenizer is None:
            return len(text)
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)


@cache
def _tokenizer():
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(
        (MODELS_DIR / manifest()["tokenizer"]["file"]).read_text("utf-8")
    )
    tokenizer.no_padding()
    tokenizer.no_truncation()  # the model reads 256 tokens; a packet is counted whole
    return tokenizer
