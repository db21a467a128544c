"""Progress on stderr for long work: count, rate and ETA, only when stderr is a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, enabled: bool | None = None, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self._label = ""
        self._total = 0
        self._done = 0
        self._start = 0.0
        self._last = 0.0

    def start(self, label: str, total: int) -> None:
        self._label, self._total, self._done = label, total, 0
        self._start = self._last = time.monotonic()
        self._draw()

    def advance(self, n: int = 1) -> None:
        self._done += n
        now = time.monotonic()
        if now - self._last >= 0.2 or self._done >= self._total:
            self._last = now
            self._draw()

    def finish(self) -> None:
        if self.enabled and self._label:
            self._draw()
            self.stream.write("\n")
            self.stream.flush()
        self._label = ""

    def _draw(self) -> None:
        if not self.enabled:
            return
        elapsed = max(time.monotonic() - self._start, 1e-9)
        rate = self._done / elapsed
        left = (self._total - self._done) / rate if rate > 0 else 0.0
        self.stream.write(
            f"\r{self._label}: {self._done}/{self._total}  {rate:,.1f}/s  ETA {left:,.0f}s   "
        )
        self.stream.flush()
