"""`pix pack`: the packet rule on hand-made candidates (pix/output/packet.py), then the whole
command on a real indexed repository (real model, tokenizer, SQLite, git)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import jsonschema
import numpy as np
import pytest
from conftest import git, indexed_repo, pix, pix_json
from mcp import Client, StdioServerParameters

from pix.output import packet
from pix.output.tokens import Counter
from pix.pack import PackRequest, run_pack
from pix.query import QueryEngine
from pix.schemas import bundled

RESPONSE = jsonschema.Draft202012Validator(bundled("pack-response.v1.json"))


# --- the rule, on hand-made candidates (unit: characters) --------------------------------------


def chars(lines: list[str]) -> np.ndarray:
    return np.array([len(line) for line in lines], dtype=np.int64)


def files_of(**line_counts: int) -> dict[str, packet.FileLines]:
    return {
        path.replace("_", "/") + ".py": packet.FileLines(
            [f"{path} line {i:03d}" for i in range(1, n + 1)], chars
        )
        for path, n in line_counts.items()
    }


def cand(rank: int, path: str, a: int, b: int, score: float, blob: str = "") -> packet.Candidate:
    return packet.Candidate(rank, path, blob or f"blob-of-{path}", a, b, score)


def choose(candidates, files, budget):
    result = packet.select(candidates, files, budget, len, 1)
    text = packet.render(result.spans, files)
    assert len(text) == result.used <= budget  # costs add up to the rendered text, exactly
    return result, text


def test_adjacent_and_overlapping_chunks_merge_into_one_span():
    files = files_of(a=200)
    cands = [
        cand(0, "a.py", 10, 19, 1.0), cand(1, "a.py", 20, 29, 0.9), cand(2, "a.py", 25, 40, 0.8)
    ]  # fmt: skip
    result, text = choose(cands, files, 10_000)
    assert [(s.start_line, s.end_line) for s in result.spans] == [(10, 40)]
    assert [c.rank for c in result.chunks[("a.py", 10, 40)]] == [0, 1, 2]
    assert text.startswith("── a.py:10-40\na line 010\n")


def test_a_small_gap_is_bridged_a_larger_one_is_not():
    files = files_of(a=200)
    gap = packet.MERGE_GAP
    cands = [
        cand(0, "a.py", 10, 19, 1.0),
        cand(1, "a.py", 20 + gap, 30, 0.9),  # gap lines between: bridged
        cand(2, "a.py", 31 + gap + 1, 50, 0.8),  # one line more: a span of its own
    ]
    result, _ = choose(cands, files, 10_000)
    assert [(s.start_line, s.end_line) for s in result.spans] == [(10, 30), (32 + gap, 50)]


def test_files_are_spread_before_one_file_repeats():
    files = files_of(a=100, b=100)
    cands = [
        cand(0, "a.py", 1, 10, 1.0),
        cand(1, "a.py", 41, 50, 0.9),  # priority 0.9 x decay < b's 0.8
        cand(2, "b.py", 1, 10, 0.8),
    ]
    one_chunk = len(packet.block(packet.Span("a.py", "x", 1, 10), files["a.py"].lines[:10]))
    result, _ = choose(cands, files, 2 * one_chunk + 1)
    assert [(s.path, s.start_line) for s in result.spans] == [("a.py", 1), ("b.py", 1)]
    assert [(o.candidate.rank, o.reason) for o in result.omitted] == [(1, "budget")]
    # with room for all three, a.py's second chunk comes in too, and a.py is listed first
    result, _ = choose(cands, files, 10_000)
    assert [(s.path, s.start_line) for s in result.spans] == [
        ("a.py", 1), ("a.py", 41), ("b.py", 1)
    ]  # fmt: skip


def test_files_keep_their_best_rank_order_and_spans_their_line_order():
    files = files_of(a=100, b=100, c=100)
    cands = [
        cand(0, "c.py", 50, 60, 1.0),
        cand(1, "a.py", 70, 80, 0.95),
        cand(2, "c.py", 1, 5, 0.9),
        cand(3, "b.py", 1, 5, 0.85),
    ]
    result, _ = choose(cands, files, 10_000)
    assert [(s.path, s.start_line) for s in result.spans] == [
        ("c.py", 1), ("c.py", 50), ("a.py", 70), ("b.py", 1)
    ]  # fmt: skip


def test_a_small_file_is_given_whole_when_that_is_cheaper_than_its_fragments():
    lines = ["def a():", "    return 1", "", "", "", "def b():", "    return 2"]
    files = {"tiny.py": packet.FileLines(lines, chars)}
    cands = [cand(0, "tiny.py", 1, 2, 1.0), cand(1, "tiny.py", 6, 7, 0.9)]
    result, text = choose(cands, files, 10_000)
    # two headers (15 + 15) and a blank line cost more than one header (24) and 3 empty lines
    assert [(s.whole, s.start_line, s.end_line) for s in result.spans] == [(True, 1, 7)]
    assert text == "── tiny.py (whole file)\n" + "".join(line + "\n" for line in lines)
    # the same chunks in a file with more between them stay fragments
    files = {"tiny.py": packet.FileLines(lines[:3] + ["x = 1"] * 20 + lines[3:], chars)}
    cands = [cand(0, "tiny.py", 1, 2, 1.0), cand(1, "tiny.py", 26, 27, 0.9)]
    result, _ = choose(cands, files, 10_000)
    assert [(s.whole, s.start_line, s.end_line) for s in result.spans] == [
        (False, 1, 2), (False, 26, 27)
    ]  # fmt: skip


def test_the_best_chunk_left_out_is_cut_to_fit_and_says_so():
    files = files_of(a=100, b=100)
    cands = [cand(0, "a.py", 1, 10, 1.0), cand(1, "b.py", 1, 40, 0.9)]
    first = len(packet.block(packet.Span("a.py", "x", 1, 10), files["a.py"].lines[:10]))
    result, text = choose(cands, files, first + 1 + 150)
    a, b = result.spans
    assert not a.cut and b.cut and b.start_line == 1 and 1 <= b.end_line < 40
    assert f"── b.py:1-{b.end_line} (cut to fit)\n" in text
    assert not result.omitted


def test_a_cut_chunk_merged_with_a_span_it_overlaps_is_still_marked_cut():
    files = files_of(a=100)
    cands = [cand(0, "a.py", 18, 25, 1.0), cand(1, "a.py", 10, 50, 0.9)]
    first = len(packet.block(packet.Span("a.py", "x", 18, 25), files["a.py"].lines[17:25]))
    result, text = choose(cands, files, first + 12 * 11)  # room for about 12 more lines
    (span,) = result.spans
    assert span.start_line == 10 and 25 <= span.end_line < 50 and span.cut
    assert text.startswith(f"── a.py:10-{span.end_line} (cut to fit)\n")


def test_duplicates_and_low_scores_are_left_out_with_the_reason():
    files = files_of(a=100, b=100, c=100)
    cands = [
        cand(0, "a.py", 1, 20, 1.0, blob="same"),
        cand(1, "b.py", 1, 20, 0.9, blob="same"),  # the same content at another path
        cand(2, "a.py", 5, 10, 0.8, blob="same"),  # inside a span already taken
        cand(3, "c.py", 1, 5, 0.1),  # below a quarter of the best score
    ]
    result, _ = choose(cands, files, 10_000)
    assert [(s.path, s.start_line, s.end_line) for s in result.spans] == [("a.py", 1, 20)]
    assert [(o.candidate.rank, o.reason, o.of) for o in result.omitted] == [
        (1, "duplicate", "a.py"), (2, "duplicate", "a.py"), (3, "low_score", None)
    ]  # fmt: skip


def test_a_lifted_chunk_is_kept_and_the_others_are_judged_without_it():
    """A chunk the definition or phrase step lifted scores far above fused scores; measured
    against it every other chunk was `low_score` (audit: `pix pack "recipe dependencies"
    --budget 2000` packed one span of 346 tokens)."""
    files = files_of(a=100, b=100, c=100, d=100)
    cands = [
        packet.Candidate(0, "a.py", "blob-a", 1, 5, 0.55, lifted=True),
        cand(1, "b.py", 1, 10, 0.03),
        cand(2, "c.py", 1, 10, 0.02),
        cand(3, "d.py", 1, 10, 0.005),  # below a quarter of the best chunk not lifted
    ]
    result, _ = choose(cands, files, 10_000)
    assert [s.path for s in result.spans] == ["a.py", "b.py", "c.py"]
    assert [(o.candidate.rank, o.reason) for o in result.omitted] == [(3, "low_score")]
    unlifted = [packet.Candidate(0, "a.py", "blob-a", 1, 5, 0.55), *cands[1:]]
    result, _ = choose(unlifted, files, 10_000)
    assert [s.path for s in result.spans] == ["a.py"]  # without a lift, the rule as before


@pytest.mark.parametrize("budget", [1, 5, 13, 14, 40, 99, 500])
def test_tiny_budgets_give_a_smaller_packet_never_a_bigger_one(budget):
    files = files_of(a=50, b=50)
    cands = [cand(0, "a.py", 1, 30, 1.0), cand(1, "b.py", 3, 9, 0.9)]
    result, text = choose(cands, files, budget)
    assert len(text) <= budget
    if not result.spans:
        assert text == "" and {o.reason for o in result.omitted} == {"budget"}


def test_a_budget_too_small_for_the_best_chunk_gives_it_cut_not_an_unrelated_small_one():
    """Issue 10 (16): a small unrelated chunk used to fill the packet when the best did not fit."""
    files = files_of(a=100, z=5)
    best, small = cand(0, "a.py", 1, 30, 1.0), cand(1, "z.py", 1, 2, 0.5)
    whole_small = len(packet.block(packet.Span("z.py", "x", 1, 2), files["z.py"].lines[:2]))
    result, text = choose([best, small], files, whole_small + 40)  # room for z.py, not a.py
    (span,) = result.spans
    assert (span.path, span.start_line, span.cut) == ("a.py", 1, True) and span.end_line < 30
    assert text.startswith(f"── a.py:1-{span.end_line} (cut to fit)\na line 001\n")
    assert [(o.candidate.rank, o.reason) for o in result.omitted] == [(1, "budget")]
    assert result.short_of is not None and result.short_of[0] == best
    assert result.short_of[1] > whole_small + 40  # what the best chunk costs whole
    # One line is the least it is cut to; less room than that gives an empty packet.
    one_line = len("── a.py:1-1 (cut to fit)\na line 001\n")
    result, text = choose([best, small], files, one_line)
    assert [(s.path, s.start_line, s.end_line) for s in result.spans] == [("a.py", 1, 1)]
    result, text = choose([best, small], files, one_line - 1)
    assert text == "" and result.short_of is not None
    assert [o.reason for o in result.omitted] == ["budget", "budget"]
    # A budget the best chunk fits changes nothing: short_of is None.
    result, _ = choose([best, small], files, 10_000)
    assert result.short_of is None and len(result.spans) == 2


# --- the command, on a real repository ---------------------------------------------------------

ORDERS = '''"""Order handling for the shop."""


def order_total(items, discount_rate=0.0):
    """Sum the line items of an order, then apply the discount rate."""
    subtotal = sum(item.price * item.quantity for item in items)
    return round(subtotal * (1 - discount_rate), 2)


def order_shipping_cost(total, country):
    """Shipping is free above 50 in the home country, flat elsewhere."""
    if country == "home" and total >= 50:
        return 0.0
    return 4.95 if country == "home" else 12.5


def order_invoice_lines(items):
    """One invoice line per item: name, quantity and line total."""
    return [f"{item.name} x{item.quantity}: {item.price * item.quantity:.2f}" for item in items]
'''

TAX = '''def vat_for(total, rate=0.2):
    """Value added tax on an order total."""
    return round(total * rate, 2)
'''

INVENTORY = "\n\n".join(
    f'def restock_{name}(warehouse, count):\n    """Add {name} units to the warehouse."""\n'
    f"    warehouse.setdefault({name!r}, 0)\n    warehouse[{name!r}] += count\n"
    f"    return warehouse[{name!r}]\n"
    for name in ("apples", "pears", "plums", "cherries", "lemons", "limes", "figs", "dates")
)

FILES = {
    "shop/orders.py": ORDERS,
    "shop/tax.py": TAX,
    "shop/inventory.py": INVENTORY,
    "shop/copy_of_tax.py": TAX,  # the same content twice
    "README.md": "# Shop\n\nOrders, tax and inventory for a small shop.\n",
}
QUESTIONS = [
    "how is the order total computed with a discount",
    "shipping cost for other countries",
    "restock the warehouse",
    "value added tax",
    "order_invoice_lines",
]


@pytest.fixture(scope="module")
def shop(tmp_path_factory, embedder) -> tuple[Path, Path]:
    root, db = indexed_repo(tmp_path_factory.mktemp("pack"), FILES, embedder)
    return root, db


@pytest.fixture(scope="module")
def engine(shop):
    root, db = shop
    engine = QueryEngine(db=str(db), cwd=str(root))
    yield engine
    engine.close()


@pytest.mark.parametrize("unit", ["tokens", "chars"])
@pytest.mark.parametrize("budget", [1, 8, 30, 64, 150, 400, 1000, 20_000])
def test_the_packet_never_exceeds_the_budget(engine, unit, budget):
    counter = Counter(unit)
    for question in QUESTIONS:
        response = run_pack(engine, PackRequest(question, budget, unit))
        RESPONSE.validate(response)
        text = response["text"]
        assert counter.text(text) == response["budget"]["used"] <= budget
        assert response["budget"]["unit"] == unit
        # the text is the spans' blocks, in order, a blank line between them
        blocks = [
            f"── {s['path']}"
            + (" (whole file)" if s["whole"] else f":{s['startLine']}-{s['endLine']}")
            + (" (cut to fit)" if s["cut"] else "")
            + "\n"
            + s["text"]
            for s in response["spans"]
        ]
        assert text == "\n".join(blocks)
        assert sum(s["units"] for s in response["spans"]) <= response["budget"]["used"] + len(
            blocks
        )


def test_tokens_are_counted_with_the_model_tokenizer_exactly(engine):
    response = run_pack(engine, PackRequest("order total", 20_000))
    text = response["text"]
    assert Counter("tokens").text(text) == response["budget"]["used"]
    assert response["budget"]["used"] < len(text)  # tokens, not characters
    assert "WordPiece" in response["budget"]["counter"]


def test_spans_cite_the_blob_and_commit_and_the_same_content_is_packed_once(shop, engine):
    root, _ = shop
    response = run_pack(engine, PackRequest("value added tax on an order total", 20_000))
    head = git(root, "rev-parse", "HEAD").strip()
    for span in response["spans"]:
        blob = git(root, "rev-parse", f"HEAD:{span['path']}").strip()
        cite = span["citation"]
        assert cite == {
            "id": f"{span['path']}@{blob[:12]}#L{span['startLine']}-L{span['endLine']}",
            "path": span["path"],
            "blob": blob,
            "commit": head,
        }
        lines = (root / span["path"]).read_text().split("\n")
        assert span["text"] == "".join(
            line + "\n" for line in lines[span["startLine"] - 1 : span["endLine"]]
        )
    paths = [s["path"] for s in response["spans"]]
    assert len({"shop/tax.py", "shop/copy_of_tax.py"} & set(paths)) == 1
    dupes = [o for o in response["omitted"]["items"] if o["reason"] == "duplicate"]
    assert any(o["path"] in ("shop/tax.py", "shop/copy_of_tax.py") for o in dupes)


def test_a_small_file_comes_whole_and_a_big_one_in_spans(engine):
    response = run_pack(engine, PackRequest("value added tax", 20_000))
    tax = next(s for s in response["spans"] if s["path"].endswith("tax.py"))
    assert tax["whole"] and tax["startLine"] == 1 and tax["endLine"] == 3


def test_a_span_says_on_which_line_it_defines_the_name_asked_for(engine):
    line = ORDERS.split("\n").index("def order_shipping_cost(total, country):") + 1
    response = run_pack(engine, PackRequest("order_shipping_cost", 20_000))
    assert not list(RESPONSE.iter_errors(response))
    span = response["spans"][0]
    assert span["path"] == "shop/orders.py" and span["startLine"] <= line <= span["endLine"]
    assert span["definitions"] == [{"name": "order_shipping_cost", "line": line}]
    assert all("definitions" not in s for s in response["spans"][1:])
    plain = run_pack(engine, PackRequest("restock the warehouse", 20_000))
    assert all("definitions" not in s for s in plain["spans"])
    # The lifted span does not crowd the rest out: other files still fill the budget.
    assert {s["path"] for s in response["spans"]} > {"shop/orders.py"}


def test_the_steps_channels_are_the_ones_pack_knows_as_lifts():
    from pix.retrieve import define, lift, phrase

    assert {define.CHANNEL, phrase.CHANNEL} == lift.STEP_CHANNELS


def test_a_budget_too_small_for_the_best_chunk_says_so_and_cuts_it(shop):
    root, db = shop
    where_db = ("--db", str(db))
    question = "how is the order total computed with a discount"
    code, best, err = pix_json("query", question, "--top", "1", "--json", *where_db, cwd=root)
    assert code == 0, err
    top = best["results"][0]
    code, response, err = pix_json(
        "pack", question, "--budget", "30", "--json", *where_db, cwd=root
    )
    assert code == 0, err
    (span,) = response["spans"]
    assert (span["path"], span["startLine"], span["cut"]) == (top["path"], top["startLine"], True)
    assert response["budget"]["used"] <= 30
    (warning,) = [w for w in response["warnings"] if "too small" in w]
    where = f"{top['path']}:{top['startLine']}-{top['endLine']}"
    assert warning.startswith(f"the budget (30 tokens) is too small for the best evidence: {where}")
    code, out, err = pix("pack", question, "--budget", "3", *where_db, cwd=root)
    assert code == 0 and out == ""
    assert "warning: the budget (3 tokens) is too small for any evidence" in err


def test_a_query_past_the_limit_is_cut_and_the_packet_echoes_what_was_read(engine):
    from pix.request import MAX_QUERY_CHARS

    long = "order total " * (MAX_QUERY_CHARS // 12 + 50)
    response = run_pack(engine, PackRequest(query=long, budget=200))
    assert RESPONSE.is_valid(response)
    assert response["query"] == long[:MAX_QUERY_CHARS]
    assert any(f"pix reads its first {MAX_QUERY_CHARS:,}" in w for w in response["warnings"])


def test_the_same_request_gives_the_same_bytes(shop):
    root, db = shop
    args = ("pack", "restock the warehouse", "--budget", "300", "--format", "json", "--db", str(db))
    first, second = pix(*args, cwd=root), pix(*args, cwd=root)
    assert first[0] == 0 and first[1] == second[1]


def test_cli_prints_the_packet_and_a_summary_on_stderr(shop):
    root, db = shop
    code, out, err = pix("pack", "order total", "--budget", "200", "--db", str(db), cwd=root)
    assert code == 0
    _, response, _ = pix_json(
        "pack", "order total", "--budget", "200", "--format", "json", "--db", str(db), cwd=root
    )
    assert out == response["text"]
    assert err.startswith("pix pack: ") and "of 200 tokens" in err
    code, out, err = pix(
        "pack", "order total", "--budget", "200", "--format", "both", "--db", str(db), cwd=root
    )
    assert json.loads(out) == response and response["text"] in err


def test_input_json_gives_the_same_packet(shop):
    root, db = shop
    request = {"query": "shipping cost", "budget": 120, "unit": "chars"}
    code, via_input, _ = pix_json(
        "pack", "--input", "-", "--format", "json", "--db", str(db), cwd=root,
        stdin=json.dumps(request),
    )  # fmt: skip
    code2, via_flags, _ = pix_json(
        "pack", "shipping cost", "--budget", "120", "--unit", "chars", "--format", "json",
        "--db", str(db), cwd=root,
    )  # fmt: skip
    assert code == code2 == 0 and via_input == via_flags


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["pack", "order total"], None, "--budget are required"),
        (["pack", "order total", "--budget", "0"], None, "--budget"),
        (["pack", "order total", "--budget", "10", "--unit", "words"], None, "words"),
        (["pack", "--input", "-"], "{not json", "not valid JSON"),
        (["pack", "--input", "-"], '{"query": "x"}', "budget"),
        (["pack", "--input", "-"], '{"query": "x", "budget": 5, "top": 3}', "top"),
        (["pack", "x", "--budget", "5", "--input", "-"], "{}", "exclusive"),
        (["pack", "--input", "-", "--unit", "chars"], '{"query": "x", "budget": 5}', "exclusive"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(shop, args, stdin, message):
    root, db = shop
    code, out, err = pix(*args, "--db", str(db), cwd=root, stdin=stdin)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("pix: error:") and message in err
    code, envelope, _ = pix_json(*args, "--json", "--db", str(db), cwd=root, stdin=stdin)
    assert code == 2 and envelope["error"]["code"] == "bad_input"


async def _mcp_pack(root: Path, db: Path, args: dict) -> tuple[object, dict]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "pix.cli", "mcp", "--db", str(db)], cwd=str(root)
    )
    async with Client(params, read_timeout_seconds=120) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        result = await client.call_tool("pack", args)
        assert not result.is_error, result.content[0].text
        return tools["pack"], json.loads(result.content[0].text)


def test_the_mcp_pack_tool_answers_what_the_cli_answers(shop):
    root, db = shop
    request = {"query": "restock the warehouse", "budget": 300}
    tool, via_mcp = anyio.run(_mcp_pack, root, db, request)
    assert tool.input_schema == bundled("mcp-tools.v1.json#/$defs/pack")
    assert tool.output_schema == bundled("pack-response.v1.json")
    assert tool.annotations.read_only_hint is True
    _, via_cli, _ = pix_json(
        "pack", "restock the warehouse", "--budget", "300", "--format", "json", "--db", str(db),
        cwd=root,
    )  # fmt: skip
    assert via_mcp == via_cli
