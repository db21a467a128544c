"""Fit pix's static table to the transformer it stands in for, on a pinned public corpus.

    python models/build/static_fit.py [--mirrors DIR] [--work DIR]   # writes the shipped table
    python models/build/static_fit.py --check [--mirrors DIR]        # rebuild, compare sha256

models/build/static.py distils one vector per token from the transformer (each token run
alone). A token alone is not how code reads, so this second step fits the rows to what the
transformer says about whole texts (the idea of MinishLab's tokenlearn, here as one
least-squares solve with numpy instead of training):

1. Texts: the repositories of static/fit_corpus.json, each read at its pinned commit through
   `pix index --at` (pix's own chunker, static tier only): up to 2,500 chunk inputs per
   repository (those whose embed key has the smallest sha1, so the sample is fixed) and up to
   800 commit subjects (distinct, 12-200 characters, smallest sha1 first), which read like the
   queries pix is asked. No development or benchmark repository of pix is among them.
2. Targets: each text's vector from the transformer pix runs (models/quantized/, 256-token
   window), centred and reduced by PCA to the table's width.
3. Start: the distilled table (static.py, rebuilt in memory), mapped into the target space by
   one linear least-squares fit of its text means to the targets.
4. Fit: every real token that occurs in the texts ([UNK] and the other special tokens keep
   their zero rows) gets the row E minimising
   sum_texts |mean of its (first 254) tokens' rows - target|^2 + LAMBDA |E - start|^2,
   one dense solve over those tokens; tokens that never occur keep their start row.
5. Stored as float16, the shape static.py gives.

Bit for bit, as static.py: the transformer runs each text alone, numpy's BLAS runs on one thread
(set below, before numpy loads) and every step is fixed; the clones need git and either the
network or --mirrors (bare mirrors named owner+name, each holding the pinned commit). The fit
depends on pix's chunker, so the manifest records the pix version it was made with.
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"  # one BLAS thread: a fixed order of sums, the same bits each run

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import static  # noqa: E402  (models/build/static.py: the distilled table)

MODELS = Path(__file__).resolve().parent.parent
CORPUS = MODELS / "static" / "fit_corpus.json"
OUTPUT = MODELS / "static" / "minilm-static.npy"
LAMBDA = 0.01  # chosen on three corpus repositories held out of the fit (none of pix's sets)
WINDOW = 254  # the tokens the transformer reads besides [CLS] and [SEP]
GRAM_BLOCK = 2048  # texts per block of the dense design matrix


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogateescape")).hexdigest()


def _clone(repo: str, commit: str, dest: Path, mirrors: Path | None) -> None:
    source = (
        str(mirrors / repo.replace("/", "+", 1) / "repo")
        if mirrors
        else f"https://github.com/{repo}"
    )
    subprocess.run(["git", "clone", "-q", "--no-checkout", source, str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "cat-file", "-e", f"{commit}^{{commit}}"], check=True)


def corpus_texts(work: Path, mirrors: Path | None) -> list[str]:
    """The fitting texts in a fixed order: per repository its chunks, then its subjects."""
    import apsw

    from pix.index import index_repository
    from pix.store import content

    spec = json.loads(CORPUS.read_text(encoding="utf-8"))
    texts: list[str] = []
    for entry in spec["repositories"]:
        repo, commit = entry["repo"], entry["commit"]
        name = repo.replace("/", "+", 1)
        src, db = work / "src" / name, work / "db" / f"{name}.db"
        if not src.exists():
            _clone(repo, commit, src, mirrors)
        db.parent.mkdir(parents=True, exist_ok=True)
        index_repository(str(src), str(db), at=commit, embed=False)
        conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
        rows = conn.execute(
            "SELECT embed_key, context, blob_id, start_char, end_char FROM chunk"
            " WHERE id IN (SELECT min(id) FROM chunk GROUP BY embed_key)"
        ).fetchall()
        sample = sorted(rows, key=lambda r: _sha1(str(r[0])))[: spec["chunks_per_repository"]]
        chunks = [t for t in content.embed_inputs(conn, sample) if t.strip()]
        conn.close()
        log = subprocess.run(
            ["git", "-C", str(src), "log", "--no-merges", "--format=%s", commit],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
        subjects = {s.strip() for s in log if 12 <= len(s.strip()) <= 200}
        subjects_kept = sorted(subjects, key=_sha1)[: spec["subjects_per_repository"]]
        texts += chunks + subjects_kept
        print(f"{repo}@{commit[:12]}: {len(chunks)} chunks, {len(subjects_kept)} subjects")
    return texts


def targets(texts: list[str], work: Path) -> np.ndarray:
    """The transformer's unit vectors of the texts, cached in `work` by the texts' digest."""
    digest = hashlib.sha256("\0".join(texts).encode("utf-8", "surrogateescape")).hexdigest()
    cache = work / f"targets-{digest[:16]}.npy"
    if cache.exists():
        return np.load(cache)
    from pix.ingest.embed import Embedder

    embedder = Embedder()
    out = np.zeros((len(texts), embedder.dims), dtype=np.float32)
    for start in range(0, len(texts), 512):
        out[start : start + 512] = embedder.embed_batch(texts[start : start + 512])
        print(f"  transformer: {min(start + 512, len(texts))} / {len(texts)}", flush=True)
    np.save(cache, out)
    return out


def token_ids(texts: list[str]) -> list[np.ndarray]:
    """Each text's token ids as the transformer reads them (no special tokens, first 254)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(MODELS / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return [np.asarray(e.ids[:WINDOW], np.int64) for e in tok.encode_batch(texts, False)]


def target_space(y: np.ndarray, dims: int) -> np.ndarray:
    """The targets centred and reduced by PCA to `dims` (signs fixed as static.py does)."""
    centred = y.astype(np.float64) - y.mean(axis=0, dtype=np.float64)
    eigenvalues, vectors = np.linalg.eigh(centred.T @ centred / (len(y) - 1))
    components = vectors[:, np.argsort(-eigenvalues, kind="stable")[:dims]]
    peak = np.abs(components).argmax(axis=0)
    components *= np.sign(components[peak, np.arange(dims)])
    return centred @ components


def means(table: np.ndarray, ids: list[np.ndarray]) -> np.ndarray:
    """Each text's mean of its tokens' rows (what pix's static vector is before its norm)."""
    return np.stack([table[t].mean(axis=0) for t in ids])


def fit(ids: list[np.ndarray], z: np.ndarray, start: np.ndarray, real: np.ndarray) -> np.ndarray:
    """The fitted table (float64, the start table's shape) for texts with token ids `ids` (none
    empty) and targets `z` (see the module doc, steps 3 and 4). Only `real` tokens are fitted:
    [UNK] and the other special tokens keep their zero rows, as in the distilled table."""
    dims = z.shape[1]
    mapping, *_ = np.linalg.lstsq(means(start, ids), z, rcond=None)
    start = start @ mapping
    counts = np.bincount(np.concatenate(ids), minlength=len(start))
    used = np.flatnonzero((counts > 0) & real)
    column = np.full(len(start), -1, dtype=np.int64)
    column[used] = np.arange(len(used))
    fixed = start.copy()
    fixed[used] = 0.0
    residual = z - means(fixed, ids)  # what the fitted rows must add to the rows that stay

    gram = np.zeros((len(used), len(used)))
    rhs = np.zeros((len(used), dims))
    for first in range(0, len(ids), GRAM_BLOCK):
        block = ids[first : first + GRAM_BLOCK]
        design = np.zeros((len(block), len(used)), dtype=np.float32)  # float32: twice as fast
        for row, t in enumerate(block):
            np.add.at(design[row], column[t], np.float32(1.0 / len(t)))
        gram += design.T @ design
        rhs += design.T.astype(np.float64) @ residual[first : first + GRAM_BLOCK]
    gram[np.diag_indices_from(gram)] += LAMBDA
    table = start.copy()
    table[used] = np.linalg.solve(gram, rhs + LAMBDA * start[used])
    return table


def build(work: Path, mirrors: Path | None) -> np.ndarray:
    texts = corpus_texts(work, mirrors)
    y = targets(texts, work)
    ids = token_ids(texts)
    keep = [i for i, t in enumerate(ids) if len(t)]
    start = static.build().astype(np.float64)
    z = target_space(y[keep], start.shape[1])
    _, real, _, _ = static.vocabulary()
    return fit([ids[i] for i in keep], z, start, real).astype(np.float16)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="rebuild and compare, write nothing")
    parser.add_argument("--mirrors", type=Path, help="bare mirrors (owner+name/repo) to clone")
    parser.add_argument("--work", type=Path, help="keep clones, databases and targets here")
    args = parser.parse_args(argv)
    from pix.ingest.embed import sha256_file

    with tempfile.TemporaryDirectory(prefix="pix-static-fit-") as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        table = build(work, args.mirrors)
    data = static.npy_bytes(table)
    digest = hashlib.sha256(data).hexdigest()
    manifest = json.loads((MODELS / "manifest.json").read_text(encoding="utf-8"))
    shipped = manifest["static"]["sha256"]
    output = OUTPUT
    if args.check:
        if digest == shipped and sha256_file(output) == shipped:
            print(f"ok: {output.relative_to(MODELS.parent)} rebuilt bit for bit ({digest})")
            return 0
        print(f"MISMATCH: rebuilt {digest}, manifest {shipped}", file=sys.stderr)
        return 1
    output.write_bytes(data)
    print(f"wrote {output.relative_to(MODELS.parent)}: shape {table.shape}, {len(data)} bytes")
    print(f"sha256 {digest}")
    if shipped != digest:
        print("models/manifest.json 'static' does not carry this sha256 yet: update it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
