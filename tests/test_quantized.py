"""The re-quantised transformer (models/quantized/): pinned by the manifest, close to the
shipped model's vectors. Its rebuild (`models/build/quantized.py --check`) needs the `onnx`
package, which pix does not depend on, so it is run by hand (models/README.md), not here."""

from __future__ import annotations

import hashlib
import json
from importlib.resources import as_file

import numpy as np

from pix.ingest.embed import Embedder
from pix.paths import MODELS_DIR
from tests.conftest import GEOMETRY, GREETING, MAILER, TABLES, WEATHER

TEXTS = [TABLES, WEATHER, MAILER, GEOMETRY, GREETING, "where are cookies dropped on redirect"]


def quantized_file():
    spec = json.loads((MODELS_DIR / "manifest.json").read_text())["quantized"]
    return MODELS_DIR / spec["file"], spec


def test_the_file_is_the_one_the_manifest_names():
    resource, spec = quantized_file()
    data = resource.read_bytes()
    assert len(data) == spec["size"]
    assert hashlib.sha256(data).hexdigest() == spec["sha256"]


def test_vectors_stay_close_to_the_shipped_model():
    resource, _ = quantized_file()
    shipped = np.stack([Embedder().embed_batch([t])[0] for t in TEXTS])
    with as_file(resource) as path:
        quantized = Embedder(model_file=path)
    alone = np.stack([quantized.embed_batch([t])[0] for t in TEXTS])
    assert alone.shape == shipped.shape and alone.dtype == np.float32
    assert np.allclose(np.linalg.norm(alone, axis=1), 1.0, atol=1e-5)
    assert (alone * shipped).sum(axis=1).min() > 0.98
    # Dynamic activation scales are per batch: the same text in a batch moves a little.
    batched = quantized.embed_batch(TEXTS)
    assert (batched * alone).sum(axis=1).min() > 0.97
    # and the nearest text to each question is the same as with the shipped model
    assert (
        (alone @ alone.T).argsort(axis=1)[:, -2] == (shipped @ shipped.T).argsort(axis=1)[:, -2]
    ).all()
