"""Progress on stderr for long work: count, rate and ETA, only when stderr is a terminal.

When items cost unevenly, the caller gives each its cost (`work`): embedding runs chunks
shortest first, so a rate in chunks per second measured on the short ones promised about half
the real time left (120 s shown, 270 s real on click). The ETA is then the work left divided by
the work done per second: for embedding, padded tokens, which the model's time follows.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


class Progress:
    def __init__(
        self,
        enabled: bool | None = None,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        notes: bool = False,
    ) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.clock = clock
        self.notes = notes  # `note` lines, which show off a terminal too
        self._label = ""
        self._total = self._done = 0
        self._work_total = self._work_done = 0
        self._start = self._last = 0.0

    def start(self, label: str, total: int, work: int | None = None) -> None:
        """`total` items to do; `work`, if given, their summed cost (the ETA is then measured
        in it, and each `advance` says how much of it was done)."""
        self._label, self._total, self._done = label, total, 0
        self._work_total, self._work_done = (work, 0) if work is not None else (0, 0)
        self._start = self._last = self.clock()
        self._draw()

    def grow(self, n: int, work: int = 0) -> None:
        """More items joined the running total (work found while the first is done)."""
        self._total += n
        self._work_total += work

    def advance(self, n: int = 1, work: int = 0) -> None:
        self._done += n
        self._work_done += work
        now = self.clock()
        if now - self._last >= 0.2 or self._done >= self._total:
            self._last = now
            self._draw()

    def finish(self) -> None:
        if self.enabled and self._label:
            self._draw()
            self.stream.write("\n")
            self.stream.flush()
        self._label = ""

    def rate(self) -> float:
        """Items per second so far."""
        return self._done / max(self.clock() - self._start, 1e-9)

    def eta(self) -> float:
        """Seconds left: the work left at the work rate so far (items when no work was given);
        0 before anything is done, as nothing is known yet."""
        elapsed = max(self.clock() - self._start, 1e-9)
        if self._work_total:
            done, total = self._work_done, self._work_total
        else:
            done, total = self._done, self._total
        return (total - done) / (done / elapsed) if done > 0 else 0.0

    def note(self, message: str) -> None:
        """One line about what is going on (another pix holds the work, ...)."""
        if not self.notes:
            return
        drawing = self.enabled and self._label
        self.stream.write(("\n" if drawing else "") + f"pix: {message}\n")
        self.stream.flush()
        if drawing:
            self._draw()

    def _draw(self) -> None:
        if not self.enabled:
            return
        self.stream.write(
            f"\r{self._label}: {self._done}/{self._total}  {self.rate():,.1f}/s  "
            f"ETA {self.eta():,.0f}s   "
        )
        self.stream.flush()
