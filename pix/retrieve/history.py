"""The history prior: for a query that describes a change, a file that changed often lately
counts a little more.

A commit subject ("Fix crash when ...", "router: allow ...") asks where a change belongs, and
changes cluster where work is under way: a file that many commits touched in the past year is
likelier to be touched by the next one. Each file's count is read at index time
(snapshot_file.recent_commits, pix/ingest/history.py) and weighs its hits by
((1 + min(commits, CAP)) / (1 + CAP)) ** POWER: 0.64 for a file no commit touched, 1.0 from
CAP commits on. Never above 1, so a chunk's score stays within rank.ceiling (the workspace
probe relies on it); the definition and phrase steps lift above the smallest factor
(pix/retrieve/lift.py), so an exact name or message still comes first.

An issue report is weighed too, all but its first file: the report's own evidence (paths,
stack frames, names) places that file more surely than the history does, and the prior only
orders the candidates behind it. In a workspace each repository's own first file is kept, as
each shard is ranked on its own (pix/shards.py).

Measured with bench/history_bench.py (each commit subject weighed by the year of history
before its own commit; figures in bench/README.md, "eighteenth session" and "nineteenth
session"):
- the 14 language commit sets: mean nDCG@10 / MRR@10 +0.019 / +0.019 with the transformer,
  +0.016 / +0.016 static-only; no set loses more than 0.008 (fzf static-only), and a steeper
  prior (POWER 0.15, 0.2) costs bash-completion, whose hundreds of files change rarely;
- questions about how the code works ("how does the router match a path", a symbol's name) are
  left alone: weighed too, the 480 developers' questions lost 0.008 nDCG@10 (tmux's 30 questions
  0.12 MRR@10), as the code a person asks about is not the code that changed;
- issueloc's 116 reports, each weighed at its base commit, static-only: every file weighed
  helped six repositories (Acc@1 +0.035) but cost sphinx and astropy more (Acc@1 -0.068, at
  every power; the eleventh session saw the same with another form of it); with the first
  file kept, Acc@1 stays 0.466 and Acc@5 rises 0.672 -> 0.707 (pytest -0.018 and pylint
  -0.010 MRR@10, a report each, the only losses).
"""

from __future__ import annotations

import json

import apsw

from pix.retrieve.hits import Hit, order, revised
from pix.retrieve.rank import by_file
from pix.retrieve.route import describes_change
from pix.store import search_sql

CAP = 80
POWER = 0.1

# Shapes whose best-ranked file is left as it is (see the module's docstring).
KEEPS_FIRST = frozenset({"issue"})


def applies(query: str, shape: str) -> bool:
    """The prior weighs change descriptions and issue reports, nothing else."""
    return shape == "issue" or (shape in ("question", "keywords") and describes_change(query))


def factor(commits: int) -> float:
    """A file's weight for its count (pix.ingest.history): at most 1."""
    return ((1 + min(commits, CAP)) / (1 + CAP)) ** POWER


def weigh(
    conn: apsw.Connection, snapshot_id: int, hits: list[Hit], shape: str
) -> tuple[list[Hit], bool]:
    """`hits` with each score times its file's factor (rank: `history`, the factor, and
    `commits`), reordered, and whether any was weighed: not where the snapshot has no counts
    (a folder without git, a database written before migration 008). For a shape in
    KEEPS_FIRST the file that file mode ranks first keeps its hits' scores, and stays first:
    file mode adds each file's further chunks above the weakest candidate's score, which
    weighing lowers, so a file with more chunks could pass it; the hits are then left as they
    were."""
    paths = json.dumps(sorted({h.path for h in hits}))
    counts = dict(conn.execute(search_sql.RECENT_COMMITS_OF_PATHS, (snapshot_id, paths)).fetchall())
    if not counts:
        return hits, False
    kept = by_file(hits)[0].path if shape in KEEPS_FIRST and hits else None
    out = []
    weighed = False
    for hit in hits:
        commits = counts.get(hit.path)
        if commits is None or hit.path == kept:
            out.append(hit)
            continue
        f = factor(commits)
        out.append(
            revised(hit, score=hit.score * f, rank={**hit.rank, "history": f, "commits": commits})
        )
        weighed = True
    out.sort(key=order)
    if kept is not None and weighed and by_file(out)[0].path != kept:
        return hits, False
    return out, weighed
