"""bench/priors_bench.py re-ranks priors-off candidates as pix would: a snapshot's foreign
folders (pix/retrieve/foreign.py) count as vendored except in the variants that leave them."""

from __future__ import annotations

import json

from bench import priors_bench
from pix.retrieve.priors import ROLE_FACTORS, path_role


def test_a_foreign_folder_is_vendored_unless_the_variant_leaves_it():
    files = [("lib/fmt/format.h", 1.0), ("src/log.cc", 0.6), ("lib/fmt/test/t.cc", 0.9)]
    assert priors_bench.rerank(files, path_role, ROLE_FACTORS)[0] == "lib/fmt/format.h"
    ranked = priors_bench.rerank(files, path_role, ROLE_FACTORS, ("lib/fmt",))
    assert ranked == ["src/log.cc", "lib/fmt/format.h", "lib/fmt/test/t.cc"]  # test keeps x0.3
    assert "current without foreign folders" in priors_bench.WITHOUT_FOREIGN
    assert "current without foreign folders" in priors_bench.variants()


def test_only_the_variants_that_leave_them_ignore_the_folders(tmp_path, capsys):
    # one query: the copy's file scores highest with priors off, the gold file second
    candidates = {"pix": [["lib/fmt/format.h", 1.0], ["src/log.cc", 0.6]]}
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps({"spdlog": [[["src/log.cc"], candidates, ["lib/fmt"]]]}))
    variants = "current,current without foreign folders"
    priors_bench.main(["--load", str(saved), "--systems", "pix", "--variants", variants])
    rows = {line.split(" | ")[0]: line for line in capsys.readouterr().out.splitlines()}
    assert "| 1.000 / 1.000 |" in rows["| current"]
    assert "0.631 / 0.500" in rows["| current without foreign folders"]


def test_an_older_save_without_folders_is_read(tmp_path, capsys):
    candidates = {"pix": [["lib/fmt/format.h", 1.0], ["src/log.cc", 0.6]]}
    saved = tmp_path / "old.json"
    saved.write_text(json.dumps({"spdlog": [[["src/log.cc"], candidates]]}))
    variants = "current,current without foreign folders"
    priors_bench.main(["--load", str(saved), "--systems", "pix", "--variants", variants])
    captured = capsys.readouterr()
    rows = {line.split(" | ")[0]: line for line in captured.out.splitlines()}
    assert "0.631 / 0.500" in rows["| current"]  # no folders recorded: none applied
    assert "no foreign folders" in captured.err
