"""Definitions (pix.retrieve.define): a name the query spells out puts the chunks that define
it first when the query is only that name (and words asking for a definition), and adds
evidence to them when the name sits inside a longer question.

A real git repository in a temp folder, indexed with the real model; real SQLite and FTS5.
The corpus is built so that without the step the defining file does NOT rank first in file
mode: src/cache.py uses `CacheKey` in five functions (BM25, meaning and file evidence favour
it) while src/cache_key.py only defines it. Each ranking test checks the ranking without the
step too, which is what makes it able to fail.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from conftest import new_repo, where

from pix.index import index_repository
from pix.output.render import render_response
from pix.query import QueryRequest, query
from pix.retrieve import define
from pix.retrieve.route import CHANNELS

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schema"
RESPONSE = jsonschema.Draft202012Validator(
    json.loads((SCHEMA_DIR / "query-response.v2.json").read_text(encoding="utf-8"))
)
WITHOUT = [*CHANNELS, "phrase"]  # every channel and step but the definition step

CACHE_KEY = '''class CacheKey:
    """Identifies one entry."""

    def __init__(self, parts):
        self.parts = tuple(parts)
'''

CACHE = '''from src.cache_key import CacheKey


def cache_lookup(cache, recipe):
    """Look a recipe up in the cache by its CacheKey; a missing cache key returns None."""
    return cache.get(CacheKey([recipe.name, recipe.body]))


def cache_store(cache, recipe, value):
    """Store a value in the cache under the recipe's CacheKey (the cache key of its body)."""
    cache[CacheKey([recipe.name, recipe.body])] = value


def cache_evict(cache, recipe):
    """Evict a recipe's cache entry: drop its CacheKey from the cache."""
    cache.pop(CacheKey([recipe.name, recipe.body]), None)


def cache_keys(cache):
    """Every CacheKey in the cache, sorted by the cache key parts."""
    return sorted(cache, key=lambda key: key.parts)


def cache_size(cache):
    """How many CacheKey entries the cache holds."""
    return len(cache)
'''

DOCS = """# Caching

A `CacheKey` identifies a cached recipe; the CacheKey class lives in the cache module.
"""

# A declared constant (pix.ingest.declarations): the definition step finds where it is
# declared; the identifier channel matches definitions only.
SETTINGS = (
    '"""Settings: colours of the terminal theme, paths of the caches, log levels."""\n\n'
    + "".join(f"THEME_COLOUR_{i} = {i}\n" for i in range(12))
    + "DEFAULT_TIMEOUT = 30\nRETRIES = 3\n"
)
CLIENT = "from src.settings import DEFAULT_TIMEOUT\n" + "".join(
    f'''

def connect_{i}(host, timeout=DEFAULT_TIMEOUT):
    """Connect within the default timeout (DEFAULT_TIMEOUT seconds) unless one is given."""
    return host.open(timeout or DEFAULT_TIMEOUT)
'''
    for i in range(4)
)

# `resolve` is defined by two classes in one file, which also calls it, and by a third class in
# a file of its own: the qualifier decides which definition a qualified name means.
RESOURCES = """class FileResource:
    def resolve(self, path):
        \"\"\"Resolve a path against the folder; resolve links first.\"\"\"
        return self.root.resolve(path)


class ClasspathResource:
    def resolve(self, path):
        \"\"\"Resolve a path on the class path; resolve it as a resource name.\"\"\"
        return self.loader.resolve(path)
"""
RESOLVER = """class DependencyResolver:
    def resolve(self, component):
        \"\"\"The scripts a component needs, in load order.\"\"\"
        return sorted(self.graph[component])
"""

# Small definitions are merged into one chunk named for the first: `frobnicate_gizmo` is
# defined on line 17 of a chunk that starts with `process_batch_1` on line 1, and
# `paint_widget`'s name is on line 29, below its decorator.
BATCHES = (
    "".join(
        f"def process_batch_{i}(items):\n    total = 0\n    for item in items:\n"
        f"        total += item.weight * {i}\n        if total > 100:\n            break\n"
        "    return total\n\n"
        + ("def frobnicate_gizmo(g):\n    return g.spin()\n\n" if i == 2 else "")
        for i in (1, 2, 3)
    )
    + "@register\ndef paint_widget(w):\n    return w.paint()\n"
)

# A class too long for one chunk is cut into pieces; the piece declaring MAX_RETRIES does not
# show the class, and read alone the field is a local variable: the file's text places it.
WORKER = (
    "public class Worker {\n"
    + "".join(
        f"  /** Step {i} of the job, run once per attempt until it succeeds. */\n"
        f"  public int step{i}(Job job) {{\n    return job.run({i}) + job.attempts();\n  }}\n\n"
        for i in range(8)
    )
    + "  static final int MAX_RETRIES = 5;\n\n"
    + "".join(
        f"  public int later{i}(Job job) {{\n    return job.retry({i}, MAX_RETRIES);\n  }}\n\n"
        for i in range(8)
    )
    + "}\n"
)

# `run` is defined in more than MAX_FILES files: a common name says nothing.
FILES = {
    "src/resources.py": RESOURCES,
    "src/dependency_resolver.py": RESOLVER,
    "src/cache_key.py": CACHE_KEY,
    "src/cache.py": CACHE,
    "src/settings.py": SETTINGS,
    "src/client.py": CLIENT,
    "src/batches.py": BATCHES,
    "src/Worker.java": WORKER,
    "docs/caching.md": DOCS,
    **{
        f"src/step_{i}.py": f"def run(job):\n    return job.step_{i}()\n"
        for i in range(define.MAX_FILES + 1)
    },
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory, embedder) -> Path:
    root = new_repo(tmp_path_factory.mktemp("define") / "repo", FILES)
    index_repository(str(root), embedder=embedder)
    return root


def ask(repo: Path, text: str, **options) -> dict:
    response = query(QueryRequest(text, **{"top": 10, "explain": True, **options}), cwd=str(repo))
    errors = [e.message for e in RESPONSE.iter_errors(response)]
    assert not errors, errors
    return response


def files(response: dict) -> list[str]:
    return [where(r) for r in response["results"]]


# -- what counts as a name ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("CacheKey", ["CacheKey"]),
        ("Router", ["Router"]),  # the whole query: one identifier
        ("parse_git_path", ["parse_git_path"]),
        ("where is parse_git_path implemented", ["parse_git_path"]),
        ("the CacheKey struct", ["CacheKey"]),
        ("useState hook implementation", ["useState"]),
        ("CHOOSER_CANCELLED_EXIT_STATUS", ["CHOOSER_CANCELLED_EXIT_STATUS"]),
        ("Obj:stage_hunks", ["stage_hunks"]),  # a qualifier says where, the last part what
        ("Sidekiq::Client", ["Client"]),
        ("find the definition of the Oban.PerformError exception", ["PerformError"]),
        ("ExitCode.validationFailure", ["validationFailure"]),
        ("how is `jobs` filled", ["jobs"]),  # backticks make any identifier a name
        ("how does the Router pick a route", []),  # an English word in a sentence is no name
        ("how are retries delayed", []),
        ("where is config.toml read", []),  # a file, not a member
        ("ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 leaked", []),  # a secret: never a name
        ("", []),
    ],
)
def test_names_of_a_query(text: str, names: list[str]) -> None:
    assert define.names_of(text) == names


@pytest.mark.parametrize(
    ("text", "qualifiers"),
    [
        ("VueDependencyResolver.resolve", {"resolve": "VueDependencyResolver"}),
        ("Sidekiq::Client#push", {"push": "Client"}),
        ("why does Obj:stage_hunks skip staged lines", {"stage_hunks": "Obj"}),
        ("where is parse_git_path implemented", {}),
    ],
)
def test_qualifiers_of_a_query(text: str, qualifiers: dict[str, str]) -> None:
    assert define.qualifiers_of(text) == qualifiers


def test_a_query_of_names_and_definition_words_only() -> None:
    assert define.only_names("where is CacheKey defined?", ["CacheKey"])
    assert define.only_names("the CacheKey struct", ["CacheKey"])
    assert define.only_names("Sidekiq::Client", ["Client"])  # the qualifier goes with the name
    assert not define.only_names("how does CacheKey hash its parts", ["CacheKey"])


# -- ranking -----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["CacheKey", "where is CacheKey defined", "find CacheKey"])
def test_a_named_definition_ranks_its_file_first_which_it_does_not_without_the_step(repo, text):
    without = ask(repo, text, mode="file", channels=WITHOUT)
    assert files(without)[0] == "src/cache.py"  # the corpus makes the test able to fail
    response = ask(repo, text, mode="file")
    assert files(response)[0] == "src/cache_key.py"
    assert "docs/caching.md" not in files(response)[:2]  # docs are never lifted
    assert response["explain"]["definitions"] == [
        {"name": "CacheKey", "status": "matched", "files": 1}
    ]
    lifted = response["results"][0]["explain"]["channels"]["definition"]
    assert lifted["names"] == ["CacheKey"] and lifted["rank"] == 1
    assert lifted["weight"] == pytest.approx(response["explain"]["weights"]["definition"])
    assert lifted["weight"] > define.EMBEDDED  # above everything: the query is only the name


def test_in_chunk_mode_the_defining_chunk_comes_first(repo):
    top = ask(repo, "CacheKey")["results"][0]
    assert (top["path"], top["symbol"]) == ("src/cache_key.py", "CacheKey")


def test_a_result_says_on_which_line_its_chunk_defines_the_name(repo):
    lines = BATCHES.split("\n")
    assert lines[16] == "def frobnicate_gizmo(g):" and lines[28] == "def paint_widget(w):"
    top = ask(repo, "frobnicate_gizmo")["results"][0]
    # the chunk is named for its first definition and starts there: only `definitions` says
    # where the name is
    assert (top["path"], top["startLine"], top["symbol"]) == (
        "src/batches.py",
        1,
        "process_batch_1",
    )
    assert top["definitions"] == [{"name": "frobnicate_gizmo", "line": 17}]
    both = ask(repo, "paint_widget frobnicate_gizmo")["results"][0]
    assert both["definitions"] == [
        {"name": "frobnicate_gizmo", "line": 17},
        {"name": "paint_widget", "line": 29},
    ]
    # a declared constant is placed too; a chunk the step did not lift names none
    top = ask(repo, "DEFAULT_TIMEOUT")["results"]
    assert top[0]["path"] == "src/settings.py"
    assert top[0]["definitions"] == [{"name": "DEFAULT_TIMEOUT", "line": 15}]
    assert SETTINGS.split("\n")[14].startswith("DEFAULT_TIMEOUT")
    assert all("definitions" not in r for r in top[1:])
    # a declaration in a piece of a long class is placed in the file's text
    line = WORKER.split("\n").index("  static final int MAX_RETRIES = 5;") + 1
    top = ask(repo, "MAX_RETRIES")["results"][0]
    assert top["path"] == "src/Worker.java" and top["startLine"] < line <= top["endLine"]
    assert "class Worker" not in top["text"]
    assert top["definitions"] == [{"name": "MAX_RETRIES", "line": line}]
    # without the step, nothing is placed
    alone = ask(repo, "frobnicate_gizmo", channels=WITHOUT)["results"]
    assert all("definitions" not in r for r in alone)


def test_a_file_too_large_to_parse_again_leaves_a_declaration_unplaced(repo, monkeypatch):
    monkeypatch.setattr(define, "PLACE_FILE_CHARS", len(WORKER) - 1)
    top = ask(repo, "MAX_RETRIES")["results"][0]
    assert top["path"] == "src/Worker.java" and "definitions" not in top
    monkeypatch.setattr(define, "PLACE_FILE_CHARS", len(WORKER))
    assert "definitions" in ask(repo, "MAX_RETRIES")["results"][0]


def test_the_text_header_names_the_definition_as_path_and_line(repo):
    text = render_response(ask(repo, "frobnicate_gizmo"))
    first = text.split("\n", 1)[0]
    assert first.startswith("── src/batches.py:1-")
    assert first.endswith(
        "function process_batch_1 (defines frobnicate_gizmo at src/batches.py:17)"
    )


def test_a_name_inside_a_longer_question_adds_evidence_not_a_verdict(repo):
    text = "how does CacheKey hash the parts of a recipe"
    response = ask(repo, text, mode="file")
    assert response["explain"]["weights"]["definition"] == define.EMBEDDED
    by_file = {where(r): r["explain"]["channels"] for r in response["results"]}
    assert by_file["src/cache_key.py"]["definition"]["contribution"] == pytest.approx(
        define.EMBEDDED / 61, abs=1e-6
    )
    assert "definition" not in by_file["src/cache.py"]


def test_a_name_defined_in_many_files_is_common_and_changes_nothing(repo):
    response = ask(repo, "run", mode="file")
    assert response["explain"]["definitions"] == [
        {"name": "run", "status": "common", "files": define.MAX_FILES + 1}
    ]
    assert "definition" not in response["explain"]["weights"]
    assert all("definition" not in r["explain"]["channels"] for r in response["results"])
    assert response["results"] == ask(repo, "run", mode="file", channels=WITHOUT)["results"]


def test_a_qualifier_picks_the_definition_it_names(repo):
    # `resolve` alone: both files' definitions are lifted, and the file with two wins.
    assert files(ask(repo, "resolve", mode="file"))[:2] == [
        "src/resources.py",
        "src/dependency_resolver.py",
    ]
    for text in ("DependencyResolver.resolve", "where is DependencyResolver.resolve defined"):
        response = ask(repo, text, mode="file")
        assert files(response)[0] == "src/dependency_resolver.py"
        assert response["explain"]["definitions"] == [
            {"name": "resolve", "status": "matched", "files": 1}
        ]
        assert "definition" not in response["results"][1]["explain"]["channels"]


def test_a_qualifier_may_name_the_file_and_make_a_common_name_specific(repo):
    response = ask(repo, "step_2.run", mode="file")
    assert response["explain"]["definitions"] == [{"name": "run", "status": "matched", "files": 1}]
    assert files(response)[0] == "src/step_2.py"


def test_a_qualifier_that_names_no_definition_narrows_nothing(repo):
    response = ask(repo, "Cache.resolve", mode="file")
    assert response["explain"]["definitions"] == [
        {"name": "resolve", "status": "matched", "files": 2}
    ]


def test_names_are_spelled_exactly(repo):
    assert ask(repo, "Cachekey")["explain"]["definitions"] == [
        {"name": "Cachekey", "status": "absent", "files": 0}
    ]
    assert ask(repo, "cachekey")["explain"]["definitions"] == [
        {"name": "cachekey", "status": "absent", "files": 0}
    ]


def test_the_step_alone_finds_what_no_other_channel_ran_for(repo):
    response = ask(repo, "CacheKey", channels=["definition"])
    assert [(r["path"], r["symbol"]) for r in response["results"]] == [
        ("src/cache_key.py", "CacheKey")
    ]


def test_a_path_filter_keeps_a_definition_out(repo):
    response = ask(repo, "CacheKey", mode="file", ignore_paths=["src/cache_key.py"])
    assert "src/cache_key.py" not in files(response)
    assert response["explain"]["definitions"][0]["status"] == "absent"


def test_a_declared_constant_is_found_where_it_is_declared(repo):
    text = "where is DEFAULT_TIMEOUT defined"
    assert files(ask(repo, text, mode="file", channels=WITHOUT))[0] == "src/client.py"
    response = ask(repo, text, mode="file")
    assert files(response)[0] == "src/settings.py"
    assert response["explain"]["definitions"] == [
        {"name": "DEFAULT_TIMEOUT", "status": "matched", "files": 1}
    ]
    # The identifier channel knows definitions only: a declaration is no evidence for it.
    alone = ask(repo, "DEFAULT_TIMEOUT", mode="file", channels=["ident"])
    assert "src/settings.py" not in files(alone)


def test_a_declared_name_inside_a_longer_question_is_no_evidence(repo):
    response = ask(repo, "why does connect ignore DEFAULT_TIMEOUT when it is zero", mode="file")
    assert response["explain"]["definitions"] == [
        {"name": "DEFAULT_TIMEOUT", "status": "absent", "files": 0}
    ]
    assert all("definition" not in r["explain"]["channels"] for r in response["results"])


def test_the_same_question_gives_the_same_bytes(repo):
    first = ask(repo, "where is CacheKey defined", mode="file")
    assert json.dumps(first) == json.dumps(ask(repo, "where is CacheKey defined", mode="file"))
