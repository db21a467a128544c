"""Links in an issue report to files of the repository on its code host.

A report points at the code it means: xarray-4966 says the `_Unsigned` convention "is handled
[at this place](https://github.com/pydata/xarray/blob/df052e7/xarray/coding/variables.py#L311)".
Such a link names a file of the snapshot as a path in the report's text does, at whatever
commit, from a fork or under the project's older name; the evidence channel credits it
(pix/retrieve/evidence.py, the `links` step, at LINK_WEIGHT). Of issueloc's 116 reports, 15
link a code file of their own repository, and the fix changed that file in 14 of them
(bench/README.md, "forty-seventh session").
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from pix.retrieve.priors import path_role

REF_PARTS = 3  # a branch's name in a link may hold slashes (`release/4.x`), up to this many
# A file on a code host, at some commit or branch: GitHub's blob, blame and raw links,
# GitLab's and Bitbucket's. Group 1 is the ref and the path together: a branch may hold a
# slash (`blob/release/4.x/pkg/mod.py`), so where the path starts is found against the snapshot.
_LINK = re.compile(
    r"\bhttps?://(?:www\.)?(?:github\.com/[\w.-]+/[\w.-]+/(?:blob|blame|raw)"
    r"|raw\.githubusercontent\.com/[\w.-]+/[\w.-]+"
    r"|gitlab\.com/[\w.-]+(?:/[\w.-]+)+/-/(?:blob|blame|raw)"
    r"|bitbucket\.org/[\w.-]+/[\w.-]+/(?:src|raw))"
    r"/([^\s)#?>\]\"'`<]+)",
    re.I,
)
# What ends a link in prose and markdown but no path: a full stop, `**` of emphasis, a table's pipe.
_TRAILING = ".,;:!*|}"


def links_in(text: str) -> list[str]:
    """Each link's ref and path, in order (`df052e7/xarray/coding/variables.py`), decoded."""
    return [unquote(m.group(1)).rstrip(_TRAILING) for m in _LINK.finditer(text)]


def linked_file(linked: str, held: set[str]) -> str | None:
    """The code file of `held` a link names (`linked`: its ref and path, as `links_in` gives
    it): the path after the ref's first component, or after its first two or three (a
    branch with a slash), that the snapshot holds whole; after a ref of several components,
    never a top-level file alone. Never a prose or build file: templates link their
    CONTRIBUTING.md, and a link to another project's `.travis.yml` would name the
    repository's own."""
    parts = [p for p in linked.split("/") if p]
    for start in range(1, min(REF_PARTS + 1, len(parts))):
        if start > 1 and len(parts) - start < 2:
            break
        path = "/".join(parts[start:])
        if path in held:
            return path if path_role(path) not in ("docs", "config") else None
    return None
