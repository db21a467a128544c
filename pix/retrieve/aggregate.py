"""File mode: the fused chunk list, grouped by file.

A file takes the score of its strongest chunk (max, so one excellent match is not outweighed by
many mediocre ones and long files gain nothing from length). Files keep the order in which their
strongest chunk appears in the fused list; the path breaks any remaining tie.
"""

from __future__ import annotations

from pix.retrieve.search import Hit


def by_file(hits: list[Hit]) -> list[Hit]:
    """The first (strongest) hit of each path, in fused order. `hits` is already ordered by
    score, then path, so first occurrence is both the max and the tie-break."""
    best: dict[str, Hit] = {}
    for hit in hits:
        best.setdefault(hit.path, hit)
    return sorted(best.values(), key=lambda h: (-h.score, h.path))
