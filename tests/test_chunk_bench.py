"""bench/chunk_bench.py: the grammar against the fallback, measured on the same files."""

from __future__ import annotations

from bench import chunk_bench
from pix.ingest import definitions

SOL = (
    "pragma solidity ^0.8.0;\n\ncontract Vault {\n    uint256 public total;\n\n"
    + "".join(
        f"    function pay{i}(uint256 v) public {{\n        total += v * {i};\n    }}\n\n"
        for i in range(12)
    )
    + "}\n"
)


def test_the_grammar_cuts_definitions_and_the_fallback_blocks():
    files = [("contracts/Vault.sol", SOL)]
    grammar = chunk_bench.measure(files, "solidity", True)
    with chunk_bench.without_grammar("solidity"):
        assert "solidity" not in definitions.SPECS
        fallback = chunk_bench.measure(files, "solidity", False)
    assert "solidity" in definitions.SPECS  # restored
    assert grammar["files"] == fallback["files"] == 1
    assert grammar["parsed"] == 1.0 and fallback["parsed"] != fallback["parsed"]  # NaN
    assert grammar["definition chunks"] > 0.5 and fallback["definition chunks"] == 0.0
    assert grammar["declared/file"] == 1.0  # total
    table = chunk_bench.render([("solidity", "x@1", "grammar", grammar)])
    assert "| solidity | x@1 | grammar | 1 | 100% |" in table


def test_the_header_table_reads_the_cpp_sets_only():
    assert chunk_bench.cpp_sets() == ["leveldb", "spdlog"]
