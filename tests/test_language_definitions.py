"""The grammars added for Perl, PowerShell, F#, Solidity and Fortran, end to end: a real git
repository in a temp folder, indexed with the real model, asked through the real query path.

Each defining file is ranked first by the definition step (`definition` in its explanation),
which needs the name in the `symbol` table: without the grammar the fallback's keywords
(pix/ingest/paragraphs.py) know no `contract`, `library`, `type` or `package` line, so these
tests fail with a fallback chunker. A decoy file says every name in prose and calls, so BM25
and the meaning channels alone may prefer it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import new_repo, where

from pix.index import index_repository
from pix.query import QueryRequest, query

FILES = {
    "lib/Mojo/Loader.pm": (
        "package Mojo::Loader;\nuse strict;\n\n# Load a class by name.\nsub load_class {\n"
        "    my $class = shift;\n    return $class;\n}\n\n1;\n"
    ),
    "contracts/SafeMath.sol": (
        "pragma solidity ^0.8.0;\n\nlibrary SafeMath {\n"
        "    function add(uint a, uint b) internal pure returns (uint) { return a + b; }\n}\n"
    ),
    "src/Routing.fs": (
        "module App.Routing\n\ntype RouteTable(prefix: string) =\n"
        "    member this.Resolve(path: string) = prefix + path\n"
    ),
    "src/geometry.f90": (
        "module geometry_mod\ncontains\n  function circle_area(r) result(a)\n    real :: r, a\n"
        "    a = 3.14 * r * r\n  end function circle_area\nend module geometry_mod\n"
    ),
    "scripts/Deploy.ps1": (
        "function Publish-Site {\n    param([string]$Target)\n    Write-Host $Target\n}\n"
    ),
    "notes/usage.py": (
        '"""How the pieces fit: Mojo::Loader loads classes, SafeMath adds, a RouteTable\n'
        'resolves routes, circle_area measures circles, Publish-Site deploys."""\n\n\n'
        "def tour(loader, safe_math, route_table, geometry_mod):\n"
        '    """SafeMath SafeMath RouteTable RouteTable circle_area circle_area Loader."""\n'
        "    return [loader.Loader, safe_math.SafeMath, route_table.RouteTable,\n"
        "            geometry_mod.circle_area, safe_math.SafeMath, route_table.RouteTable]\n"
    ),
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory, embedder) -> Path:
    root = new_repo(tmp_path_factory.mktemp("languages") / "repo", FILES)
    index_repository(str(root), embedder=embedder)
    return root


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("where is Mojo::Loader defined", "lib/Mojo/Loader.pm"),  # a declared package
        ("SafeMath", "contracts/SafeMath.sol"),
        ("RouteTable", "src/Routing.fs"),
        ("circle_area", "src/geometry.f90"),
    ],
)
def test_the_defining_file_comes_first(repo: Path, text: str, path: str) -> None:
    request = QueryRequest(text, mode="file", top=3, explain=True, no_content=True)
    response = query(request, cwd=str(repo))
    first = response["results"][0]
    assert where(first) == path
    assert "definition" in first["explain"]["channels"]


def test_a_powershell_function_feeds_the_identifier_channel(repo: Path) -> None:
    request = QueryRequest("Publish-Site", top=3, explain=True, no_content=True, channels=["ident"])
    results = query(request, cwd=str(repo))["results"]
    assert [r["path"] for r in results][:1] == ["scripts/Deploy.ps1"]
    assert results[0]["symbol"] == "Publish-Site"
