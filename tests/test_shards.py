"""One question across several repositories' databases (issue 13): `--workspace W`, several
`--db`, and `pix mcp --workspace W`. Real git repositories in temp folders, indexed with the
real model; damaged, missing, foreign and other-model shards are real files."""

from __future__ import annotations

import json
import math
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import anyio
import jsonschema
import pytest
from conftest import GEOMETRY, GIT_ENV, GREETING, TABLES, WEATHER, git, new_repo, pix, pix_json
from mcp import Client, StdioServerParameters

from pix import shard_probe
from pix.index import index_repository
from pix.query import QueryEngine, QueryRequest
from pix.schemas import bundled
from pix.shard_factors import SHARD_LAMBDA, coverage, likelihood, shard_factors
from pix.shard_probe import probe, probes_apply
from pix.shards import ShardSet, query_shards, shard_ranking
from pix.store import open_store
from pix.workspace import load_workspace

SHARED = '''def normalise_whitespace(text):
    """Collapse runs of spaces and tabs into one space."""
    return " ".join(text.split())
'''
REPOS = {
    "weather": {"src/weather.py": WEATHER, "common/strings.py": SHARED},
    "tables": {"src/tables.py": TABLES, "common/strings.py": SHARED},
    "shapes": {"geometry.py": GEOMETRY, "hello.py": GREETING},
}
RAIN = "average temperature of the readings"


def valid(payload: dict, schema: str) -> list[str]:
    validator = jsonschema.Draft202012Validator(bundled(schema))
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(payload)]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, embedder) -> Path:
    """Three indexed repositories and the pix.toml that names them (relative paths)."""
    base = tmp_path_factory.mktemp("shards")
    for name, files in REPOS.items():
        root = new_repo(base / "repos" / name, files)
        index_repository(str(root), embedder=embedder)
    (base / "pix.toml").write_text(
        "".join(f'[[repo]]\npath = "repos/{name}"\n\n' for name in REPOS)
    )
    return base


def static_workspace(base: Path, repos: dict[str, dict[str, str]]) -> ShardSet:
    """Repositories made and indexed static-only under `base`, the pix.toml naming them, and
    the ShardSet that opens it."""
    for name, files in repos.items():
        index_repository(str(new_repo(base / name, files)), embed=False)
    (base / "pix.toml").write_text("".join(f'[[repo]]\npath = "{n}"\n\n' for n in repos))
    return ShardSet(load_workspace(base))


def probe_all(shards: ShardSet, request: QueryRequest) -> dict:
    return {name: probe(engine, request) for name, engine in shards.engines.items()}


def copy_workspace(workspace: Path, tmp_path: Path) -> Path:
    """A private copy (repositories and databases) that one test may damage."""
    target = tmp_path / "ws"
    shutil.copytree(workspace, target, symlinks=True)
    for name in REPOS:  # the copied databases know the old roots: index them here again
        index_repository(str(target / "repos" / name), embed=False)
    return target


def test_results_name_their_repository_and_cite_it_exactly(workspace):
    code, out, err = pix_json("query", RAIN, "--workspace", str(workspace), "--json")
    assert code == 0, err
    assert valid(out, "query-response.v2.json") == []
    assert out["results"][0]["repo"] == "weather"
    assert out["results"][0]["path"] == "src/weather.py"
    heads = {n: git(workspace / "repos" / n, "rev-parse", "HEAD") for n in REPOS}
    for result in out["results"]:
        assert result["citation"]["commit"] == heads[result["repo"]]
        assert (workspace / "repos" / result["repo"] / result["path"]).is_file()
    assert [r["name"] for r in out["repos"]] == list(REPOS)
    assert {r["name"]: r["snapshot"]["commit"] for r in out["repos"]} == heads
    code, text, _ = pix("query", RAIN, "--workspace", str(workspace), "--top", "3")
    assert code == 0 and "── weather: src/weather.py:" in text


def test_each_repository_keeps_its_own_order(workspace):
    """The merge keeps every shard's ranking: its results across the workspace are the first
    ones it gives alone."""
    ws = load_workspace(workspace)
    shards = ShardSet(ws)
    try:
        for query in (RAIN, "render rows as a table", "collapse whitespace"):
            request = QueryRequest(query=query, mode="file", top=20, no_content=True)
            across = query_shards(shards, request)
            for shard in ws.shards:
                alone = QueryEngine(db=str(shard.db), cwd=str(shard.root)).query(request)
                mine = [r["file"] for r in across["results"] if r["repo"] == shard.name]
                assert mine == [r["file"] for r in alone["results"]][: len(mine)]
    finally:
        shards.close()


def test_a_shallower_workspace_asks_each_shard_for_fewer_candidates(workspace):
    """ShardSet depth: each shard's channels rank at most that many candidates (explain shows
    every channel's rank; the path channel names at most PATH_DEPTH files either way);
    without it a shard ranks as many as alone."""
    ws = load_workspace(workspace)
    deep, shallow = ShardSet(ws), ShardSet(ws, depth=2)

    def ranks(answer: dict) -> list[int]:
        return [
            c["rank"]
            for r in answer["results"]
            for name, c in r["explain"]["channels"].items()
            if name != "path"
        ]

    try:
        request = QueryRequest(query=RAIN, mode="chunk", top=50, no_content=True, explain=True)
        full, few = query_shards(deep, request), query_shards(shallow, request)
        assert ranks(few) and max(ranks(few)) <= 2
        assert max(ranks(full)) > 2
        assert len(few["results"]) < len(full["results"])
    finally:
        deep.close()
        shallow.close()


def test_file_mode_dedupes_per_repository(workspace):
    code, out, err = pix_json(
        "query", "collapse runs of spaces into one", "--file", "--workspace", str(workspace),
        "--json", "--no-content",
    )  # fmt: skip
    assert code == 0, err
    hits = [(r["repo"], r["file"]) for r in out["results"]]
    assert len(hits) == len(set(hits))
    assert ("weather", "common/strings.py") in hits[:3] and ("tables", "common/strings.py") in hits[
        :3
    ]


def test_several_db_options_are_a_workspace(workspace):
    dbs = [
        arg
        for n in ("weather", "shapes")
        for arg in ("--db", str(workspace / f"repos/{n}/.pix.db"))
    ]
    code, out, err = pix_json("query", RAIN, *dbs, "--json", "--no-content")
    assert code == 0, err
    assert {r["repo"] for r in out["results"]} <= {"weather", "shapes"}
    assert out["results"][0]["repo"] == "weather"
    code, out, err = pix_json("query", RAIN, "--workspace", str(workspace), *dbs[:2], "--json")
    assert code == 2 and "exclusive" in out["error"]["message"]


def test_bad_shards_are_warnings_and_the_rest_answers(workspace, tmp_path):
    ws = copy_workspace(workspace, tmp_path)
    # tables: damaged pages; shapes: another model; a missing one; a file that is not pix's
    tables = ws / "repos/tables/.pix.db"
    data = bytearray(tables.read_bytes())
    data[8192:] = b"\x5a" * (len(data) - 8192)
    tables.write_bytes(bytes(data))
    store = open_store(ws / "repos/shapes/.pix.db", create=False)
    with store.write():
        store.set_meta("model.name", "some-other-model")
    store.close()
    (ws / "foreign.db").write_bytes(b"not a database at all" * 100)
    with (ws / "pix.toml").open("a") as fh:
        fh.write('[[repo]]\nname = "gone"\ndb = "nowhere/.pix.db"\n\n')
        fh.write('[[repo]]\nname = "foreign"\ndb = "foreign.db"\n\n')
        fh.write('[[repo]]\nname = "nofolder"\npath = "no-such-folder"\n')
    code, out, err = pix_json("query", RAIN, "--workspace", str(ws), "--json")
    assert code == 0, err
    assert {r["repo"] for r in out["results"]} == {"weather"}
    said = "\n".join(out["warnings"])
    for name in ("tables", "shapes", "gone", "foreign", "nofolder"):
        assert f"repository {name} did not answer" in said, said
    assert "another embedding model" in said
    assert valid(out, "query-response.v2.json") == []
    # discover too: a shard's folder or database failing is that shard's, not the request's
    code, out, err = pix_json(
        "discover", "-l", "ws=normalise_whitespace", "--workspace", str(ws), "--json"
    )
    assert code == 0, err
    assert {c["repo"] for c in out["candidates"]} == {"weather"}
    assert "repository nofolder did not answer: no such folder" in "\n".join(out["warnings"])
    bad = json.dumps({"queries": [{"id": "x", "pattern": "y", "mode": "fuzzy"}]})
    code, out, err = pix_json(
        "discover", "--input", "-", "--workspace", str(ws), "--json", stdin=bad
    )
    assert code == 2 and "queries/0/mode" in out["error"]["message"]  # the request: refused
    # every shard failing: the usual error and exit code
    (ws / "repos/weather/.pix.db").unlink()
    code, out, err = pix_json("query", RAIN, "--workspace", str(ws), "--json")
    assert code == 3 and out["error"]["code"] == "not_indexed"


def test_status_lists_every_shard_with_its_freshness(workspace, tmp_path):
    ws = copy_workspace(workspace, tmp_path)
    (ws / "repos/tables/src/tables.py").write_text(TABLES + "\n# changed\n")
    (ws / "repos/shapes/.pix.db").unlink()
    code, out, err = pix_json("status", "--workspace", str(ws), "--json")
    assert code == 0, err
    assert valid(out, "workspace-status-response.v1.json") == []
    by = {r["name"]: r for r in out["repos"]}
    assert list(by) == list(REPOS)
    assert by["weather"]["fresh"] is True
    assert by["tables"]["fresh"] is False
    assert by["tables"]["status"]["workTree"]["changedPaths"] == ["src/tables.py"]
    assert by["shapes"]["error"]["code"] == "not_indexed"


def test_pack_across_repositories_cites_each_span_in_its_repository(workspace):
    code, out, err = pix_json(
        "pack", RAIN, "--budget", "300", "--workspace", str(workspace), "--format", "json"
    )
    assert code == 0, err
    assert valid(out, "pack-response.v1.json") == []
    assert out["spans"] and out["spans"][0]["repo"] == "weather"
    assert out["budget"]["used"] <= 300
    for span in out["spans"]:
        assert (workspace / "repos" / span["repo"] / span["citation"]["path"]).is_file()
        assert f"{span['repo']}: {span['path']}" in out["text"]
    # Left-out candidates name their repository too; a budget too small for the best chunk
    # says which chunk, in the workspace's `repo: path` form.
    for item in out["omitted"]["items"]:
        assert (workspace / "repos" / item["repo"] / item["path"]).is_file()
    code, small, err = pix_json(
        "pack", RAIN, "--budget", "5", "--workspace", str(workspace), "--format", "json"
    )
    assert code == 0, err
    assert any("is too small for" in w and "weather: " in w for w in small["warnings"])


def test_a_workspace_answer_places_the_definition_asked_for(workspace):
    for command in (["query"], ["pack", "--budget", "300"]):
        code, out, err = pix_json(
            *command, "normalise_whitespace", "--workspace", str(workspace), "--format", "json"
        )
        assert code == 0, err
        items = out["results"] if command == ["query"] else out["spans"]
        assert valid(out, f"{command[0]}-response.v{2 if command == ['query'] else 1}.json") == []
        assert items[0]["path"] == "common/strings.py"
        assert items[0]["definitions"] == [{"name": "normalise_whitespace", "line": 1}]


def test_a_workspace_packet_echoes_the_query_it_read(workspace):
    from pix.request import MAX_QUERY_CHARS

    long = (RAIN + " ") * (MAX_QUERY_CHARS // len(RAIN) + 10)
    code, out, err = pix_json(
        "pack", long, "--budget", "100", "--workspace", str(workspace), "--format", "json"
    )
    assert code == 0, err
    assert out["query"] == long[:MAX_QUERY_CHARS]
    assert any(f"pix reads its first {MAX_QUERY_CHARS:,}" in w for w in out["warnings"])


def test_an_only_path_glob_is_said_only_when_no_repository_has_a_match(workspace):
    def warned(*globs: str) -> list[str]:
        args = [a for g in globs for a in ("--only-path", g)]
        pack = ["pack", RAIN, "--budget", "300", "--format", "json"]
        for command in (["query", RAIN, "--json"], pack):
            code, out, err = pix_json(*command, *args, "--workspace", str(workspace))
            assert code == 0, err
            found = [w for w in out["warnings"] if "matches no file" in w]
            if command[0] == "query":
                first = found
            assert found == first  # query and pack agree
        return first

    assert warned("src/*.py") == []  # matches in weather and tables, not in shapes
    assert warned("src/*.py", "lib/**") == [
        "only-path glob 'lib/**' matches no file in the repositories that answered"
    ]
    # given twice: one warning; a long one quoted short (review)
    long = "z" * 300
    twice = warned("lib/**", "lib/**", long, long)
    assert twice[0] == "only-path glob 'lib/**' matches no file in the repositories that answered"
    assert len(twice) == 2 and "(300 characters)" in twice[1] and len(twice[1]) < 160


def test_discover_across_repositories(workspace):
    code, out, err = pix_json(
        "discover", "-l", "ws=normalise_whitespace", "--workspace", str(workspace), "--json"
    )
    assert code == 0, err
    assert valid(out, "discover-workspace-response.v1.json") == []
    found = {(c["repo"], c["path"]) for c in out["candidates"]}
    assert found == {("weather", "common/strings.py"), ("tables", "common/strings.py")}
    assert [r["name"] for r in out["repos"]] == list(REPOS)


def test_repos_needs_a_workspace(workspace):
    root = workspace / "repos/weather"
    request = json.dumps({"query": RAIN, "repos": ["weather"]})
    code, out, err = pix_json("query", "--input", "-", "--json", cwd=root, stdin=request)
    assert code == 2 and "repos names repositories of a workspace" in out["error"]["message"]
    request = json.dumps(
        {"queries": [{"id": "a", "pattern": "rain", "mode": "literal"}], "repos": ["weather"]}
    )
    code, out, err = pix_json("discover", "--input", "-", "--json", cwd=root, stdin=request)
    assert code == 2 and "repos names repositories of a workspace" in out["error"]["message"]


def test_the_query_is_embedded_once_for_every_shard(workspace, embedder):
    shards = ShardSet(load_workspace(workspace))
    calls: list[list[str]] = []

    class Counting:
        def embed_batch(self, texts):
            calls.append(list(texts))
            return embedder.embed_batch(texts)

    shards.embedder._model = Counting()
    try:
        query_shards(shards, QueryRequest(query=RAIN, mode="file"))
        query_shards(shards, QueryRequest(query=RAIN, mode="file"))
    finally:
        shards.close()
    assert calls == [[RAIN]]


def test_mcp_workspace_server_follows_a_replaced_shard_and_reports_a_deleted_one(
    workspace, tmp_path
):
    # The server keeps each shard open: a database replaced (as `pix index --rebuild` swaps
    # one in) is answered from the new file, a deleted one is named in warnings, as the
    # one-shot command says; neither keeps answering from the unlinked file.
    ws = copy_workspace(workspace, tmp_path)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "pix.cli", "mcp", "--workspace", str(ws), "--no-refresh"],
        cwd=str(ws),
        env=GIT_ENV,
    )
    ask = {"query": "normalise_whitespace", "mode": "file", "noContent": True}

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:

            def holding(answer: dict) -> set[str]:
                return {r["repo"] for r in answer["results"] if r["file"] == "common/strings.py"}

            first = (await client.call_tool("query", ask)).structured_content
            assert holding(first) == {"weather", "tables"}
            # tables' database replaced by shapes' (no normalise_whitespace there)
            db = ws / "repos/tables/.pix.db"
            shutil.copy(ws / "repos/shapes/.pix.db", db.with_name("new.db"))
            db.with_name("new.db").replace(db)
            replaced = (await client.call_tool("query", ask)).structured_content
            assert holding(replaced) == {"weather"}
            (ws / "repos/weather/.pix.db").unlink()
            deleted = (await client.call_tool("query", ask)).structured_content
            assert holding(deleted) == set() and deleted["results"]  # the others answer
            said = "\n".join(deleted["warnings"])
            assert "repository weather did not answer: no pix index" in said, said

    anyio.run(main)


def test_mcp_workspace_server_with_repos(workspace):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "pix.cli", "mcp", "--workspace", str(workspace), "--no-refresh"],
        cwd=str(workspace),
        env=GIT_ENV,
    )

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert "repos" in tools["query"].input_schema["properties"]
            assert "repos" in tools["pack"].input_schema["properties"]
            assert "repos" in tools["discover"].input_schema["properties"]
            result = await client.call_tool("query", {"query": RAIN, "mode": "file"})
            assert not result.is_error, result.content[0].text
            assert result.structured_content["results"][0]["repo"] == "weather"
            only = await client.call_tool(
                "query", {"query": RAIN, "mode": "file", "repos": ["tables"]}
            )
            assert {r["repo"] for r in only.structured_content["results"]} == {"tables"}
            packed = await client.call_tool(
                "pack", {"query": RAIN, "budget": 200, "repos": ["shapes", "weather"]}
            )
            assert {s["repo"] for s in packed.structured_content["spans"]} <= {"shapes", "weather"}
            status = await client.call_tool("status", {})
            assert valid(status.structured_content, "workspace-status-response.v1.json") == []
            assert [r["name"] for r in status.structured_content["repos"]] == list(REPOS)
            assert all(r["fresh"] for r in status.structured_content["repos"])
            found = await client.call_tool(
                "discover",
                {"queries": [{"id": "ws", "pattern": "normalise_whitespace", "mode": "literal"}],
                 "repos": ["tables"]},
            )  # fmt: skip
            assert {c["repo"] for c in found.structured_content["candidates"]} == {"tables"}
            unknown = await client.call_tool(
                "query", {"query": RAIN, "mode": "file", "repos": ["x"]}
            )
            assert unknown.is_error and "no repository named x" in unknown.content[0].text
            aliases = await client.call_tool("alias_list", {})
            assert aliases.is_error and "needs one repository" in aliases.content[0].text

    anyio.run(main)


def test_a_warm_engine_sees_counts_change_when_another_connection_indexes(tmp_path, embedder):
    """The snapshot's counts are kept between answers (pix.query.QueryEngine.snapshot_counts)
    only until another connection commits."""
    root = new_repo(tmp_path / "repo", REPOS["weather"])
    index_repository(str(root), embed=False)
    engine = QueryEngine(cwd=str(root))
    try:
        request = QueryRequest(query=RAIN, mode="file", no_content=True)
        first = engine.query(request)
        assert any("transformer has embedded 0%" in w for w in first["warnings"])
        assert engine.query(request)["warnings"] == first["warnings"]
        index_repository(str(root), embedder=embedder)
        assert not any("embedded" in w for w in engine.query(request)["warnings"])
    finally:
        engine.close()


def test_a_probe_ranks_only_the_shards_of_largest_factor(workspace):
    """ShardSet breadth: past it, every shard is probed (nearest cosine, term counts) and only
    the shards of largest factor are ranked; the others are listed unranked, and the answer's
    top and every factor are those of ranking them all."""
    ws = load_workspace(workspace)
    every, probed = ShardSet(ws, breadth=None), ShardSet(ws, breadth=1)
    try:
        request = QueryRequest(query=RAIN, mode="file", top=3, no_content=True)
        full, few = query_shards(every, request), query_shards(probed, request)
        assert valid(few, "query-response.v2.json") == []
        assert {r["repo"] for r in few["results"]} == {"weather"}
        assert few["results"][0] == full["results"][0]
        listed = {r["name"]: r for r in few["repos"]}
        assert [r["name"] for r in few["repos"]] == list(REPOS)
        assert listed["weather"]["ranked"] and listed["weather"]["candidates"] > 0
        for name in ("tables", "shapes"):
            assert not listed[name]["ranked"] and listed[name]["candidates"] == 0
        assert {r["name"]: r["factor"] for r in few["repos"]} == {
            r["name"]: r["factor"] for r in full["repos"]
        }
        assert all(r["ranked"] for r in full["repos"])
    finally:
        every.close()
        probed.close()


def test_a_probe_reads_what_the_ranking_reads(workspace):
    """The probe's nearest cosines and term counts are the ranking's own, to the bit, cold (vec0's
    scan) and warm (the engine's matrices)."""
    ws = load_workspace(workspace)
    shards = ShardSet(ws)
    try:
        queries = [RAIN, "render rows as a table", "collapse whitespace", "area of a circle"]
        for _ in range(3):  # the third round runs on warm engines (knn.WARM_AFTER scans)
            for query in queries:
                request = QueryRequest(query=query, mode="file", top=10, no_content=True)
                for engine in shards.engines.values():
                    seen = probe(engine, request)
                    answer = shard_ranking(engine, request)
                    assert seen.meaning and seen.meaning == answer.meaning, query
                    assert (seen.df, seen.chunks) == (answer.df, answer.chunks)
        assert any(e.warm.loaded for e in shards.engines.values())
    finally:
        shards.close()


def test_shards_a_name_or_phrase_lifts_in_are_ranked_whatever_their_factor(workspace):
    """The definition and phrase steps lift a chunk above every score: a shard that defines the
    query's name, or holds its phrase verbatim, is ranked past the breadth; a path filter or a
    commit leaves no probe to stand for the ranking, so every shard is."""
    ws = load_workspace(workspace)
    shards = ShardSet(ws, breadth=1)

    def ranked(**options) -> set[str]:
        request = QueryRequest(mode="file", top=5, no_content=True, **options)
        return {r["name"] for r in query_shards(shards, request)["repos"] if r["ranked"]}

    try:
        assert ranked(query=RAIN) == {"weather"}
        # common/strings.py of weather and tables defines it; shapes does not.
        assert ranked(query="normalise_whitespace") == {"weather", "tables"}
        assert ranked(query="Collapse runs of spaces and tabs into one space") == {
            "weather",
            "tables",
        }
        assert ranked(query=RAIN, only_paths=["src/**"]) == set(REPOS)
        assert not probes_apply(QueryRequest(query=RAIN, only_paths=["src/**"]))
        assert not probes_apply(QueryRequest(query=RAIN, at="HEAD"))
        assert probes_apply(QueryRequest(query=RAIN))
    finally:
        shards.close()


def test_a_shard_that_cannot_be_probed_leaves_every_shard_ranked(workspace, tmp_path):
    """A missing shard has no probe: the workspace is ranked as before, and the missing one is
    named in warnings, never listed as unranked."""
    ws = copy_workspace(workspace, tmp_path)
    with (ws / "pix.toml").open("a") as fh:
        fh.write('[[repo]]\nname = "gone"\ndb = "nowhere/.pix.db"\n')
    shards = ShardSet(load_workspace(ws), breadth=1)
    try:
        answer = query_shards(shards, QueryRequest(query=RAIN, mode="file", no_content=True))
        assert valid(answer, "query-response.v2.json") == []
        assert [(r["name"], r["ranked"]) for r in answer["repos"]] == [
            (name, True) for name in REPOS
        ]
        assert any("repository gone did not answer" in w for w in answer["warnings"])
    finally:
        shards.close()


def test_the_shard_that_says_the_query_words_most_often_leads(tmp_path):
    """Coverage saturates (three chunks holding a word count as holding it); the likelihood
    does not: of two repositories that both hold "viewport", the one where most chunks say it
    leads the one where 3 of 30 do, by likelihood, and its factor, by that alone."""
    dense = {
        f"view/port{i}.py": f"def viewport_{i}(frame):\n    return frame.viewport\n"
        for i in range(5)
    }
    dense["view/colour.py"] = "def colour(frame):\n    return frame.colour\n"
    sparse = {
        f"parse/rule{i}.py": f"def rule_{i}(token):\n    return token.kind == {i}\n"
        for i in range(27)
    }
    sparse |= {
        f"parse/view{i}.py": f"def view_{i}(token):\n    return token.viewport\n" for i in range(3)
    }
    shards = static_workspace(tmp_path, {"dense": dense, "sparse": sparse})
    try:
        request = QueryRequest(query="viewport", mode="file", no_content=True)
        probes = probe_all(shards, request)
        assert probes["dense"].df == {"viewport": 5} and probes["sparse"].df == {"viewport": 3}
        cover, fit = coverage(probes), likelihood(probes)
        assert abs(cover["dense"] - cover["sparse"]) < 0.05  # both "hold" the word
        assert fit["dense"] > fit["sparse"] + 0.2  # 5 of 6 chunks against 3 of 30
        without = shard_factors(probes, beta=0.0, lam=0.0)
        with_fit = shard_factors(probes, beta=0.0)
        assert with_fit["dense"].factor == without["dense"].factor == 1.0
        gap = math.exp(SHARD_LAMBDA * (fit["sparse"] - fit["dense"]))
        assert with_fit["sparse"].factor == pytest.approx(without["sparse"].factor * gap)
        assert with_fit["sparse"].factor < without["sparse"].factor
        answer = query_shards(shards, replace(request, explain=True))
        assert valid(answer, "query-response.v2.json") == []
        assert answer["results"][0]["repo"] == "dense"
        shown = {r["repo"]: r["explain"]["shard"] for r in answer["results"]}
        assert shown["dense"]["likelihood"] == round(fit["dense"], 6)
        assert answer["explain"]["shardLambda"] == SHARD_LAMBDA
    finally:
        shards.close()


def test_a_shard_whose_one_chunk_holds_the_question_covers_it(tmp_path):
    """Coverage is the best single chunk's share of the query's terms (workspace idf): a
    repository where one function says "reverse", "attribute" and "status" covers the question,
    one where each word sits in another function covers a third of it. The counts come from one
    statement and equal FTS5's own count of each term."""
    together = {
        "status.c": "void status_reverse_attribute(void) { /* reverse attribute in status */ }\n",
        "other.c": "int other(void) { return 0; }\n",
    }
    apart = {
        "a.c": "void a(void) { /* reverse the list */ }\n",
        "b.c": "void b(void) { /* the attribute table */ }\n",
        "c.c": "void c(void) { /* print the status */ }\n",
    }
    shards = static_workspace(tmp_path, {"together": together, "apart": apart})
    try:
        request = QueryRequest(query="reverse attribute in status", mode="file", no_content=True)
        probes = probe_all(shards, request)
        terms = ("reverse", "attribute", "status")
        assert terms in probes["together"].held
        assert set(probes["apart"].held) == {("reverse",), ("attribute",), ("status",)}
        for name, engine in shards.engines.items():
            for term in terms:
                (count,) = engine.store.conn.execute(
                    "SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH ?", (f'"{term}"',)
                ).fetchone()
                assert probes[name].df[term] == count > 0
        cover = coverage(probes)
        assert cover["together"] == pytest.approx(1.0)
        assert 0.2 < cover["apart"] < 0.5
        factors = shard_factors(probes, beta=0.0, lam=0.0)
        assert factors["together"].factor == 1.0 > factors["apart"].factor
    finally:
        shards.close()


def test_the_term_sets_read_the_rarest_terms_within_their_budget(tmp_path, monkeypatch):
    """A long question's most common terms are left out of the sets chunks hold together once
    reading them would pass HELD_ROWS (term, chunk) rows; every count stays exact."""
    files = {f"m{i}.py": f"def value_{i}():\n    return 'value'\n" for i in range(6)}
    files["rare.py"] = "def quokka_value():\n    return 'quokka value'\n"
    index_repository(str(new_repo(tmp_path / "repo", files)), embed=False)
    engine = QueryEngine(cwd=str(tmp_path / "repo"))
    try:
        whole = shard_probe.term_counts(engine, "quokka value")
        assert whole.df == {"quokka": 1, "value": 7}
        assert ("quokka", "value") in whole.held and ("value",) in whole.held
        monkeypatch.setattr(shard_probe, "HELD_ROWS", 3)
        cut = shard_probe.term_counts(engine, "quokka value")
        assert cut.df == whole.df and cut.held == (("quokka",),)
    finally:
        engine.close()


def test_discover_across_a_workspace_spends_one_time_budget(tmp_path):
    # Each shard used to start its own clock: a pattern that backtracks without end cost every
    # shard the whole budget, one after another. The first shard spends it; the second starts
    # after it is spent and verifies no file.
    for name in ("one", "two"):
        index_repository(str(new_repo(tmp_path / name, {"a.txt": "a" * 38 + "!\n"})), embed=False)
    (tmp_path / "pix.toml").write_text('[[repo]]\npath = "one"\n\n[[repo]]\npath = "two"\n')
    request = json.dumps(
        {
            "queries": [{"id": "slow", "pattern": "(a|aa)+$", "mode": "regex"}],
            "timeBudgetMs": 300,
            "outputMode": "detailed",
        }
    )
    code, out, err = pix_json(
        "discover", "--input", "-", "--workspace", str(tmp_path), "--json", stdin=request
    )
    assert code == 0, err
    cells = {r["name"]: r["response"]["matrix"][0] for r in out["repos"]}
    assert cells["one"]["status"] == "timeout" and "matching a.txt" in cells["one"]["reason"]
    assert cells["two"]["status"] == "timeout" and "after 0 of 1" in cells["two"]["reason"]


def test_a_workspace_explain_adds_up_before_its_factor(tmp_path):
    """A merged score is the repository's own score x its factor; the prior is read from the
    own score (the review found it negative when a file's bonuses were larger than its
    score after the factor)."""
    parser = {
        "src/parser.py": "def parse(stream):\n    return build(stream)\n",
        "tests/test_parser.py": "def test_token_streams_become_trees():\n"
        "    assert parse(token_stream()) == tree()\n",
        "src/other.py": "def unrelated():\n    return 1\n",
    }
    other = {"lib/trees.py": "def grow_tree(seed):\n    return seed\n", "lib/x.py": "x = 1\n"}
    shards = static_workspace(tmp_path, {"a": parser, "b": other})
    try:
        request = QueryRequest(query="turn token streams into trees", mode="file",
                               no_content=True, explain=True)  # fmt: skip
        answer = query_shards(shards, request)
        assert valid(answer, "query-response.v2.json") == []
        assert any("tested" in r["explain"]["rank"] for r in answer["results"])
        assert any(r["explain"]["shard"]["factor"] < 1 for r in answer["results"])
        for r in answer["results"]:
            ex = r["explain"]
            bonuses = sum(
                ex["rank"].get(k, 0.0) for k in ("evidence", "outline", "tested", "titled")
            )
            own = ex["score"] / ex["shard"]["factor"]
            assert ex["prior"] >= 0
            assert ex["prior"] * ex["fused"] + bonuses == pytest.approx(own, rel=1e-3, abs=1e-5)
    finally:
        shards.close()
