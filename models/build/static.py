"""Distil a static embedding table from the shipped MiniLM ONNX model, bit for bit.

    python models/build/static.py --check       # rebuild in memory, compare with the manifest
    python models/build/static.py --out FILE    # write the distilled table to FILE

This is the first of two steps: models/build/static_fit.py starts from this table and fits it
to the transformer's vectors of whole texts, and that fitted table is the one pix ships. The
manifest records this step's sha256 as static.distilled.sha256.

One vector per vocabulary token (model2vec's recipe, with only onnxruntime, tokenizers and
numpy; no model hub, no torch):

1. Each token id t is run through the transformer alone, as the 3-token input
   [SEP] t [CLS] (model2vec's reversed special tokens: on pix's development sets they rank
   better than [CLS] t [SEP], MRR@10 +0.03 to +0.07), and its output is mean-pooled over the
   three positions, exactly as pix pools a chunk. Batches of 1024, THREADS onnxruntime
   threads (their kernels split rows and columns, never a sum: 1 and 2 threads gave the same
   bits, and 2 take 22 s where 1 takes 36 s).
2. PCA to DIMS components, fitted (float64, centred) on the real tokens only: special tokens
   and the [unusedN] placeholders, which the tokenizer never emits for text, are left out of
   the fit and get all-zero rows. Components come from numpy's symmetric eigensolver on the
   384x384 covariance, ordered by eigenvalue; each component's sign is fixed so that its
   largest-magnitude coefficient is positive (eigensolvers may return either sign).
3. SIF weighting with Zipf-estimated frequencies: the k-th real token (in vocabulary order,
   which for this WordPiece vocabulary runs roughly from frequent to rare) gets probability
   p_k proportional to 1/(k+2) and weight 1e-4 / (1e-4 + p_k), so frequent tokens (punctuation,
   "the", "self") count less in a mean.
4. Stored as float16, shape (vocabulary, DIMS), in one .npy file.

A text's static vector is then the mean of its tokens' rows, L2-normalised (pix/ingest/static.py).

Bit for bit: the same onnxruntime build on the same CPU kernels gives the same float32 outputs,
and every later step is fixed (float64 arithmetic, sign rule, rounding to float16 once at the
end). Another CPU family or onnxruntime version may differ in the last float32 bits, which can
flip a few float16 roundings: `--check` then reports how many values differ and by how much.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

import numpy as np

from pix.ingest.embed import source_model_path

MODELS = Path(__file__).resolve().parent.parent
DIMS = 256
SIF_COEFFICIENT = 1e-4
BATCH = 1024
THREADS = 2
SPECIAL = re.compile(r"\[(PAD|UNK|CLS|SEP|MASK|unused\d+)\]")


def vocabulary() -> tuple[int, np.ndarray, int, int]:
    """Vocabulary size, a mask of the ids that are real tokens, and the [CLS]/[SEP] ids."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(MODELS / "tokenizer.json"))
    vocab = tok.get_vocab(with_added_tokens=True)
    size = max(vocab.values()) + 1
    real = np.ones(size, dtype=bool)
    for token, i in vocab.items():
        if SPECIAL.fullmatch(token):
            real[i] = False
    return size, real, vocab["[CLS]"], vocab["[SEP]"]


def token_outputs(size: int, cls: int, sep: int) -> np.ndarray:
    """(size, 384) float32: each token's mean-pooled output for the input [SEP] t [CLS]."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = THREADS
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    session = ort.InferenceSession(
        str(source_model_path()), sess_options=options, providers=["CPUExecutionProvider"]
    )
    ids = np.arange(size, dtype=np.int64)
    out = []
    for start in range(0, size, BATCH):
        t = ids[start : start + BATCH]
        batch = np.stack([np.full_like(t, sep), t, np.full_like(t, cls)], axis=1)
        (hidden,) = session.run(
            ["last_hidden_state"],
            {
                "input_ids": batch,
                "attention_mask": np.ones_like(batch),
                "token_type_ids": np.zeros_like(batch),
            },
        )
        out.append(hidden.mean(axis=1, dtype=np.float32))
    return np.concatenate(out)


def reduce_and_weight(outputs: np.ndarray, real: np.ndarray, dims: int) -> np.ndarray:
    """PCA (fitted on real tokens), sign-fixed components, Zipf/SIF weights, zero rows for the
    rest. float64 throughout; the caller rounds once."""
    x = outputs.astype(np.float64)
    fit = x[real]
    mean = fit.mean(axis=0)
    centred = fit - mean
    covariance = centred.T @ centred / (len(fit) - 1)
    eigenvalues, vectors = np.linalg.eigh(covariance)
    order = np.argsort(-eigenvalues, kind="stable")[:dims]
    components = vectors[:, order]
    peak = np.abs(components).argmax(axis=0)
    components *= np.sign(components[peak, np.arange(dims)])
    table = np.zeros((len(x), dims), dtype=np.float64)
    table[real] = centred @ components
    rank = np.arange(real.sum(), dtype=np.float64)
    p = 1.0 / (rank + 2.0)
    p /= p.sum()
    table[real] *= (SIF_COEFFICIENT / (SIF_COEFFICIENT + p))[:, None]
    return table


def build(dims: int = DIMS) -> np.ndarray:
    size, real, cls, sep = vocabulary()
    return reduce_and_weight(token_outputs(size, cls, sep), real, dims).astype(np.float16)


def npy_bytes(table: np.ndarray) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, table, allow_pickle=False)
    return buffer.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="rebuild and compare, write nothing")
    parser.add_argument("--out", type=Path, help="write the distilled table here")
    args = parser.parse_args(argv)
    table = build()
    data = npy_bytes(table)
    digest = hashlib.sha256(data).hexdigest()
    manifest = json.loads((MODELS / "manifest.json").read_text(encoding="utf-8"))
    recorded = manifest["static"]["distilled"]["sha256"]
    if args.check:
        if digest == recorded:
            print(f"ok: the distilled table rebuilt bit for bit ({digest})")
            return 0
        print(f"MISMATCH: rebuilt {digest}, manifest static.distilled {recorded}", file=sys.stderr)
        return 1
    if args.out:
        args.out.write_bytes(data)
        print(f"wrote {args.out}: shape {table.shape}, {len(data)} bytes")
    print(f"sha256 {digest}")
    if recorded != digest:
        print("models/manifest.json static.distilled does not carry this sha256 yet")
    return 0


if __name__ == "__main__":
    sys.exit(main())
