"""The embedders a workspace's shards share (pix/shards.py): one model loaded once, and the
same question embedded once for every shard."""

from __future__ import annotations

import threading
from collections.abc import Callable

EMBED_KEPT = 8  # query vectors kept (a workspace embeds each query once, for every shard)


class OnceEmbedder:
    """An embedder shared by the shards' engines: the same texts are embedded once (the query
    is the same for every shard); anything else is the wrapped embedder's."""

    def __init__(self, load: Callable[[], object]) -> None:
        self._load = load
        self._model: object | None = None
        self._kept: dict[tuple[str, ...], object] = {}
        self._lock = threading.Lock()
        self._embedding = threading.Lock()

    @property
    def model(self):
        with self._lock:
            if self._model is None:
                self._model = self._load()
            return self._model

    def embed_batch(self, texts: list[str]):
        key = tuple(texts)
        if len(key) > 64:  # an index run's batch: nothing to share
            return self.model.embed_batch(texts)
        model = self.model
        with self._embedding:  # the shards' threads ask at once: one embeds, the others wait
            if key not in self._kept:
                self._kept[key] = model.embed_batch(texts)
                while len(self._kept) > EMBED_KEPT:
                    self._kept.pop(next(iter(self._kept)))
            return self._kept[key]

    def __getattr__(self, name: str):
        return getattr(self.model, name)


def load_embedder():
    from pix.ingest.embed import Embedder

    return Embedder()


def load_static():
    from pix.ingest.static import StaticEmbedder

    return StaticEmbedder()
