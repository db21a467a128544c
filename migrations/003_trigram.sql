-- Trigram index for `pix discover`: which blobs can contain a literal string.
--
-- blob.content is zlib, which SQL cannot read, so the decoded text (UTF-8, '\n' line ends, no
-- BOM: what pix's chunker and line numbers see) is stored once more here, uncompressed. That
-- costs about the source size again, and buys three things:
--   * an external-content FTS5 table whose rows can be deleted (a contentless one needs the
--     original text to delete a row, and `contentless_delete` needs SQLite 3.43, newer than
--     the sqlite3 shell of many systems);
--   * verification reads the text straight from SQL, without inflating zlib;
--   * the text is searchable at the sqlite3 prompt, the trigram index answering LIKE itself:
--       SELECT f.path FROM blob_trigram t JOIN blob_text b ON b.id = t.rowid
--       JOIN snapshot_file f ON f.blob_sha = b.sha
--       WHERE t.text LIKE '%get!_object%' ESCAPE '!';  -- LIKE ignores ASCII case
--       SELECT rowid FROM blob_trigram WHERE blob_trigram MATCH '"get" AND "et_" AND "t_o"';
--
-- detail=none keeps only which rows hold a trigram, not where: a third of the size of
-- detail=full and half its build time, on the keyword-indexing hot path. Phrase queries need
-- positions, so a literal is narrowed by the AND of its trigrams (a superset of the blobs that
-- contain it) and every candidate is then verified on its text.
--
-- Blobs stored before this migration have no row here yet. SQL cannot inflate their zlib
-- content, so `pix discover` fills them in from Python before it searches (pix/discover/
-- trigram.py), and scans whatever it could not fill, saying so in its response. What is still
-- missing is always visible:
--   SELECT count(*) FROM blob WHERE sha NOT IN (SELECT sha FROM blob_text);
CREATE TABLE blob_text (
    id   INTEGER PRIMARY KEY,
    -- Content-addressed like blob: one row per sha. `pix gc` deletes blobs, and the cascade
    -- deletes their text (and, by trigger, their trigrams).
    sha  TEXT NOT NULL UNIQUE REFERENCES blob(sha) ON DELETE CASCADE,
    text TEXT NOT NULL
);

-- The stock tokenizer only, so every sqlite3 shell (3.34 or newer) can read the table.
CREATE VIRTUAL TABLE blob_trigram USING fts5(
    text, content='blob_text', content_rowid='id',
    tokenize='trigram case_sensitive 0', detail=none
);
CREATE TRIGGER blob_text_insert AFTER INSERT ON blob_text BEGIN
    INSERT INTO blob_trigram(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER blob_text_delete AFTER DELETE ON blob_text BEGIN
    INSERT INTO blob_trigram(blob_trigram, rowid, text) VALUES ('delete', old.id, old.text);
END;
