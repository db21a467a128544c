"""What the model reads of C# and F# XML documentation comments (pix.ingest.doccomments), and
that the stored text, BM25 and the embed key follow it: a real index of a temp repository."""

from __future__ import annotations

from conftest import new_repo

from pix.index import index_repository
from pix.ingest.doccomments import for_model
from pix.store import open_store
from pix.store.content import embed_inputs, embed_key

CSHARP = """\
namespace Polly.Retry;

/// <summary>
/// Retries an <see cref="ResiliencePipeline{T}"/> with a <see langword="null"/> check.
/// </summary>
/// <param name="attempts">How many times to <c>retry</c>.</param>
/// <exception cref="T:System.ArgumentException">If <paramref name="attempts"/> < 0.</exception>
/// <returns></returns>
public static int Retry(int attempts) => attempts; // keeps <T> in code comments
"""


def test_xml_documentation_becomes_its_words():
    assert for_model(CSHARP, "csharp") == (
        "namespace Polly.Retry;\n\n"
        "// Retries an ResiliencePipeline{T} with a null check.\n"
        "// attempts: How many times to retry .\n"
        "// System.ArgumentException: If attempts < 0.\n"
        "public static int Retry(int attempts) => attempts; // keeps <T> in code comments\n"
    )


def test_other_languages_keep_their_triple_slash_lines():
    rust = "/// Returns a `Vec<T>` of <b>bold</b> items.\nfn items() {}\n"
    assert for_model(rust, "rust") == rust
    ts = '/// <reference path="./types.d.ts" />\nexport const x = 1;\n'
    assert for_model(ts, "typescript") == ts
    assert for_model("int x; // <summary>\n", "csharp") == "int x; // <summary>\n"


def test_the_index_embeds_the_words_and_stores_the_text(tmp_path, embedder):
    repo = new_repo(
        tmp_path / "repo", {"src/Retry.cs": CSHARP, "src/plain.rs": "/// <b>\nfn f() {}\n"}
    )
    index_repository(str(repo), embedder=embedder)
    with open_store(str(repo / ".pix.db"), create=False) as store:
        rows = store.conn.execute(
            "SELECT c.embed_key, c.context, c.blob_id, c.start_char, c.end_char, t.text "
            "FROM chunk c JOIN chunk_text t ON t.id = c.id ORDER BY c.id"
        ).fetchall()
        inputs = embed_inputs(store.conn, [row[:5] for row in rows])
        matched = store.conn.execute(
            "SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH 'summary'"
        ).fetchone()[0]
    retry = [(row, text) for row, text in zip(rows, inputs, strict=True) if "Retry" in row[5]]
    assert retry and all("<summary>" in row[5] for row, _ in retry)  # stored as written
    assert all("<summary>" not in t and "cref" not in t for _, t in retry)  # the words only
    assert all(row[0] == embed_key(text) for row, text in zip(rows, inputs, strict=True))
    assert matched >= 1  # BM25 still reads the comment as written
    assert any("/// <b>" in text for text in inputs)  # Rust's doc line is the model's as is
