"""Static text embeddings: a lookup table of token vectors, averaged per text.

The table (models/static/minilm-static.npy, made by models/build/static.py from the shipped
MiniLM model) holds one float16 vector per WordPiece token, already weighted so frequent
tokens count less. A text's vector is the mean of its tokens' rows, L2-normalised: no
transformer runs, so it costs about as much as tokenising.

Its space is not the transformer's: a static vector is comparable with static vectors only
(bench/README.md, static_bench, measures both and how their cosines are distributed).
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np

from pix.errors import PixError
from pix.ingest.embed import manifest
from pix.paths import MODELS_DIR

# Tokens gathered per numpy call. Small enough that the gathered rows (BLOCK x dims x 4 bytes,
# 4 MiB at 256 dims) stay in cache: on all of click's chunks 4096 ran 0.6 s, 16384 0.75 s,
# 65536 1.1 s. A longer text takes the histogram path instead.
BLOCK = 1 << 12


def static_identity() -> dict[str, str]:
    """What a database records about the table its static vectors came from."""
    spec = manifest()["static"]
    return {
        "static.name": spec["name"],
        "static.sha256": spec["sha256"],
        "static.dims": str(spec["shape"][1]),
    }


def load_table(verify: bool = False) -> np.ndarray:
    """The shipped table as float32 (gathering float32 rows is faster than converting float16
    ones on every call; 30 MiB in memory)."""
    spec = manifest()["static"]
    resource = MODELS_DIR / spec["file"]
    try:
        data = resource.read_bytes()
    except OSError:
        data = b""
    if len(data) != spec["size"]:
        raise PixError(f"the static embedding table is missing or incomplete: {resource}")
    if verify and hashlib.sha256(data).hexdigest() != spec["sha256"]:
        raise PixError(
            f"the static embedding table does not match models/manifest.json: {resource}"
        )
    table = np.load(io.BytesIO(data), allow_pickle=False)
    if list(table.shape) != spec["shape"]:
        raise PixError(f"the static embedding table has shape {table.shape}, not {spec['shape']}")
    return table.astype(np.float32)


class StaticEmbedder:
    """Token-table embeddings. One method does the work: `embed_batch`.

    `table` and `tokenizer_file` default to the shipped MiniLM-derived pair; any table whose
    rows are indexed by that tokenizer's ids works (the benchmark loads potion-base-8M so)."""

    def __init__(
        self,
        table: np.ndarray | None = None,
        tokenizer_file: Path | None = None,
        verify: bool = False,
    ) -> None:
        from tokenizers import Tokenizer

        self.table = load_table(verify) if table is None else np.asarray(table, np.float32)
        self.dims = int(self.table.shape[1])
        if tokenizer_file is None:
            resource = MODELS_DIR / manifest()["static"]["tokenizer"]
            self.tokenizer = Tokenizer.from_str(resource.read_text("utf-8"))
        else:
            self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        # A chunk is read whole: the transformer's 256-token window does not apply here.
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()

    def token_ids(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """All texts' token ids end to end (no special tokens) and each text's token count."""
        encodings = self.tokenizer.encode_batch(texts, add_special_tokens=False)
        counts = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(texts))
        if not counts.sum():
            return np.zeros(0, dtype=np.int64), counts
        return np.concatenate([e.ids for e in encodings]).astype(np.int64), counts

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        """Unit vectors, shape (len(texts), dims), float32. A text with no tokens (empty or
        whitespace only) gets the zero vector: it has no direction to point in."""
        ids, counts = self.token_ids(list(texts))
        return self.embed_ids(ids, counts)

    def embed_ids(self, ids: np.ndarray, counts: np.ndarray) -> np.ndarray:
        sums = np.zeros((len(counts), self.dims), dtype=np.float32)
        ends = np.cumsum(counts)
        starts = ends - counts
        # Texts in groups of about BLOCK tokens: one gather and one reduceat per group.
        first = 0
        while first < len(counts):
            if counts[first] > BLOCK:  # one huge text: a token histogram times the table
                piece = ids[starts[first] : ends[first]]
                histogram = np.bincount(piece, minlength=len(self.table)).astype(np.float32)
                sums[first] = histogram @ self.table
                first += 1
                continue
            last = int(np.searchsorted(ends, starts[first] + BLOCK, side="right"))
            last = max(last, first + 1)
            group = np.arange(first, last)
            group = group[counts[group] > 0]
            if len(group):
                lo, hi = starts[first], ends[last - 1]
                rows = self.table[ids[lo:hi]]
                sums[group] = np.add.reduceat(rows, starts[group] - lo, axis=0)
            first = last
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        return sums / np.where(norms > 0, norms, 1.0)
