"""Python's re-exports: the module a name reached through a package comes from.

A report calls `xr.where(...)`: a name the package's `__init__.py` imports from the module that
defines it (`from .core.computation import where`, or `from .computation import *` in a
subpackage). The evidence channel (pix/retrieve/evidence.py) resolves a dotted name to a module
file by its path alone, so `xarray.where` named no file, and `where` itself is defined in too
many of xarray's files for the identifier channel to say which one is meant. `exported` follows
the package's imports to the module that defines the name, as Python's import system would, and
gives its line; `aliases` reads the report's own imports (`import xarray as xr`), so that
`xr.where` is `xarray.where`.

Files are read from the snapshot (`Files`) and parsed with Python's own `ast`; a file that does
not parse (another Python's syntax) says nothing. What a parse found is remembered by blob, so
a warm engine parses a package's `__init__.py` once, and a file already parsed is not read
again.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property

from pix.retrieve.kept import Kept

# Re-exports chained through this many modules at most (`pkg/__init__.py` -> `pkg/core/__init__.py`
# -> `pkg/core/mod.py` is three).
MAX_HOPS = 4
# Characters (bytes of text, as stored): a larger module on the way is not parsed, as
# define.PLACE_FILE_CHARS (ast reads about 11 MB/s here: 24 ms at this size); the file it is
# still names the name when an import points at it, without the line.
MAX_TEXT = 262_144
PARSED_KEPT = 512  # modules' summaries kept, by blob (their names and lines: kilobytes each)
# Whether a package's class the report calls names the module defining it, as its functions do
# (`xr.DataArray` as `xr.where`): nearly every report of a package builds its input from the
# package's main classes, whose modules then stood above the file the report is about (issueloc
# static-only Acc@1 / Acc@5 / Acc@10: 0.578 / 0.776 / 0.810 without classes, 0.560 / 0.767 /
# 0.810 with them, 0.569 / 0.767 / 0.793 without re-exports; bench/README.md, forty-fifth
# session). A name counts as a class by Python's convention: its first letter upper-case (so a
# CONSTANT is left out too).
CLASSES = False

_IMPORT = re.compile(r"^[ \t>.]*import[ \t]+([^\n#]+)", re.M)
_FROM_IMPORT = re.compile(r"^[ \t>.]*from[ \t]+([A-Za-z_][\w.]*)[ \t]+import[ \t]+([^\n#]+)", re.M)
_BINDING = re.compile(r"([A-Za-z_][\w.]*)(?:[ \t]+as[ \t]+([A-Za-z_]\w*))?")


def aliases(text: str) -> dict[str, str]:
    """The names a report's code binds to modules of dotted names: `import xarray as xr` (xr ->
    xarray), `from astropy import units as u` (u -> astropy.units), each of a comma list; the
    first binding of each name. `import numpy as np` is read too: it names no file of the
    repository, so it resolves to nothing."""
    out: dict[str, str] = {}
    for m in _FROM_IMPORT.finditer(text):
        for binding in m.group(2).strip("() \t").split(","):
            b = _BINDING.fullmatch(binding.strip())
            if b and b.group(2):
                out.setdefault(b.group(2), f"{m.group(1)}.{b.group(1)}")
    for m in _IMPORT.finditer(text):
        for binding in m.group(1).split(","):
            b = _BINDING.fullmatch(binding.strip())
            if b and b.group(2):
                out.setdefault(b.group(2), b.group(1))
    return out


def expand(name: str, bound: dict[str, str]) -> str:
    """A dotted name with its first part replaced by the module the report bound it to."""
    first, _, rest = name.partition(".")
    return f"{bound[first]}.{rest}" if first in bound and rest else name


@dataclass(frozen=True)
class Files:
    """A snapshot's files as imports see them: its paths (listed only when a report names a
    package: most do not), a path's (blob sha, text size), and a blob's text (read only when
    its summary is not remembered)."""

    listing: Callable[[], list[str]]
    blob: Callable[[str], tuple[str, int] | None]
    text: Callable[[str], str]

    @cached_property
    def paths(self) -> frozenset[str]:
        return frozenset(self.listing())

    def packages(self, dotted_path: str) -> list[str]:
        """The `__init__.py` files of the snapshot a package's folders end in (`pkg/sub` ->
        `src/pkg/sub/__init__.py`)."""
        target = dotted_path + "/__init__.py"
        return [p for p in self._inits if p == target or p.endswith("/" + target)]

    @cached_property
    def _inits(self) -> list[str]:
        return sorted(p for p in self.paths if p.rsplit("/", 1)[-1] == "__init__.py")

    def module(self, folder: str, module: str) -> str | None:
        """The file of `module` (dotted, '' for the folder itself) under `folder` ('' for the
        root): `mod.py`, else `mod/__init__.py`."""
        stem = "/".join(p for p in [folder, *module.split(".")] if p)
        return next((f for f in (stem + ".py", stem + "/__init__.py") if f in self.paths), None)


@dataclass(frozen=True)
class _Module:
    """What a module's top level says about its names."""

    defined: dict[str, int] = field(default_factory=dict)  # name -> line of its definition
    # bound name -> each import binding it, in order: (level, module, name) (`from ..core import
    # where as w` is w -> (2, "core", "where"); `from . import sub` is sub -> (1, "", "sub"));
    # `try:` one module `except ImportError:` another
    imported: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)
    starred: tuple[tuple[int, str], ...] = ()  # `from module import *`: (level, module)


_PARSED: Kept[_Module] = Kept(PARSED_KEPT)  # blob sha -> summary
_NOTHING = _Module()


def _parsed(files: Files, path: str) -> _Module | None:
    """The summary of the module at `path`, None when the snapshot has no such file."""
    found = files.blob(path)
    if found is None:
        return None
    sha, size = found
    kept = _PARSED.get(sha)
    if kept is not None:
        return kept
    if size > MAX_TEXT:
        return _NOTHING
    try:
        module = _summary(ast.parse(files.text(sha)))
    except (RecursionError, MemoryError):
        return _NOTHING  # depends on the stack and memory of the moment: not remembered
    except (SyntaxError, ValueError):
        module = _NOTHING
    _PARSED.put(sha, module)
    return module


def _summary(tree: ast.Module) -> _Module:
    defined: dict[str, int] = {}
    imported: dict[str, list[tuple[int, str, str]]] = {}
    starred: list[tuple[int, str]] = []
    for node in _top_level(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.setdefault(node.name, node.lineno)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    defined.setdefault(target.id, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    starred.append((node.level, node.module or ""))
                else:
                    bound = alias.asname or alias.name
                    binding = (node.level, node.module or "", alias.name)
                    imported.setdefault(bound, []).append(binding)
    return _Module(defined, imported, tuple(starred))


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """A module's statements, those inside `if`/`try` at top level included (a package imports
    one implementation or another under `try: ... except ImportError`)."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from _top_level(node.body)
            yield from _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            yield from _top_level(node.body)
            for handler in node.handlers:
                yield from _top_level(handler.body)
            yield from _top_level(node.orelse)


def _imported(files: Files, root: str, path: str, level: int, module: str) -> str | None:
    """The file an import statement of the module at `path` reads (`level` dots); an absolute
    one from `root`, the folder holding the package asked of ('' for the repository's root,
    `src` for a src layout), as Python finds it there (`from numpy import where` names no
    file, though the repository may have a `pkg/compat/numpy.py`)."""
    if level == 0:
        return files.module(root, module)
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    for _ in range(level - 1):  # each further dot is the folder above
        if not folder:
            return None
        folder = folder.rsplit("/", 1)[0] if "/" in folder else ""
    return files.module(folder, module)


def origin(
    files: Files,
    root: str,
    path: str,
    name: str,
    hops: int | None = None,
    seen: set[str] | None = None,
) -> tuple[str, int] | None:
    """(file, line) where `name` of the module at `path` is defined, following its imports
    (line 0: a module, or a file that binds the name from no file of the snapshot); None when
    the module neither defines nor imports it, or the chain is longer than MAX_HOPS. `seen`:
    the modules already searched for the name (Python runs each once: a star import of a star
    import of a module seen before adds nothing). `root`: where absolute imports start."""
    hops = MAX_HOPS if hops is None else hops
    seen = set() if seen is None else seen
    if hops <= 0 or path in seen:
        return None
    seen.add(path)
    module = _parsed(files, path)
    if module is None:
        return None
    if name in module.defined:
        return path, module.defined[name]
    for level, source, original in module.imported.get(name, ()):
        # As Python does: the name in the module imported from, else a submodule so named
        target = _imported(files, root, path, level, source)
        if target is not None:
            found = origin(files, root, target, original, hops - 1, seen)
            if found:
                return found
        submodule = _imported(files, root, path, level, f"{source}.{original}".lstrip("."))
        if submodule is not None:
            return submodule, 0
        if target is not None and target != path:
            return target, 0
    for level, source in module.starred:
        target = _imported(files, root, path, level, source)
        found = target and origin(files, root, target, name, hops - 1, seen)
        if found:
            return found
    return None


def exported(name: str, files: Files) -> tuple[str, int] | None:
    """The module file and line a dotted name reaches through a package's re-exports
    (`xarray.where` -> xarray/core/computation.py, where `where` is defined), or None: the
    longest prefix of the name that is a package of the snapshot (one `__init__.py` ends in its
    folders) with the next part one of its names, that name not a class (CLASSES) nor a dunder
    (`astropy.__version__`: every package has one), and defined elsewhere than the
    `__init__.py` itself (then the module path names it already)."""
    parts = name.split(".")
    for n in range(len(parts) - 1, 0, -1):
        attribute = parts[n]
        if attribute.startswith("__") or (not CLASSES and attribute[:1].isupper()):
            return None
        prefix = "/".join(parts[:n])
        found = files.packages(prefix)
        if len(found) == 1:
            init = found[0]
            root = init[: -len(prefix + "/__init__.py")].rstrip("/")
            hit = origin(files, root, init, attribute)
            return hit if hit and hit[0] != init else None
    return None
