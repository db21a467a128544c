"""Where a discovery looks: roots resolved inside the repository, globs, and filtering.

Roots are contained physically: a root is resolved as the operating system would (`..`
folded, every link followed) and must land inside the repository's top level. `../x`, an
absolute path elsewhere, or a link that leaves the tree becomes a diagnostic for that root
alone; the other roots continue. This keeps one call from wandering off by accident; it is
not a sandbox (anyone can read the files another way).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from pix.output.pathtext import shown_path
from pix.pathglob import glob_regex
from pix.retrieve.priors import VENDORED

# `recommended` filtering: folders (any path component) and file names that hold output,
# caches or other people's code rather than the project's own sources. The indexer already
# skips lock files, minified files, `@generated` headers and what git ignores.
BUILD_DIRS = frozenset(
    "build dist _build out target .next .nuxt .output .svelte-kit coverage htmlcov".split()
)
CACHE_DIRS = frozenset(
    """__pycache__ .cache .pytest_cache .mypy_cache .ruff_cache .tox .nox .gradle .terraform
    .parcel-cache .sass-cache .eggs .hypothesis""".split()
)
VENDOR_DIRS = frozenset("node_modules bower_components site-packages jspm_packages".split())
GENERATED_DIRS = frozenset("generated __generated__ autogen".split())
GENERATED_FILES = re.compile(
    r"(\.generated\.\w+|_generated\.\w+|\.g\.dart|\.designer\.cs|\.pb\.(h|cc)|_pb2\.pyi)$", re.I
)
CATEGORIES = ("generated", "vendored", "cache", "build")
SAMPLE_FOLDERS = 5  # left-out folders named per root and category
UNSEARCHED_LISTED = 20  # unsearched files named per root; the count is always exact
# Files the indexer skipped (table `skipped`) that may hold text a hypothesis could match:
# in a root's scope they make its cells partial, since they were never searched. Binary files
# and symlinks are not text a search reads (ripgrep skips them too); generated and minified
# files count only where the recommended filter is not applied, as it leaves them out anyway,
# and so do submodules and nested repositories: another project's code, as vendored code is.
UNSEARCHED_ALWAYS = frozenset({"not_text", "too_large", "secret", "unreadable"})
UNSEARCHED_UNFILTERED = frozenset({"generated", "minified", "submodule"})


def filter_category(path: str) -> tuple[str, str] | None:
    """(category, the folder or file that puts `path` in it), or None to keep the path."""
    parts = path.split("/")
    for i, part in enumerate(parts[:-1]):
        where = "/".join(parts[: i + 1]) + "/"
        if part in GENERATED_DIRS:
            return "generated", where
        if part in VENDOR_DIRS:
            return "vendored", where
        if part in CACHE_DIRS or part.endswith(".egg-info"):
            return "cache", where
        if part in BUILD_DIRS:
            return "build", where
    if GENERATED_FILES.search(parts[-1]):
        return "generated", path
    m = VENDORED.search(path)  # vendor/, third_party/ ... as the ranking priors see it
    if m:
        return "vendored", path[: m.end()]
    return None


@dataclass
class GlobFilter:
    include: list[re.Pattern[str]]
    exclude: list[re.Pattern[str]]

    @classmethod
    def of(cls, globs: list[str]) -> GlobFilter:
        include = [glob_regex(g) for g in globs if not g.startswith("!")]
        exclude = [glob_regex(g[1:]) for g in globs if g.startswith("!") and len(g) > 1]
        return cls(include, exclude)

    def keeps(self, path: str) -> bool:
        if self.include and not any(r.match(path) for r in self.include):
            return False
        return not any(r.match(path) for r in self.exclude)


@dataclass
class Root:
    """One requested root and what it resolved to."""

    name: str  # as requested
    rel: str | None = None  # repository-relative, '' for the whole repository
    status: str = "searched"  # 'searched' | 'skipped' | 'root_missing'
    code: str | None = None  # why not searched: outside_repository, escapes_repository, ...
    reason: str | None = None
    filter_decision: str = "native"  # 'applied' | 'bypassed' | 'native'
    files: list[str] = field(default_factory=list)  # indexed paths searched, sorted
    excluded: dict[str, int] = field(default_factory=dict)  # category -> files left out
    excluded_where: dict[str, list[str]] = field(default_factory=dict)
    glob_excluded: int = 0
    index_skipped: dict[str, int] = field(default_factory=dict)  # indexer's reason -> files
    unsearched: list[tuple[str, str]] = field(default_factory=list)  # (path, reason), by path
    stale: list[str] = field(default_factory=list)

    def contains(self, path: str) -> bool:
        assert self.rel is not None
        return not self.rel or path == self.rel or path.startswith(self.rel + "/")

    def diagnose(self, status: str, code: str, reason: str) -> Root:
        self.status, self.code, self.reason = status, code, reason
        return self


def _inside(path: Path, top: Path) -> bool:
    return path == top or top in path.parents


def from_folder(roots: list[str], folder: Path, top: Path) -> list[str]:
    """Roots as a shell means them, relative to `folder` (the CLI's --root, from the folder pix
    runs in), as the request's roots are: relative to the top level `top` of the tree searched
    (audit: from src/utils, `--root ../helper` was "outside the repository"; from another
    folder with --db, `--root sub` named the current folder's sub, not the tree's). A root
    inside the tree becomes its path from the top; any other is passed on whole, for
    resolve_root to judge (outside, or through a link)."""
    out = []
    for name in roots:
        given = Path(name).expanduser()
        if given.is_absolute():
            out.append(name)
            continue
        full = Path(os.path.normpath(folder / given))  # `..` as the shell reads it
        for candidate in (full, full.resolve()):  # (the top is physical: a link to the tree)
            if _inside(candidate, top):
                out.append(candidate.relative_to(top).as_posix())
                break
        else:  # outside: resolve_root says so
            out.append(str(full))
    return out


def resolve_root(name: str, top: Path, indexed: list[str]) -> Root:
    """Where `name` lands in the repository whose (physical) top level is `top`."""
    root = Root(name)
    shown = shown_path(name)  # a newline in a name must not split the one-line reason
    try:
        given = Path(name).expanduser()
        lexical = Path(os.path.normpath(given if given.is_absolute() else top / given))
        physical = lexical.resolve()  # follows every link on the way, like the OS would
        exists = physical.exists()
    except (OSError, ValueError, RuntimeError) as exc:
        # A NUL byte, a name longer than the file system takes, an unknown ~user: this root
        # cannot be searched, the others still are.
        return root.diagnose("root_missing", "not_found", f"{name!r} is no usable path ({exc})")
    # Judged by where the root leads: a path through a link to the repository (a shell's
    # logical $PWD, macOS's /tmp) is inside it, and a link inside it that leaves it is not.
    if not _inside(physical, top):
        if not _inside(lexical, top):
            where = shown_path(str(top))
            return root.diagnose(
                "skipped", "outside_repository", f"{shown} is outside the repository {where}"
            )
        return root.diagnose(
            "skipped",
            "escapes_repository",
            f"{shown} leads outside the repository through a link (to {shown_path(str(physical))})",
        )
    rel = physical.relative_to(top).as_posix()
    root.rel = "" if rel == "." else rel
    has_indexed = any(root.contains(p) for p in indexed)
    if not exists:
        if has_indexed:
            return root.diagnose(
                "root_missing",
                "removed_since_indexing",
                f"{shown} no longer exists in the work tree (the index still has it: stale)",
            )
        return root.diagnose("root_missing", "not_found", f"{shown} does not exist")
    if not has_indexed:
        return root.diagnose(
            "skipped",
            "nothing_indexed",
            f"no indexed file under {shown} (ignored by git, skipped by the indexer, or added "
            "since indexing)",
        )
    return root


def scope_root(
    root: Root,
    indexed: list[str],
    skipped: list[tuple[str, str]],
    stale: list[str],
    globs: GlobFilter,
    filter_mode: str,
) -> None:
    """Fill in a searched root's files, and what filtering and the indexer left out of it."""
    # An explicitly requested generated/vendored/... folder is searched as asked, and the
    # bypass is disclosed.
    bypass = (
        filter_mode == "recommended"
        and bool(root.rel)
        and bool(filter_category(root.rel + "/") or filter_category(root.rel))
    )
    root.filter_decision = (
        "native" if filter_mode != "recommended" else "bypassed" if bypass else "applied"
    )
    for path in indexed:
        if not root.contains(path):
            continue
        if not globs.keeps(path):
            root.glob_excluded += 1
            continue
        if root.filter_decision == "applied" and (hit := filter_category(path)):
            category, where = hit
            root.excluded[category] = root.excluded.get(category, 0) + 1
            sample = root.excluded_where.setdefault(category, [])
            if where not in sample and len(sample) < SAMPLE_FOLDERS:
                sample.append(where)
            continue
        root.files.append(path)
    for path, reason in skipped:
        if root.contains(path):
            root.index_skipped[reason] = root.index_skipped.get(reason, 0) + 1
            if _unsearched(path, reason, globs, root.filter_decision):
                root.unsearched.append((path, reason))
    # Only changes that this search would have looked at make its cells incomplete.
    root.stale = [
        p
        for p in stale
        if root.contains(p)
        and globs.keeps(p)
        and not (root.filter_decision == "applied" and filter_category(p))
    ]


def _unsearched(path: str, reason: str, globs: GlobFilter, filter_decision: str) -> bool:
    """Whether a file the indexer skipped is one this root's search would have read."""
    if not globs.keeps(path):
        return False
    if filter_decision == "applied" and filter_category(path):
        return False
    if reason in UNSEARCHED_ALWAYS:
        return True
    return reason in UNSEARCHED_UNFILTERED and filter_decision != "applied"


def unsearched_reason(root: Root, named: int = 3) -> str:
    """Why a cell over `root` is partial: the files in its scope that were never searched."""
    shown = ", ".join(f"{path} ({reason})" for path, reason in root.unsearched[:named])
    more = f" and {len(root.unsearched) - named} more" if len(root.unsearched) > named else ""
    return (
        f"{len(root.unsearched)} file(s) in scope were skipped by the indexer and not searched: "
        f"{shown}{more}"
    )


def describe_root(root: Root) -> dict:
    path = None if root.rel is None else root.rel or "."
    out: dict = {"root": root.name, "path": path, "status": root.status}
    if root.status != "searched":
        out["diagnostic"] = {"code": root.code, "message": root.reason}
        return out
    out["files"] = len(root.files)
    out["filter"] = {
        "decision": root.filter_decision,
        "excluded": {c: root.excluded[c] for c in CATEGORIES if c in root.excluded},
        "excludedFolders": {c: root.excluded_where[c] for c in CATEGORIES if c in root.excluded},
    }
    out["globExcluded"] = root.glob_excluded
    out["indexSkipped"] = dict(sorted(root.index_skipped.items()))
    out["unsearched"] = {
        "count": len(root.unsearched),
        "files": [{"path": p, "reason": r} for p, r in root.unsearched[:UNSEARCHED_LISTED]],
        "truncated": len(root.unsearched) > UNSEARCHED_LISTED,
    }
    out["staleFiles"] = len(root.stale)
    return out
