"""An upgrade of the chunker reaches the texts indexed before it: the next `pix index` cuts
every stored text again, once (pix.store.content.rechunk_outdated), and a chunk whose model
input did not change keeps its vector. A real git repository, the real model, real SQLite.

The older chunker is the real fallback: the database is first indexed with the Solidity
grammar's table left out (as pix before 2026-12-04 cut a .sol file) and records chunker 1.
"""

from __future__ import annotations

from conftest import new_repo

from pix.index import index_repository
from pix.ingest import definitions
from pix.ingest.chunk import CHUNKER_VERSION
from pix.store import open_store
from pix.store.content import CHUNKER_VERSION_KEY

# Long enough that the grammar cuts the contract between its functions, where the fallback
# cuts it at blank lines: the two chunkers' pieces differ, so some inputs are new.
SOL = (
    "pragma solidity ^0.8.0;\n\n/// Holds deposits.\ncontract Vault {\n"
    + "    uint256 public total;\n\n"
    + "".join(
        f"    function deposit{i}(uint256 v) public {{\n        require(v > {i});\n"
        f"        total += v * {i};\n    }}\n\n"
        for i in range(16)
    )
    + "}\n"
)
PY = "".join(f"def step_{i}(job):\n    return job.run({i})\n\n\n" for i in range(6))

CHUNKS = """
SELECT f.path, c.id, c.kind, c.embed_key, v.embedding
FROM chunk c JOIN blob b ON b.id = c.blob_id JOIN snapshot_file f ON f.blob_sha = b.sha
LEFT JOIN chunk_vec v ON v.chunk_id = c.id
ORDER BY c.id
"""


def chunks(db) -> list[tuple]:
    with open_store(str(db), create=False) as store:
        return store.conn.execute(CHUNKS).fetchall()


def test_an_older_chunkers_database_is_cut_again_and_keeps_its_vectors(tmp_path, embedder):
    repo = new_repo(tmp_path / "repo", {"contracts/Vault.sol": SOL, "src/app.py": PY})
    spec = definitions.SPECS.pop("solidity")
    try:
        index_repository(str(repo), embedder=embedder)
    finally:
        definitions.SPECS["solidity"] = spec
    db = repo / ".pix.db"
    with open_store(str(db), create=False) as store, store.write():
        store.set_meta(CHUNKER_VERSION_KEY, "1")
    before = chunks(db)
    assert {kind for path, _, kind, _, _ in before if path.endswith(".sol")} == {"block"}
    old_vectors = {key: vector for _, _, _, key, vector in before}

    report = index_repository(str(repo), embedder=embedder)

    after = chunks(db)
    sol = [row for row in after if row[0].endswith(".sol")]
    assert "method" in {kind for _, _, kind, _, _ in sol}  # the grammar's units now
    assert all(vector is not None for *_, vector in after)  # and every one embedded
    for _, _, _, key, vector in after:
        if key in old_vectors:
            assert vector == old_vectors[key]  # an unchanged input kept its vector
    new_keys = {key for _, _, _, key, _ in after} - set(old_vectors)
    assert new_keys and report.embedded == len(new_keys)  # only the new inputs were run
    py_before = [(key, vector) for path, _, _, key, vector in before if path.endswith(".py")]
    py_after = [(key, vector) for path, _, _, key, vector in after if path.endswith(".py")]
    assert py_after == py_before
    with open_store(str(db), create=False) as store:
        assert store.meta(CHUNKER_VERSION_KEY) == str(CHUNKER_VERSION)
        defined = store.conn.execute(
            "SELECT count(*) FROM symbol WHERE term = 'vault' AND whole = 1 AND declared = 0"
        ).fetchone()[0]
    assert defined == 1

    index_repository(str(repo), embedder=embedder)  # current: nothing is cut again
    assert [row[1] for row in chunks(db)] == [row[1] for row in after]


def test_a_new_database_records_the_chunker_that_cut_it(tmp_path, embedder):
    repo = new_repo(tmp_path / "repo", {"src/app.py": PY})
    index_repository(str(repo), embedder=embedder)
    with open_store(str(repo / ".pix.db"), create=False) as store:
        assert store.meta(CHUNKER_VERSION_KEY) == str(CHUNKER_VERSION)


def test_a_database_cut_by_a_newer_pix_is_left_as_it_is(tmp_path, embedder):
    # A .pix.db copied back from a machine with a newer pix keeps that pix's chunks.
    repo = new_repo(tmp_path / "repo", {"src/app.py": PY})
    index_repository(str(repo), embedder=embedder)
    db = repo / ".pix.db"
    newer = str(CHUNKER_VERSION + 1)
    with open_store(str(db), create=False) as store, store.write():
        store.set_meta(CHUNKER_VERSION_KEY, newer)
    before = [row[1] for row in chunks(db)]
    index_repository(str(repo), embedder=embedder)
    assert [row[1] for row in chunks(db)] == before
    with open_store(str(db), create=False) as store:
        assert store.meta(CHUNKER_VERSION_KEY) == newer


def test_texts_added_to_a_database_cut_by_a_newer_pix_lower_its_label(tmp_path):
    """Audit: an older pix storing new texts in a database a newer pix cut kept the newer
    label, so the newer pix would never cut those texts again. The label goes down to this
    version: the newer pix then cuts everything again (the test above: nothing added, the
    label stays)."""
    repo = new_repo(tmp_path / "repo", {"src/app.py": PY})
    index_repository(str(repo), embed=False)
    db = repo / ".pix.db"
    with open_store(str(db), create=False) as store, store.write():
        store.set_meta(CHUNKER_VERSION_KEY, str(CHUNKER_VERSION + 1))
    (repo / "src" / "more.py").write_text("def more():\n    return 2\n", encoding="utf-8")
    index_repository(str(repo), embed=False)
    with open_store(str(db), create=False) as store:
        assert store.meta(CHUNKER_VERSION_KEY) == str(CHUNKER_VERSION)


def test_texts_masked_again_in_a_database_cut_by_a_newer_pix_lower_its_label(tmp_path):
    """Review: content already stored, found again at a config path, is masked again and cut
    again by this pix's chunker, which must lower the label as new texts do."""
    secret = "db_password: Tr0ub4dor3xyz\n"
    repo = new_repo(tmp_path / "repo", {"notes/staging.md": secret})
    index_repository(str(repo), embed=False)
    db = repo / ".pix.db"
    with open_store(str(db), create=False) as store, store.write():
        store.set_meta(CHUNKER_VERSION_KEY, str(CHUNKER_VERSION + 1))
        before = store.conn.execute("SELECT id FROM chunk").fetchall()
    (repo / "deploy").mkdir()
    (repo / "deploy" / "staging.txt").write_text(secret, encoding="utf-8")  # the same blob
    index_repository(str(repo), embed=False)
    with open_store(str(db), create=False) as store:
        assert store.conn.execute("SELECT id FROM chunk").fetchall() != before  # cut again
        assert store.meta(CHUNKER_VERSION_KEY) == str(CHUNKER_VERSION)
