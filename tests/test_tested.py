"""The tested-file step (pix/retrieve/tested.py): a test file lends its score to
the source file it tests, found by name among the first files.

The name rules are checked on each ecosystem's layout; the step itself on a real repository
in a temp dir, indexed for real, where the test says what the question asks and the code
under test does not use its words.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from conftest import indexed_in_place

from pix.query import QueryRequest, query
from pix.retrieve import tested
from pix.retrieve.hits import Hit

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[1] / "schema" / "query-response.v2.json").read_text()
)


@pytest.mark.parametrize(
    ("test", "sources", "expected"),
    [
        # Python: the test's name spells the module's path (sphinx, pytest)
        (
            "tests/test_ext_autodoc_typehints.py",
            ["sphinx/ext/autodoc/typehints.py", "sphinx/ext/autodoc/__init__.py"],
            ["sphinx/ext/autodoc/typehints.py"],
        ),
        ("testing/python/fixtures.py", ["src/_pytest/fixtures.py"], ["src/_pytest/fixtures.py"]),
        ("src/terminal_test.go", ["src/terminal.go", "src/options.go"], ["src/terminal.go"]),
        ("src/router.test.ts", ["src/router.ts", "src/context.ts"], ["src/router.ts"]),
        ("spec/sidekiq/client_spec.rb", ["lib/sidekiq/client.rb"], ["lib/sidekiq/client.rb"]),
        ("test/oban/queue_test.exs", ["lib/oban/queue.ex", "lib/oban.ex"], ["lib/oban/queue.ex"]),
        (
            "src/test/java/io/javalin/TestRouting.java",
            ["javalin/src/main/java/io/javalin/router/Routing.java"],
            ["javalin/src/main/java/io/javalin/router/Routing.java"],
        ),
        (
            "test/Polly.Core.Tests/Retry/RetryStrategyTests.cs",
            ["src/Polly.Core/Retry/RetryStrategy.cs", "src/Polly.Core/Retry/RetryHelper.cs"],
            ["src/Polly.Core/Retry/RetryStrategy.cs"],
        ),
        ("Tests/Command/CommandTest.php", ["Command/Command.php"], ["Command/Command.php"]),
        # the longest ending wins: the folder decides between two files of one name
        (
            "tests/test_util_inspect.py",
            ["sphinx/util/inspect.py", "sphinx/ext/inspect.py"],
            ["sphinx/util/inspect.py"],
        ),
        # a file whose name is more than the test's words is not its subject
        ("tests/test_client.py", ["src/client_base.py"], []),
        # a name of test marks only says nothing
        ("tests/test.py", ["src/test.py", "src/app.py"], []),
        # three files that match equally well: none of them
        ("tests/test_client.py", ["a/client.py", "b/client.py", "c/client.py"], []),
        ("tests/test_client.py", ["a/client.py", "b/client.py"], ["a/client.py", "b/client.py"]),
        # a name that says nothing of its own needs its folder too
        (
            "tests/parser/__init__.py",
            ["src/lexer/__init__.py", "src/parser/__init__.py"],
            ["src/parser/__init__.py"],
        ),
        ("src/components/__tests__/index.test.ts", ["src/utils/index.ts"], []),
        ("spec/spec_helper.rb", ["lib/helper.rb"], []),
        # a Go test tests its own folder's package
        ("pkg/a/main_test.go", ["cmd/b/main.go", "pkg/a/main.go"], ["pkg/a/main.go"]),
        ("pkg/server/export_test.go", ["pkg/export/export.go"], []),
        # test data tests nothing
        ("tests/fixtures/config.py", ["src/config.py"], []),
    ],
)
def test_a_test_names_its_subject(test, sources, expected):
    words = {path: tested._source_words(path) for path in sources}
    assert tested.subjects(test, words) == expected


def hit(path: str, score: float, role: str = "source", language: str = "python") -> Hit:
    return Hit(path, 1, path, 1, 2, "function", None, score, score, role, language, {})


def test_a_subject_gains_its_best_tests_score_and_only_sources_gain():
    files = [
        hit("tests/test_parser.py", 0.9, "test"),
        hit("src/lexer.py", 0.8),
        hit("src/tests_parser_notes.md", 0.7, "docs"),
        hit("tests/parser_test.py", 0.4, "test"),
        hit("src/parser.py", 0.3),
    ]
    assert tested.lend([*files[:4], hit("src/parser.py", 0.3, language="rust")]) == [
        *files[:4],
        hit("src/parser.py", 0.3, language="rust"),
    ]  # a test lends to its own language's files only
    out = tested.lend(files)
    by_path = {h.path: h for h in out}
    assert by_path["src/parser.py"].rank["tested"] == pytest.approx(tested.WEIGHT * 0.9)
    assert by_path["src/parser.py"].rank["testedBy"] == "tests/test_parser.py"  # the best test
    assert by_path["src/parser.py"].score == pytest.approx(0.3 + tested.WEIGHT * 0.9)
    assert out[0].path == "src/parser.py"
    assert all("tested" not in h.rank for h in out if h.path != "src/parser.py")
    assert [h.score for h in out] == sorted((h.score for h in out), reverse=True)


def test_only_the_first_files_lend_and_are_lent_to():
    filler = [hit(f"src/mod{i}.py", 1.0 - i / 1000) for i in range(tested.TESTED_TOP)]
    late_test = [*filler[:-1], hit("src/parser.py", 0.5), hit("tests/test_parser.py", 0.2, "test")]
    assert tested.lend(late_test) == late_test  # the test is past the first TESTED_TOP
    late_subject = [hit("tests/test_parser.py", 2.0, "test"), *filler, hit("src/parser.py", 0.1)]
    assert tested.lend(late_subject) == late_subject


# A checkout library. The test of the coupon rules says in words what the question asks; the
# code under test says it in its own terms (codes, expiry, refusal); a view mentions coupons
# in passing, and files about vouchers and discounts are near in meaning.
FILES = {
    "shop/coupons.py": '''\
def validate(code, today):
    """Look the code up; its reduction, or Refused past its date."""
    entry = CODES.get(code)
    if entry is None or entry.until < today:
        raise Refused(code)
    return entry.reduction
''',
    "shop/views.py": '''\
def checkout_page(request):
    """The checkout page: the basket, the coupon field and the pay button."""
    basket = request.basket
    return render("checkout.html", basket=basket, coupon=request.form.get("coupon"))
''',
    "shop/promotions.py": '''\
def seasonal_promotion(basket, season):
    """A voucher that is out of date is refused when the customer pays for the basket."""
    return basket.total * (1 - VOUCHERS[season])
''',
    "shop/discounts.py": '''\
def member_discount(member, total):
    """A member's reduction is turned down when paying if the membership has run out."""
    return total * min(0.2, 0.02 * member.years)
''',
    "shop/shipping.py": '''\
def shipping_cost(weight, country):
    """What it costs to send a parcel of this weight to this country."""
    return RATES[country] * weight
''',
    "tests/test_coupons.py": '''\
def test_an_expired_coupon_is_rejected_at_checkout():
    """An expired coupon is rejected at checkout and the discount is not applied."""
    with pytest.raises(Refused):
        validate("SUMMER", today=AFTER_SUMMER)


def test_an_expired_coupon_gives_no_discount():
    """A coupon that expired gives no discount at checkout."""
    assert total_with_coupon("SUMMER", today=AFTER_SUMMER) == FULL_PRICE
''',
}
QUESTION = "expired coupon rejected at checkout"


@pytest.fixture(scope="module")
def repo(tmp_path_factory, embedder):
    return indexed_in_place(tmp_path_factory.mktemp("tested"), FILES, embedder)


def ask(repo, text: str = QUESTION, mode: str = "file", **options) -> dict:
    request = QueryRequest(query=text, mode=mode, top=10, explain=True, **options)
    return query(request, cwd=str(repo))


def places(response: dict) -> list[str]:
    return [r["file"] for r in response["results"]]


def test_the_file_a_matching_test_tests_moves_up(repo, monkeypatch):
    lent = ask(repo)
    jsonschema.validate(lent, SCHEMA)  # rank.tested and rank.testedBy are in the contract
    by_file = {r["file"]: r for r in lent["results"]}
    assert [f for f in by_file if "tested" in by_file[f]["explain"]["rank"]] == ["shop/coupons.py"]
    explain = by_file["shop/coupons.py"]["explain"]
    assert explain["rank"]["tested"] > 0
    # The bonus is on top of the strongest chunk's score: the prior is still that chunk's
    # score over its fused score.
    chunk_score = explain["score"] - explain["rank"]["evidence"] - explain["rank"]["tested"]
    assert explain["prior"] == pytest.approx(chunk_score / explain["fused"], abs=1e-3)
    monkeypatch.setattr(tested, "WEIGHT", 0.0)
    plain = places(ask(repo))
    assert sorted(plain) == sorted(places(lent))  # the same files, another order
    assert places(lent).index("shop/coupons.py") < plain.index("shop/coupons.py")


def test_the_text_explain_line_adds_the_bonus(repo):
    from pix.output.render import explain_line

    lent = next(r for r in ask(repo)["results"] if r["file"] == "shop/coupons.py")
    assert lent["explain"]["rank"]["testedBy"] == "tests/test_coupons.py"
    bonus = lent["explain"]["rank"]["tested"]
    assert f"its test tests/test_coupons.py +{bonus:.4f}" in explain_line(lent)


def test_no_priors_leave_it_alone(repo):
    # no test prior to give back: a test keeps its whole score
    results = ask(repo, priors=False)["results"]
    assert results and all("tested" not in r["explain"]["rank"] for r in results)


def test_in_chunk_mode_the_tested_files_strongest_chunk_carries_the_lent_score(repo):
    lent = next(r for r in ask(repo)["results"] if r["file"] == "shop/coupons.py")
    chunks = ask(repo, mode="chunk")["results"]
    carrying = [r for r in chunks if "tested" in r["explain"]["rank"]]
    assert [r["path"] for r in carrying] == ["shop/coupons.py"]
    assert carrying[0]["explain"]["rank"] == lent["explain"]["rank"]


def test_the_same_question_gives_the_same_bytes(repo):
    assert ask(repo) == ask(repo)


def test_a_test_lifted_for_holding_the_pasted_line_lends_nothing(tmp_path, embedder):
    """The phrase step lifts the test that holds a pasted message far above every fused
    score: that lift is about the test, and lent to the file it tests it put that file
    first, above the only file holding the line."""
    files = {
        "src/widget.py": "def frobnicate(widget):\n    if widget.stuck:\n"
        "        raise WidgetError(widget.code)\n    return widget.turn()\n",
        "src/gears.py": "def turn(gear):\n    return gear.teeth * 2\n",
        "tests/test_widget.py": "def test_a_stuck_widget():\n    err = frobnicate(STUCK)\n"
        '    assert str(err) == "the widget refused to frobnicate today"\n',
    }
    repo = indexed_in_place(tmp_path, files, embedder)
    response = ask(repo, "the widget refused to frobnicate today")
    assert response["results"][0]["file"] == "tests/test_widget.py"
    assert all("tested" not in r["explain"]["rank"] for r in response["results"])
