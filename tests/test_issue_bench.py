"""bench.issue_bench's split of the reports by how many files their fix changed."""

from __future__ import annotations

from bench.issue_bench import by_gold_count


def test_reports_are_scored_apart_by_the_number_of_files_their_fix_changed():
    runs = {
        "pix": [
            (["a.py", "b.py"], ["b.py"]),  # one file, second
            (["c.py", "d.py"], ["c.py"]),  # one file, first
            (["e.py", "f.py", "g.py"], ["e.py", "g.py"]),  # two files, both in the first 3
        ]
    }
    rows = dict(by_gold_count(runs).rows)
    one, several = rows["pix, one file (2)"], rows["pix, several (1)"]
    assert (one["acc@1"], one["acc@3"], one["mrr@10"]) == (0.5, 1.0, 0.75)
    # every gold file must be among the first k: a fix of two files is never first alone
    assert (several["acc@1"], several["acc@3"]) == (0.0, 1.0)
    assert set(rows) == {"pix, one file (2)", "pix, several (1)"}
