"""Python's re-exports: the module a name reached through a package comes from.

A report calls `xr.where(...)` or `u.Quantity(...)`: a name the package's `__init__.py`
imports from the module that defines it (`from .core.computation import where`, `from
.quantity import *`). The evidence channel (pix/retrieve/evidence.py) resolves a dotted name to
a module file by its path alone, so `xarray.where` named no file, and `where` itself is
defined in too many of xarray's files for the identifier channel to say which one is meant.
`origin` follows the package's imports to the module that defines the name, as Python's import
system would, and gives its line; `aliases` reads the report's own imports (`import xarray as
xr`), so that `xr.where` is `xarray.where`.

Files are read from the snapshot (`Reader`) and parsed with Python's own `ast`; a file that
does not parse (another Python's syntax) exports nothing. Each parse is remembered by blob, so a
warm engine parses a package's `__init__.py` once.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

# Re-exports chained through this many modules at most (`pkg/__init__.py` -> `pkg/core/__init__.py`
# -> `pkg/core/mod.py` is three).
MAX_HOPS = 4
MAX_TEXT = 1_000_000  # characters: a larger `__init__.py` is generated, not a package's face

# (blob sha, text) of a path in the snapshot, or None when the snapshot has no such file.
Reader = Callable[[str], "tuple[str, str] | None"]

_IMPORT_AS = re.compile(r"^[ \t>]*import[ \t]+([A-Za-z_][\w.]*)[ \t]+as[ \t]+([A-Za-z_]\w*)", re.M)
_FROM_IMPORT = re.compile(
    r"^[ \t>]*from[ \t]+([A-Za-z_][\w.]*)[ \t]+import[ \t]+([A-Za-z_]\w*)"
    r"(?:[ \t]+as[ \t]+([A-Za-z_]\w*))?[ \t]*$",
    re.M,
)


def aliases(text: str) -> dict[str, str]:
    """The names a report's code binds to modules of dotted names: `import xarray as xr` (xr ->
    xarray), `from astropy import units as u` (u -> astropy.units); the first binding of each
    name. `import numpy as np` is read too: it names no file of the repository, so it resolves
    to nothing."""
    out: dict[str, str] = {}
    for m in _IMPORT_AS.finditer(text):
        out.setdefault(m.group(2), m.group(1))
    for m in _FROM_IMPORT.finditer(text):
        if m.group(3):
            out.setdefault(m.group(3), f"{m.group(1)}.{m.group(2)}")
    return out


def expand(name: str, bound: dict[str, str]) -> str:
    """A dotted name with its first part replaced by the module the report bound it to."""
    first, _, rest = name.partition(".")
    return f"{bound[first]}.{rest}" if first in bound and rest else name


@dataclass(frozen=True)
class _Module:
    """What a module's top level says about its names."""

    defined: dict[str, int] = field(default_factory=dict)  # name -> line of its definition
    # bound name -> each import binding it, in order: (level, module, name) (`from ..core import
    # where as w` is w -> (2, core, where)); `try:` one module `except ImportError:` another
    imported: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)
    starred: tuple[tuple[int, str], ...] = ()  # `from module import *`: (level, module)


@lru_cache(maxsize=512)
def _parsed(sha: str, text: str) -> _Module:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _Module()
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
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                if alias.name == "*":
                    starred.append((node.level, node.module))
                else:
                    bound = alias.asname or alias.name
                    imported.setdefault(bound, []).append((node.level, node.module, alias.name))
    return _Module(defined, imported, tuple(starred))


def _top_level(body: list[ast.stmt]):
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


@dataclass(frozen=True)
class Files:
    """The snapshot as imports see it. `read`: a file's (blob sha, text), or None; `exists`:
    whether the snapshot has a file; `absolute`: the one file of an absolute module name
    (`xarray.core.computation`), or None."""

    read: Reader
    exists: Callable[[str], bool]
    absolute: Callable[[str], str | None]

    def imported(self, path: str, level: int, module: str) -> str | None:
        """The file an import statement of the module at `path` reads (`level` dots)."""
        if level == 0:
            return self.absolute(module)
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        for _ in range(level - 1):  # each further dot is the folder above
            if not folder:
                return None
            folder = folder.rsplit("/", 1)[0] if "/" in folder else ""
        stem = "/".join(p for p in [folder, *module.split(".")] if p)
        return next((f for f in (stem + ".py", stem + "/__init__.py") if self.exists(f)), None)


def origin(path: str, name: str, files: Files, hops: int = MAX_HOPS) -> tuple[str, int] | None:
    """(file, line) where `name` of the module at `path` is defined, following its imports
    (line 0: a module, or a file that imports the name from no file of the snapshot); None
    when the module neither defines nor imports it, or the chain is longer than MAX_HOPS."""
    if hops <= 0:
        return None
    got = files.read(path)
    if got is None or len(got[1]) > MAX_TEXT:
        return None
    module = _parsed(*got)
    if name in module.defined:
        return path, module.defined[name]
    for level, source, original in module.imported.get(name, ()):
        submodule = files.imported(path, level, f"{source}.{original}")
        if submodule is not None:  # `from .core import dtypes`: a module, not a name in one
            return submodule, 0
        target = files.imported(path, level, source)
        if target is not None:
            return origin(target, original, files, hops - 1) or (target, 0)
    for level, source in module.starred:
        target = files.imported(path, level, source)
        found = target and origin(target, name, files, hops - 1)
        if found:
            return found
    return None
