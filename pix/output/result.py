"""The in-memory result that budget, render and the JSON projection share."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Result:
    mode: str  # 'chunk' | 'file'
    path: str
    blob: str
    score: float
    rel: float
    role: str
    language: str | None = None
    start_line: int | None = None  # chunk mode only
    end_line: int | None = None
    kind: str | None = None
    symbol: str | None = None
    text: str | None = None  # None with noContent
    context_before: str | None = None
    context_after: str | None = None
    truncated: bool = False
    explain: dict = field(default_factory=dict)
    repo: str | None = None  # the workspace repository it comes from (pix.shards)
    copies: tuple[str, ...] = ()  # other paths with the same content (pix/retrieve/rank.py)
