"""Python's re-exports (pix/retrieve/exports.py): a name reached through a package resolves to
the module that defines it, and an issue that calls `gd.where(...)` names that module."""

from __future__ import annotations

import pytest
from conftest import indexed_repo

from pix.query import QueryEngine, QueryRequest
from pix.retrieve import evidence, exports


def files_of(tree: dict[str, str]) -> exports.Files:
    """A snapshot of `tree` (path -> text) as imports see it."""

    def absolute(module: str) -> str | None:
        stem = module.replace(".", "/")
        return next((p for p in (stem + ".py", stem + "/__init__.py") if p in tree), None)

    return exports.Files(
        lambda path: (f"sha-{path}-{hash(tree[path])}", tree[path]) if path in tree else None,
        tree.__contains__,
        absolute,
    )


def origin(tree: dict[str, str], path: str, name: str) -> tuple[str, int] | None:
    return exports.origin(path, name, files_of(tree))


def test_an_explicit_import_resolves_to_the_defining_module_and_line():
    tree = {
        "pkg/__init__.py": "from .core.ops import where\nfrom .core.ops import mask as hide\n",
        "pkg/core/__init__.py": "",
        "pkg/core/ops.py": (
            "import numpy\n\n\ndef where(c, x, y):\n    pass\n\n\ndef mask(x):\n    pass\n"
        ),
    }
    assert origin(tree, "pkg/__init__.py", "where") == ("pkg/core/ops.py", 4)
    # bound under another name: the name it has where it is defined
    assert origin(tree, "pkg/__init__.py", "hide") == ("pkg/core/ops.py", 8)
    assert origin(tree, "pkg/__init__.py", "mask") is None  # not a name of pkg
    assert origin(tree, "pkg/__init__.py", "numpy") is None


def test_star_imports_are_searched_for_the_module_that_defines_the_name():
    tree = {
        "units/__init__.py": "from .core import *\nfrom .quantity import *\n",
        "units/core.py": "class Unit:\n    pass\n",
        "units/quantity.py": "'''Quantities.'''\nQUANTITY_LIMIT = 3\n\nclass Quantity:\n    pass\n",
    }
    assert origin(tree, "units/__init__.py", "Quantity") == ("units/quantity.py", 4)
    assert origin(tree, "units/__init__.py", "QUANTITY_LIMIT") == ("units/quantity.py", 2)
    assert origin(tree, "units/__init__.py", "Unit") == ("units/core.py", 1)


def test_re_exports_chain_through_subpackages_and_both_kinds_of_import():
    tree = {
        "src/pkg/__init__.py": "from pkg.core import where\n",  # absolute
        "src/pkg/core/__init__.py": "from .ops import *\n",
        "src/pkg/core/ops.py": "from ..util import helper as where\n",  # two dots: pkg/
        "src/pkg/util.py": "def helper():\n    pass\n",
    }

    def absolute(module: str) -> str | None:
        stem = "src/" + module.replace(".", "/")
        return next((p for p in (stem + ".py", stem + "/__init__.py") if p in tree), None)

    files = exports.Files(
        lambda p: (p, tree[p]) if p in tree else None, tree.__contains__, absolute
    )
    assert exports.origin("src/pkg/__init__.py", "where", files) == ("src/pkg/util.py", 1)
    # one hop fewer than the chain: the file the last import read names, its line unknown
    assert exports.origin("src/pkg/__init__.py", "where", files, hops=3) == ("src/pkg/util.py", 0)


def test_an_imported_submodule_a_try_block_and_files_that_say_nothing():
    tree = {
        "pkg/__init__.py": (
            "from .core import dtypes\n"
            "try:\n    from .fast import speedup\nexcept ImportError:\n"
            "    from .slow import speedup\n"
            "from .gone import vanished\n"
            "from .broken import anything\n"
        ),
        "pkg/core/__init__.py": "",
        "pkg/core/dtypes.py": "NA = None\n",
        "pkg/slow.py": "def speedup():\n    pass\n",
        "pkg/broken.py": "def anything(:\n",
    }
    assert origin(tree, "pkg/__init__.py", "dtypes") == ("pkg/core/dtypes.py", 0)
    # the try block's import names no file of the snapshot, its fallback does
    assert origin(tree, "pkg/__init__.py", "speedup") == ("pkg/slow.py", 1)
    assert origin(tree, "pkg/__init__.py", "vanished") is None  # no such module
    # a module that does not parse: imported from it, but where in it is unknown
    assert origin(tree, "pkg/__init__.py", "anything") == ("pkg/broken.py", 0)
    assert origin(tree, "pkg/missing.py", "x") is None


def test_imports_that_loop_end():
    tree = {"a/__init__.py": "from .b import x\n", "a/b.py": "from . import c\nfrom .c import x\n",
            "a/c.py": "from .b import x\n"}  # fmt: skip
    assert origin(tree, "a/__init__.py", "x") in (None, ("a/b.py", 0), ("a/c.py", 0))


def test_a_reports_imports_bind_short_names_to_modules():
    text = (
        "```python\n>>> import xarray as xr\nimport astropy.units as u\n"
        "from astropy import coordinates as coord\nfrom pkg import thing\nimport numpy as np\n```"
    )
    bound = exports.aliases(text)
    assert bound == {
        "xr": "xarray", "u": "astropy.units", "coord": "astropy.coordinates", "np": "numpy"
    }  # fmt: skip
    assert exports.expand("xr.where", bound) == "xarray.where"
    assert exports.expand("u.Quantity.to", bound) == "astropy.units.Quantity.to"
    assert exports.expand("xr", bound) == "xr" and exports.expand("ds.x", bound) == "ds.x"


def _operation(name: str, doc: str) -> str:
    """A function long enough to be a chunk of its own."""
    steps = "".join(
        f"    step_{i} = values[{i}] if len(values) > {i} else None\n" for i in range(24)
    )
    return (
        f'def {name}(values, cond=None, other=None):\n    """{doc}"""\n{steps}    return values\n'
    )


OPS = "\n\n".join(
    [
        '"""Operations on frames."""\n',
        _operation("concat", "Frames one after the other."),
        _operation("where", "Elements of values where cond holds, else of other."),
        _operation("stack", "Frames on a new axis."),
    ]
)
WHERE_LINE = OPS.splitlines().index("def where(values, cond=None, other=None):") + 1


GRID = {
    "grid/__init__.py": (
        '"""grid: labelled arrays."""\n'
        "from grid.core.frame import Frame\nfrom grid.core.ops import where, concat\n"
        "from grid.io.readers import *\n__version__ = '1.0'\n"
    ),
    "grid/core/__init__.py": "",
    "grid/core/ops.py": OPS,
    "grid/core/frame.py": (
        '"""The labelled frame."""\n\n\nclass Frame:\n    def __init__(self, values, attrs=None):\n'
        "        self.values = values\n        self.attrs = attrs or {}\n\n"
        "    def where(self, cond, other=None):\n        return self\n\n"
        "    def combine(self, cond, other):\n        return self\n"
    ),
    "grid/core/series.py": (
        '"""A labelled series."""\n\n\nclass Series:\n    def where(self, cond):\n'
        "        return self\n"
    ),
    "grid/core/masks.py": "def where(mask):\n    return mask\n",
    "grid/io/__init__.py": "",
    "grid/io/readers.py": "def read_grid(path):\n    return open(path).read()\n",
    "README.md": "# grid\n\nLabelled arrays.\n",
}
REPORT = """`gd.where` drops the attributes of its input

When I call the top-level function on a frame with attributes, the result has none:

```python
import grid as gd

f = gd.Frame([1, 2, 3], attrs={"units": "m"})
out = gd.where(f, f, 0)
print(out.attrs)  # {}
```

I expected the attributes to be kept, as the method of the frame keeps them. grid 1.0.
"""


def evidence_ranks(response: dict) -> dict[str, int]:
    return {
        r["file"]: r["explain"]["channels"]["evidence"]["rank"]
        for r in response["results"]
        if "evidence" in r["explain"]["channels"]
    }


@pytest.fixture(scope="module")
def grid(tmp_path_factory, embedder):
    root, db = indexed_repo(tmp_path_factory.mktemp("exports"), GRID, embedder)
    engine = QueryEngine(db=str(db), cwd=str(root))
    yield engine
    engine.close()


def test_a_report_calling_a_packages_function_names_the_module_defining_it(grid):
    ask = QueryRequest(query=REPORT, mode="file", explain=True, no_content=True)
    response = grid.query(ask)
    assert response["explain"]["shape"] == "issue"
    # `gd` is grid; grid re-exports `where` from grid/core/ops.py, where it is defined; the
    # class the report builds its input with (gd.Frame) is named by every report of the
    # package and is no evidence (evidence.EXPORTED_CLASSES)
    assert evidence_ranks(response) == {"grid/core/ops.py": 1}
    saved = evidence.STEPS
    evidence.STEPS = saved - {"exports"}
    try:
        assert evidence_ranks(grid.query(ask)) == {}
    finally:
        evidence.STEPS = saved


def test_the_defining_chunk_takes_the_evidence(grid):
    response = grid.query(
        QueryRequest(query=REPORT, mode="chunk", explain=True, no_content=True, top=20)
    )
    held = [
        r for r in response["results"]
        if r["path"] == "grid/core/ops.py" and "evidence" in r["explain"]["channels"]
    ]  # fmt: skip
    inside = [r for r in held if r["startLine"] <= WHERE_LINE <= r["endLine"]]
    part = [r["explain"]["channels"]["evidence"]["contribution"] for r in held if r not in inside]
    # the chunk holding `def where` takes the whole share, the file's other chunks part of it
    assert len(inside) == 1 and part
    assert inside[0]["explain"]["channels"]["evidence"]["contribution"] > max(part)


def test_evidence_files_read_re_exports_only_with_a_reader():
    paths = sorted(GRID)
    tree = dict(GRID)
    read = files_of(tree).read
    ev = evidence.extract("see gd.where and grid.read_grid, grid.__version__, gd.Frame\n" * 1)
    ev.bound = {"gd": "grid"}
    named = {p: line for p, _, line in evidence.evidence_files(ev, paths, read)}
    assert named == {"grid/core/ops.py": WHERE_LINE, "grid/io/readers.py": 1}
    assert evidence.evidence_files(ev, paths) == []
