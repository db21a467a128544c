"""The character budget (`maxCharacters`): applied after hydration, never to ranking.

Results are emitted in order while their rendered text fits. The first that does not fit is
the last one emitted: its context is dropped and its text shortened to what is left, ending in
the marker, and it is flagged truncated. Nothing after it is emitted. Without content there is
nothing to shorten, so a result that does not fit is simply not emitted.
"""

from __future__ import annotations

from dataclasses import replace

from pix.output.render import header, render_result
from pix.output.result import Result

MARKER = "[...]"


def apply_budget(results: list[Result], max_characters: int | None) -> tuple[list[Result], int]:
    """(results that fit, how many were cut by the budget)."""
    if max_characters is None:
        return results, 0
    left = max_characters
    kept: list[Result] = []
    for index, result in enumerate(results):
        separator = 1 if kept else 0  # the blank line between results
        cost = len(render_result(result)) + separator
        if cost <= left:
            kept.append(result)
            left -= cost
            continue
        short = _shorten(result, left - separator)
        if short is not None:
            kept.append(short)
            index += 1
        return kept, len(results) - index
    return kept, 0


def _shorten(result: Result, room: int) -> Result | None:
    """The result cut to `room` characters with the marker, or None if even that cannot fit."""
    if result.text is None:
        return None
    bare = replace(result, context_before=None, context_after=None, truncated=True, text="")
    fixed = len(header(bare)) + 1 + len(MARKER) + 1
    space = room - fixed
    if space <= 0:
        return None
    text = result.text[:space]
    cut = text.rfind("\n")
    if cut >= 0 and cut >= space // 2:
        text = text[: cut + 1]  # end on a whole line when that keeps most of the room
    elif text and not text.endswith("\n"):
        text += "\n"
        if len(text) > space:
            text = text[: space - 1] + "\n"
    return replace(bare, text=text + MARKER)
