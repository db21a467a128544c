"""The static embedder: the shipped token table and the real tokenizer, no mocks."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pix.ingest import static
from pix.ingest.static import StaticEmbedder
from pix.paths import MODELS_DIR
from tests.conftest import GEOMETRY, GREETING, MAILER, TABLES, WEATHER

CHECKOUT = Path(__file__).resolve().parent.parent  # the build script is not installed


@pytest.fixture(scope="module")
def embedder() -> StaticEmbedder:
    return StaticEmbedder(verify=True)


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_the_shipped_table_is_the_one_the_manifest_names():
    spec = json.loads((MODELS_DIR / "manifest.json").read_text())["static"]
    data = (MODELS_DIR / spec["file"]).read_bytes()
    assert hashlib.sha256(data).hexdigest() == spec["sha256"]
    table = np.load(io.BytesIO(data))
    assert list(table.shape) == spec["shape"] and table.dtype == np.dtype(spec["dtype"])
    # Special tokens and [unusedN] placeholders are zero rows; every real token has a vector.
    vocab = json.loads((MODELS_DIR / "tokenizer.json").read_text())["model"]["vocab"]
    for token in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[unused0]", "[unused993]"):
        assert not table[vocab[token]].any(), token
    for token in ("def", "return", "##ing", "self", "("):
        assert np.abs(table[vocab[token]]).sum() > 0, token


def test_vectors_are_unit_float32_of_the_table_width(embedder):
    vectors = embedder.embed_batch([TABLES, WEATHER, MAILER, "x"])
    assert vectors.dtype == np.float32 and vectors.shape == (4, embedder.dims)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_code_is_closest_to_the_question_it_answers(embedder):
    corpus = [TABLES, WEATHER, MAILER, GEOMETRY, GREETING]
    questions = {
        "read rows of comma separated values from a file": 0,
        "mean temperature of a weather station": 1,
        "send an email to a new user": 2,
        "area of a circle": 3,
        "say hello to someone by name": 4,
    }
    chunks = embedder.embed_batch(corpus)
    asked = embedder.embed_batch(list(questions))
    best = (asked @ chunks.T).argmax(axis=1)
    assert best.tolist() == list(questions.values())


def test_same_text_same_vector_whatever_the_batch(embedder):
    alone = embedder.embed_batch([WEATHER])[0]
    again = embedder.embed_batch([WEATHER])[0]
    assert np.array_equal(alone, again)
    batch = embedder.embed_batch([TABLES, "", WEATHER, MAILER * 3, WEATHER])
    assert np.allclose(batch[2], alone, atol=1e-6) and np.allclose(batch[4], alone, atol=1e-6)


def test_batches_spanning_many_blocks_match_one_by_one(embedder, monkeypatch):
    texts = [TABLES, WEATHER, "", MAILER, GEOMETRY, "   ", GREETING] * 5
    one_by_one = np.stack([embedder.embed_batch([t])[0] for t in texts])
    monkeypatch.setattr(static, "BLOCK", 64)  # forces many groups and the histogram path
    assert np.allclose(embedder.embed_batch(texts), one_by_one, atol=1e-6)


def test_empty_input(embedder):
    assert embedder.embed_batch([]).shape == (0, embedder.dims)
    vectors = embedder.embed_batch(["", "   \n\t", WEATHER])
    assert not vectors[0].any() and not vectors[1].any()  # no tokens, no direction
    assert np.isclose(np.linalg.norm(vectors[2]), 1.0, atol=1e-5)


def test_huge_text_is_read_whole_not_truncated(embedder):
    # A mean is scale-free: a text repeated many times has the text's own vector, which holds
    # only if all of it is read (the transformer's 256-token window does not apply).
    huge = "\n".join([TABLES] * 400)
    ids, counts = embedder.token_ids([huge])
    assert counts[0] > 10 * static.BLOCK
    vector = embedder.embed_batch([huge])[0]
    assert np.allclose(vector, embedder.embed_batch([TABLES])[0], atol=1e-4)
    # and the tail counts: a different last part moves the vector
    tail = embedder.embed_batch([TABLES + "\n" + MAILER * 3])[0]
    assert cos(tail, embedder.embed_batch([TABLES])[0]) < 0.99


def test_fitting_moves_text_means_towards_the_transformer():
    # static_fit's solve on a small real corpus (paragraphs of pix's own code, the real
    # transformer's vectors as targets): the fitted rows reproduce the targets better than the
    # mapped start table, and a token no text holds keeps its mapped start row.
    sys.path.insert(0, str(CHECKOUT / "models" / "build"))
    import static_fit

    from pix.ingest.embed import Embedder

    source = (CHECKOUT / "pix" / "query.py").read_text(encoding="utf-8")
    texts = [p for p in source.split("\n\n") if len(p) > 80][:60]
    ids = static_fit.token_ids(texts)
    z = static_fit.target_space(Embedder().embed_batch(texts), 8)
    start = static.load_table()[:, :16].astype(np.float64)  # 16 columns: a real mapping
    mapping, *_ = np.linalg.lstsq(static_fit.means(start, ids), z, rcond=None)
    _, real, _, _ = static_fit.static.vocabulary()
    fitted = static_fit.fit(ids, z, start, real)
    error = np.linalg.norm(static_fit.means(fitted, ids) - z)
    baseline = np.linalg.norm(static_fit.means(start @ mapping, ids) - z)
    assert fitted.shape == (len(start), 8) and error < 0.7 * baseline
    unused = np.setdiff1d(np.arange(len(start)), np.concatenate(ids))[1000]
    assert np.allclose(fitted[unused], start[unused] @ mapping)


def test_build_script_rebuilds_the_distilled_table_bit_for_bit():
    done = subprocess.run(
        [sys.executable, str(CHECKOUT / "models" / "build" / "static.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("ok:")
