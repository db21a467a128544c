"""Exact strings (pix.retrieve.phrase): a phrase of the query that occurs word for word puts the
chunk holding it first, in chunk and file mode, with the evidence in the explanation.

A real git repository in a temp folder, indexed with the real model; real SQLite, FTS5 and the
trigram index. The corpus is built so that without the phrase step the holding file does NOT
rank first: src/commands.py talks about missing commands all over (BM25 and meaning favour it),
while the one line `raise UsageError("Missing command.")` sits in src/cli.py among unrelated
code. Each test checks the phrase-less ranking too where that is what makes it able to fail.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from conftest import commit, git, new_repo, where, write

from pix.errors import UsageError
from pix.index import index_repository
from pix.query import QueryRequest, query
from pix.retrieve import phrase
from pix.retrieve.route import CHANNELS

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schema"
RESPONSE = jsonschema.Draft202012Validator(
    json.loads((SCHEMA_DIR / "query-response.v2.json").read_text(encoding="utf-8"))
)
REQUEST = jsonschema.Draft202012Validator(
    json.loads((SCHEMA_DIR / "query-request.v1.json").read_text(encoding="utf-8"))
)
NO_PHRASES = [*CHANNELS, "definition"]

COMMANDS = '''"""Commands: lookup, aliases, and what to do about a missing command."""


def find_command(registry, name):
    """Find a command by name; a missing command returns None."""
    return registry.get(name)


def report_missing_command(name, suggestions):
    """Report a missing command to the user, with the commands closest to the missing name.
    A missing command is the most common mistake: list every command that looks alike."""
    lines = [f"no such command: {name}"]
    for command in suggestions:
        lines.append(f"  did you mean {command}?")
    return "\\n".join(lines)


def alias_command(registry, alias, name):
    """Make `alias` run the command `name`; a missing command cannot be aliased."""
    if name not in registry:
        raise KeyError(name)
    registry[alias] = registry[name]
'''

CLI = '''import os
import sys


def load_settings(path):
    """Read the settings file into a dict of strings."""
    out = {}
    with open(path) as handle:
        for line in handle:
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip()
    return out


def main(argv):
    """The entry point."""
    if not argv:
        raise UsageError("Missing command.")
    settings = load_settings(os.path.expanduser("~/.toolrc"))
    return run(argv[0], argv[1:], settings)


def run(name, args, settings):
    if len(args) > 3:
        print("Got unexpected extra arguments", file=sys.stderr)
    return 0
'''

TEST_CLI = """from src.cli import main


def test_no_arguments():
    with raises(UsageError, match="Missing command."):
        main([])
"""

NETWORK = '''def wifi_state(device):
    """What the blacklist disconnect wifi rule says for this device."""
    return device.rules.get("blacklist disconnect wifi")
'''

CHANGES = """# Changes

## 2.0

- The parser now reports Got unexpected extra argument when a command takes none.
"""

# A line holding a secret (a GitHub token): the index stores it masked.
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
CONFIG = f'''DEFAULT_TIMEOUT = 30
GITHUB_TOKEN = "{TOKEN}"  # deploy bot
RETRIES = 3
'''

# A phrase in more than MAX_FILES files: common, so it changes nothing.
COMMON = "shared helper banner text"

FILES = {
    "src/commands.py": COMMANDS,
    "src/cli.py": CLI,
    "src/network.py": NETWORK,
    "src/config.py": CONFIG,
    "tests/test_cli.py": TEST_CLI,
    "docs/CHANGES.md": CHANGES,
    **{
        f"src/plugins/plugin_{i}.py": f'BANNER = "{COMMON}"\n\n\ndef plugin_{i}():\n'
        f"    return {i}\n"
        for i in range(phrase.MAX_FILES + 1)
    },
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory, embedder) -> Path:
    root = new_repo(tmp_path_factory.mktemp("exact") / "repo", FILES)
    index_repository(str(root), embedder=embedder)
    return root


def ask(repo: Path, text: str, **options) -> dict:
    request = QueryRequest(text, **{"top": 20, "explain": True, **options})
    response = query(request, cwd=str(repo))
    errors = [e.message for e in RESPONSE.iter_errors(response)]
    assert not errors, errors
    return response


def files(response: dict) -> list[str]:
    return [where(r) for r in response["results"]]


def phrase_of(result: dict) -> dict | None:
    return result["explain"]["channels"].get("phrase")


# -- what counts as a phrase -------------------------------------------------------------------


def test_a_phrase_is_one_line_of_enough_characters_and_two_words_or_more():
    assert [p.text for p in phrase.phrases_of("  Missing command.  ")] == ["Missing command."]
    assert phrase.phrases_of("UsageError") == []  # one word: a name, the identifier channel's
    assert phrase.phrases_of("a b c") == []  # shorter than MIN_CHARS
    assert phrase.phrases_of("x" * (phrase.MAX_CHARS + 1) + " y") == []
    assert phrase.phrases_of("two lines\nof text here") == []


def test_quoted_spans_are_phrases_longest_first_and_apostrophes_are_not_quotes():
    text = "why does 'no such thing' fail with \"Missing command.\" and `run()` here"
    assert [(p.text, p.source) for p in phrase.phrases_of(text)] == [
        (text, "query"),
        ("Missing command.", "quoted"),
        ("no such thing", "quoted"),
    ]  # `run()` is one word: a name
    long_query = "it's the parser's fault: " + "word " * 60 + '"Got unexpected extra argument"'
    assert [p.text for p in phrase.phrases_of(long_query)] == ["Got unexpected extra argument"]


def test_a_phrase_holding_a_secret_is_masked_like_stored_text():
    (found,) = phrase.phrases_of(f'GITHUB_TOKEN = "{TOKEN}"')
    assert found.text == 'GITHUB_TOKEN = "[REDACTED:github_token]"'
    # Secrets alone leave nothing but placeholders, which would match every masked secret.
    assert phrase.phrases_of(f"{TOKEN} {TOKEN}") == []


# -- ranking -----------------------------------------------------------------------------------


def test_an_error_message_ranks_its_file_first_which_it_does_not_without_the_phrase_step(repo):
    without = ask(repo, "Missing command.", mode="file", channels=NO_PHRASES)
    assert files(without)[0] != "src/cli.py"  # the corpus makes the test able to fail
    response = ask(repo, "Missing command.", mode="file")
    assert files(response)[0] == "src/cli.py"
    # The test that asserts the message holds it too: it follows, demoted by its prior.
    assert files(response)[1] == "tests/test_cli.py"
    assert response["explain"]["phrases"] == [
        {"text": "Missing command.", "source": "query", "status": "matched", "files": 2}
    ]


def test_in_chunk_mode_the_top_chunk_holds_the_string_and_explains_where(repo):
    response = ask(repo, "Missing command.")
    top = response["results"][0]
    assert top["path"] == "src/cli.py" and 'raise UsageError("Missing command.")' in top["text"]
    evidence = phrase_of(top)
    line = CLI.split("\n").index('        raise UsageError("Missing command.")') + 1
    assert evidence["phrases"] == ["Missing command."] and evidence["line"] == line
    assert evidence["rank"] == 1 and evidence["score"] == 1.0
    standout = top["explain"].get("rank", {}).get("standout", 0.0)  # the ranking stage's share
    assert top["explain"]["fused"] == pytest.approx(
        sum(ch["contribution"] for ch in top["explain"]["channels"].values()) + standout, abs=1e-5
    )
    # Every chunk holding it ranks above every chunk that does not.
    held = [phrase_of(r) is not None for r in response["results"]]
    assert held == sorted(held, reverse=True) and held.count(True) == 2


@pytest.mark.parametrize("fusion", ["rrf", "dbsf"])
@pytest.mark.parametrize("priors", [True, False])
def test_the_holders_rank_first_under_every_fusion_and_prior(repo, fusion, priors):
    without = ask(repo, "Missing command.", mode="file", fusion=fusion, priors=priors,
                  channels=NO_PHRASES)  # fmt: skip
    response = ask(repo, "Missing command.", mode="file", fusion=fusion, priors=priors)
    holders = {"src/cli.py", "tests/test_cli.py"}
    assert set(files(response)[:2]) == holders != set(files(without)[:2])
    if priors:
        assert files(response)[0] == "src/cli.py"


def test_a_phrase_held_by_docs_only_lifts_nothing(repo):
    text = "Got unexpected extra argument"  # in docs/CHANGES.md; src/cli.py has "arguments"
    response = ask(repo, text, mode="file")
    assert response["explain"]["phrases"] == [
        {"text": text, "source": "query", "status": "absent", "files": 0}
    ]
    assert all(phrase_of(r) is None for r in response["results"])
    assert response["results"] == ask(repo, text, mode="file", channels=NO_PHRASES)["results"]


def test_a_quoted_span_in_a_question_is_matched(repo):
    text = 'which function raises "Missing command." when no arguments are given'
    response = ask(repo, text, mode="file")
    assert files(response)[0] == "src/cli.py"
    assert [(p["source"], p["status"]) for p in response["explain"]["phrases"]] == [
        ("query", "absent"),
        ("quoted", "matched"),
    ]


def test_case_and_word_boundaries_count(repo):
    lower = ask(repo, "missing command.", mode="file")  # src/commands.py holds this spelling
    assert files(lower)[0] == "src/commands.py"
    assert lower["explain"]["phrases"][0]["files"] == 1
    inner = ask(repo, "list disconnect wifi", mode="file")  # only "blacklist disconnect wifi"
    assert inner["explain"]["phrases"][0]["status"] == "absent"
    assert all(phrase_of(r) is None for r in inner["results"])


def test_a_common_phrase_changes_nothing(repo):
    with_step = ask(repo, COMMON, mode="file")
    without = ask(repo, COMMON, mode="file", channels=NO_PHRASES)
    assert with_step["explain"]["phrases"] == [
        {"text": COMMON, "source": "query", "status": "common", "files": phrase.MAX_FILES + 1}
    ]
    assert with_step["results"] == without["results"]


def test_the_phrase_channel_alone_and_the_path_filter(repo):
    alone = ask(repo, "Missing command.", mode="file", channels=["phrase"])
    assert files(alone) == ["src/cli.py", "tests/test_cli.py"]
    filtered = ask(repo, "Missing command.", mode="file", ignore_paths=["src/cli.py"])
    assert "src/cli.py" not in files(filtered) and files(filtered)[0] == "tests/test_cli.py"
    assert filtered["explain"]["phrases"][0]["files"] == 1


def test_an_unknown_channel_names_phrase_among_the_known_ones(repo):
    with pytest.raises(UsageError, match="phrase"):
        query(QueryRequest("Missing command.", channels=["nope"]), cwd=str(repo))
    assert not list(REQUEST.iter_errors({"query": "x", "channels": ["phrase", "bm25"]}))


def test_a_pasted_line_with_a_secret_finds_its_masked_line_and_a_secret_never_matches(repo):
    pasted = ask(repo, f'GITHUB_TOKEN = "{TOKEN}"')
    top = pasted["results"][0]
    assert top["path"] == "src/config.py" and phrase_of(top)["line"] == 2
    assert TOKEN not in json.dumps(pasted["explain"])
    # A prefix of the secret is no phrase the stored text holds: masked text cannot match it.
    for guess in (f'GITHUB_TOKEN = "{TOKEN[:12]}', f"token {TOKEN[:20]}"):
        response = ask(repo, guess)
        assert all(p["status"] == "absent" for p in response["explain"]["phrases"])
        assert all(phrase_of(r) is None for r in response["results"])


def test_the_same_query_twice_gives_the_same_bytes(repo):
    first = json.dumps(ask(repo, "Missing command.", mode="file"), sort_keys=True)
    assert json.dumps(ask(repo, "Missing command.", mode="file"), sort_keys=True) == first


def test_a_phrase_is_searched_in_the_asked_commit_only(tmp_path, embedder):
    root = new_repo(tmp_path / "repo", {"app.py": 'def old():\n    warn("Legacy flag is gone")\n'})
    first = git(root, "rev-parse", "HEAD")
    write(root, {"app.py": "def old():\n    pass\n", "other.py": "def other():\n    return 1\n"})
    commit(root, "drop the warning")
    index_repository(str(root), embedder=embedder)
    index_repository(str(root), embedder=embedder, at=first)
    now = query(QueryRequest("Legacy flag is gone", explain=True), cwd=str(root))
    assert now["explain"]["phrases"][0]["status"] == "absent"
    then = query(QueryRequest("Legacy flag is gone", explain=True, at=first), cwd=str(root))
    assert then["explain"]["phrases"][0]["status"] == "matched"
    assert then["results"][0]["path"] == "app.py"


def test_an_issue_reports_quoted_spans_are_left_to_the_issue_route(repo):
    report = (
        "Running the tool with no arguments prints an unhelpful error.\n\n"
        'Steps: I ran `tool` in an empty folder and got "Missing command." instead of the\n'
        "usage text. I expected the list of commands, as `tool --help` prints it. This\n"
        "happens with every shell I tried and with a fresh settings file; the settings are\n"
        "read before the arguments are checked, which seems wrong to me as well, and the\n"
        "message should name the commands that exist.\n"
    )
    assert len(report) >= 400  # an issue by its length (pix.retrieve.evidence)
    response = ask(repo, report)
    assert response["explain"]["shape"] == "issue"
    assert response["explain"]["phrases"] == []
    assert all("phrase" not in r["explain"]["channels"] for r in response["results"])
    asked = ask(repo, report, channels=[*NO_PHRASES, "phrase"])  # by name it still runs
    assert any(p["status"] == "matched" for p in asked["explain"]["phrases"])


LONE = {
    "store.py": "import apsw\n\n\ndef connect(path):\n    conn = apsw.Connection(path)\n"
    "    conn.setbusytimeout(5000)\n    return conn\n",
    **{
        f"waits/wait_{n}.py": "".join(
            f'def set_busy_timeout_{n}_{k}(conn, ms):\n    """Set the busy timeout: wait up to '
            f'ms milliseconds while the database is busy, then time out."""\n'
            f"    conn.busy_timeout = ms * {k}\n\n\n"
            for k in range(8)
        )
        for n in range(4)
    },
}


def test_a_lone_word_defined_nowhere_ranks_the_files_holding_it_first(tmp_path, embedder):
    # `setbusytimeout` is only called here. On a larger tree (pix's own) the file calling it
    # came third, below files whose chunks merely read like busy timeouts. Defined nowhere, a
    # lone word is a phrase: its holders are lifted. A defined name is the definition
    # step's instead (its callers would bury the definition).
    root = new_repo(tmp_path / "lone", LONE)
    index_repository(str(root), embedder=embedder)
    answer = query(QueryRequest("setbusytimeout", mode="file", top=3, explain=True), cwd=str(root))
    assert where(answer["results"][0]) == "store.py"
    assert "phrase" in answer["results"][0]["explain"]["channels"]
    assert answer["explain"]["phrases"] == [
        {"text": "setbusytimeout", "source": "query", "status": "matched", "files": 1}
    ]
    assert phrase.phrases_of("setbusytimeout") == []  # a lone word only when asked
    assert [p.text for p in phrase.phrases_of("setbusytimeout", lone_word=True)] == [
        "setbusytimeout"
    ]
    assert phrase.phrases_of("api", lone_word=True) == []  # too short to say where
    # A file's name is the path channel's, not a lone word.
    for word in ("store", "store.py"):
        named = query(QueryRequest(word, mode="file", top=3, explain=True), cwd=str(root))
        assert not named["explain"].get("phrases"), word
    name = "set_busy_timeout_3_2"
    defined = query(QueryRequest(name, mode="file", top=3, explain=True), cwd=str(root))
    assert where(defined["results"][0]) == "waits/wait_3.py"
    assert not defined["explain"].get("phrases")
