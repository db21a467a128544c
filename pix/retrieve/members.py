"""A class's member named in an issue report: `Header.fromstring`, `Card.fromstring`.

A report names the method it is about by its class (astropy-8707: "`Card.fromstring` likely
needs a similar treatment"). As a dotted module name that is no file (`Card/fromstring.py`),
and `fromstring` alone is defined in five classes of astropy's fits package, too many for the
identifier channel to say which. The index knows each definition's qualified name
(`chunk.symbol`, `Card.fromstring` in every language pix parses), so the member of the class
the report names is found in one statement; the evidence channel credits its file as it credits
a module (pix/retrieve/evidence.py, the `members` step).

A name is read as Class.member only when its next-to-last part is spelled as a class (its first
letter, after leading underscores, upper-case): `os.path.abspath` is a module's function, and
sphinx's testing `path` class defines an `abspath` too.
"""

from __future__ import annotations

import json

import apsw

# The files of a snapshot defining a member of :wanted (a JSON array of [`Class.member`,
# class, member, member lower-cased as the symbol table keeps it]), with the first line of a
# chunk defining it. The term index finds the chunks defining the member; the chunk's symbol
# says whose: the method itself (`Card.fromstring`, or `Outer.Card.fromstring`), another member
# of the class when small ones share a chunk (`Card.tostring`: the chunker merges a class's
# short methods), or the class when it is small enough to be one chunk (`Card`). A declared
# name counts as a definition (a class's field: `Config.timeout`).
MEMBER_FILES = """
WITH wanted(qualified, owner, member, term) AS (
    SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(:wanted)
)
SELECT w.qualified, f.path, min(c.start_line)
FROM wanted w
JOIN symbol s ON s.term = w.term AND s.whole = 1
JOIN chunk c ON c.id = s.chunk_id
JOIN blob b ON b.id = c.blob_id
JOIN snapshot_file f ON f.blob_sha = b.sha AND f.snapshot_id = :snapshot
WHERE s.name = w.member
  AND (c.symbol = w.owner
       OR substr(c.symbol, 1, length(w.owner) + 1) = w.owner || '.'
       OR instr(c.symbol, '.' || w.owner || '.') > 0
       OR substr(c.symbol, -length(w.owner) - 1) = '.' || w.owner)
GROUP BY w.qualified, f.path
ORDER BY w.qualified, f.path
"""


def qualified(name: str) -> str | None:
    """`Class.member`, the last two parts of a dotted name when the first of them is spelled
    as a class (`fits.Card.fromstring` -> `Card.fromstring`); None otherwise."""
    parts = name.split(".")
    if len(parts) < 2:
        return None
    owner, member = parts[-2], parts[-1]
    first = owner.lstrip("_")[:1]
    return f"{owner}.{member}" if first.isupper() and member.isidentifier() else None


def member_files(
    conn: apsw.Connection, snapshot_id: int, names: list[str]
) -> dict[str, list[tuple[str, int]]]:
    """For each `Class.member` of `names` (dotted names of a report) the snapshot defines:
    the files defining it and the first line of each, by path."""
    wanted = sorted({q for q in map(qualified, names) if q})
    out: dict[str, list[tuple[str, int]]] = {}
    if not wanted:
        return out
    rows = [[q, *q.split("."), q.split(".")[1].lower()] for q in wanted]
    params = {"wanted": json.dumps(rows), "snapshot": snapshot_id}
    for name, path, line in conn.execute(MEMBER_FILES, params):
        out.setdefault(name, []).append((path, line))
    return out
