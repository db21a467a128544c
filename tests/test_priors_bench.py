"""bench/priors_bench.py re-ranks priors-off candidates as pix would: a snapshot's foreign
folders (pix/retrieve/foreign.py) count as vendored except in the variants that leave them."""

from __future__ import annotations

from bench import priors_bench
from pix.retrieve.priors import ROLE_FACTORS, path_role


def test_a_foreign_folder_is_vendored_unless_the_variant_leaves_it():
    files = [("lib/fmt/format.h", 1.0), ("src/log.cc", 0.6), ("lib/fmt/test/t.cc", 0.9)]
    assert priors_bench.rerank(files, path_role, ROLE_FACTORS)[0] == "lib/fmt/format.h"
    ranked = priors_bench.rerank(files, path_role, ROLE_FACTORS, ("lib/fmt",))
    assert ranked == ["src/log.cc", "lib/fmt/format.h", "lib/fmt/test/t.cc"]  # test keeps x0.3
    assert "current without foreign folders" in priors_bench.WITHOUT_FOREIGN
    assert "current without foreign folders" in priors_bench.variants()
