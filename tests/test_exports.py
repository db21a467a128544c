"""Python's re-exports (pix/retrieve/exports.py): a name reached through a package resolves to
the module that defines it, and an issue that calls `gd.where(...)` names that module."""

from __future__ import annotations

import pytest
from conftest import opened_engine

from pix.query import QueryRequest
from pix.retrieve import evidence, exports


class Tree:
    """A snapshot of `files` (path -> text) as imports see it, counting the listings, the
    modules looked up and the texts read. Each tree's blobs are its own (pix remembers
    summaries by blob)."""

    count = 0

    def __init__(self, files: dict[str, str]) -> None:
        Tree.count += 1
        self.tag, self.files, self.looked, self.reads, self.listed = Tree.count, files, 0, 0, 0
        self.python = exports.Files(self.listing, self.blob, self.text)

    def listing(self) -> list[str]:
        self.listed += 1
        return list(self.files)

    def blob(self, path: str) -> tuple[str, int] | None:
        self.looked += 1
        return (f"{self.tag}:{path}", len(self.files[path])) if path in self.files else None

    def text(self, sha: str) -> str:
        self.reads += 1
        return self.files[sha.split(":", 1)[1]]

    def exported(self, name: str) -> tuple[str, int] | None:
        return exports.exported(name, self.python)


OPS_SMALL = "import numpy\n\n\ndef where(c, x, y):\n    pass\n\n\ndef mask(x):\n    pass\n"


def test_an_explicit_import_resolves_to_the_defining_module_and_line():
    tree = Tree(
        {
            "pkg/__init__.py": "from .core.ops import where\nfrom .core.ops import mask as hide\n",
            "pkg/core/__init__.py": "",
            "pkg/core/ops.py": OPS_SMALL,
        }
    )
    assert tree.exported("pkg.where") == ("pkg/core/ops.py", 4)
    assert tree.exported("pkg.where.attr") == ("pkg/core/ops.py", 4)
    # bound under another name: the name it has where it is defined
    assert tree.exported("pkg.hide") == ("pkg/core/ops.py", 8)
    assert tree.exported("pkg.mask") is None  # not a name of pkg
    # the module path names it already; a class and a dunder are no evidence
    assert tree.exported("pkg.core.ops.where") is None
    assert tree.exported("pkg.Frame") is None and tree.exported("pkg.__version__") is None


def test_star_imports_are_searched_for_the_module_that_defines_the_name():
    tree = Tree(
        {
            "units/__init__.py": "from .core import *\nfrom .quantity import *\n",
            "units/core.py": "def unit(s):\n    pass\n",
            "units/quantity.py": (
                '"""Quantities."""\nquantity_limit = 3\n\ndef quantity():\n    pass\n'
            ),
        }
    )
    assert tree.exported("units.quantity_limit") == ("units/quantity.py", 2)
    assert tree.exported("units.unit") == ("units/core.py", 1)
    assert tree.exported("units.m") is None


def test_re_exports_chain_through_subpackages_and_every_kind_of_import(monkeypatch):
    tree = Tree(
        {
            "src/pkg/__init__.py": "from pkg.core import where\nfrom . import helpers\n",
            "src/pkg/core/__init__.py": "from .ops import *\n",
            "src/pkg/core/ops.py": "from ..util import helper as where\n",  # two dots: pkg/
            "src/pkg/util.py": "def helper():\n    pass\n",
            "src/pkg/helpers.py": "",
        }
    )
    assert tree.exported("pkg.where") == ("src/pkg/util.py", 1)
    assert tree.exported("pkg.helpers") == ("src/pkg/helpers.py", 0)  # `from . import`
    # one hop fewer than the chain: the file the last import read names, its line unknown
    monkeypatch.setattr(exports, "MAX_HOPS", 3)
    assert tree.exported("pkg.where") == ("src/pkg/util.py", 0)


def test_an_absolute_import_is_found_where_the_package_is():
    tree = Tree(
        {
            "pkg/__init__.py": "from numpy import where\nfrom pkg.compat.numpy import clip\n",
            "pkg/compat/__init__.py": "",
            "pkg/compat/numpy.py": "def where():\n    pass\n\n\ndef clip():\n    pass\n",
        }
    )
    assert tree.exported("pkg.where") is None  # numpy's, not pkg/compat/numpy.py
    assert tree.exported("pkg.clip") == ("pkg/compat/numpy.py", 5)


def test_a_submodule_a_try_block_and_files_that_say_nothing(monkeypatch):
    files = {
        "pkg/__init__.py": (
            "from .core import dtypes\n"
            "try:\n    from .fast import speedup\nexcept ImportError:\n"
            "    from .slow import speedup\n"
            "from .gone import vanished\n"
            "from .broken import anything\n"
            "from .tables import lookup\n"
        ),
        "pkg/core/__init__.py": "",
        "pkg/core/dtypes.py": "NA = None\n",
        "pkg/slow.py": "def speedup():\n    pass\n",
        "pkg/broken.py": "def anything(:\n",
        "pkg/tables.py": "lookup = {}\n" + "# table\n" * 100,
    }
    tree = Tree(files)
    assert tree.exported("pkg.dtypes") == ("pkg/core/dtypes.py", 0)
    # the try block's import names no file of the snapshot, its fallback does
    assert tree.exported("pkg.speedup") == ("pkg/slow.py", 1)
    assert tree.exported("pkg.vanished") is None  # no such module
    # a module that does not parse: imported from it, but where in it is unknown
    assert tree.exported("pkg.anything") == ("pkg/broken.py", 0)
    assert tree.exported("pkg.lookup") == ("pkg/tables.py", 1)
    # a module past MAX_TEXT is not read
    monkeypatch.setattr(exports, "MAX_TEXT", 500)
    assert Tree(files).exported("pkg.lookup") == ("pkg/tables.py", 0)


def test_a_module_too_deep_for_the_parser_is_not_remembered():
    # whether it parses depends on the stack of the moment (how deep the chain of imports is)
    deep = Tree({"pkg/__init__.py": "from .sums import total\n",
                 "pkg/sums.py": "total = " + "+".join(["1"] * 100_000) + "\n"})  # fmt: skip
    assert deep.exported("pkg.total") == ("pkg/sums.py", 0)
    assert deep.exported("pkg.total") == ("pkg/sums.py", 0)
    assert deep.reads == 3  # __init__.py once, sums.py each time


def test_each_module_is_searched_once_and_read_once():
    # ten subpackages each star-importing the same ten modules: a missing name searches each
    # module once, and a second question reads nothing
    files = {
        "pkg/__init__.py": "".join(f"from .s{i} import *\n" for i in range(10)),
        **{f"pkg/s{i}/__init__.py": "".join(f"from ..m{j} import *\n" for j in range(10))
           for i in range(10)},
        **{f"pkg/m{j}.py": f"from .s{j} import *\nvalue_{j} = {j}\n" for j in range(10)},
    }  # fmt: skip
    tree = Tree(files)
    assert tree.exported("pkg.missing") is None
    assert tree.looked == tree.reads == len(files)
    assert tree.exported("pkg.value_7") == ("pkg/m7.py", 2)
    assert tree.exported("pkg.other") is None
    assert tree.reads == len(files)


def test_imports_that_loop_end():
    tree = Tree({"a/__init__.py": "from .b import x\n", "a/b.py": "from .c import x\n",
                 "a/c.py": "from .b import x\nfrom .b import *\n"})  # fmt: skip
    # b imports x from c, c from b: no file defines it, so the first module binding it from a
    # file of the snapshot is where it comes from
    assert tree.exported("a.x") == ("a/b.py", 0)


def test_a_reports_imports_bind_short_names_to_modules():
    text = (
        "```python\n>>> import xarray as xr, numpy as np\nimport astropy.units as u\n"
        "from astropy import coordinates as coord, constants as const\nfrom pkg import thing\n"
        "import os\n```"
    )
    bound = exports.aliases(text)
    assert bound == {
        "xr": "xarray", "np": "numpy", "u": "astropy.units", "coord": "astropy.coordinates",
        "const": "astropy.constants",
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
    yield from opened_engine(tmp_path_factory, "exports", GRID, embedder)


def test_a_report_calling_a_packages_function_names_the_module_defining_it(grid):
    ask = QueryRequest(query=REPORT, mode="file", explain=True, no_content=True)
    response = grid.query(ask)
    assert response["explain"]["shape"] == "issue"
    # `gd` is grid; grid re-exports `where` from grid/core/ops.py, where it is defined; the
    # class the report builds its input with (gd.Frame) is named by every report of the
    # package and is no evidence (exports.CLASSES)
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


def test_evidence_files_read_re_exports_with_the_snapshots_files_only():
    python = Tree(GRID).python
    ev = evidence.extract("see gd.where and grid.read_grid, grid.__version__, gd.Frame\n")
    ev.bound = {"gd": "grid"}
    named = {p: line for p, _, line in evidence.evidence_files(ev, sorted(GRID), python)}
    assert named == {"grid/core/ops.py": WHERE_LINE, "grid/io/readers.py": 1}
    assert evidence.evidence_files(ev, sorted(GRID)) == []
    # a path filter without the package's __init__.py: the chain is read all the same
    inside = ["grid/core/ops.py", "grid/core/frame.py"]
    assert [p for p, _, _ in evidence.evidence_files(ev, inside, python)] == ["grid/core/ops.py"]


def test_the_snapshot_is_listed_only_for_a_report_naming_a_package_and_once():
    tree = Tree(GRID)
    plain = evidence.extract("the frame loses its attributes in `combine`\n")
    assert evidence.evidence_files(plain, sorted(GRID), tree.python) == []
    assert tree.listed == 0
    named = evidence.extract("import grid as gd\ngd.where(f, f, 0) and gd.concat([f])\n")
    assert [p for p, _, _ in evidence.evidence_files(named, sorted(GRID), tree.python)] == [
        "grid/core/ops.py"
    ]
    assert tree.listed == 1
