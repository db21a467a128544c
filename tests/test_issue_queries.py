"""Issue-shaped queries (pix/retrieve/evidence.py): a whole bug report, with prose, code and a
traceback, asked of a real indexed repository."""

from __future__ import annotations

import json
from contextlib import contextmanager

import numpy as np
import pytest
from conftest import opened_engine

from pix.query import QueryEngine, QueryRequest
from pix.retrieve import evidence, titled, windows
from pix.retrieve.route import shape_of

CART = '''"""The shopping cart: items, coupons and the total a customer pays."""


class Cart:
    def __init__(self):
        self.items = []
        self.coupons = []

    def add(self, item, quantity=1):
        """Put an item in the cart."""
        self.items.append((item, quantity))

    def apply_coupon(self, coupon):
        """A coupon gives a discount on the cart total; only one coupon per cart."""
        if self.coupons:
            raise ValueError("only one coupon per cart")
        self.coupons.append(coupon)

    def total(self):
        """The cart total after the coupon discount."""
        from shop.pricing import discounted

        subtotal = sum(item.price * quantity for item, quantity in self.items)
        for coupon in self.coupons:
            subtotal = discounted(subtotal, coupon.percent)
        return subtotal
'''
PRICING = '''"""Prices: rounding and percentages."""

ROUNDING = 2


def discounted(amount, percent):
    """An amount less a percentage."""
    return round_price(amount * (100 - percent) / 100)


def round_price(amount):
    """Round to cents."""
    return round(amount, ROUNDING) if amount >= 0 else None


def format_price(amount, currency="EUR"):
    return f"{amount:.2f} {currency}"
'''
ORDERS = '''"""Orders placed from a cart."""


def place_order(cart, customer):
    """Turn a cart into an order for a customer and charge its total."""
    return {"customer": customer, "total": cart.total(), "lines": len(cart.items)}
'''
COUPONS = '''"""Coupons: a code that gives a percent discount on the cart total."""


class Coupon:
    def __init__(self, code, percent=10):
        self.code = code
        self.percent = percent

    def discount_on(self, cart_total):
        """The discount this coupon gives on a cart total; a 100 percent coupon makes it zero."""
        return cart_total * self.percent / 100
'''
TEST_CART = """from shop.cart import Cart


def test_coupon_discount_on_cart_total():
    cart = Cart()
    assert cart.total() == 0
"""
README = "# shop\n\nA cart with coupons and discounts, and orders placed from a cart.\n"

FILES = {
    "shop/__init__.py": "",
    "shop/cart.py": CART,
    "shop/pricing.py": PRICING,
    "shop/orders.py": ORDERS,
    "shop/coupons.py": COUPONS,
    "tests/test_cart.py": TEST_CART,
    "README.md": README,
}

# The report talks about carts, coupons and discounts (cart.py's words); the traceback says
# where it breaks: through orders.py to pricing.py's round_price, line 13.
ISSUE = """Cart total is None with a 100% coupon discount
When I apply a coupon with a 100 percent discount to my cart, the cart total is None instead
of 0, and placing the order fails. The coupon discount should make the cart total zero. I
tried with one coupon and with a coupon on a cart with many items: the cart total is always
None when the coupon discount is 100 percent.

```python
from shop.cart import Cart
cart = Cart()
cart.add(item)
cart.apply_coupon(Coupon(percent=100))
print(cart.total())
```

```
Traceback (most recent call last):
  File "/home/someone/bug.py", line 6, in <module>
    print(place_order(cart, "me"))
  File "/usr/lib/python3.12/site-packages/shop/orders.py", line 6, in place_order
    return {"customer": customer, "total": cart.total(), "lines": len(cart.items)}
  File "/usr/lib/python3.12/site-packages/shop/pricing.py", line 8, in discounted
    return round_price(amount * (100 - percent) / 100)
  File "/usr/lib/python3.12/site-packages/shop/pricing.py", line 13, in round_price
    return round(amount, ROUNDING) if amount >= 0 else None
TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'
```

I think `round_price` should not return None for a zero amount. Python 3.12, shop 1.4.
"""


def shop_engine(tmp_path_factory, embedder, name: str, extra: dict[str, str] | None = None):
    """The shop repository (with `extra` files) indexed and opened, closed after the module."""
    yield from opened_engine(tmp_path_factory, name, {**FILES, **(extra or {})}, embedder)


@pytest.fixture(scope="module")
def shop(tmp_path_factory, embedder):
    yield from shop_engine(tmp_path_factory, embedder, "issue")


def ask(engine: QueryEngine, text: str, **options) -> dict:
    request = QueryRequest(query=text, explain=True, no_content=True, **options)
    return engine.query(request)


@contextmanager
def without_step(step: str):
    """evidence.py with one of its steps left out (what bench/issue_bench.py measures)."""
    saved = evidence.STEPS
    evidence.STEPS = saved - {step}
    try:
        yield
    finally:
        evidence.STEPS = saved


def files(response: dict) -> list[str]:
    return [r["file"] for r in response["results"]]


def test_a_report_is_routed_as_an_issue_and_a_short_question_is_not():
    assert shape_of(ISSUE) == "issue"
    assert shape_of("why is the cart total None with a full coupon") == "question"
    assert shape_of("round_price") == "identifier"


def test_the_traceback_outranks_the_prose(shop):
    # Without the evidence channel the prose wins the fusion: cart.py holds every word of it
    # (the channels' contributions; the ranking stage's standout, pix/retrieve/rank.py, is
    # left out: here it already lifts pricing.py).
    plain = ask(shop, ISSUE, mode="file", channels=["dense", "static", "bm25", "ident", "path"])
    fused = {
        r["file"]: sum(c["contribution"] for c in r["explain"]["channels"].values())
        for r in plain["results"]
    }
    assert max(fused, key=fused.get) == "shop/cart.py"
    response = ask(shop, ISSUE, mode="file")
    assert response["explain"]["shape"] == "issue"
    assert files(response)[0] == "shop/pricing.py"
    # pricing.py holds the innermost frames, orders.py an outer one, the user's code imports
    # shop.cart; the user's script is no file of the repository, nothing names the test file.
    ranks = {
        r["file"]: r["explain"]["channels"].get("evidence", {}).get("rank")
        for r in response["results"]
    }
    assert ranks["shop/pricing.py"] == 1 and ranks["shop/orders.py"] == 2
    assert ranks["shop/cart.py"] == 3
    assert ranks.get("tests/test_cart.py") is None and ranks.get("shop/coupons.py") is None


def test_chunk_mode_points_at_the_chunk_that_holds_the_frame_line(shop):
    response = ask(shop, ISSUE, mode="chunk")
    top = response["results"][0]
    assert top["path"] == "shop/pricing.py"
    assert top["startLine"] <= 13 <= top["endLine"]


def test_evidence_channel_alone_names_only_the_files_of_the_frames(shop):
    response = ask(shop, ISSUE, mode="file", channels=["evidence"])
    assert files(response) == ["shop/pricing.py", "shop/orders.py", "shop/cart.py"]


def test_the_same_issue_twice_gives_identical_answers(shop):
    first = json.dumps(ask(shop, ISSUE, mode="chunk"), sort_keys=True)
    again = json.dumps(ask(shop, ISSUE, mode="chunk"), sort_keys=True)
    assert first == again


def test_a_short_query_gets_no_evidence_channel(shop):
    response = ask(shop, "round a price to cents", mode="file")
    assert response["explain"]["shape"] == "question"
    assert all("evidence" not in r["explain"]["channels"] for r in response["results"])


def test_extract_frames_paths_modules_and_code_identifiers():
    ev = evidence.extract(ISSUE)
    assert ev.title == "Cart total is None with a 100% coupon discount"
    assert [(f.path.rsplit("/", 1)[-1], f.line, f.function) for f in ev.frames] == [
        ("bug.py", 6, "<module>"),
        ("orders.py", 6, "place_order"),
        ("pricing.py", 8, "discounted"),
        ("pricing.py", 13, "round_price"),
    ]
    assert "shop.cart" in ev.modules
    # called, imported, an attribute or in backticks: code; "item", only an argument, is not
    assert {"round_price", "apply_coupon", "Cart", "total", "place_order"} <= set(ev.identifiers)
    assert "item" not in ev.identifiers


def test_html_comments_of_issue_templates_are_not_evidence():
    text = "Bug in `parse`\n<!-- Please describe `hidden_name` and see src/template.py -->\nok"
    ev = evidence.extract(text)
    assert ev.identifiers == ["parse"] and ev.paths == []


def test_mentioned_paths_resolve_by_their_longest_known_suffix():
    paths = ["src/pkg/core.py", "src/pkg/util.py", "tests/test_core.py", "docs/conf.py"]
    text = (
        'File "/opt/venv/lib/site-packages/pkg/core.py", line 3, in run\n'
        'File "/home/me/test_core.py", line 1, in <module>\n'
        "see pkg/util.py and pkg.core, and https://example.org/docs/conf.py"
    )
    found = {p: s for p, s, _ in evidence.evidence_files(evidence.extract(text), paths)}
    # the frame (innermost in the repository), then the path; the module adds a little to core.py
    assert list(found) == ["src/pkg/core.py", "src/pkg/util.py"]
    assert found["src/pkg/core.py"] == pytest.approx(
        evidence.FRAME_WEIGHT + evidence.DEEPEST_FRAME_BONUS + evidence.REPEAT_WEIGHT
    )
    # A bare file name shared by too many files names none of them.
    many = [f"m{i}/__init__.py" for i in range(evidence.MAX_CANDIDATES + 1)]
    assert evidence.evidence_files(evidence.extract("see __init__.py please"), many) == []


def test_bm25_searches_the_most_selective_terms_only(shop):
    stats = evidence.term_stats(shop.store.conn)
    with shop.store.read():
        chosen = evidence.select_terms(shop.store.conn, ISSUE, evidence.extract(ISSUE).title)
        docs = {t: stats.doc_count(stats.stem(t)) for t in chosen}
    assert 0 < len(chosen) <= evidence.BM25_TERMS
    assert "round_price" in chosen and "coupon" in chosen  # title and rare code terms
    assert "someone" not in chosen  # in no chunk of the index
    assert all(n > 0 for n in docs.values())


def test_a_long_issue_is_embedded_in_windows_with_its_title_counted_twice_over(embedder):
    title = "Chart legend shows the wrong colours"
    tail = "The failure is in the database connection pool when the socket times out. "
    body = ("Rendering the chart legend uses the wrong colour for the axis labels. " * 40) + (
        tail * 8
    )
    text = f"{title}\n{body}"
    parts = windows.windows(text)
    assert len(parts) > 1 and all(len(p) <= windows.WINDOW_CHARS for p in parts)
    assert "".join(parts) == text
    truncated = embedder.embed_batch([text])[0]  # the model reads the first 256 tokens only
    about_tail = embedder.embed_batch([tail * 3])[0]
    with without_step("title"):
        windowed = windows.embed_query(embedder, text, "issue")[0]
    assert np.linalg.norm(windowed) == pytest.approx(1.0, abs=1e-5)
    # The windows reach the end of the report, which one pass of the model never reads.
    assert float(windowed @ about_tail) > float(truncated @ about_tail) + 0.05
    # The title is added at TITLE_WEIGHT: the vector turns towards it.
    titled = windows.embed_query(embedder, text, "issue")[0]
    alone = embedder.embed_batch([title])[0]
    assert evidence.title_of(text) == title
    assert np.linalg.norm(titled) == pytest.approx(1.0, abs=1e-5)
    assert float(titled @ alone) > float(windowed @ alone) + 0.05
    # Any other shape is embedded whole, as before.
    assert np.allclose(windows.embed_query(embedder, text, "question")[0], truncated)


def test_the_static_tier_counts_an_issues_title_too():
    from pix.ingest.static import StaticEmbedder

    static = StaticEmbedder()
    title = "Chart legend shows the wrong colours"
    text = f"{title}\n" + "The database connection pool fails when the socket times out. " * 20
    titled = windows.embed_static(static, text, "issue")[0]
    whole = static.embed_batch([text])[0]
    alone = static.embed_batch([title])[0]
    assert np.linalg.norm(titled) == pytest.approx(1.0, abs=1e-5)
    assert float(titled @ alone) > float(whole @ alone) + 0.05
    assert np.allclose(windows.embed_static(static, text, "question")[0], whole)


def test_sections_about_the_reporters_machine_are_left_out():
    text = """Proxy authentication fails with a 407 status
The proxy answers 407 although `proxy_auth` holds the right credentials.

## Expected Result
A status of 200.

## System Information

```json
{"chardet": {"version": null}, "idna": {"version": "3.3"}, "using_pyopenssl": false}
```

**Environment:**
- OS: Linux, see `platform_report`

### Pylint version
pylint 2.14

### Additional context
Started with `proxy_manager_for` in 2.27.
"""
    kept = evidence.clean(text)
    assert "A status of 200." in kept and "proxy_manager_for" in kept
    assert "chardet" not in kept and "using_pyopenssl" not in kept
    assert "platform_report" not in kept
    assert "pylint 2.14" in kept  # a heading that says only "version" stays
    ev = evidence.extract(text)
    assert "using_pyopenssl" not in ev.identifiers and "proxy_manager_for" in ev.identifiers


ABOUT = '''"""What `python -m shop.about` prints for bug reports: versions of shop and its parts."""
import json
import platform


def report():
    return {
        "platform": {"system": platform.system(), "release": platform.release()},
        "implementation": {"name": platform.python_implementation()},
        "shop": {"version": "1.4"},
        "charset_tables": {"version": "2.0"},
        "using_fast_rounding": False,
    }


if __name__ == "__main__":
    print(json.dumps(report(), indent=2))
'''

# A report whose template asks for `python -m shop.about`: its output is about.py's own words.
REPORTED = """Coupon discount of 100 percent gives a cart total of None
Applying a coupon with a full discount leaves the cart total as None instead of zero.

## Expected Result
The cart total is 0 after a full coupon discount.

## System Information

    $ python -m shop.about

```json
{
  "charset_tables": {"version": "2.0"},
  "implementation": {"name": "CPython"},
  "platform": {"release": "6.1.0", "system": "Linux"},
  "shop": {"version": "1.4"},
  "using_fast_rounding": false
}
```
"""


@pytest.fixture(scope="module")
def shop_with_about(tmp_path_factory, embedder):
    yield from shop_engine(tmp_path_factory, embedder, "about", {"shop/about.py": ABOUT})


def test_an_environment_report_does_not_pull_in_the_file_that_prints_it(
    shop_with_about, monkeypatch
):
    # The environment step alone: the title names the cart, and the titled-file step
    # (pix/retrieve/titled.py) would put cart.py first either way.
    monkeypatch.setattr(titled, "WEIGHT", 0.0)
    with_step = files(ask(shop_with_about, REPORTED, mode="file"))
    with without_step("environment"):
        without = files(ask(shop_with_about, REPORTED, mode="file"))
    assert without.index("shop/about.py") < without.index("shop/cart.py"), without
    assert with_step[0] in ("shop/cart.py", "shop/coupons.py"), with_step
    assert "shop/about.py" not in with_step[:3], with_step


def test_environment_sections_end_at_the_next_heading_and_spare_code_and_title():
    text = """# Environment variables are not expanded in config files
`load_config` leaves `$HOME` as it is.

```sh
# pip freeze
export HOME=/tmp
```

### Environment
```
# packages in environment at /opt/conda:
# Name  Version  Build
numpy 1.26.4
```

### Reproducing in a clean environment
Call `load_config("~/.app.toml")`.

#### Output of ``xr.show_versions()``
INSTALLED VERSIONS: python 3.11, numpy 1.26.4
"""
    kept = evidence.clean(text)
    assert kept.startswith("# Environment variables are not expanded")  # the title stays
    assert "export HOME=/tmp" in kept  # a shell comment in a fence is no heading
    assert "numpy 1.26.4" not in kept and "packages in environment" not in kept
    assert 'load_config("~/.app.toml")' in kept  # a long heading is about the bug
    assert "INSTALLED VERSIONS" not in kept


def test_a_collapsed_version_dump_is_left_out_under_any_heading():
    """xarray's template: the dump sits in a <details> block titled by its <summary>, under a
    "Versions" heading that alone says nothing about the environment."""
    text = """xr.where drops attributes
`xr.where(da == 0, -1, da).attrs` is empty.

#### Versions

<details><summary>Output of <tt>xr.show_versions()</tt></summary>

INSTALLED VERSIONS
------------------
python-bits: 64
libnetcdf: 4.7.4
</details>

<details><summary>Old repro, the repository no longer exists</summary>
`keep_attrs=True` in apply_ufunc
</details>
"""
    kept = evidence.clean(text)
    assert "python-bits" not in kept and "libnetcdf" not in kept
    assert "`xr.where(da == 0, -1, da).attrs` is empty." in kept
    assert "keep_attrs=True" in kept  # a summary about the bug starts no dropped section


# A file that writes <img> tags: every word of a pasted screenshot's tag is one of its words.
THUMBNAILS = '''"""Product thumbnails for the shop's pages."""


def thumbnail_tag(product, width=148):
    """An <img> tag for a product's thumbnail: width, alt text and the png's src URL."""
    src = f"https://images.example.com/{product.sku}.png"
    return f'<img width="{width}" alt="{product.name}" src="{src}">'


def gallery(products, width=148):
    """Every product's <img> thumbnail, alt and src and width and png, for the gallery page."""
    return "".join(thumbnail_tag(p, width) for p in products)
'''

SCREENSHOT = """Coupon discount of 100 percent gives a cart total of None
Applying a coupon with a full discount leaves the cart total as None instead of zero.

Result:
<img width="148" alt="Screenshot 2020-05-30 at 23.43.01" src="https://user-images.githubusercontent.com/748828/83331159-4eab4a80.png">
![image](https://user-images.githubusercontent.com/748828/83331160-4eab4a80.png)

Expected: the cart total is 0 after a full coupon discount.
"""


@pytest.fixture(scope="module")
def shop_with_thumbnails(tmp_path_factory, embedder):
    extra = {"shop/thumbnails.py": THUMBNAILS}
    yield from shop_engine(tmp_path_factory, embedder, "thumbs", extra)


def test_a_pasted_screenshot_does_not_pull_in_the_file_that_writes_img_tags(shop_with_thumbnails):
    with_step = files(ask(shop_with_thumbnails, SCREENSHOT, mode="file"))
    with without_step("images"):
        without = files(ask(shop_with_thumbnails, SCREENSHOT, mode="file"))
    assert without.index("shop/thumbnails.py") < 3, without
    assert "shop/thumbnails.py" not in with_step[:3], with_step
    assert with_step[0] in ("shop/cart.py", "shop/coupons.py"), with_step


def test_screenshots_leave_the_report_but_code_and_links_stay():
    text = (
        "Title line\n"
        '<IMG src="a.png" alt="x">text ![shot](https://x.test/a.png) '
        "[the docs](https://x.test/docs) `render_img()`\n"
    )
    cleaned = evidence.clean(text)
    assert "png" not in cleaned and "shot" not in cleaned
    assert "[the docs](https://x.test/docs)" in cleaned and "`render_img()`" in cleaned
    assert cleaned.startswith("Title line\n")


def test_a_link_gives_bm25_the_file_it_points_at_and_no_other_word(shop_with_thumbnails):
    text = (
        "Coupon discount of 100 percent gives a cart total of None\n"
        "The rounding in https://github.com/acme/shop/blob/main/shop/pricing.py#L9 returns None;"
        " compare https://images.example.com/gallery/sku-1 where totals are right.\n"
    )
    conn = shop_with_thumbnails.store.conn
    title = evidence.title_of(text)
    with_step = evidence.select_terms(conn, text, title, limit=40)
    with without_step("urls"):
        without = evidence.select_terms(conn, text, title, limit=40)
    # thumbnails.py holds images.example.com: without the step the host's words are terms.
    assert {"images", "example"} <= set(without), without
    assert not {"images", "example", "github", "acme", "gallery"} & set(with_step), with_step
    assert "pricing" in with_step and "rounding" in with_step, with_step
