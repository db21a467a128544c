"""bench.chunk_mode_bench's scoring of chunk lists: files by their first chunk, and the
chunk-level shares."""

from __future__ import annotations

import pytest

from bench.chunk_mode_bench import score


def test_chunks_are_scored_by_the_order_of_their_files_and_the_first_five():
    runs = [
        # gold first among files, but its first chunk is the sixth
        (["a.py", "a.py", "a.py", "b.py", "b.py", "g.py"], ["a.py"]),
        (["c.py", "c.py", "c.py", "c.py", "c.py", "g.py"], ["g.py"]),
    ]
    m = score(runs, issues=True)
    assert m["acc@1"] == 0.5 and m["mrr@10"] == pytest.approx((1 + 1 / 2) / 2)
    assert m["in 5"] == 0.5  # the second's gold chunk comes sixth
    assert m["files/10"] == (3 + 2) / 2
    assert "acc@1" not in score(runs, issues=False)
