"""The modules the first file of an issue report's answer imports gain a share of its score,
never reaching it (pix/retrieve/imported.py): a fix to a module mostly changes what it builds
on too.

A real git repository in a temp folder, indexed with the real model into real SQLite: a cart
module the report names, four modules it imports (relatively, absolutely, under a src layout's
package), one it does not, and a JavaScript file.
"""

from __future__ import annotations

import jsonschema
import pytest
from conftest import opened_engine

from pix import schemas
from pix.output.render import explain_line
from pix.query import QueryEngine, QueryRequest
from pix.retrieve import imported
from pix.retrieve.hits import Hit

CART = '''"""The cart: what a customer is about to buy."""

import os
import shop.tax
from shop import discounts
from .pricing import (
    total,
    rounded,
)
from ..shared.currency import convert


def checkout(items, region):
    """The amount to charge for the items of a cart."""
    amount = rounded(total(items)) + shop.tax.rate(region) - discounts.best(items)
    return convert(amount, os.environ.get("CURRENCY", "EUR"))
'''
MODULE = '''"""{doc}"""


def {name}(items, region=None):
    """{doc}"""
    return sum(item.price for item in items) if items else 0
'''
MODULES = {
    "src/shop/pricing.py": ("total", "Prices of the items of an order."),
    "src/shop/tax.py": ("rate", "Tax owed on an order in a region."),
    "src/shop/discounts.py": ("best", "The best discount for an order."),
    "src/shared/currency.py": ("convert", "An amount in another currency."),
    "src/shop/refunds.py": ("refund", "Money returned for an order."),
}
REPORT = """Cart checkout charges the wrong amount

**Describe the bug**
When a customer checks out a cart in src/shop/cart.py, the amount charged is not the sum of
the prices with the tax of the region added and the discount taken off. The difference is a
few cents on most orders and more on large ones, and the receipt shows the right figure.

**To Reproduce**
Put three items in a cart, check out in a region with tax and compare the amount charged
with the receipt.
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory, embedder):
    files = {p: MODULE.format(name=n, doc=d) for p, (n, d) in MODULES.items()}
    files["src/shop/cart.py"] = CART
    files["src/shop/__init__.py"] = ""
    files["web/cart.js"] = "// The cart's page: the amount to charge, as checkout shows it.\n"
    # one text at two paths: what it imports relatively differs
    for package in ("pkg_a", "pkg_b"):
        files[f"{package}/__init__.py"] = "from . import (core,  # the model (kept)\n    util)\n"
        files[f"{package}/util.py"] = f"# helpers of {package}\nVALUE = 1\n"
    yield from opened_engine(tmp_path_factory, "imported", files, embedder)


def lifted(engine: QueryEngine, query: str = REPORT) -> tuple[list[str], dict[str, float]]:
    """The files in order, and the imported-file bonus of each file that has one."""
    request = QueryRequest(query, mode="file", explain=True, no_content=True)
    results = engine.query(request)["results"]
    bonus = {r["file"]: r["explain"].get("rank", {}).get("imported") for r in results}
    return [r["file"] for r in results], {p: b for p, b in bonus.items() if b is not None}


def hit(path: str, score: float) -> Hit:
    return Hit(path, 1, "no-such-blob", 1, 2, "code", None, score, score, "source", "js", {})


def test_what_import_statements_name():
    relative, absolute = imported.imports(CART, "src/shop/cart.py")
    assert {"src/shop/pricing", "src/shop/pricing/total", "src/shared/currency"} <= relative
    assert {"shop/tax", "shop/discounts"} <= absolute
    # one part: the standard library's, or another package's
    assert "os" not in absolute and "shop" not in absolute
    assert imported.is_imported("src/shop/pricing.py", relative, absolute)
    assert imported.is_imported("src/shop/tax.py", relative, absolute)  # by the path's end
    assert imported.is_imported("lib/python/shop/tax.py", relative, absolute)
    assert not imported.is_imported("shop/tax/rates.py", relative, absolute)
    assert imported.is_imported("src/shop/discounts/__init__.py", relative, absolute)
    assert imported.is_imported("src/shared/currency.py", relative, absolute)
    assert not imported.is_imported("src/shop/refunds.py", relative, absolute)
    assert not imported.is_imported("os.py", relative, absolute)
    assert not imported.is_imported("web/cart.js", relative, absolute)


def test_the_first_files_imports_gain_and_stay_below_it(engine, monkeypatch):
    monkeypatch.setattr(imported, "FIRST", 10)
    files, bonus = lifted(engine)
    assert files[0] == "src/shop/cart.py"
    assert set(bonus) == {
        "src/shop/pricing.py",
        "src/shop/tax.py",
        "src/shop/discounts.py",
        "src/shared/currency.py",
    }
    assert all(b > 0 for b in bonus.values())
    # without the step no file has the bonus, and the imported ones rank no higher
    monkeypatch.setattr(imported, "WEIGHT", 0.0)
    before, none = lifted(engine)
    assert none == {} and before[0] == "src/shop/cart.py"
    for path in bonus:
        assert files.index(path) <= before.index(path)


def test_however_large_the_share_the_first_file_stays_first(engine, monkeypatch):
    monkeypatch.setattr(imported, "WEIGHT", 5.0)
    files, bonus = lifted(engine)
    assert files[0] == "src/shop/cart.py" and len(bonus) == imported.FIRST


def test_only_the_first_few_imports_gain(engine, monkeypatch):
    files, bonus = lifted(engine)
    assert len(bonus) == imported.FIRST == 3
    # the first three in the order they had: what ranked below them gains nothing
    monkeypatch.setattr(imported, "WEIGHT", 0.0)
    before, _ = lifted(engine)
    imports = [f for f in before if f in MODULES and f != "src/shop/refunds.py"]
    assert set(bonus) == set(imports[:3])


def test_a_short_question_is_left_alone(engine):
    assert lifted(engine, "cart checkout amount")[1] == {}


def test_a_first_file_in_another_language_imports_nothing(engine):
    files = [hit("web/cart.js", 1.0), hit("src/shop/pricing.py", 0.5)]
    assert imported.lift_imported(engine.store.conn, files) == files


def test_import_statements_read_as_python_reads_them():
    text = "from . import (core,  # the model (kept)\n    util)\nfrom ....above import root\n"
    relative, absolute = imported.imports(text, "src/pkg/__init__.py")
    assert relative == {"src/pkg/core", "src/pkg/util"}  # nothing above the root
    # a module of another Python's syntax is read line by line
    old = (
        "print 'x'\nimport p.q, \\\n    r.s\nimport os; import shop.tax\nfrom .x import(y)\n"
        "from .z import (a,  # one (of two)\n    b)\n"
    )
    relative, absolute = imported.imports(old, "shop/cart.py")
    assert absolute == {"p/q", "r/s", "shop/tax"}
    assert relative == {"shop/x", "shop/x/y", "shop/z", "shop/z/a", "shop/z/b"}


def test_one_text_at_two_paths_lifts_its_own_neighbours(engine):
    conn = engine.store.conn
    sha = conn.execute(
        "SELECT blob_sha FROM snapshot_file WHERE path = 'pkg_a/__init__.py'"
    ).fetchone()[0]
    utils = {
        p: conn.execute("SELECT blob_sha FROM snapshot_file WHERE path = ?", (p,)).fetchone()[0]
        for p in ("pkg_a/util.py", "pkg_b/util.py")
    }

    def lift(package: str) -> dict[str, float]:
        files = [
            Hit(f"{package}/__init__.py", 1, sha, 1, 2, "code", None, 1.0, 1.0, "source",
                "python", {}),
            *(Hit(p, 2, b, 1, 2, "code", None, 0.5, 0.5, "source", "python", {})
              for p, b in utils.items()),
        ]  # fmt: skip
        out = imported.lift_imported(conn, files)
        return {h.path: h.rank["imported"] for h in out if "imported" in h.rank}

    first = lift("pkg_a")
    assert set(first) == {"pkg_a/util.py"}
    assert set(lift("pkg_b")) == {"pkg_b/util.py"}
    assert lift("pkg_a") == first


def test_the_answer_says_what_the_step_added(engine):
    schema = schemas.load("query-response.v2.json")
    for mode in ("file", "chunk"):
        response = engine.query(QueryRequest(REPORT, mode=mode, explain=True))
        jsonschema.validate(response, schema)
    response = engine.query(QueryRequest(REPORT, mode="file", explain=True))
    lifted = [r for r in response["results"] if "imported" in r["explain"]["rank"]]
    assert lifted
    for result in lifted:
        explained = result["explain"]
        # the prior is the strongest chunk's score over its fused score: the bonus is no part
        rank = explained["rank"]
        steps = ("evidence", "outline", "tested", "titled", "imported")
        chunk = explained["score"] - sum(rank.get(k, 0.0) for k in steps)
        assert explained["prior"] == pytest.approx(chunk / explained["fused"], abs=1e-3)
        assert f"imported by the first file +{rank['imported']:.4f}" in explain_line(result)


def test_a_file_tied_with_the_first_is_never_lowered(engine):
    conn = engine.store.conn
    blob = {
        p: conn.execute("SELECT blob_sha FROM snapshot_file WHERE path = ?", (p,)).fetchone()[0]
        for p in ("pkg_a/__init__.py", "pkg_a/util.py")
    }
    files = [
        Hit(p, 1, b, 1, 2, "code", None, 1.0, 1.0, "source", "python", {}) for p, b in blob.items()
    ]
    out = {h.path: h for h in imported.lift_imported(conn, files)}
    # the cap below the first would take the tied import down to just under 1.0
    assert out["pkg_a/util.py"].score == 1.0 and out["pkg_a/util.py"].rank["imported"] == 0.0
