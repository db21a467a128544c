"""`pix query` through its application function: pix.query.query(QueryRequest(...)).

Real git repositories, the real model, real SQLite. The corpus is built and indexed once per
module; every response is validated against schema/query-response.v2.json on the way.

Corpus (what each file is for):
- src/tables.py       a long unrelated first function, the Celsius converter last: its strongest
                      chunk for "convert celsius to fahrenheit" is NOT its first chunk
- src/climate_log.py  the long file: eight near-identical humidity functions; many mediocre
                      chunks for the Celsius query, many strong ones for the humidity query
- geo/alpha/shapes.py and geo/beta/shapes.py
                      identical content at two paths: the same chunk behind both, shown once
                      (alpha, first by path) with beta named in `copies`
- notes/runbook.txt   plain text cut into overlapping line windows
- src/mailer.py       an unrelated file
- src/empty.py, src/__init__.py   empty files: never a result
"""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path

import jsonschema
import pytest
from conftest import MAILER, TABLES, commit, git, new_repo, pix, where, write

from pix.errors import NotIndexedError, UsageError
from pix.index import index_repository
from pix.query import QueryRequest, query
from pix.retrieve.hits import FILE_PARTS
from pix.retrieve.rank import FILE_CHUNKS, FILE_DECAY
from pix.store import open_store

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schema"
RESPONSE_SCHEMA = json.loads((SCHEMA_DIR / "query-response.v2.json").read_text(encoding="utf-8"))
ERROR_SCHEMA = json.loads((SCHEMA_DIR / "error.v1.json").read_text(encoding="utf-8"))
MARKER = "[...]"
CHUNK_ONLY_KEYS = {"startLine", "endLine", "context", "kind", "symbol"}
FILE_RESULT_KEYS = {"file", "score", "rel", "citation", "text", "truncated", "role", "explain"}
FILE_RESULT_KEYS |= {"copies"}


def _humidity(i: int) -> str:
    return f'''def store_humidity_reading_{i}(station, samples):
    """Store humidity sensor readings number {i} for a weather station."""
    readings = [sample for sample in samples if sample is not None]
    if not readings:
        return None
    humidity = sum(readings) / len(readings)
    station.log("humidity sensor {i}", humidity, len(readings))
    station.history.append(("humidity", {i}, humidity))
    return humidity
'''


CLIMATE = "\n\n".join(_humidity(i) for i in range(1, 9))

SHAPES = '''def polygon_area(points):
    """Area of a simple polygon with the shoelace formula."""
    total = 0.0
    for (x1, y1), (x2, y2) in zip(points, points[1:] + points[:1]):
        total += x1 * y2 - x2 * y1
    return abs(total) / 2.0


def polygon_perimeter(points):
    """Sum of the edge lengths of a closed polygon."""
    from math import dist
    return sum(dist(a, b) for a, b in zip(points, points[1:] + points[:1]))
'''


# One long Markdown section: the prose chunker windows it with overlaps (plain text is cut
# into blank-line blocks instead, which never overlap).
RUNBOOK = "# Runbook\n\n" + "".join(
    f"step {i}: drain the message queue worker before rotating its log, then restart job {i}\n"
    for i in range(1, 41)
)

FILES = {
    "src/tables.py": TABLES,
    "src/climate_log.py": CLIMATE,
    "geo/alpha/shapes.py": SHAPES,
    "geo/beta/shapes.py": SHAPES,
    "notes/runbook.md": RUNBOOK,
    "src/mailer.py": MAILER,
    "src/empty.py": "",
    "src/__init__.py": "",
}
EMPTY_FILES = {"src/empty.py", "src/__init__.py"}

CELSIUS = "convert celsius to fahrenheit"
HUMIDITY = "humidity sensor readings"
POLYGON = "polygon area shoelace"
RUNBOOK_Q = "drain the message queue worker"
QUERIES = (CELSIUS, HUMIDITY, POLYGON, RUNBOOK_Q)


# -- fixtures and helpers ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, embedder) -> Path:
    repo = new_repo(tmp_path_factory.mktemp("query") / "corpus", FILES)
    report = index_repository(str(repo), embedder=embedder)
    assert report.embed_pending == 0
    return repo


@pytest.fixture(scope="module")
def ranked(corpus):
    """ranked(text, mode): the whole ranking (top=100) of a query, asked once per module
    (responses are deterministic; test_the_same_query_twice_gives_identical_json checks it)."""
    cache: dict[tuple[str, str, bool], dict] = {}

    def get(text: str, mode: str, explain: bool = False) -> dict:
        if (text, mode, explain) not in cache:
            cache[(text, mode, explain)] = ask(corpus, text, mode=mode, top=100, explain=explain)
        return copy.deepcopy(cache[(text, mode, explain)])

    return get


def validate(response: dict) -> dict:
    jsonschema.validate(response, RESPONSE_SCHEMA)
    return response


def ask(repo: Path, text: str, **options) -> dict:
    return validate(query(QueryRequest(text, **options), cwd=str(repo)))


def disk(repo: Path, rel: str) -> str:
    return (repo / rel).read_text(encoding="utf-8")


def disk_lines(repo: Path, rel: str, start: int, end: int) -> str:
    """Lines start..end (1-based, inclusive) joined as a chunk's text is: no final newline."""
    return "\n".join(disk(repo, rel).split("\n")[start - 1 : end])


def paths(response: dict) -> list[str]:
    return [where(r) for r in response["results"]]


def chunk_keys(response: dict) -> list[tuple]:
    return [(where(r), r["startLine"], r["endLine"], r["score"]) for r in response["results"]]


def own_score(result: dict) -> float:
    """A chunk's own score (`explain` asked): chunk mode scores each file's strongest chunk
    as its file (pix/retrieve/rank.py `carried`), and its explain's rank parts say by how much."""
    rank = result["explain"]["rank"]
    return result["score"] - sum(rank.get(k, 0.0) for k in FILE_PARTS)


def floor(chunks: dict) -> float:
    """The weakest candidate's own score (the whole ranking of a query, top=100, explained)."""
    return min(own_score(r) for r in chunks["results"])


def file_evidence(scores: list[float], floor: float) -> float:
    """A file's score from its chunks' scores (pix/retrieve/rank.py): the strongest, plus the
    next ones' scores above the weakest candidate's (`floor`), each times FILE_DECAY per
    place, at most FILE_CHUNKS chunks in all."""
    best, *rest = sorted(scores, reverse=True)[:FILE_CHUNKS]
    return best + sum((score - floor) * FILE_DECAY**i for i, score in enumerate(rest, 1))


# -- modes -------------------------------------------------------------------------------------


def test_chunk_mode_is_the_default(corpus):
    assert QueryRequest(CELSIUS).mode == "chunk"
    response = ask(corpus, CELSIUS, top=3)
    assert response["mode"] == "chunk"
    assert response["query"] == CELSIUS
    top = response["results"][0]
    assert (where(top), top["startLine"], top["endLine"]) == ("src/tables.py", 32, 37)
    assert top["symbol"] == "convert_celsius_to_fahrenheit"
    assert top["kind"] == "function"
    assert top["text"] == disk_lines(corpus, "src/tables.py", 32, 37)
    assert top["rel"] == 1.0
    assert len(response["results"]) == 3
    assert all({"startLine", "endLine"} <= r.keys() for r in response["results"])


@pytest.mark.parametrize("text", QUERIES)
def test_file_mode_returns_each_file_once_without_chunk_fields(corpus, ranked, text):
    chunks = ranked(text, "chunk")
    files = ranked(text, "file")
    assert files["mode"] == "file"
    found = paths(files)
    assert len(found) == len(set(found)), found
    # Every file that has a fused chunk is there, and nothing else.
    assert set(found) == set(paths(chunks))
    assert len(chunks["results"]) > len(found)  # several chunks per file were merged
    for result in files["results"]:
        assert not CHUNK_ONLY_KEYS & result.keys(), result.keys()
        assert result.keys() <= FILE_RESULT_KEYS
        assert result["text"] == disk(corpus, where(result))


@pytest.mark.parametrize("text", QUERIES)
def test_file_score_is_the_evidence_of_its_chunks(corpus, ranked, text):
    chunks = ranked(text, "chunk", explain=True)
    files = ranked(text, "file")
    by_path: dict[str, list[float]] = {}
    for r in chunks["results"]:
        by_path.setdefault(where(r), []).append(own_score(r))
    expected = {p: file_evidence(scores, floor(chunks)) for p, scores in by_path.items()}
    top = files["results"][0]["score"]
    for result in files["results"]:
        assert result["score"] == pytest.approx(expected[where(result)], abs=1e-5), where(result)
        assert result["score"] >= max(by_path[where(result)])  # never below its best chunk
        assert result["rel"] == pytest.approx(result["score"] / top, abs=1e-4)
    # Files ordered by that score (the path breaks ties, within rounding here).
    assert [r["score"] for r in files["results"]] == sorted(
        (r["score"] for r in files["results"]), reverse=True
    )
    # In chunk mode each file's strongest chunk carries the file's score, in file mode's order.
    carrying = [r for r in chunks["results"] if "evidence" in r["explain"]["rank"]]
    assert [where(r) for r in carrying] == paths(files)
    assert [r["score"] for r in carrying] == [r["score"] for r in files["results"]]


def test_a_file_whose_strongest_chunk_is_not_its_first(corpus, ranked):
    chunks = ranked(CELSIUS, "chunk", explain=True)
    tables = [r for r in chunks["results"] if where(r) == "src/tables.py"]
    first_chunk = min(tables, key=lambda r: r["startLine"])
    strongest = max(tables, key=own_score)
    # The fixture does what it claims: several chunks, the strongest is the last function.
    assert len(tables) >= 2
    assert first_chunk["startLine"] == 1
    assert (strongest["startLine"], strongest["endLine"]) == (32, 37)
    assert own_score(strongest) > own_score(first_chunk)

    files = ranked(CELSIUS, "file")
    result = files["results"][0]
    assert where(result) == "src/tables.py"
    assert result["score"] == pytest.approx(
        file_evidence([own_score(r) for r in tables], floor(chunks)), abs=1e-5
    )
    # the rest is decayed
    assert result["score"] < own_score(strongest) + own_score(first_chunk)
    assert result["text"] == TABLES


def test_top_counts_unique_files_and_is_applied_after_aggregation(corpus, ranked):
    chunks = ranked(HUMIDITY, "chunk")
    # The fixture: the first several chunks all come from one file.
    assert paths(chunks)[:4] == ["src/climate_log.py"] * 4
    distinct_in_order = list(dict.fromkeys(paths(chunks)))

    files = ask(corpus, HUMIDITY, mode="file", top=2)
    assert paths(files) == distinct_in_order[:2]
    assert paths(files)[0] == "src/climate_log.py"
    assert files["omitted"] == {"top": len(distinct_in_order) - 2, "budget": 0, "budgetFiles": []}

    one = ask(corpus, HUMIDITY, mode="file", top=1)
    assert paths(one) == ["src/climate_log.py"]
    assert one["omitted"]["top"] == len(distinct_in_order) - 1

    # Chunk mode counts chunks: top=2 gives two chunks of the same file.
    two_chunks = ask(corpus, HUMIDITY, top=2)
    assert paths(two_chunks) == ["src/climate_log.py", "src/climate_log.py"]
    assert two_chunks["omitted"]["top"] == len(chunks["results"]) - 2


@pytest.mark.parametrize("mode", ["chunk", "file"])
def test_identical_content_is_shown_once_at_the_first_path(corpus, ranked, mode):
    response = ask(corpus, POLYGON, mode=mode, top=2)
    alpha, second = response["results"]
    # The two copies tie on every score; the first by path stands for both.
    assert where(alpha) == "geo/alpha/shapes.py"
    assert alpha["copies"] == ["geo/beta/shapes.py"]
    assert "copies" not in second and where(second) != "geo/beta/shapes.py"
    assert "geo/beta/shapes.py" not in paths(ranked(POLYGON, mode))
    if mode == "file":
        assert alpha["text"] == SHAPES
    # Every tie in the whole list is broken by path.
    everything = ranked(POLYGON, mode)["results"]
    for a, b in itertools.pairwise(everything):
        assert a["score"] >= b["score"]
        if a["score"] == b["score"] and mode == "file":
            assert where(a) < where(b), (where(a), where(b))


# -- path filters ------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["chunk", "file"])
def test_an_ignored_file_never_comes_back_through_another_chunk(corpus, ranked, mode):
    # tables.py holds the strongest chunk and three weaker ones for this query.
    unfiltered = ranked(CELSIUS, mode)
    assert "src/tables.py" in paths(unfiltered)
    filtered = ask(corpus, CELSIUS, mode=mode, top=100, ignore_paths=["src/tables.py"])
    assert "src/tables.py" not in paths(filtered)
    assert paths(filtered)[0] == "src/climate_log.py"
    assert set(paths(filtered)) == set(paths(unfiltered)) - {"src/tables.py"}


@pytest.mark.parametrize("mode", ["chunk", "file"])
def test_ignoring_one_of_two_identical_files_keeps_the_other(corpus, mode):
    # Both paths share one blob and therefore the very same chunk rows.
    response = ask(corpus, POLYGON, mode=mode, top=100, ignore_paths=["geo/alpha/"])
    assert "geo/alpha/shapes.py" not in paths(response)
    assert paths(response)[0] == "geo/beta/shapes.py"


@pytest.mark.parametrize("mode", ["chunk", "file"])
def test_only_paths_restricts_before_top(corpus, mode):
    response = ask(corpus, HUMIDITY, mode=mode, top=2, only_paths=["geo/**"])
    # Each geo file has a single chunk, the same in both: one result in either mode.
    assert paths(response) == ["geo/alpha/shapes.py"]
    assert response["results"][0]["copies"] == ["geo/beta/shapes.py"]
    assert response["omitted"]["top"] == 0
    nothing = ask(corpus, HUMIDITY, mode=mode, only_paths=["no/such/folder/"])
    assert nothing["results"] == []
    listed = {"budgetFiles": []} if mode == "file" else {}
    assert nothing["omitted"] == {"top": 0, "budget": 0, **listed}
    # A glob that matches no file is said (a typo answered nothing, silently); one that
    # matches is not, nor is an ignore glob.
    assert nothing["warnings"] == [
        "only-path glob 'no/such/folder/' matches no file of the snapshot"
    ]
    assert not any("matches no file" in w for w in response["warnings"])
    both = ask(corpus, HUMIDITY, mode=mode, only_paths=["geo/**", "*.pyy"], ignore_paths=["x/"])
    assert paths(both) == ["geo/alpha/shapes.py"]
    assert both["warnings"] == ["only-path glob '*.pyy' matches no file of the snapshot"]
    # A glob given twice is one warning, and a long one is quoted short (audit: fifty copies
    # of a 300-character glob printed fifty 300-character lines).
    long = "z" * 300
    twice = ask(corpus, HUMIDITY, mode=mode, only_paths=["*.pyy", "*.pyy", long, long])
    assert twice["warnings"][0] == "only-path glob '*.pyy' matches no file of the snapshot"
    assert len(twice["warnings"]) == 2 and "(300 characters)" in twice["warnings"][1]
    assert len(twice["warnings"][1]) < 150


def test_only_and_ignore_combine(corpus):
    response = ask(
        corpus,
        CELSIUS,
        mode="file",
        top=100,
        only_paths=["*.py"],
        ignore_paths=["geo/", "src/climate_log.py"],
    )
    assert paths(response) == ["src/tables.py", "src/mailer.py"]


# -- content -----------------------------------------------------------------------------------


def test_file_mode_returns_the_complete_file_from_the_index(corpus, ranked):
    response = ranked(CELSIUS, "file")
    by_path = {where(r): r for r in response["results"]}
    # The strongest chunk is lines 32-37; the whole file comes back, lines 1-31 included.
    assert by_path["src/tables.py"]["text"] == TABLES
    assert by_path["src/tables.py"]["text"].startswith("def parse_csv_rows(")
    assert by_path["src/climate_log.py"]["text"] == CLIMATE
    for path, result in by_path.items():
        assert result["text"] == disk(corpus, path)
        assert "truncated" not in result


def test_overlapping_window_chunks_are_not_stitched(corpus, ranked):
    chunks = ranked(RUNBOOK_Q, "chunk")
    windows = sorted(
        (r["startLine"], r["endLine"]) for r in chunks["results"] if where(r) == "notes/runbook.md"
    )
    assert len(windows) >= 2
    assert any(b[0] <= a[1] for a, b in itertools.pairwise(windows)), windows  # they overlap
    files = ranked(RUNBOOK_Q, "file")
    assert paths(files).count("notes/runbook.md") == 1
    runbook = next(r for r in files["results"] if where(r) == "notes/runbook.md")
    assert runbook["text"] == RUNBOOK


@pytest.mark.parametrize("mode", ["chunk", "file"])
def test_no_content_omits_text_and_keeps_ranking(corpus, mode):
    full = ask(corpus, CELSIUS, mode=mode, top=5, context_lines=2)
    bare = ask(corpus, CELSIUS, mode=mode, top=5, context_lines=2, no_content=True)
    assert [(where(r), r["score"]) for r in bare["results"]] == [
        (where(r), r["score"]) for r in full["results"]
    ]
    assert bare["omitted"] == full["omitted"]
    for result in bare["results"]:
        assert "text" not in result
        assert "context" not in result
        assert "truncated" not in result
    stripped = [
        {k: v for k, v in r.items() if k not in ("text", "context")} for r in full["results"]
    ]
    assert bare["results"] == stripped


def test_context_lines_add_the_surrounding_lines_in_chunk_mode(corpus):
    plain = ask(corpus, "count distinct values per column", top=1)
    hit = plain["results"][0]
    assert (where(hit), hit["symbol"]) == ("src/tables.py", "summarize_columns")
    assert "context" not in hit
    start, end = hit["startLine"], hit["endLine"]
    assert start > 3 and end < 34  # a chunk in the middle of the file

    response = ask(corpus, "count distinct values per column", top=1, context_lines=3)
    result = response["results"][0]
    lines = TABLES.splitlines(keepends=True)
    assert result["context"] == {
        "before": "".join(lines[start - 4 : start - 1]),
        "after": "".join(lines[end : end + 3]),
    }
    assert result["context"]["before"].startswith("    return rows\n")
    assert result["context"]["after"].startswith("def render_table(")
    assert result["text"] == hit["text"]
    assert result["startLine"] == start and result["endLine"] == end


def test_context_lines_have_no_effect_in_file_mode(corpus):
    without = ask(corpus, CELSIUS, mode="file", top=3)
    with_context = ask(corpus, CELSIUS, mode="file", top=3, context_lines=5)
    assert with_context == without
    assert all("context" not in r for r in with_context["results"])


# -- the character budget ----------------------------------------------------------------------


def _rendered_size(result: dict) -> int:
    context = result.get("context") or {}
    return sum(
        len(part)
        for part in (result.get("text", ""), context.get("before", ""), context.get("after", ""))
    )


@pytest.mark.parametrize(
    ("mode", "text", "options"),
    [
        ("chunk", HUMIDITY, {"context_lines": 2}),
        ("file", HUMIDITY, {}),
        ("file", CELSIUS, {"context_lines": 4}),
    ],
)
def test_budget_shortens_only_the_last_emitted_result(corpus, mode, text, options):
    full = ask(corpus, text, mode=mode, top=4, **options)
    first, second = full["results"][:2]
    assert len(full["results"]) == 4
    assert len(second["text"]) >= 300  # room for the cut to be visible
    assert all(MARKER not in r["text"] for r in full["results"])
    # The first result fits with room to spare for its header; the second does not.
    budget = _rendered_size(first) + 120 + len(second["text"]) // 2

    response = ask(corpus, text, mode=mode, top=4, max_characters=budget, **options)
    emitted = response["results"]
    assert len(emitted) == 2
    assert emitted[0] == first  # complete: no marker, no flag, context kept
    last = emitted[1]
    assert last["truncated"] is True
    assert last["text"].endswith(MARKER)
    kept = last["text"][: -len(MARKER)]
    assert second["text"].startswith(kept)
    assert 0 < len(kept) < len(second["text"])
    assert "context" not in last
    assert {k: v for k, v in last.items() if k not in ("text", "truncated")} == {
        k: v for k, v in second.items() if k not in ("text", "context")
    }
    # A file left out is named with its copies (geo/alpha/shapes.py's is geo/beta/shapes.py).
    left = [p for r in full["results"][2:] for p in (where(r), *r.get("copies", []))]
    cut = {"budgetFiles": left} if mode == "file" else {}
    assert response["omitted"] == {"top": full["omitted"]["top"], "budget": 2, **cut}
    assert sum(_rendered_size(r) for r in emitted) <= budget


@pytest.mark.parametrize("mode", ["chunk", "file"])
def test_a_budget_that_holds_everything_changes_nothing(corpus, mode):
    full = ask(corpus, CELSIUS, mode=mode, top=3)
    roomy = ask(corpus, CELSIUS, mode=mode, top=3, max_characters=1_000_000)
    assert roomy == full
    assert all("truncated" not in r for r in roomy["results"])


@pytest.mark.parametrize("mode", ["chunk", "file"])
def test_a_budget_too_small_for_anything(corpus, mode):
    response = ask(corpus, CELSIUS, mode=mode, top=3, max_characters=1)
    assert response["results"] == []
    assert response["omitted"]["budget"] == 3
    # A JSON reader (an agent over MCP) has no footer line: the warning says it (audit).
    assert any("cut every result" in w for w in response["warnings"])


def test_a_large_file_cut_to_a_small_budget_is_the_only_result(corpus):
    response = ask(corpus, HUMIDITY, mode="file", top=3, max_characters=400)
    assert paths(response) == ["src/climate_log.py"]
    result = response["results"][0]
    assert result["truncated"] is True
    assert result["text"].endswith(MARKER)
    assert CLIMATE.startswith(result["text"][: -len(MARKER)])
    assert len(result["text"]) < 400
    assert response["omitted"]["budget"] == 2


@pytest.mark.parametrize("mode", ["chunk", "file"])
def test_budget_without_content_drops_whole_results_and_never_flags_them(corpus, mode):
    full = ask(corpus, CELSIUS, mode=mode, top=4, no_content=True)
    # Room for about one header line: chunk headers carry lines and symbol, file headers do not.
    budget = 150 if mode == "chunk" else 60
    response = ask(corpus, CELSIUS, mode=mode, top=4, no_content=True, max_characters=budget)
    emitted = response["results"]
    assert 1 <= len(emitted) < 4
    assert emitted == full["results"][: len(emitted)]
    assert all("truncated" not in r and "text" not in r for r in emitted)
    assert response["omitted"]["budget"] == 4 - len(emitted)


# -- determinism and explain -------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["chunk", "file"])
def test_the_same_query_twice_gives_identical_json(corpus, mode):
    once = ask(corpus, HUMIDITY, mode=mode, top=10, explain=True, context_lines=1)
    twice = ask(corpus, HUMIDITY, mode=mode, top=10, explain=True, context_lines=1)
    assert json.dumps(once, sort_keys=True) == json.dumps(twice, sort_keys=True)


@pytest.mark.parametrize("mode", ["chunk", "file"])
@pytest.mark.parametrize("fusion", ["rrf", "dbsf"])
def test_explain_reports_channels_and_never_changes_ranking(corpus, ranked, mode, fusion):
    plain = ask(corpus, CELSIUS, mode=mode, top=100, fusion=fusion)
    explained = ask(corpus, CELSIUS, mode=mode, top=100, fusion=fusion, explain=True)
    assert "explain" not in plain
    assert all("explain" not in r for r in plain["results"])
    assert [{k: v for k, v in r.items() if k != "explain"} for r in explained["results"]] == (
        plain["results"]
    )
    assert explained["omitted"] == plain["omitted"]

    summary = explained["explain"]
    assert summary["fusion"] == fusion
    assert set(summary["weights"]) == {
        "dense",
        "static",
        "bm25",
        "ident",
        "path",
        "component",
        "log",
    }
    # Candidates count every chunk at every path, the copies folded into a result too.
    chunks = ranked(CELSIUS, "chunk")["results"]
    assert summary["candidates"] == sum(1 + len(r.get("copies", ())) for r in chunks)
    if fusion == "rrf":
        assert isinstance(summary["rrfK"], int) and summary["rrfK"] > 0
    else:
        assert summary["rrfK"] is None

    first: dict[str, dict] = {}  # each path's first chunk: its strongest
    for result in explained["results"]:
        first.setdefault(where(result), result)
    for result in explained["results"]:
        info = result["explain"]
        channels = info["channels"]
        assert channels, where(result)
        assert info["score"] == result["score"]
        for name, channel in channels.items():
            assert channel["rank"] >= 1
            assert channel["weight"] == summary["weights"][name]
            if fusion == "rrf":
                expected = channel["weight"] / (summary["rrfK"] + channel["rank"])
                assert channel["contribution"] == pytest.approx(expected, abs=2e-6)
        total = sum(channel["contribution"] for channel in channels.values())
        rank = info["rank"]
        assert total + rank["standout"] == pytest.approx(info["fused"], abs=1e-5)
        if fusion == "dbsf":
            assert rank["standout"] == 0.0  # DBSF fuses scores already
        chunk_score = info["score"] - rank.get("evidence", 0.0)
        assert chunk_score == pytest.approx(info["fused"] * info["prior"], abs=1e-5)
        # every file has its evidence; in chunk mode its strongest chunk carries it
        assert ("evidence" in rank) is (mode == "file" or result is first[where(result)])
        assert info["role"] == ("docs" if where(result).endswith((".txt", ".md")) else "source")


# -- adversarial fixtures ----------------------------------------------------------------------


def test_one_strong_chunk_beats_several_mediocre_chunks(corpus, ranked):
    chunks = ranked(CELSIUS, "chunk", explain=True)
    strong = max(chunks["results"], key=own_score)
    assert where(strong) == "src/tables.py"
    climate = [r for r in chunks["results"] if where(r) == "src/climate_log.py"]
    assert len(climate) >= 5
    # A summing (or counting) aggregator would put the long file first.
    assert sum(own_score(r) for r in climate) > own_score(strong)

    files = ask(corpus, CELSIUS, mode="file", top=2)
    assert paths(files) == ["src/tables.py", "src/climate_log.py"]
    tables = [own_score(r) for r in chunks["results"] if where(r) == "src/tables.py"]
    assert files["results"][0]["score"] == pytest.approx(
        file_evidence(tables, floor(chunks)), abs=1e-5
    )
    assert files["results"][1]["score"] == pytest.approx(
        file_evidence([own_score(r) for r in climate], floor(chunks)), abs=1e-5
    )


@pytest.mark.parametrize("mode", ["chunk", "file"])
@pytest.mark.parametrize("text", ["empty", "init", "src empty init", CELSIUS])
def test_empty_files_are_never_returned(corpus, ranked, mode, text):
    response = ranked(text, mode)
    assert not EMPTY_FILES & set(paths(response))
    assert response["results"]  # the query does find the other files


def test_a_long_file_appears_once_with_its_whole_text(corpus, ranked):
    chunks = ranked(HUMIDITY, "chunk", explain=True)
    climate = [r for r in chunks["results"] if where(r) == "src/climate_log.py"]
    assert len(climate) == 8
    files = ranked(HUMIDITY, "file")
    assert paths(files).count("src/climate_log.py") == 1
    result = files["results"][0]
    assert where(result) == "src/climate_log.py"
    assert result["text"] == CLIMATE
    assert result["score"] == pytest.approx(
        file_evidence([own_score(r) for r in climate], floor(chunks)), abs=1e-5
    )


# -- top ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("top", "used", "count"), [(0, 1, 1), (-3, 1, 1), (101, 100, None)])
@pytest.mark.parametrize("mode", ["chunk", "file"])
def test_top_out_of_range_is_clamped_with_a_warning(corpus, ranked, mode, top, used, count):
    response = ask(corpus, CELSIUS, mode=mode, top=top, no_content=True)
    warnings = [w for w in response["warnings"] if "top" in w]
    assert len(warnings) == 1, response["warnings"]
    assert str(top) in warnings[0] and str(used) in warnings[0]
    everything = ranked(CELSIUS, mode)
    assert everything["warnings"] == []
    expected = [{k: v for k, v in r.items() if k != "text"} for r in everything["results"][:used]]
    assert response["results"] == expected
    if count is not None:
        assert len(response["results"]) == count


# -- snapshots: --at, refused refs, stale index --------------------------------------------------

OLD = '''def retry_delay(attempt):
    """Seconds to wait before retrying a failed upload: linear backoff."""
    return 5 * attempt
'''
NEW = '''def retry_delay(attempt):
    """Seconds to wait before retrying a failed upload: exponential backoff with a cap."""
    return min(2 ** attempt, 300)
'''
NEWEST = '''def retry_delay(attempt):
    """Seconds to wait before retrying a failed upload: a fixed pause."""
    return 30
'''


@pytest.fixture(scope="module")
def history(tmp_path_factory, embedder) -> dict:
    """c1 (indexed with --at), c2 (the indexed work tree), c3 (never indexed, checked out)."""
    repo = new_repo(
        tmp_path_factory.mktemp("query") / "history",
        {"upload/retry.py": OLD, "README.md": "# uploader\n\nUploads files.\n"},
    )
    c1 = git(repo, "rev-parse", "HEAD")
    write(repo, {"upload/retry.py": NEW})
    c2 = commit(repo, "exponential backoff")
    index_repository(str(repo), embedder=embedder)
    index_repository(str(repo), at=c1, embedder=embedder)
    write(repo, {"upload/retry.py": NEWEST})
    c3 = commit(repo, "fixed pause")
    return {"repo": repo, "c1": c1, "c2": c2, "c3": c3}


@pytest.mark.parametrize("mode", ["chunk", "file"])
def test_at_an_older_indexed_commit_reads_that_commit(history, mode):
    repo, c1 = history["repo"], history["c1"]
    response = ask(repo, "retry delay backoff", mode=mode, at=c1, top=1)
    result = response["results"][0]
    assert where(result) == "upload/retry.py"
    expected = OLD if mode == "file" else OLD.rstrip("\n")
    assert result["text"] == expected
    assert response["snapshot"]["commit"] == c1
    assert response["snapshot"]["selection"] == "exact"
    assert response["snapshot"]["requestedRef"] == c1
    assert result["citation"]["commit"] == c1
    assert result["citation"]["blob"] == git(repo, "rev-parse", f"{c1}:upload/retry.py")
    assert response["warnings"] == []  # a commit snapshot is never stale


def test_at_a_unique_prefix_and_the_newest_snapshot(history):
    repo, c1, c2 = history["repo"], history["c1"], history["c2"]
    prefixed = ask(repo, "retry delay backoff", mode="file", at=c1[:10], top=1)
    assert prefixed["results"][0]["text"] == OLD
    assert prefixed["snapshot"]["requestedRef"] == c1[:10]
    assert prefixed["snapshot"]["commit"] == c1

    newest = ask(repo, "retry delay backoff", mode="file", top=1)
    assert newest["results"][0]["text"] == NEW
    assert newest["snapshot"]["commit"] == c2
    assert newest["snapshot"]["selection"] == "newest"
    assert newest["snapshot"]["requestedRef"] is None

    exact = ask(repo, "retry delay backoff", mode="file", at=c2, top=1)
    assert exact["results"][0]["text"] == NEW
    assert exact["snapshot"]["selection"] == "exact"


@pytest.mark.parametrize("at", ["c3", "HEAD"])
def test_an_unindexed_commit_names_the_nearest_indexed_ancestor(history, at):
    repo, c2, c3 = history["repo"], history["c2"], history["c3"]
    ref = c3 if at == "c3" else "HEAD"
    with pytest.raises(NotIndexedError) as caught:
        query(QueryRequest("retry delay", at=ref), cwd=str(repo))
    error = caught.value
    assert error.exit_code == 3
    assert c3 in error.message
    assert error.hint and c2 in error.hint
    assert history["c1"] not in error.hint  # the nearest one, not any one


def test_an_unindexed_commit_on_the_command_line(history):
    repo, c2, c3 = history["repo"], history["c2"], history["c3"]
    code, out, err = pix("query", "retry delay", "--at", c3, "--json", cwd=repo)
    assert code == 3
    envelope = json.loads(out)
    jsonschema.validate(envelope, ERROR_SCHEMA)
    assert envelope["error"]["code"] == "not_indexed"
    assert c2 in envelope["error"]["hint"]
    assert "Traceback" not in err


def test_a_database_with_no_snapshot_yet_says_a_first_index_may_be_running(make_repo):
    """A query while the first `pix index` still reads the files said only "run pix index"
    (audit): that database has its tables and no snapshot yet."""
    repo = make_repo({"app/greet.py": "def greet(name):\n    return name\n"})
    open_store(repo / ".pix.db", create=True).close()  # what a first index makes first
    with pytest.raises(NotIndexedError) as caught:
        query(QueryRequest("greet"), cwd=str(repo))
    assert caught.value.exit_code == 3
    assert "if one is running" in caught.value.hint


def test_a_commit_known_only_by_a_dirty_work_tree_says_why_it_is_not_indexed(make_repo, index):
    """`pix status` lists the work tree's snapshot at HEAD, so "HEAD is not indexed" read as
    wrong (audit): that snapshot holds uncommitted changes, not the commit's content."""
    repo = make_repo({"app/greet.py": 'def greet(name):\n    return "hello " + name\n'})
    write(repo, {"app/greet.py": 'def greet(name):\n    return "hi " + name\n'})
    index(repo, embed=False)
    with pytest.raises(NotIndexedError) as caught:
        query(QueryRequest("greet", at="HEAD"), cwd=str(repo))
    assert "uncommitted changes" in caught.value.message
    assert "pix index --at HEAD" in caught.value.hint


@pytest.mark.parametrize("ref", ["main", "HEAD~1", "HEAD^", "main@{0}", "v1.0", "c1..c2"])
def test_branch_names_and_revision_expressions_are_refused(history, ref):
    with pytest.raises(UsageError) as caught:
        query(QueryRequest("retry delay", at=ref), cwd=str(history["repo"]))
    assert caught.value.exit_code == 2
    assert ref in caught.value.message


def test_stale_index_warns_and_refresh_picks_the_edit_up(make_repo, index):
    repo = make_repo(
        {
            "app/greet.py": 'def greet(name):\n    return "hello " + name\n',
            "app/util.py": "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n",
        }
    )
    index(repo)
    fresh = ask(repo, "greet", mode="file", top=1)
    assert fresh["warnings"] == []
    assert where(fresh["results"][0]) == "app/greet.py"

    edited = (
        'def greet(name):\n    return "hello " + name\n\n\n'
        'def farewell(name):\n    """Say goodbye politely."""\n'
        '    return "goodbye " + name\n'
    )
    write(repo, {"app/greet.py": edited})
    stale = ask(repo, "greet", mode="file", top=1)
    assert len(stale["warnings"]) == 1
    assert "app/greet.py" in stale["warnings"][0]
    assert "app/util.py" not in stale["warnings"][0]
    assert stale["results"][0]["text"] == 'def greet(name):\n    return "hello " + name\n'
    assert "refreshed" not in stale

    refreshed = ask(repo, "greet", mode="file", top=1, refresh=True)
    assert refreshed["warnings"] == []
    assert refreshed["refreshed"]["files"] == 2
    assert refreshed["results"][0]["text"] == edited
    assert refreshed["snapshot"]["dirty"] is True

    after = ask(repo, "say goodbye politely", top=1)
    assert after["warnings"] == []
    assert where(after["results"][0]) == "app/greet.py"
    assert "def farewell(name):" in after["results"][0]["text"]
