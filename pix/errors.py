"""Errors that reach the user: one line, a documented exit code, a JSON envelope.

Exit codes (every command):
  0 ok · 1 unexpected · 2 bad usage or input · 3 no index or no such snapshot · 4 unusable database
  · 5 conflict: another process held the database's lock past the wait, or replaced the file
    meanwhile
"""

from __future__ import annotations

import os

EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_DATABASE = 4
EXIT_CONFLICT = 5
SHOWN_VALUE = 80  # characters an error message quotes of an offending value


def shown_value(value: object) -> str:
    """A value as an error message quotes it: null, true and false as JSON spells them (the
    client wrote JSON, not Python), anything else as Python's repr, cut to about SHOWN_VALUE
    characters: a 100,000-character pattern must not come back in full, nor raw control
    characters (repr escapes them)."""
    if value is None or isinstance(value, bool):
        return "null" if value is None else str(value).lower()
    text = repr(value)
    if len(text) <= SHOWN_VALUE:
        return text
    cut = text[: SHOWN_VALUE - 20]
    if isinstance(value, str):  # close the quote repr opened
        return f"{cut}…{text[0]} ({len(value):,} characters)"
    return f"{cut}…"


class PixError(Exception):
    """A failure the user can act on: `code` is a stable machine name, `exit_code` the
    process exit code."""

    exit_code = EXIT_UNEXPECTED
    code = "unexpected"
    after_answer = False  # raised once the answer is printed: report it on stderr only

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def envelope(self) -> dict:
        error: dict = {"code": self.code, "message": self.message}
        if self.hint:
            error["hint"] = self.hint
        return {"error": error}


class UsageError(PixError):
    exit_code = EXIT_USAGE
    code = "bad_input"


class ClipboardError(UsageError):
    """`--copy` could not write the clipboard. The answer is printed before the copy is tried,
    so stdout keeps exactly that answer and this goes to stderr (exit 2: the option cannot be
    honoured here)."""

    after_answer = True


class NotIndexedError(PixError):
    exit_code = EXIT_NOT_FOUND
    code = "not_indexed"


class DatabaseError(PixError):
    exit_code = EXIT_DATABASE
    code = "unusable_database"


# The fix for a damaged database, wherever the damage is met (pix status, pix index, an answer).
REBUILD_HINT = (
    "run `pix index --rebuild`: it rebuilds the index from the work tree into a fresh file "
    "and swaps it in, keeping the saved aliases it can still read"
)


class ConflictError(PixError):
    """Another process got in the way: it held the database's lock past the wait
    (PIX_LOCK_TIMEOUT), or replaced the file while this one wrote (`pix index --rebuild`).
    Nothing is wrong with the input or the database; running again succeeds."""

    exit_code = EXIT_CONFLICT
    code = "conflict"


def git_missing() -> PixError:
    """What pix says when there is no git to run."""
    return PixError(
        "git is not installed: pix runs it to list and read repositories",
        hint="install git, or put it on PATH",
    )


def _cwd_is_gone() -> bool:
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    return False


def as_pix_error(exc: BaseException) -> PixError:
    """The one-line error a front end (CLI, MCP) reports for any exception."""
    import apsw

    if isinstance(exc, PixError):
        return exc
    if isinstance(exc, apsw.CorruptError | apsw.NotADBError):
        return DatabaseError(f"the database is corrupt: {exc}", hint=REBUILD_HINT)
    if isinstance(exc, apsw.BusyError):
        return ConflictError(
            "the database is busy: another process held its lock past the wait; try again",
            hint="PIX_LOCK_TIMEOUT=SECONDS sets how long pix waits; 60 s unless set",
        )
    if isinstance(exc, FileNotFoundError) and exc.filename == "git":
        # any git call may be the first to find it missing (audit: this was "unexpected
        # FileNotFoundError")
        return git_missing()
    if isinstance(exc, FileNotFoundError) and exc.filename is None and _cwd_is_gone():
        # a shell left in a folder that was then deleted: os.getcwd() fails wherever pix
        # first asks, and names no file (this was "unexpected FileNotFoundError")
        return UsageError(
            "the current folder no longer exists (it was deleted after the shell entered it)",
            hint="cd to a folder that exists",
        )
    return PixError(f"unexpected {type(exc).__name__}: {exc}")
