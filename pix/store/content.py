"""Writing file content: a blob's masked text once, its chunks, FTS rows, symbols and secrets.

Everything pix stores about a file's content is derived from one copy of its text, with its
secrets masked (pix.ingest.mask), compressed in `blob.content` (pix.store.codec). Chunks are
character ranges of it; their FTS rows and the blob's trigram rows are written here from the
text at hand (the delete triggers read it back through the views). Callers hold the write
transaction.
"""

from __future__ import annotations

import hashlib
from itertools import accumulate

import apsw

from pix.ingest import commit_log, redact, scan
from pix.ingest.chunk import CHUNKER_VERSION, chunk_file, language_for, language_for_path
from pix.ingest.doccomments import for_model
from pix.ingest.mask import mask, widens
from pix.ingest.terms import identifier_parts, split_identifier
from pix.store import codec, sql

REDACT_VERSION_KEY = "redact.version"
CHUNKER_VERSION_KEY = "chunker.version"


def embed_text(context: str | None, text: str, language: str) -> str:
    """What the model reads for a chunk: the enclosing signature of a split piece, then the
    text, documentation markup reduced to its words (pix.ingest.doccomments)."""
    return for_model(f"{context}\n{text}" if context else text, language)


def embed_key(embed_input: str) -> int:
    """The first 8 bytes of sha1(input) as a signed 64-bit integer (SQLite's INTEGER)."""
    return int.from_bytes(hashlib.sha1(embed_input.encode()).digest()[:8], "big", signed=True)


def line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def store_blob(conn: apsw.Connection, sha: str, path: str, data: bytes) -> int:
    """A new blob with everything derived from it. Returns the chunks added."""
    text = scan.decode(data)
    language = language_for(path, text)
    masked = mask(text, language)
    conn.execute(
        sql.INSERT_BLOB, (sha, len(data), line_count(text), language, *codec.pack(masked.text))
    )
    blob_id = conn.last_insert_rowid()
    conn.execute(sql.INSERT_TRIGRAMS, (blob_id, masked.text))
    _insert_secrets(conn, blob_id, masked.secrets, 0)
    return _store_chunks(conn, blob_id, masked.text, path, language)


def embed_inputs(conn: apsw.Connection, rows: list[tuple]) -> list[str]:
    """What the model reads for each row of sql.PENDING_EMBEDDINGS (embed_key, context,
    blob_id, start_char, end_char), in their order; each blob is inflated once."""
    out: list[str] = [""] * len(rows)
    order = sorted(range(len(rows)), key=lambda i: rows[i][2])
    text, language, current = "", "", None
    for i in order:
        _, context, blob_id, start, end = rows[i]
        if blob_id != current:
            content, text_size, language = conn.execute(
                sql.BLOB_FOR_EMBEDDING, (blob_id,)
            ).fetchone()
            text, current = codec.unpack(content, text_size), blob_id
        out[i] = embed_text(context, text[start:end], language)
    return out


def _insert_secrets(conn: apsw.Connection, blob_id: int, secrets, first_seq: int) -> None:
    conn.executemany(
        sql.INSERT_SECRET,
        ((blob_id, first_seq + i, s.kind, s.start_line, s.end_line) for i, s in enumerate(secrets)),
    )


def _store_chunks(conn: apsw.Connection, blob_id: int, text: str, path: str, language: str) -> int:
    """The chunks of a blob's text, with their FTS rows and symbols. `language` is the blob's
    stored one, as embed_inputs reads it, so each embed key is the hash of the model's input."""
    chunks = chunk_file(text, path)
    _mark_cut_here(conn)  # every cut by this chunker, new text or stored text masked again
    # Character offset of each line: a chunk is whole lines, so its range follows from them.
    starts = [0, *accumulate(len(line) + 1 for line in text.split("\n"))]
    for seq, ch in enumerate(chunks):
        start = starts[ch.start_line - 1]
        parts = identifier_parts(ch.text)
        key = embed_key(embed_text(ch.context, ch.text, language))
        conn.execute(
            sql.INSERT_CHUNK,
            (
                blob_id, seq, ch.start_line, ch.end_line, start, start + len(ch.text),
                ch.kind, ch.symbol, ch.context, parts, key,
            ),
        )  # fmt: skip
        chunk_id = conn.last_insert_rowid()
        conn.execute(sql.INSERT_CHUNK_FTS, (chunk_id, ch.text, parts))
        conn.executemany(sql.INSERT_SYMBOL, symbol_rows(chunk_id, ch.defines, ch.declares))
    return len(chunks)


def symbol_rows(
    chunk_id: int, names: tuple[str, ...], declares: tuple[str, ...] = ()
) -> list[tuple[int | str | None, ...]]:
    """One row per distinct term of the names the chunk defines and then of those it declares
    (pix.ingest.declarations): whole names first (they keep their spelling), then the parts
    that are not also a whole name. A term both defined and declared is a definition."""
    terms: dict[str, tuple[str | None, int]] = {}
    for flag, group in ((0, names), (1, declares)):
        for name in group:
            terms.setdefault(name.lower(), (name, flag))
    for flag, group in ((0, names), (1, declares)):
        for name in group:
            for part in split_identifier(name):
                terms.setdefault(part, (None, flag))
    return [
        (term, chunk_id, int(name is not None), name, flag) for term, (name, flag) in terms.items()
    ]


def remask_blob(conn: apsw.Connection, blob_id: int, language: str) -> int:
    """Mask what the current detector finds in a stored text (written by an older detector,
    or stored from a path whose language counted fewer secrets). The blob's chunks are
    derived again (FTS rows, symbols; their vectors of both tiers go, to be made again). Returns the
    secrets newly masked."""
    content, text_size, path, stored = conn.execute(sql.BLOB_FOR_REMASK, (blob_id,)).fetchone()
    text = codec.unpack(content, text_size)
    masked = mask(text, language)
    if not masked.secrets:
        return 0
    seq = conn.execute(sql.NEXT_SECRET_SEQ, (blob_id,)).fetchone()[0]
    _drop_chunks(conn, blob_id)  # while the old text is stored: the FTS rows are deleted by it
    conn.execute(sql.DELETE_TRIGRAMS, (blob_id, text))
    conn.execute(sql.UPDATE_BLOB_CONTENT, (*codec.pack(masked.text), blob_id))
    conn.execute(sql.INSERT_TRIGRAMS, (blob_id, masked.text))
    _insert_secrets(conn, blob_id, masked.secrets, seq)
    _store_chunks(conn, blob_id, masked.text, path or "", stored)
    return len(masked.secrets)


def _drop_chunks(conn: apsw.Connection, blob_id: int) -> None:
    """A blob's chunks and all derived from them: vectors of both tiers, symbols, FTS rows (the
    chunk delete trigger reads their text from the blob, so call it before the text changes)."""
    conn.execute(sql.DELETE_VECTORS_OF_BLOB, (blob_id,))
    conn.execute(sql.DELETE_STATIC_VECTORS_OF_BLOB, (blob_id,))
    conn.execute(sql.DELETE_SYMBOLS_OF_BLOB, (blob_id,))
    conn.execute(sql.DELETE_CHUNKS_OF_BLOB, (blob_id,))


def remask_for_path(conn: apsw.Connection, sha: str, stored_language: str, path: str) -> int:
    """Content already stored, now also at `path`: mask again if that path's language counts
    more secrets (a config file holding the same bytes as a code file)."""
    language = language_for_path(path) or "text"
    if not widens(stored_language, language):
        return 0
    (blob_id,) = conn.execute(sql.BLOB_ID, (sha,)).fetchone()
    return remask_blob(conn, blob_id, language)


def remask_outdated(store) -> int:
    """Re-mask every stored text if the detector is newer than the one that wrote them; one
    transaction, then the database records the detector's version. Returns secrets masked."""
    recorded = store.meta(REDACT_VERSION_KEY)
    if recorded == str(redact.VERSION):
        return 0
    added = 0
    with store.write():
        for blob_id, language in store.conn.execute(sql.ALL_BLOBS).fetchall():
            added += remask_blob(store.conn, blob_id, language)
        added += commit_log.remask(store.conn)  # the git log's subjects
        store.set_meta(REDACT_VERSION_KEY, str(redact.VERSION))
    if added:
        # Deleted pages were overwritten (secure_delete); old WAL frames go with a checkpoint.
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return added


def _mark_cut_here(conn: apsw.Connection) -> None:
    """When this pix's chunker cuts a text (_store_chunks): if a newer pix cut the others (its
    `chunker.version` is above this one's), the record goes down to this version. A newer pix
    then cuts every text again at its next index, these included; left alone, the record said
    they were cut by the newer chunker, and they never would be (audit). Inside the write; one
    UPDATE that matches no row unless the record is newer (1.4 us)."""
    conn.execute(
        sql.LOWER_CHUNKER_VERSION, {"key": CHUNKER_VERSION_KEY, "version": str(CHUNKER_VERSION)}
    )


def rechunk_outdated(store, progress=None) -> None:
    """Cut every stored text again if the chunker that cut them is older than this one
    (pix.ingest.chunk.CHUNKER_VERSION; a database without a record is version 1), so an
    upgrade of pix reaches the texts indexed before it; a database cut by a newer pix is left
    as it is. A chunk whose model input is unchanged takes back the vector of either tier that
    input had; only new inputs are left to embed. One transaction, then the database records
    the version."""
    if int(store.meta(CHUNKER_VERSION_KEY) or 1) >= CHUNKER_VERSION:
        return
    conn = store.conn
    with store.write():
        blobs = [row[0] for row in conn.execute(sql.ALL_BLOBS).fetchall()]
        dense = dict(conn.execute(sql.VECTORS_BY_EMBED_KEY).fetchall())
        static = dict(conn.execute(sql.STATIC_VECTORS_BY_EMBED_KEY).fetchall())
        if progress is not None and blobs:
            progress.start("chunking stored files again", len(blobs))
        for blob_id in blobs:
            content, text_size, path, language = conn.execute(
                sql.BLOB_FOR_REMASK, (blob_id,)
            ).fetchone()
            text = codec.unpack(content, text_size)
            # A header's language is read from its text, and a newer rule may read it otherwise
            # (chunker 6: C++ headers); other languages follow from the name alone, and a blob
            # stored under several names keeps the one it was first stored under.
            if language in ("c", "cpp") and (path or "").lower().endswith(".h"):
                if (reread := language_for(path, text)) != language:
                    language = reread
                    conn.execute(sql.SET_BLOB_LANGUAGE, {"language": language, "id": blob_id})
            _drop_chunks(conn, blob_id)
            _store_chunks(conn, blob_id, text, path or "", language)
            for chunk_id, key in conn.execute(sql.CHUNK_KEYS_OF_BLOB, (blob_id,)).fetchall():
                if key in dense:  # a chunk has one vector, the transformer's if there is one
                    conn.execute(sql.INSERT_VECTOR, (chunk_id, dense[key]))
                elif key in static:
                    conn.execute(sql.INSERT_STATIC_VECTOR, (chunk_id, static[key]))
            if progress is not None:
                progress.advance()
        store.set_meta(CHUNKER_VERSION_KEY, str(CHUNKER_VERSION))
    if progress is not None and blobs:
        progress.finish()
