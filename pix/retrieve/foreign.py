"""Someone else's code inside the repository, known by the license it carries.

A copied library often sits in a folder with no vendoring name: spdlog keeps fmt in
`include/spdlog/fmt/bundled/`, apollo-client React's compiler runtime in
`src/react/internal/compiler-runtime/`. The folder name says nothing (javalin's
`plugin/bundled/` is its own code), but the copy brings its license text along, and that text
is not the repository's own. So a folder below the top that holds a license text (`LICENSE`,
`COPYING.LIB`, `fmt.license.rst`) whose content differs from every license at the top, and no
package manifest of its own (a monorepo's packages carry theirs, often with the top's license
again: mobx, fzf's `src/LICENSE`), is foreign, unless it holds more than half the snapshot's
files (the project itself, whatever its license says) or has a role by its path already
(`vendor/`, `docs/`): its source files take the vendored role's factor
(pix.retrieve.priors), as `vendor/` and `third_party/` do by name. A repository with no license
at its top has nothing to compare against and no foreign folder.

Applied to the fused list after the lifts and before the history prior (pix.query.retrieve),
so every later step reads the role. spdlog's commit subjects had a file of its fmt copy first
for 32 of 100 (3 with the rule): static-only nDCG@10 / MRR@10 0.498 / 0.489 -> 0.557 / 0.544,
and of the other development sets only questions-more moves, through its spdlog questions
(bench/README.md, "Foreign folders").
"""

from __future__ import annotations

import re

import apsw

from pix.ingest.languages import language_for_path
from pix.retrieve.hits import Hit, order, revised
from pix.retrieve.priors import ROLE_FACTORS, path_role

ROLE = "vendored"

# A license text by its file name: `LICENSE`, `LICENSE-MIT`, `COPYING.LESSER`, `COPYING3`,
# `LICENSE_1_0.txt`, `UNLICENSE`, or a name before it (`fmt.license.rst`, `APPDIRS_LICENSE`),
# that pix reads as prose (`text`, `markdown`, `rst`: never code about licenses, `license.go`,
# `License.vue`), and no tool about licenses (`bin/license-check`). Not `COPYRIGHT`: pylint's
# `script/copyright.txt` is the header its own files carry.
_LICENSE = re.compile(
    r"(^|/)([\w-]+[-_.])?(licen[cs]es?|copying|unlicense)\d*([-_.][\w.+-]*)?$", re.I
)
_TOOL = re.compile(r"(licen[cs]es?|copying)[-_.]?(test|spec|check|tool|gen)", re.I)
_PROSE = frozenset({"text", "markdown", "rst"})
# A package of the repository's own declares itself: a folder with one of these is not a copy.
_MANIFEST = re.compile(
    r"(^|/)(package\.json|cargo\.toml|pyproject\.toml|setup\.py|setup\.cfg|go\.mod"
    r"|composer\.json|mix\.exs|pom\.xml|build\.gradle(\.kts)?|build\.sbt|package\.swift"
    r"|pubspec\.yaml|project\.toml|description|vcpkg\.json|conanfile\.(txt|py)|deno\.jsonc?"
    r"|build\.zig\.zon|[^/]+\.(gemspec|cabal|csproj|fsproj|rockspec|nimble|podspec|nuspec))$",
    re.I,
)
# A folder holding more than this share of the snapshot's files is the project itself, whatever
# its license says (a `src/LICENSE` that differs from the top's by a year).
SHARED = 0.5

# The snapshot's files that may be license texts, with their content's hash (a LIKE narrows
# them to a few rows; the regular expressions above decide); the files under one folder, a
# range of the (snapshot_id, path) key (`/` sorts just before `0`); and the snapshot's size.
LICENSE_CANDIDATES = """
SELECT path, blob_sha FROM snapshot_file
WHERE snapshot_id = :snapshot AND (path LIKE '%licen%' OR path LIKE '%copying%')
ORDER BY path
"""
FOLDER_FILES = """
SELECT path FROM snapshot_file
WHERE snapshot_id = :snapshot AND path >= :prefix AND path < :after
"""
FILE_COUNT = "SELECT count(*) FROM snapshot_file WHERE snapshot_id = ?"


def license_text(path: str) -> bool:
    return (
        bool(_LICENSE.search(path))
        and language_for_path(path) in _PROSE
        and not _TOOL.search(path.rpartition("/")[2])
    )


def folders(conn: apsw.Connection, snapshot_id: int) -> tuple[str, ...]:
    """The snapshot's foreign folders, sorted: below the top, holding a license text unlike
    every one at the top, no package manifest, at most SHARED of the files, and source by
    their path (a `vendor/` or `docs/` folder has its role already)."""
    licenses = [
        (p, sha)
        for p, sha in conn.execute(LICENSE_CANDIDATES, {"snapshot": snapshot_id})
        if license_text(p)
    ]
    # A folder with a role by its path (`vendor/`, `docs/`, `tests/`) gives it to its files
    # already: the role of a file in it is the folder's.
    candidates = [f for f in foreign_candidates(licenses) if path_role(f + "/x") == "source"]
    if not candidates:
        return ()
    total = conn.execute(FILE_COUNT, (snapshot_id,)).fetchone()[0]
    found = []
    for folder in candidates:
        params = {"snapshot": snapshot_id, "prefix": folder + "/", "after": folder + "0"}
        under = [p for (p,) in conn.execute(FOLDER_FILES, params)]
        here = [p for p in under if "/" not in p[len(folder) + 1 :]]
        if len(under) <= SHARED * total and not any(_MANIFEST.search(p) for p in here):
            found.append(folder)
    return tuple(found)


def foreign_candidates(licenses: list[tuple[str, str]]) -> list[str]:
    """The folders below the top holding a license text unlike every one at the top, sorted,
    from (path, content hash) pairs of license texts; none when the top has none."""
    top = {sha for p, sha in licenses if "/" not in p}
    if not top:
        return []
    return sorted({p.rpartition("/")[0] for p, sha in licenses if "/" in p and sha not in top})


def role_of(path: str, role: str, found: tuple[str, ...]) -> str:
    """The role of the file at `path`, given the one its path gives: a source file in a
    foreign folder is vendored, any other role is kept (a copy's tests are tests)."""
    if role == "source" and any(path.startswith(folder + "/") for folder in found):
        return ROLE
    return role


def weigh(hits: list[Hit], found: tuple[str, ...], priors: bool) -> list[Hit]:
    """`hits` with the source files of the foreign folders in the vendored role, their score
    times its factor (with priors), in the fused order again."""
    if not found:
        return hits
    factor = ROLE_FACTORS[ROLE] / ROLE_FACTORS["source"] if priors else 1.0
    out = [
        h if (role := role_of(h.path, h.role, found)) == h.role
        else revised(h, role=role, score=h.score * factor)
        for h in hits
    ]  # fmt: skip
    out.sort(key=order)
    return out
