"""Path priors: what kind of file a path is, and how much a hit in it counts.

A developer asking "where is X" wants the implementation first; tests, docs, changelogs,
examples and vendored copies mention X too, often word for word. Their hits are kept but
multiplied down. `--no-priors` turns this off (every factor 1.0).
"""

from __future__ import annotations

import re

ROLE_FACTORS: dict[str, float] = {
    "source": 1.0,
    "test": 0.4,
    "docs": 0.3,
    "example": 0.7,
    "vendored": 0.5,
}

_TEST = re.compile(
    r"(^|/)(tests?|testing|__tests__|spec|specs|test_?data|fixtures?)/"
    r"|(^|/)(test_[^/]*|[^/]*_test\.\w+|[^/]*\.(test|spec)\.\w+|conftest\.py)$",
    re.I,
)
_DOCS = re.compile(
    r"(^|/)(docs?|documentation|man)/"
    r"|(^|/)(changes|changelog|history|news|release[-_]?notes|authors|contributing|readme)"
    r"([.\-_][^/]*)?$"
    r"|\.(md|rst|txt|adoc)$",
    re.I,
)
_EXAMPLE = re.compile(r"(^|/)(examples?|samples?|demos?)/", re.I)
VENDORED = re.compile(r"(^|/)(vendor|vendored|_vendor|third_party|thirdparty|external)/", re.I)


def path_role(path: str) -> str:
    """One of ROLE_FACTORS' keys. Vendored wins over test (a vendored test is vendored)."""
    if VENDORED.search(path):
        return "vendored"
    if _TEST.search(path):
        return "test"
    if _EXAMPLE.search(path):
        return "example"
    if _DOCS.search(path):
        return "docs"
    return "source"
