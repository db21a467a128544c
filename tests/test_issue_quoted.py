"""An issue report's quoted messages (pix/retrieve/phrase.py rank_quoted): a message quoted
whole, found word for word in a file, gives that file's chunks one more vote."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from conftest import opened_engine
from test_issue_queries import COUPONS as SHOP_COUPONS
from test_issue_queries import ask, files

from pix.retrieve import phrase
from pix.retrieve.route import shape_of

# The shop's coupons (tests/test_issue_queries.py), with a code lookup: the report's words.
COUPONS = (
    SHOP_COUPONS
    + '''

def find_coupon(code, coupons):
    """The coupon of a code the customer typed, or None for an unknown code."""
    for coupon in coupons:
        if coupon.code == code.strip().upper():
            return coupon
    return None


def valid_code(code):
    """A coupon code is eight letters or digits."""
    return len(code) == 8 and code.isalnum()
'''
)
PROMPT = '''"""Questions asked at the terminal."""


def ask(question, check):
    while True:
        answer = input(question)
        if check(answer):
            return answer
        print("Please enter a valid answer to go on")


def ask_code(coupons):
    while True:
        answer = input("Code: ")
        if answer and answer.isalnum():
            return answer
        print("Please enter a valid code (or just Enter to skip)")
        print("Codes are eight letters or digits")
'''
USAGE = """# Usage

At checkout pix-shop asks for a coupon code. If it says "Please enter a valid code (or just
Enter to skip)", type the code again.
"""

FILES = {
    "shop/__init__.py": "",
    "shop/coupons.py": COUPONS,
    "shop/prompt.py": PROMPT,
    "docs/usage.md": USAGE,
}

ISSUE = """Cannot skip the coupon code at checkout
When I check out without a coupon, the coupon code question does not let me skip it. The
coupon code is optional, so an empty code should skip the coupon discount, but I only get
*"Please enter a valid code (or just Enter to skip)"* again and again, even though the
message itself says that Enter skips. A valid coupon code works.

Steps:
1. add items to the cart
2. check out and press Enter at the coupon code question

Expected: checkout goes on without a coupon.
"""


@pytest.fixture(scope="module")
def shop(tmp_path_factory, embedder):
    yield from opened_engine(tmp_path_factory, "quoted", FILES, embedder)


@contextmanager
def weighing(weight: float):
    saved = phrase.ISSUE_WEIGHT
    phrase.ISSUE_WEIGHT = weight
    try:
        yield
    finally:
        phrase.ISSUE_WEIGHT = saved


def test_the_file_printing_a_quoted_message_gains_a_vote(shop):
    assert shape_of(ISSUE) == "issue"
    with weighing(0.0):
        without = ask(shop, ISSUE, mode="file")
    answer = ask(shop, ISSUE, mode="file")
    # The report's words are the coupons module's; the message is the prompt's.
    assert files(without)[0] == "shop/coupons.py", files(without)
    assert files(answer)[0] == "shop/prompt.py", files(answer)
    top = answer["results"][0]["explain"]["channels"]["phrase"]
    # One rank 1 at ISSUE_WEIGHT, as a name inside a question adds its definition: a vote,
    # not the plain phrase step's lift above everything.
    assert top["rank"] == 1 and top["weight"] == phrase.ISSUE_WEIGHT == 1.0
    assert top["contribution"] == pytest.approx(1.0 / 61, abs=1e-6)
    said = answer["explain"]["phrases"]
    assert said == [
        {
            "text": "Please enter a valid code (or just Enter to skip)",
            "source": "quoted",
            "status": "matched",
            "files": 1,  # docs/usage.md quotes it too, and docs never count
        }
    ]


def test_only_spans_of_three_words_or_more_count():
    text = 'Title\nIt says "unknown coupon" and "Please enter a valid code" here.\n'
    # A two-word span is a phrase to the plain step, not to a report's vote.
    assert [p.text for p in phrase.phrases_of(text)] == [
        "Please enter a valid code",
        "unknown coupon",
    ]
    assert [p.text for p in phrase.issue_phrases(text)] == ["Please enter a valid code"]


def test_a_chunk_quoted_twice_still_gets_one_vote(shop):
    text = ISSUE.replace(
        "A valid coupon code works.", 'Before that it said "Codes are eight letters or digits".'
    )
    answer = ask(shop, text, mode="file")
    top = answer["results"][0]
    vote = top["explain"]["channels"]["phrase"]
    assert top["file"] == "shop/prompt.py"
    assert vote["phrases"] == [  # longest first, as the spans are searched
        "Please enter a valid code (or just Enter to skip)",
        "Codes are eight letters or digits",
    ]
    assert vote["score"] == 1.0
    assert vote["contribution"] == pytest.approx(1.0 / 61, abs=1e-6)
    assert answer["explain"]["weights"]["phrase"] == phrase.ISSUE_WEIGHT


def test_channels_without_phrase_leave_the_vote_out(shop):
    answer = ask(shop, ISSUE, mode="file", channels=["bm25", "dense"])
    assert all("phrase" not in r["explain"]["channels"] for r in answer["results"])
    assert "phrase" not in answer["explain"]["weights"]


def test_a_span_inside_an_html_comment_is_not_the_reporters(shop):
    text = ISSUE.replace(
        '*"Please enter a valid code (or just Enter to skip)"*',
        '<!-- "Please enter a valid code (or just Enter to skip)" -->',
    )
    assert phrase.issue_phrases(text) == []
    assert "phrase" not in ask(shop, text, mode="file")["results"][0]["explain"]["channels"]


def test_a_short_question_quoting_the_message_keeps_the_phrase_step(shop):
    question = '"Please enter a valid code (or just Enter to skip)"'
    top = ask(shop, question, mode="file")["results"][0]
    assert top["file"] == "shop/prompt.py"
    assert top["explain"]["channels"]["phrase"]["weight"] > 1.0  # above everything


def test_asking_for_the_phrase_channel_by_name_runs_the_whole_step_on_a_report(shop):
    answer = ask(shop, ISSUE, mode="file", channels=["phrase", "bm25"])
    assert answer["results"][0]["file"] == "shop/prompt.py"
    assert answer["results"][0]["explain"]["channels"]["phrase"]["weight"] > 1.0


def test_the_same_report_gives_the_same_bytes(shop):
    first = ask(shop, ISSUE, mode="file")
    assert ask(shop, ISSUE, mode="file") == first
