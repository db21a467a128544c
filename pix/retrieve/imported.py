"""The imported-file step (issue reports): the modules the first file imports.

A fix that changes several files mostly changes a module and what it builds on: sphinx's
autodoc and its importer (`from sphinx.ext.autodoc.importer import get_module_members`), the
C++ domain and the code it shares with the C domain (`from sphinx.util.cfamily import ...`),
pytest's unittest support and the python collector it subclasses. A report names the module it
is about; the ones it builds on rank lower, among files that only share its words. So among the
first IMPORTED_TOP files, the first FIRST that the first file imports (Python's `import` and
`from ... import` statements, anywhere in it) gain WEIGHT x the first file's score, never
reaching it: the file the report is most surely about stays first.

An import names a file of the snapshot as Python would find it: a relative one from the
importing file's folder (`from .importer import x`: `importer.py` or `importer/__init__.py`
beside it, or `x.py` under it), an absolute one of two or more parts by the end of a path
(`_pytest.python`: `src/_pytest/python.py`). An absolute import of one part (`import ast`,
`import utils`) is most likely the standard library's or another package's, and names nothing.

Measured on issueloc's 116 reports (bench/README.md, "forty-eighth session", `issue_bench
--weights '[{"imported": 0}]'`). No query of the other development sets takes the issue route,
so none of them moves.
"""

from __future__ import annotations

import ast
import math
import re

import apsw

from pix.retrieve.hits import Hit, revised
from pix.retrieve.kept import Kept
from pix.store import texts

IMPORTED_TOP = 20
FIRST = 3
WEIGHT = 0.2
SHAPES = frozenset({"issue"})
KEPT = 256  # the imports of this many files, by blob and path

# When a module does not parse (another Python's syntax), its import lines are read as text:
# comments out, continuation lines joined, each statement of a line on its own.
_COMMENT = re.compile(r"#[^\n]*")
_FROM = re.compile(
    r"^[ \t]*from[ \t]+(\.*)[ \t]*([A-Za-z_][\w.]*|)[ \t]+import[ \t]*(\([^)]*\)|[^\n;]*)",
    re.M,
)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n;]+)", re.M)

# (dots, module, names): `from ..core import a, b` is (2, "core", ["a", "b"]); `import a.b`
# is (0, "a.b", []).
Statement = tuple[int, str, list[str]]

_IMPORTS: Kept[tuple[frozenset[str], frozenset[str]]] = Kept(KEPT)  # by (blob, path)


def enabled(channels: list[str] | None, shape: str) -> bool:
    """By default, for the shapes it serves; never when the request names its channels (it
    then asks for those alone)."""
    return channels is None and shape in SHAPES and WEIGHT > 0


def statements(text: str) -> list[Statement]:
    """A Python module's import statements, anywhere in it (a function imports lazily what
    the module builds on), as Python's parser reads them; by their lines when it does not
    parse (then a docstring's example imports count too)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _statement_lines(text)
    out: list[Statement] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            out.append((node.level, node.module or "", [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out += [(0, a.name, []) for a in node.names]
    return out


def _statement_lines(text: str) -> list[Statement]:
    text = _COMMENT.sub("", text).replace("\\\n", " ")
    text = "\n".join(part for line in text.splitlines() for part in line.split(";"))
    out: list[Statement] = []
    for m in _FROM.finditer(text):
        names = [n.split()[0] for n in m.group(3).strip("() \t\n").split(",") if n.strip()]
        out.append((len(m.group(1)), m.group(2), names))
    for m in _IMPORT.finditer(text):
        out += [(0, part.split()[0], []) for part in m.group(1).split(",") if part.strip()]
    return out


def imports(text: str, path: str) -> tuple[frozenset[str], frozenset[str]]:
    """What a Python module's import statements may name: (stems of files relative imports
    name, from the repository's root: `pkg/sub/mod`; absolute dotted names of two or more
    parts as paths: `pkg/sub/mod`). A `from` import names its module and each name under it
    (a name may be a submodule). A relative import above the repository's root names
    nothing, as Python refuses it."""
    folders = path.split("/")[:-1]
    relative: set[str] = set()
    absolute: set[str] = set()
    for dots, module, names in statements(text):
        dotted = [module] if module else []
        dotted += [f"{module}.{n}".lstrip(".") for n in names if n.isidentifier()]
        if dots:
            if dots - 1 > len(folders):
                continue
            base = folders[: len(folders) - (dots - 1)]
            relative.update("/".join([*base, *d.split(".")]) for d in dotted)
        else:
            absolute.update(d.replace(".", "/") for d in dotted if "." in d)
    return frozenset(relative), frozenset(absolute)


def _stem(path: str) -> str | None:
    """A Python file's module as a path (`pkg/mod.py` -> pkg/mod, `pkg/__init__.py` -> pkg)."""
    if not path.endswith(".py"):
        return None
    stem = path[:-3]
    return stem[: -len("/__init__")] if stem.endswith("/__init__") else stem


def is_imported(path: str, relative: frozenset[str], absolute: frozenset[str]) -> bool:
    """Whether the import statements (`imports`) name the file at `path`."""
    stem = _stem(path)
    if stem is None:
        return False
    if stem in relative or stem in absolute:
        return True
    parts = stem.split("/")
    return any("/".join(parts[i:]) in absolute for i in range(1, len(parts) - 1))


def _imports_of(conn: apsw.Connection, hit: Hit) -> tuple[frozenset[str], frozenset[str]]:
    """`imports` of the hit's file, remembered by blob and path (relative imports resolve
    from the path: one text at two paths imports two sets of files)."""
    key = (hit.blob_sha, hit.path)
    found = _IMPORTS.get(key)
    if found is None:
        found = imports(texts.text_of(conn, hit.blob_sha), hit.path)
        _IMPORTS.put(key, found)
    return found


def lift_imported(conn: apsw.Connection, files: list[Hit]) -> list[Hit]:
    """`files` (ranked) with the bonus added to the first FIRST of the next IMPORTED_TOP - 1
    that the first imports, each kept below the first (rank: `imported`, the bonus), ranked
    again."""
    if not files or _stem(files[0].path) is None or files[0].score <= 0:
        return files
    first = files[0]
    relative, absolute = _imports_of(conn, first)
    if not relative and not absolute:
        return files
    named = [
        f.path
        for f in files[1:IMPORTED_TOP]
        if any(is_imported(p, relative, absolute) for p in (f.path, *f.copies))
    ]
    lifted = named[:FIRST]
    if not lifted:
        return files
    below = math.nextafter(first.score, -math.inf)
    out = []
    for f in files:
        if f.path in lifted:
            score = max(f.score, min(f.score + WEIGHT * first.score, below))
            f = revised(f, score=score, rank={**f.rank, "imported": score - f.score})
        out.append(f)
    return sorted(out, key=lambda h: (-h.score, h.path))
