"""What a step remembers of the files it read, by blob: a bounded map, the least recently used
entry out first, safe across threads (an MCP server answers from several). A blob's text never
changes, so an entry never goes stale; the bound keeps a long-running server's memory flat."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class Kept(Generic[V]):
    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V | None:
        """The value kept under `key` (now the most recently used), or None."""
        with self._lock:
            if key not in self._entries:
                return None
            self._entries.move_to_end(key)
            return self._entries[key]

    def put(self, key: Hashable, value: V) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            if len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
