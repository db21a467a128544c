"""Clipboard backends. `--copy` always copies formatted text, never JSON.

A backend is any command that reads the text on stdin. Any failure is a ClipboardError (exit 2),
raised after the answer was printed. `PIX_CLIPBOARD` names one explicitly
(tests point it at a command that writes a file); otherwise the first of pbcopy, wl-copy,
xclip and xsel found on PATH is used.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess

from pix.errors import ClipboardError

CANDIDATES = (
    ["pbcopy"],
    ["wl-copy"],
    ["xclip", "-selection", "clipboard"],
    ["xsel", "--clipboard", "--input"],
    ["clip.exe"],
)


def backend() -> list[str]:
    configured = os.environ.get("PIX_CLIPBOARD")
    if configured:
        try:
            command = shlex.split(configured)
        except ValueError as exc:  # an unbalanced quote: the setting, not pix, is wrong
            raise ClipboardError(f"PIX_CLIPBOARD cannot be read as a command: {exc}") from None
        if not command:
            raise ClipboardError("PIX_CLIPBOARD names no command (it holds only spaces)")
        return command
    for command in CANDIDATES:
        if shutil.which(command[0]):
            return command
    raise ClipboardError(
        "no clipboard command found (pbcopy, wl-copy, xclip, xsel)",
        hint="install one, or set PIX_CLIPBOARD to a command that reads stdin",
    )


def copy(text: str) -> None:
    command = backend()
    # xclip and wl-copy leave a process behind that serves the clipboard and keeps the
    # stdout or stderr it inherited: reading them through pipes would wait for it to end
    # (when something else is copied). pix waits for the command alone and reads nothing
    # of its output.
    try:
        done = subprocess.run(
            command,
            input=text.encode("utf-8"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
    except OSError as exc:
        raise ClipboardError(f"clipboard command {command[0]!r} failed: {exc}") from None
    if done.returncode != 0:
        raise ClipboardError(f"clipboard command {command[0]!r} exited {done.returncode}")
