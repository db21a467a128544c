"""Waiting for another process's lock on a database: how long, and saying so on a terminal.

Every connection pix opens waits through LockWait rather than SQLite's own busy timeout, so
a long wait is said, PIX_LOCK_TIMEOUT bounds it, and Ctrl-C ends it in any thread.
"""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path

import apsw

from pix import interrupt
from pix.errors import UsageError

# How long a writer waits for another's transaction. The longest is a keyword-phase batch of
# another `pix index` (chunking up to 400 files under the write lock): seconds on a busy machine.
# PIX_LOCK_TIMEOUT (seconds) changes it: a script may rather fail fast, exit 5.
BUSY_TIMEOUT_MS = 60_000
LOCK_TIMEOUT_ENV = "PIX_LOCK_TIMEOUT"
# A wait this long is no longer pix's own short transactions: a person at a terminal is told.
SAY_WAITING_AFTER = 2.0
# SQLite's own backoff between tries (sqliteDefaultBusyCallback), in seconds.
BUSY_DELAYS = (0.001, 0.002, 0.005, 0.01, 0.015, 0.02, 0.025, 0.025, 0.025, 0.05, 0.05, 0.1)


def lock_timeout() -> float:
    """Seconds to wait for another process's lock: PIX_LOCK_TIMEOUT, else 60."""
    raw = os.environ.get(LOCK_TIMEOUT_ENV, "").strip()
    if not raw:
        return BUSY_TIMEOUT_MS / 1000
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 <= value < math.inf:
        raise UsageError(
            f"{LOCK_TIMEOUT_ENV} must be a number of seconds, 0 or more, not {raw!r}",
            hint=f"unset it to wait {BUSY_TIMEOUT_MS // 1000} s",
        )
    return value


class LockWait:
    """SQLite's busy wait, in Python so that a long one is said on a terminal: without it a
    command held by another process's lock (a sqlite3 shell left in a transaction) sat silent
    for a minute. One per connection; SQLite passes how often it asked in this wait."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self.started = 0.0
        self.said = False

    def __call__(self, count: int) -> bool:
        now = time.monotonic()
        if count == 0:
            self.started, self.said = now, False
        waited = now - self.started
        # Ctrl-C ends a wait in any thread (a workspace's shards wait in worker threads, where
        # no KeyboardInterrupt arrives and conn.interrupt does not end a busy wait).
        if waited >= self.timeout or interrupt.requested():
            return False
        if waited >= SAY_WAITING_AFTER and not self.said and sys.stderr.isatty():
            self.said = True
            print(
                f"pix: waiting for {self.path}: another process holds its lock (up to "
                f"{self.timeout:g} s; {LOCK_TIMEOUT_ENV} sets how long)",
                file=sys.stderr,
                flush=True,
            )
        delay = BUSY_DELAYS[min(count, len(BUSY_DELAYS) - 1)]
        time.sleep(min(delay, self.timeout - waited))
        return True


def wait_for_locks(conn: apsw.Connection, path: Path) -> None:
    conn.set_busy_handler(LockWait(path, lock_timeout()))
