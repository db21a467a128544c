"""Ctrl-C (SIGINT): exit 130 with one line, within about a second, whatever pix is doing.

Python runs a signal handler only between bytecodes of the main thread, and pix's main thread
spends long stretches inside C: onnxruntime's `session.run`, SQLite statements, the tokenizer.
A plain KeyboardInterrupt then waits until that call returns (25 s was seen on a busy machine).
So `install()` also has the C-level handler write the signal to a wakeup pipe, and a watcher
thread blocked on that pipe cancels what runs in C at once: every canceller registered with
`cancelling()` (sqlite3_interrupt on each open connection, onnxruntime's RunOptions.terminate).
The cancelled call returns, the main thread gets its KeyboardInterrupt, unwinds (the open
transaction rolls back) and exits 130 through `report()`. If the process is still alive
GRACE_SECONDS later (a call nothing can cancel, a wait for another writer's lock), the watcher
ends it with the same line and code; SQLite's journal makes that as safe as a kill. A second
Ctrl-C ends it at once.

SIGTERM (`timeout`, a service manager, an agent's host stopping a server) takes the same path
and exits 143 (128 + 15), as a shell reports a terminated command.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator

GRACE_SECONDS = 2.0
MESSAGE = "pix: interrupted; what was committed is kept, run the command again to continue\n"

_requested = threading.Event()
_ours: set[int] = set()  # the signals install() watches
_lock = threading.Lock()  # cancellers run under it, so none runs on a connection being closed
_cancellers: dict[int, Callable[[], object]] = {}
_reported = threading.Lock()
_grace = GRACE_SECONDS
_installed = False
_received = signal.SIGINT  # the first of the signals watched, for the exit code


def install(grace: float = GRACE_SECONDS) -> None:
    """Watch for SIGINT from here on (main thread only; once per process)."""
    global _installed, _grace
    _grace = grace
    if _installed or threading.current_thread() is not threading.main_thread():
        return
    # SIGINT ignored (a background job: `timeout 60 pix index &`) or handled by whoever
    # embeds pix is left alone; SIGTERM is watched unless someone else handles it.
    watch_int = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    watch_term = signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    if not (watch_int or watch_term):
        return
    if watch_term:
        signal.signal(signal.SIGTERM, _terminated)
    # Python's handler writes every signal with a Python-level handler to the pipe: the
    # watcher acts on pix's own only (a SIGINT someone else handles is theirs).
    _ours.update(
        signum
        for signum, watched in ((signal.SIGINT, watch_int), (signal.SIGTERM, watch_term))
        if watched
    )
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    threading.Thread(target=_watch, args=(read_fd,), name="pix-interrupt", daemon=True).start()
    _installed = True


def reclaim_sigterm() -> None:
    """Watch SIGTERM again after a library replaced the handler (ray.init installs one that
    exits at once, with no line and no unwinding)."""
    if signal.SIGTERM in _ours and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminated)


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM's Python-level handler: a KeyboardInterrupt, as SIGINT's is, known as a
    request before it unwinds (asyncio's shutdown asks `requested()` before it prints the
    cancelled tasks' tracebacks, and the watcher thread may not have read the pipe yet)."""
    _received_first(signum)
    _requested.set()
    raise KeyboardInterrupt


def _received_first(signum: int) -> None:
    global _received
    if not _requested.is_set() and signum in _ours:
        _received = signal.Signals(signum)


def set_grace(seconds: float) -> None:
    """How long the main thread may take to unwind after a SIGINT (a server has nothing to
    unwind that SQLite does not already guarantee, so it shortens this)."""
    global _grace
    _grace = seconds


def requested() -> bool:
    return _requested.is_set()


@contextlib.contextmanager
def cancelling(cancel: Callable[[], object]) -> Iterator[None]:
    """Run `cancel` (from the watcher thread) if SIGINT arrives while the block runs."""
    if _requested.is_set():
        raise KeyboardInterrupt
    with _lock:
        key = id(cancel)
        _cancellers[key] = cancel
    try:
        yield
    finally:
        with _lock:
            _cancellers.pop(key, None)


def register(cancel: Callable[[], object]) -> int:
    """Like `cancelling`, for something that lives longer than one block (an open
    connection). Returns the key for `unregister`."""
    with _lock:
        _cancellers[id(cancel)] = cancel
    return id(cancel)


def unregister(key: int) -> None:
    with _lock:
        _cancellers.pop(key, None)


def report() -> int:
    """Say "interrupted" (once per process) and return the exit code: 130 after SIGINT, 143
    after SIGTERM."""
    if _reported.acquire(blocking=False):
        if threading.current_thread() is threading.main_thread():
            # Unwinding is done: a second Ctrl-C now would only print a traceback.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            if signal.getsignal(signal.SIGTERM) is _terminated:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
            with contextlib.suppress(Exception):
                sys.stderr.flush()  # (not from the watcher: the main thread may hold its lock)
        with contextlib.suppress(OSError):
            os.write(2, ("\n" if _isatty() else "").encode() + MESSAGE.encode())
    return 128 + _received


def finished() -> None:
    """The command is done and its answer out: a signal from here to the exit changes nothing.
    Python's own handling would raise KeyboardInterrupt in the interpreter's shutdown, which
    ends the process by the signal itself (exit -2, not 130, no line; an audit saw it 2 times
    in 13) or prints a traceback from an exit hook. A signal caught just before a handler is
    replaced raises here (signal.signal runs pending handlers): it is dropped, and the
    replacing goes on until every watched signal is ignored."""
    while True:
        try:
            if threading.current_thread() is not threading.main_thread():
                return
            for signum in sorted(_ours):
                if signal.getsignal(signum) is not signal.SIG_IGN:
                    signal.signal(signum, signal.SIG_IGN)
            return
        except KeyboardInterrupt:
            continue


def _isatty() -> bool:
    try:
        return os.isatty(2)
    except OSError:
        return False


def _cancel_all() -> None:
    with _lock:
        for cancel in list(_cancellers.values()):
            with contextlib.suppress(Exception):
                cancel()


def _got_signal(fd: int, timeout: float | None) -> int | None:
    """Wait for a signal byte on the wakeup pipe; the first watched signal among them."""
    while True:
        if timeout is not None:
            ready, _, _ = select.select([fd], [], [], max(timeout, 0.0))
            if not ready:
                return None
        data = os.read(fd, 64)
        if not data:
            return None
        if watched := [b for b in data if b in _ours]:
            return watched[0]


def _watch(fd: int) -> None:
    signum = _got_signal(fd, None)
    if signum is None:
        return
    _received_first(signum)
    _requested.set()
    _cancel_all()
    deadline = time.monotonic() + _grace
    # A second signal, or the grace running out, ends the process from here.
    _got_signal(fd, deadline - time.monotonic())
    os._exit(report())
