"""bench/weights_bench.py: its variants reach pix's real route step, for the queries they name,
and leave pix as it was."""

from __future__ import annotations

import pytest

import pix.query
from bench import weights_bench
from pix.retrieve import evidence, imported, rank, refine, route


def test_commit_subjects_read_as_changes_and_questions_do_not():
    for subject in ("Fix crash when the pane is resized", "router: keep the trailing slash",
                    "Don't reset the umask"):  # fmt: skip
        assert weights_bench.is_change(subject), subject
    for question in ("how does the router match a trailing slash", "python merge two dicts",
                     "where is the umask reset", ""):  # fmt: skip
        assert not weights_bench.is_change(question), question


def test_a_variant_changes_only_the_queries_it_names_and_is_undone():
    before = {shape: dict(w) for shape, w in route.WEIGHTS.items()}
    standout = dict(rank.STANDOUT)
    spec = weights_bench.parse_spec("change:question.dense=0.5,plain:standout.dense=0.9")
    with weights_bench.applied(spec):
        changed = pix.query.route("Fix crash when the pane is resized")
        assert changed.weights["dense"] == 0.5 and rank.STANDOUT["dense"] == standout["dense"]
        plain = pix.query.route("how does the pane get resized on a crash")
        assert plain.weights["dense"] == before["question"]["dense"]
        assert rank.STANDOUT["dense"] == 0.9
    assert pix.query.route is route.route
    assert route.WEIGHTS == before and rank.STANDOUT == standout


def test_a_reading_variant_sets_the_second_pass_weight_and_is_undone():
    reading = dict(route.READING)
    with weights_bench.applied(weights_bench.parse_spec("reading.question=0.5")):
        first = pix.query.route("how does the pane get resized on a crash")
        assert first.weights["dense"] == route.DENSE  # the whole corpus's weight is left alone
        assert route.reading(first).weights["dense"] == 0.5
    assert route.READING == reading


def test_a_refine_variant_limits_one_shape_and_is_undone():
    limits = dict(refine.PER_FILE)
    with weights_bench.applied(weights_bench.parse_spec("refine.question=3")):
        pix.query.route("how does the pane get resized on a crash")
        assert refine.PER_FILE == {**limits, "question": 3}
    assert refine.PER_FILE == limits


def test_an_imported_variant_lifts_one_shape_and_is_undone():
    shapes, weight = imported.SHAPES, imported.WEIGHT
    with weights_bench.applied(weights_bench.parse_spec("imported.question=0.3")):
        pix.query.route("how does the pane get resized on a crash")
        assert imported.SHAPES == shapes | {"question"} and imported.WEIGHT == 0.3
        pix.query.route("resize_pane")  # another shape: as pix ships
        assert (imported.SHAPES, imported.WEIGHT) == (shapes, weight)
    assert (imported.SHAPES, imported.WEIGHT) == (shapes, weight)


@pytest.mark.parametrize(
    "spec",
    ["question.dense", "sometimes:question.dense=1", "nope.dense=1", "reading.nope=1",
     "refine.nope=1", "imported.nope=0.2", "shape.nope=2", "change:shape.min_chars=250",
     "shape.min_lines=2.5"],
)  # fmt: skip
def test_a_spec_it_cannot_read_is_refused(spec):
    with pytest.raises(SystemExit, match="weights_bench"):
        weights_bench.parse_spec(spec)


def test_each_question_set_is_split_by_repository():
    names = weights_bench.expand("questions,questions-more")
    assert "q:tmux" in names and "qm:spdlog" in names and "qm:tmux" not in names
    assert len([n for n in names if n.startswith("qm:")]) == 5


# A title and a two-sentence body: 253 characters, one line of code, no traceback.
MESSAGE = (
    "Fix scroll position after a resize\n\n"
    "When the pane shrinks while in copy mode the cursor could end up past the last line of "
    "the history, so the next redraw read beyond the grid. Clamp the position to the new "
    "size in `window_copy_resize` before redrawing."
)


def test_a_shape_variant_moves_what_reads_as_a_report_and_is_undone():
    assert 250 <= len(MESSAGE) < evidence.ISSUE_MIN_CHARS
    chars = evidence.ISSUE_MIN_CHARS
    assert pix.query.route(MESSAGE).shape != "issue"
    with weights_bench.applied(weights_bench.parse_spec("shape.min_chars=250")):
        assert pix.query.route(MESSAGE).shape == "issue"
        assert pix.query.route("resize_pane").shape != "issue"
    assert evidence.ISSUE_MIN_CHARS == chars
    assert pix.query.route(MESSAGE).shape != "issue"
    lines = evidence.ISSUE_MIN_LINES
    assert len([line for line in MESSAGE.splitlines() if line.strip()]) == 2 < lines
    with weights_bench.applied(weights_bench.parse_spec("shape.min_lines=2")):
        assert pix.query.route(MESSAGE).shape == "issue"  # two lines, with code
        with pytest.raises(RuntimeError):
            with weights_bench.applied(weights_bench.parse_spec("shape.min_chars=10")):
                raise RuntimeError
        assert evidence.ISSUE_MIN_CHARS == chars  # the inner block's undone, even so
    assert evidence.ISSUE_MIN_LINES == lines


def test_bodies_ask_each_commit_set_s_messages_with_a_body_whole():
    names = weights_bench.expand("bodies")
    assert "b:tmux" in names and "b:pytest" in names and "b:seaborn" in names
    # The subject as devbench asks it (its type and pull-request number gone), and the body
    # without git's trailers.
    q = {"id": "x-001", "query": "ssh: keep the agent", "subject": "fix(ssh): keep the agent (#12)",
         "body": "Because.\n\nSigned-off-by: A <a@b.c>\nCo-authored-by: B <b@c.d>\n"}  # fmt: skip
    assert weights_bench.whole_message(q)["query"] == "ssh: keep the agent\n\nBecause."
