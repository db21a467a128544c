"""The outline step: each of the first files judged as a whole, by its outline.

A file's outline is its path and the names its chunks define, in order (`sphinx/domains/
python.py` then `type_to_xref _parse_annotation _parse_arglist PyXrefMixin.make_xref PyField
PyTypedField PyObject ...`). Chunks are judged one at a time, so a large central module,
whose every chunk is about one detail, loses to a small file with one lucky chunk; its
outline says what the whole file is about. The outline is read by the static tier at query
time (a mean of token vectors: about a millisecond for OUTLINE_TOP short texts), against the
query's static vector, so it needs nothing stored and works on any database.

Only the first OUTLINE_TOP files are read, and a file gains only where its outline stands
out among theirs: WEIGHT x the first file's score x max(z, 0), z = (cosine - mean) / sd over
those outlines. A file whose chunks define no name has no outline and gains nothing.

Measured (bench/README.md, "twenty-fourth session"): on issueloc's 116 reports, static-only,
Acc@1 / Acc@3 / Acc@5 0.466 / 0.612 / 0.707 -> 0.500 / 0.664 / 0.741, MRR@10 0.691 -> 0.730,
six of the eight repositories up and none down by more than a report; WEIGHT 0.1 / 0.2 and
OUTLINE_TOP 10 / 30 gave 0.718-0.735 (a plateau). On commit subjects it costs: the 14
language sets lost 0.011 nDCG@10 at this weight (symfony-console 0.045), and 0.05 gained
nothing, so it serves issue reports only. The transformer reading the outlines instead did
no better (0.720 on the reports at its best setting) and costs 20 model runs a question.
"""

from __future__ import annotations

import json
import math

import numpy as np

from pix.retrieve.hits import Hit, revised
from pix.retrieve.windows import embed_static

OUTLINE_TOP = 20
WEIGHT = 0.15
# An outline reads a file's first MAX_NAMES distinct names: sphinx's largest modules define
# hundreds, and reading them all cost a quarter more time for the same ranking (MRR@10 0.732
# all, 0.730 at 64, 0.725 at 32).
MAX_NAMES = 64
# Which query shapes it serves (pix/retrieve/route.py).
SHAPES = frozenset({"issue"})

OUTLINE_NAMES = """
SELECT b.sha, c.symbol
FROM chunk c JOIN blob b ON b.id = c.blob_id
WHERE b.sha IN (SELECT value FROM json_each(:shas)) AND c.symbol IS NOT NULL
ORDER BY b.sha, c.seq
"""


def most_share(channels: list[str] | None, shape: str, lent: float = 0.0) -> float:
    """The most the step adds to a file, and `lent` x what it adds to a test that lends the
    file its score (pix/retrieve/tested.py), as a share of the most a file scores without it
    (a workspace skips a repository by its ceiling, pix/shard_probe.py). Each bonus is
    WEIGHT x the first file's score x z, and over n z-scores (sum 0, sum of squares n) the
    most z_file + lent x z_test can be is sqrt(n (1 + lent^2) - (1 + lent)^2): with the two
    outlines alike and the rest alike; sqrt(n - 1) with lent 0 (Samuelson's inequality)."""
    if not enabled(channels, shape):
        return 0.0
    n = OUTLINE_TOP
    return WEIGHT * math.sqrt(n * (1 + lent**2) - (1 + lent) ** 2)


def enabled(channels: list[str] | None, shape: str) -> bool:
    """By default, for the shapes it serves; never when the request names its channels (it
    then asks for those alone)."""
    return channels is None and shape in SHAPES


def outline_text(path: str, names: list[str]) -> str:
    """What the static tier reads of a file: its path, then each name once, in order."""
    return path + "\n" + " ".join(list(dict.fromkeys(names))[:MAX_NAMES])


def names_of(conn, shas: list[str]) -> dict[str, list[str]]:
    """Each blob's chunk symbols, in the order of its chunks."""
    out: dict[str, list[str]] = {}
    for sha, symbol in conn.execute(OUTLINE_NAMES, {"shas": json.dumps(sorted(set(shas)))}):
        out.setdefault(sha, []).append(symbol)
    return out


def lift_outlines(conn, static_embedder, query: str, shape: str, files: list[Hit]) -> list[Hit]:
    """`files` (ranked) with the outline bonus added to the first OUTLINE_TOP and
    ranked again (rank: `outline`, the bonus); `enabled` says for which requests. Unchanged
    when fewer than three of them have an outline, the query has no known word, or their
    outlines do not differ. The query's static vector is made again here (about a
    millisecond): retrieval keeps only its int8 form, and none where no chunk is static."""
    if not files:
        return files
    top = files[:OUTLINE_TOP]
    names = names_of(conn, [f.blob_sha for f in top])
    outlined = [i for i, f in enumerate(top) if names.get(f.blob_sha)]
    if len(outlined) < 3:
        return files
    texts = [outline_text(top[i].path, names[top[i].blob_sha]) for i in outlined]
    vectors = static_embedder.embed_batch(texts)
    query_vector = embed_static(static_embedder, query, shape)[0]
    if not query_vector.any():  # no known word: no direction to compare by
        return files
    cosines = vectors @ query_vector
    sd = float(cosines.std())
    if sd <= 0:
        return files
    z = np.maximum((cosines - float(cosines.mean())) / sd, 0.0)
    lead = files[0].score
    out = list(files)
    for i, zi in zip(outlined, z.tolist(), strict=True):
        if zi > 0:
            bonus = WEIGHT * lead * zi
            hit = out[i]
            out[i] = revised(hit, score=hit.score + bonus, rank={**hit.rank, "outline": bonus})
    return sorted(out, key=lambda h: (-h.score, h.path))
