"""A query's meaning vectors: an issue report read in windows, its title weighed more.

The transformer reads 256 tokens, so one pass sees only the start of a long report; the report
is cut into windows of about that size (`windows`), each embedded on its own and averaged, and
the title, which states the problem that the body's code, tracebacks and prose blur, is added
at TITLE_WEIGHT. The static tier averages token vectors over any length, so it reads the
whole report, with its title added the same way. Any other query is embedded whole.

The report is read as pix/retrieve/evidence.py reads it (`clean`: no hidden comments, no
screenshots, no environment sections); its `windows` and `title` steps turn each part off.
"""

from __future__ import annotations

from pix.retrieve import evidence
from pix.retrieve.evidence import clean, title_of

WINDOW_CHARS = 900  # about 256 MiniLM tokens of issue text (code and prose mixed)


def windows(query: str, size: int = WINDOW_CHARS) -> list[str]:
    """The query cut into windows of about `size` characters at line ends (a line longer
    than a window is cut at a space), each embedded on its own and averaged: the transformer
    reads 256 tokens, so one pass sees only the start of a long issue."""
    out: list[str] = []
    current = ""
    for line in query.splitlines(keepends=True):
        while len(line) > size:
            cut = line.rfind(" ", 0, size)
            cut = cut if cut > 0 else size
            if current:
                out.append(current)
                current = ""
            out.append(line[:cut])
            line = line[cut:]
        if len(current) + len(line) > size and current:
            out.append(current)
            current = ""
        current += line
    if current.strip():
        out.append(current)
    return [w for w in out if w.strip()] or [query]


# How much the title counts in an issue's meaning vectors, beside the mean of its windows (or,
# for the static tier, of all its tokens): the title states the problem, the body's code,
# tracebacks and prose blur it. On the 116 issueloc reports with the transformer, weights 0 /
# 1 / 2 / 4 gave Acc@5 0.690 / 0.698 / 0.733 / 0.733, MRR@10 0.674 / 0.703 / 0.707 / 0.699
# (the title alone: 0.741, 0.685); sphinx +0.072, astropy +0.046, requests -0.095 (7 reports).
TITLE_WEIGHT = 2.0


def _with_title(vectors, title_vector):
    """The body's vector and the title's, mixed and normalised again, shape (1, dims)."""
    import numpy as np

    mixed = vectors.mean(axis=0, keepdims=True)
    if "title" in evidence.STEPS:
        mixed = mixed + TITLE_WEIGHT * title_vector
    return mixed / max(float(np.linalg.norm(mixed)), 1e-12)


def embed_query(embedder, query: str, shape: str):
    """The query's transformer vector, shape (1, dims): an issue's windows averaged, its title
    added at TITLE_WEIGHT, normalised again (one vector, so one nearest-neighbour search); any
    other query whole."""
    if shape != "issue" or "windows" not in evidence.STEPS:
        return embedder.embed_batch([query])
    text = clean(query)
    vectors = embedder.embed_batch([*windows(text), title_of(text)])
    return _with_title(vectors[:-1], vectors[-1:])


STATIC_CHARS = 0  # how much of an issue the static tier reads (0: all of it)


def embed_static(embedder, query: str, shape: str):
    """The query's static-tier vector, shape (1, dims). The static tier averages token
    vectors over any length, so an issue needs no windows, only its hidden comments taken
    out; its title is added at TITLE_WEIGHT, as for the transformer."""
    if shape != "issue":
        return embedder.embed_batch([query])
    text = clean(query)
    vectors = embedder.embed_batch([text[:STATIC_CHARS] if STATIC_CHARS else text, title_of(text)])
    return _with_title(vectors[:-1], vectors[-1:])
