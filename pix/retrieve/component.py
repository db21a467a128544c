"""The component channel: a change description that opens with the part of the code it is
about names a folder or a file.

Developers write `router: fix ...`, `fix(trie-router): ...` or `[Console] ...`, and the part
so named is usually a folder or a file of the repository: hono's `cloudflare-workers: ...` is
src/adapter/cloudflare-workers/, scalafmt's `FormatWriter: ...` is FormatWriter.scala,
bash-completion's `feh: ...` is completions/feh. The path channel hears only the words, one
vote among the question's others; this channel names the files (fused after the SQL, as an
issue's named files are: pix/retrieve/named.py):

- a file whose name, less its extension, is the component takes the channel's whole weight,
  n files of that name 1/n each (gitsigns has two blame.lua, hono a router.ts per router);
- a folder so named shares the weight among its files (1/n each of n): a folder says less
  about which of its files changed, and a big one would otherwise outvote the words;
- a name most of the repository shares (more than half its files: the project's own name,
  `javalin: ...` over javalin/src/main/java/io/javalin/) counts only as a file name.

Names compare without case, hyphens or underscores (`trie-router` = `TrieRouter` =
`trie_router`), and only whole names count: symfony's `Console: ...` is no vote for
ConsoleOutput.php. Measured on the 14 language commit sets (bench/README.md, "fourteenth
session"): bash-completion, hono and scalafmt gain 0.03-0.11 MRR@10, no set loses, with the
transformer or static-only, and questions that name no component are untouched.
"""

from __future__ import annotations

import json
import re
from collections import Counter

import apsw

from pix.ingest.terms import split_identifier
from pix.retrieve.named import NamedFile
from pix.retrieve.route import COMPONENT

CHANNEL = "component"
LIMIT = 20  # files the channel may name, as many as the path channel
SHARED = 0.5  # a folder name held by more than this share of the files is the project's

# `router: ...`, `utils/cookie: ...`, `Router bugfix: ...` (the router's COMPONENT);
# conventional commits' `fix(router): ...` and `feat(a,b)!: ...`; `[Console] ...`.
_FORMS = (
    COMPONENT,
    re.compile(r"^\w+\(([\w./,\- ]{1,30})\)!?:\s"),
    re.compile(r"^\[([\w./,\- ]{1,30})\]\s"),
)
_NAME_SEPARATORS = re.compile(r"[/,\s]+")

# The files holding any of the terms at a path component (path_term has each component and
# its identifier parts), in the snapshot.
COMPONENT_PATHS = """
SELECT DISTINCT p.path FROM path_term t JOIN path p ON p.id = t.path_id
WHERE t.term IN (SELECT value FROM json_each(:terms))
  AND EXISTS (SELECT 1 FROM snapshot_file f WHERE f.snapshot_id = :snapshot AND f.path = p.path)
ORDER BY p.path
"""
SNAPSHOT_FILE_COUNT = "SELECT count(*) FROM snapshot_file WHERE snapshot_id = ?"


def names(query: str) -> list[tuple[str, list[str]]]:
    """The component's names, each normalised (lower case, no hyphens, underscores or
    extension) with the path terms that find its files: `trie-router: ...` ->
    [('trierouter', ['trie', 'trierouter'])], `utils/cookie.ts: ...` -> two names. None when
    the query opens with no component."""
    for form in _FORMS:
        m = form.match(query.strip())
        if m:
            out: dict[str, list[str]] = {}
            for raw in _NAME_SEPARATORS.split(m.group(1)):
                key = normal_name(raw)
                parts = split_identifier(re.split(r"[-.]", raw.strip("-."))[0])
                if len(key) > 1 and parts:
                    # A matching component holds the first part among its path terms
                    # (pix.ingest.terms.path_terms), or the whole name when it is one word.
                    out.setdefault(key, sorted({parts[0], key}))
            return list(out.items())
    return []


def normal_name(name: str) -> str:
    """A file or folder name as a component names it: before its first dot, lower case, no
    `-` or `_` (`HttpClient.kt`, `http_client` and `http-client` are one name)."""
    head = name.strip(".").split(".")[0]
    return re.sub(r"[-_]", "", head.lower())


def component_files(
    conn: apsw.Connection, snapshot_id: int, query: str, paths: list[str] | None
) -> list[NamedFile]:
    """The files the query's component names, best first (most names matched, files before
    folders, shorter paths), each with its share of the channel's weight."""
    wanted = names(query)
    if not wanted:
        return []
    lookup = sorted({term for _, terms in wanted for term in terms})
    rows = conn.execute(COMPONENT_PATHS, {"terms": json.dumps(lookup), "snapshot": snapshot_id})
    allowed = None if paths is None else set(paths)
    matched: dict[str, tuple[int, bool]] = {}  # path -> (names matched, a file name among them)
    for (path,) in rows:
        if allowed is not None and path not in allowed:
            continue
        *folders, file = path.split("/")
        stem = normal_name(file)
        in_folders = {normal_name(f) for f in folders}
        count, is_file = 0, False
        for name, _ in wanted:
            if name == stem:
                count, is_file = count + 1, True
            elif name in in_folders:
                count += 1
        if count:
            matched[path] = (count, is_file)
    if not matched:
        return []
    total = (
        len(allowed)
        if allowed is not None
        else conn.execute(SNAPSHOT_FILE_COUNT, (snapshot_id,)).fetchone()[0]
    )
    if len(matched) > SHARED * total:
        matched = {p: m for p, m in matched.items() if m[1]}
    # A name many files share says less about which of them changed: each so named file or
    # folder's file takes an equal part of a whole vote, shared with the files that match as
    # many of the names (`helper/route: ...` names src/helper/route/, not all of src/helper/).
    alike = Counter(matched.values())
    ranked = sorted(matched, key=lambda p: (-matched[p][0], not matched[p][1], len(p), p))
    return [
        NamedFile(p, float(matched[p][0]), None, 1.0 / alike[matched[p]]) for p in ranked[:LIMIT]
    ]
