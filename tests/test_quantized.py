"""The transformer pix runs, re-quantised (models/quantized/): pinned by the manifest, close
to the source model's vectors, and the same vector for a text whatever it is run beside. Its
rebuild (`models/build/quantized.py --check`) needs the `onnx` package, which pix does not
depend on, so it is run by hand (models/README.md), not here."""

from __future__ import annotations

import hashlib
import json

import numpy as np

from pix.ingest.embed import Embedder, source_model_path
from pix.paths import MODELS_DIR
from tests.conftest import GEOMETRY, GREETING, MAILER, TABLES, WEATHER

TEXTS = [TABLES, WEATHER, MAILER, GEOMETRY, GREETING, "where are cookies dropped on redirect"]


def quantized_file():
    spec = json.loads((MODELS_DIR / "manifest.json").read_text())["model"]
    return MODELS_DIR / spec["file"], spec


def test_the_file_is_the_one_the_manifest_names():
    resource, spec = quantized_file()
    data = resource.read_bytes()
    assert len(data) == spec["size"]
    assert hashlib.sha256(data).hexdigest() == spec["sha256"]


def test_vectors_stay_close_to_the_source_model():
    source = Embedder(model_file=source_model_path())
    before = np.stack([source.embed_batch([t])[0] for t in TEXTS])
    ours = Embedder()
    alone = np.stack([ours.embed_batch([t])[0] for t in TEXTS])
    assert alone.shape == before.shape and alone.dtype == np.float32
    assert np.allclose(np.linalg.norm(alone, axis=1), 1.0, atol=1e-5)
    assert (alone * before).sum(axis=1).min() > 0.98
    # Activation scales are taken per model run: pix runs each text alone, so a text's vector
    # is the same in a batch as by itself.
    assert np.array_equal(ours.embed_batch(TEXTS), alone)
    # and the nearest text to each question is the same as with the source model
    assert (
        (alone @ alone.T).argsort(axis=1)[:, -2] == (before @ before.T).argsort(axis=1)[:, -2]
    ).all()
