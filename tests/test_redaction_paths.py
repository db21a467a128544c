"""Secrets are masked before anything is stored, so every output path shows them masked: query
(chunk and file modes, context lines), pack, discover, aliases, the MCP server and the
clipboard. No column, index, file or WAL of the database holds one; search still finds what
stands next to a secret; only the CLI's --show-secrets shows them (read from the repository),
saying so.

The repository is seeded with one fake secret of every kind (tests/test_redact.py builds them
from pieces, so no file here looks like a leaked key)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import anyio
import apsw
import pytest
from conftest import clipboard, git, indexed_repo, pix, pix_json
from mcp import Client, StdioServerParameters
from test_redact import BODY, END, POSITIVE, RANDOM

from pix.ingest.redact import KINDS
from pix.query import QueryEngine, QueryRequest
from pix.store import codec

EXTENSIONS = {
    "python": "py", "shell": "sh", "yaml": "yaml", "ini": "ini", "javascript": "js",
    "text": "txt", "json": "json", "toml": "toml", "ruby": "rb",
}  # fmt: skip
BILLING = f'''def charge_customer(amount, card):
    """Charge the customer's card through the payment gateway."""
    STRIPE_WEBHOOK_SIGNING_SECRET = "{RANDOM}"
    return gateway_charge(amount, card, STRIPE_WEBHOOK_SIGNING_SECRET)
'''
STAGING = "db_password: Tr0ub4dor3xyz\n"
FILES = {
    **{
        f"fixtures/case_{i:02d}.{EXTENSIONS[language]}": text + "\n"
        for i, (text, language, _, _) in enumerate(POSITIVE)
    },
    # a key body whose BEGIN line is elsewhere: what a chunk cut inside a key shows
    "fixtures/key_tail.txt": "\n".join(BODY[1:]) + f"\n{END}\n",
    "billing.py": BILLING,
    # one content at two paths: a config file here, prose there (masked by the path's language)
    "deploy/staging.txt": STAGING,
    "notes/staging.md": STAGING,
}
VALUES = sorted({value for _, _, _, value in POSITIVE} | set(BODY[1:]), key=len, reverse=True)
ALL_KINDS = set(KINDS)


def leaked(text: str) -> list[str]:
    return [value for value in VALUES if value in text]


@pytest.fixture(scope="module")
def repo(tmp_path_factory, embedder) -> tuple[Path, Path]:
    root, db = indexed_repo(tmp_path_factory.mktemp("secrets"), FILES, embedder)
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    # every fixture is indexed: none is skipped as a secret file
    assert conn.execute("SELECT count(*) FROM snapshot_file").fetchone()[0] == len(FILES)
    assert conn.execute("SELECT count(*) FROM skipped").fetchone()[0] == 0
    return root, db


def run_json(repo, *args: str, **kw) -> tuple[dict, str]:
    root, db = repo
    code, response, err = pix_json(*args, "--db", str(db), cwd=root, **kw)
    assert code == 0, err
    return response, err


def test_every_kind_is_seeded_and_each_fixture_shows_exactly_its_own_kind(repo):
    assert {kind for _, _, kind, _ in POSITIVE} | {"private_key"} == ALL_KINDS
    root, db = repo
    engine = QueryEngine(db=str(db), cwd=str(root))
    try:
        for i, (_, language, kind, _) in enumerate(POSITIVE):
            path = f"fixtures/case_{i:02d}.{EXTENSIONS[language]}"
            request = QueryRequest("x", mode="file", only_paths=[path])
            response = engine.query(request)
            assert [r["file"] for r in response["results"]] == [path]
            assert response["redactionSummary"]["byKind"] == {kind: 1}, path
    finally:
        engine.close()


def test_the_language_of_the_path_shown_decides_not_the_content(repo):
    # bare `key: value` is a secret in a config file, prose in markdown; same blob at both
    response, _ = run_json(repo, "query", "staging", "--file", "--only-path", "deploy/", "--json")
    (result,) = response["results"]
    assert result["text"] == "db_password: [REDACTED:password]\n"
    response, _ = run_json(
        repo, "pack", "staging", "--budget", "500", "--only-path", "deploy/", "--format", "json"
    )
    assert "Tr0ub4dor3xyz" not in response["text"] and "[REDACTED:password]" in response["text"]


@pytest.mark.parametrize(
    ("probe", "found"),
    [
        ('-r=p=password = "h', False),  # would say the password starts with h
        ('-r=p=password = "hunter', False),
        ("-r=p=" + "AKIA" + "EXAMPLE", False),
        ("-l=p=password = ", True),  # the name next to a secret still matches
        ('-r=p=password = "\\[R', True),  # the placeholder: where a secret was masked
    ],
)
def test_discover_never_matches_inside_a_secret(repo, probe, found):
    flag, hypothesis = probe[:2], probe[3:]
    response, _ = run_json(repo, "discover", flag, hypothesis, "--glob", "fixtures/*.py", "--json")
    assert bool(response["candidates"]) is found
    if found:
        assert not leaked(json.dumps(response["candidates"]))
    # matching runs on the stored (masked) text for the owner too; what is found is shown
    # as the repository has it
    shown, _ = run_json(
        repo, "discover", flag, hypothesis, "--glob", "fixtures/*.py", "--show-secrets", "--json"
    )
    assert bool(shown["candidates"]) is found
    if found:
        assert leaked(json.dumps(shown["candidates"]))


@pytest.mark.parametrize("mode", ["chunk", "file"])
def test_query_masks_every_secret_in_both_modes(repo, mode):
    flags = ["--file"] if mode == "file" else ["--context-lines", "3"]
    response, _ = run_json(repo, "query", "configuration", *flags, "--top", "100", "--json")
    texts = json.dumps(response["results"], ensure_ascii=False)
    assert not leaked(texts)
    assert set(response["redactionSummary"]["byKind"]) == ALL_KINDS
    assert response["redactionSummary"]["masked"] is True
    assert response["redactionSummary"]["total"] == sum(
        response["redactionSummary"]["byKind"].values()
    )
    for kind in ALL_KINDS:
        assert f"[REDACTED:{kind}]" in texts
    root, db = repo
    args = ("query", "configuration", *flags, "--top", "100", "--db", str(db))
    code, out, err = pix(*args, cwd=root)
    assert code == 0 and not leaked(out + err) and "[REDACTED:" in out


def test_line_numbers_stay_true_around_a_masked_key(repo):
    response, _ = run_json(repo, "query", "private key", "--only-path", "*key_tail*", "--json")
    (result,) = response["results"]
    assert (result["startLine"], result["endLine"]) == (1, 3)
    assert result["text"].split("\n") == [
        "[REDACTED:private_key]", "[REDACTED:private_key]", END
    ]  # fmt: skip
    assert response["redactionSummary"]["byKind"] == {"private_key": 1}  # one key, two lines


def test_no_secret_is_stored_anywhere_in_the_database(repo):
    root, db = repo
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    # what the sqlite3 shell has built in, and the views read text through
    conn.create_scalar_function("sqlar_uncompress", codec.sqlar_uncompress, 2)
    blob = git(root, "rev-parse", "HEAD:billing.py").strip()
    ((text,),) = conn.execute("SELECT text FROM blob_text WHERE sha = ?", (blob,))
    assert text == BILLING.replace(RANDOM, "[REDACTED:secret]")
    chunks = conn.execute(
        "SELECT t.text FROM chunk_text t JOIN chunk c ON c.id = t.id JOIN blob b"
        " ON b.id = c.blob_id WHERE b.sha = ?",
        (blob,),
    ).fetchall()
    assert any("[REDACTED:secret]" in t for (t,) in chunks)
    # where the secret was, not what it was
    assert conn.execute(
        "SELECT s.kind, s.start_line, s.end_line FROM secret s JOIN blob b ON b.id = s.blob_id"
        " WHERE b.sha = ?",
        (blob,),
    ).fetchall() == [("secret", 3, 3)]
    # every text column of every table, and the vocabularies of both FTS5 indexes
    conn.execute("CREATE VIRTUAL TABLE temp.words USING fts5vocab(main, chunk_fts, row)")
    conn.execute("CREATE VIRTUAL TABLE temp.grams USING fts5vocab(main, blob_trigram, row)")
    stored = [t for (t,) in conn.execute("SELECT term FROM words")]
    grams = {t for (t,) in conn.execute("SELECT term FROM grams")}
    for (table,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE"
        " 'chunk_vec%' AND name NOT LIKE '%fts%' AND name NOT LIKE 'blob_trigram%'"
        " AND name NOT LIKE 'sqlite_%'"
    ).fetchall():
        columns = [row[1] for row in conn.execute("SELECT * FROM pragma_table_info(?)", (table,))]
        for column in columns:
            for (value,) in conn.execute(f'SELECT "{column}" FROM "{table}"'):  # noqa: S608
                if isinstance(value, str):
                    assert not leaked(value), (table, column)
    vocabulary = set(stored)
    for value in VALUES:  # the long words of a secret are words of no stored text
        words = {w.lower() for w in re.findall(r"\w+", value) if len(w) >= 12}
        assert not words & vocabulary, value
    assert len(grams) > 100  # (trigrams alone spell nothing: detail=none keeps no positions)
    conn.close()
    # and not in the bytes of the file or its write-ahead log
    for path in (db, Path(str(db) + "-wal")):
        if path.exists():
            data = path.read_bytes()
            assert not [v for v in VALUES if v.encode() in data], path


@pytest.mark.parametrize(
    "question", ["STRIPE_WEBHOOK_SIGNING_SECRET", "charge the customer's card"]
)
def test_search_still_finds_what_stands_next_to_a_secret(repo, question):
    response, _ = run_json(repo, "query", question, "--top", "3", "--json")
    first = response["results"][0]
    assert first["path"] == "billing.py"
    assert 'STRIPE_WEBHOOK_SIGNING_SECRET = "[REDACTED:secret]"' in first["text"]
    assert RANDOM not in first["text"]


def test_pack_masks_and_counts_in_text_and_json(repo):
    response, err = run_json(
        repo, "pack", "passwords tokens keys", "--budget", "50000", "--format", "json"
    )
    assert not leaked(json.dumps(response, ensure_ascii=False))
    assert response["redactionSummary"]["total"] >= 1
    assert "[REDACTED:" in response["text"]
    root, db = repo
    code, out, err = pix("pack", "passwords tokens keys", "--budget", "50000", "--db", str(db),
                         cwd=root)  # fmt: skip
    assert code == 0 and not leaked(out + err) and "secret(s) masked" in err


def test_discover_excerpts_are_masked(repo):
    response, _ = run_json(repo, "discover", "-r", "any=\\S", "--max-candidates", "50", "--json")
    excerpts = [e for c in response["candidates"] for e in c["excerpts"]]
    assert len({c["path"] for c in response["candidates"]}) == len(FILES)
    assert not leaked(json.dumps(excerpts, ensure_ascii=False))
    assert set(response["redactionSummary"]["byKind"]) == ALL_KINDS
    # a literal hypothesis on the name next to a secret still matches, value masked
    response, _ = run_json(repo, "discover", "-l", "sig=STRIPE_WEBHOOK_SIGNING_SECRET =", "--json")
    (candidate,) = response["candidates"]
    assert candidate["excerpts"][0]["text"] == (
        'STRIPE_WEBHOOK_SIGNING_SECRET = "[REDACTED:secret]"'
    )


def test_alias_runs_are_masked(repo, tmp_path):
    root, db = repo
    mine = tmp_path / "pix.db"
    mine.write_bytes(Path(db).read_bytes())
    code, _, err = pix("alias", "add", "creds", "credentials", "--file", "--top", "50",
                       "--db", str(mine), cwd=root)  # fmt: skip
    assert code == 0, err
    code, out, err = pix("run", "creds", "--db", str(mine), cwd=root)
    assert code == 0 and not leaked(out + err) and "[REDACTED:" in out


@pytest.mark.parametrize(
    "args",
    [
        ["query", "credentials", "--file", "--top", "50", "--copy"],
        ["pack", "credentials", "--budget", "50000", "--copy"],
    ],
)
def test_the_clipboard_gets_masked_text(repo, tmp_path, args):
    root, db = repo
    env, target = clipboard(tmp_path)
    code, out, err = pix(*args, "--db", str(db), cwd=root, env=env)
    assert code == 0, err
    copied = target.read_text()
    assert "[REDACTED:" in copied and not leaked(copied)


@pytest.mark.parametrize(
    "args",
    [
        ["query", "configuration", "--file", "--top", "100"],
        ["pack", "configuration", "--budget", "100000"],
        ["discover", "-r", "any=\\S", "--max-candidates", "50"],
    ],
)
def test_show_secrets_is_for_the_owner_on_the_cli_and_says_so(repo, args):
    root, db = repo
    code, out, err = pix(*args, "--show-secrets", "--json", "--db", str(db), cwd=root)
    assert code == 0
    response = json.loads(out)
    assert response["redactionSummary"]["masked"] is False
    assert response["redactionSummary"]["total"] >= 1
    assert leaked(out) and "[REDACTED:" not in out
    assert "--show-secrets" in err and "NOT masked" in err
    code, out, err = pix(*args, "--json", "--db", str(db), cwd=root)
    assert not leaked(out) and "NOT masked" not in err


async def _mcp_session(root: Path, db: Path) -> dict:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "pix.cli", "mcp", "--db", str(db)],
        cwd=str(root),
    )
    out: dict = {}
    async with Client(params, read_timeout_seconds=120) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        out["schemas"] = json.dumps({n: t.input_schema for n, t in tools.items()})
        calls = {
            "query": {"query": "configuration", "mode": "file", "top": 100,
                      "maxCharacters": 1_000_000},
            "pack": {"query": "configuration", "budget": 100_000},
            "discover": {"queries": [{"id": "any", "mode": "regex", "pattern": "\\S"}],
                         "maxCandidates": 50},
        }  # fmt: skip
        for name, args in calls.items():
            result = await client.call_tool(name, args)
            assert not result.is_error, result.content[0].text
            out[name] = result.content[0].text
        refused = await client.call_tool("query", {**calls["query"], "showSecrets": True})
        out["refused"] = (refused.is_error, refused.content[0].text)
    return out


def test_mcp_masks_every_tool_and_has_no_way_to_reveal(repo):
    root, db = repo
    out = anyio.run(_mcp_session, root, db)
    for name in ("query", "pack", "discover"):
        response = json.loads(out[name])
        assert not leaked(out[name]), name
        assert response["redactionSummary"]["masked"] is True
        assert response["redactionSummary"]["total"] >= 1, name
    assert set(json.loads(out["query"])["redactionSummary"]["byKind"]) == ALL_KINDS
    assert "show" not in out["schemas"].lower().replace("shown", "")
    is_error, message = out["refused"]
    assert is_error and "showSecrets" in message
