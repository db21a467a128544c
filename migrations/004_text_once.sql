-- pix database, schema 4: each text stored once, with its secrets masked before it is written.
--
-- Until schema 3 a file's text was kept three times (zlib content, decoded text for discover,
-- chunk text for FTS5) and secrets were masked only at output, so anyone holding a copied
-- .pix.db read them with sqlite3. Now `blob.content` is the one copy: the text pix reads
-- (decoded, '\n' line ends, no BOM) with every secret the detector finds replaced by
-- [REDACTED:kind] within its line (line numbers stay true), zlib-compressed. The view
-- `blob_text` reads it as text; chunks point into it by character offsets and the view
-- `chunk_text` reads theirs; FTS5 indexes chunk_text, the trigram index blob_text. `secret`
-- says where each masked secret was (never what it was).
--
-- Reading the text needs sqlar_uncompress(content, text_size): the sqlite3 shell has it, pix
-- registers the same function on its connections.
--
-- The index content of an older layout is dropped here and rebuilt by the next `pix index`:
-- it is derived from the repository. Saved aliases are kept; the model identity in meta goes with
-- the vectors (this pix runs another build of the model).

DROP TRIGGER chunk_fts_insert;
DROP TRIGGER chunk_fts_delete;
DROP TRIGGER blob_text_insert;
DROP TRIGGER blob_text_delete;
DROP TABLE chunk_fts;
DROP TABLE blob_trigram;
DROP TABLE chunk_vec;
DROP TABLE symbol;
DROP TABLE blob_text;
DROP TABLE chunk;
DROP TABLE path_term;
DROP TABLE skipped;
DROP TABLE snapshot_file;
DROP TABLE snapshot;
DROP TABLE blob;
DELETE FROM meta WHERE key LIKE 'redact.%' OR key LIKE 'model.%';

-- One indexed state of a repository: the work tree as seen at index time, a commit's tree
-- read from git objects, or a plain folder that is not a git repository.
CREATE TABLE snapshot (
    id          INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('worktree', 'commit', 'folder')),
    root        TEXT NOT NULL,
    commit_sha  TEXT,
    branch      TEXT,
    dirty       INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    -- sha1 over the sorted (path, blob) list: two snapshots with the same fingerprint hold the same files.
    fingerprint TEXT NOT NULL
);
CREATE INDEX snapshot_commit ON snapshot(commit_sha);

-- One row per distinct file content.
-- One row per distinct file content. AUTOINCREMENT: an id is never reused, so nothing keyed
-- by an old id (trigram rows, secrets, chunks) can ever name a new row.
CREATE TABLE blob (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    -- the git blob id of the file as it is in the repository (before masking)
    sha        TEXT NOT NULL UNIQUE,
    size       INTEGER NOT NULL,  -- bytes in the repository
    line_count INTEGER NOT NULL,
    language   TEXT NOT NULL,
    -- the text pix searches and shows (secrets masked), UTF-8: text_size bytes, zlib-compressed
    -- in content unless that would not be smaller (then content is the bytes themselves)
    text_size  INTEGER NOT NULL,
    content    BLOB NOT NULL
);
CREATE VIEW blob_text(id, sha, text) AS
SELECT id, sha, CAST(sqlar_uncompress(content, text_size) AS TEXT) FROM blob;

CREATE TABLE snapshot_file (
    snapshot_id INTEGER NOT NULL REFERENCES snapshot(id) ON DELETE CASCADE,
    path        TEXT NOT NULL,
    blob_sha    TEXT NOT NULL REFERENCES blob(sha),
    -- what the file looked like on disk when read (0 for files read from git objects):
    -- an unchanged size and mtime means an unchanged file, without reading it again.
    size        INTEGER NOT NULL,
    mtime_ns    INTEGER NOT NULL,
    PRIMARY KEY (snapshot_id, path)
) WITHOUT ROWID;
CREATE INDEX snapshot_file_blob ON snapshot_file(blob_sha);

-- Every path any snapshot holds, once, with its lower-cased components and their identifier
-- parts (the path channel). Terms depend on the path alone, so a path kept by many snapshots
-- (every --at commit) is split and stored once. No foreign keys: pix gc deletes paths no
-- snapshot holds, then their terms, one statement each.
CREATE TABLE path (
    id   INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL UNIQUE
);
CREATE TABLE path_term (
    term    TEXT NOT NULL,
    path_id INTEGER NOT NULL,
    PRIMARY KEY (term, path_id)
) WITHOUT ROWID;

CREATE TABLE skipped (
    snapshot_id INTEGER NOT NULL REFERENCES snapshot(id) ON DELETE CASCADE,
    path        TEXT NOT NULL,
    reason      TEXT NOT NULL CHECK (reason IN ('binary', 'too_large', 'generated', 'minified',
                                                'secret', 'symlink', 'unreadable', 'not_text')),
    size        INTEGER NOT NULL,
    mtime_ns    INTEGER NOT NULL,
    PRIMARY KEY (snapshot_id, path)
) WITHOUT ROWID;

-- Where the masked secrets of a blob were: a secret that spans lines (a private key) is one
-- row. The values themselves are stored nowhere.
--   SELECT f.path, s.kind, s.start_line FROM secret s JOIN blob b ON b.id = s.blob_id
--   JOIN snapshot_file f ON f.blob_sha = b.sha;
CREATE TABLE secret (
    blob_id    INTEGER NOT NULL REFERENCES blob(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line   INTEGER NOT NULL,
    PRIMARY KEY (blob_id, seq)
) WITHOUT ROWID;

-- AUTOINCREMENT: FTS rows, vectors and symbols are keyed by chunk id; a reused id could
-- inherit a deleted chunk's leftovers.
CREATE TABLE chunk (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    blob_id    INTEGER NOT NULL REFERENCES blob(id),
    seq        INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    end_line   INTEGER NOT NULL,
    -- the chunk's text is blob_text.text[start_char:end_char] (characters, 0-based, end
    -- excluded)
    start_char INTEGER NOT NULL,
    end_char   INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    symbol     TEXT,
    context    TEXT,
    -- identifier parts (camelCase, snake_case, digit boundaries) not already whole words of
    -- the text, so the stock FTS5 tokenizer can match them.
    parts      TEXT NOT NULL,
    -- the first 8 bytes of sha1(what the model reads), as a signed integer: identical chunks
    -- share one embedding run.
    embed_key  INTEGER NOT NULL,
    UNIQUE (blob_id, seq)
);
CREATE INDEX chunk_embed_key ON chunk(embed_key);

-- A chunk's text, read from its blob: what FTS5 indexes, and what a person reads at the prompt.
CREATE VIEW chunk_text(id, text, parts) AS
SELECT c.id, substr(t.text, c.start_char + 1, c.end_char - c.start_char), c.parts
FROM chunk c JOIN blob_text t ON t.id = c.blob_id;

CREATE VIRTUAL TABLE chunk_fts USING fts5(
    text, parts, content='chunk_text', content_rowid='id',
    tokenize="porter unicode61 tokenchars '_'"
);
-- pix inserts a chunk's FTS row itself (it has the text at hand); deleting a chunk removes it
-- here, so a chunk's blob must outlive its chunks (pix gc deletes chunks before blobs).
CREATE TRIGGER chunk_fts_delete AFTER DELETE ON chunk BEGIN
    INSERT INTO chunk_fts(chunk_fts, rowid, text, parts)
    SELECT 'delete', old.id, substr(t.text, old.start_char + 1, old.end_char - old.start_char),
           old.parts
    FROM blob_text t WHERE t.id = old.blob_id;
END;

-- The identifier channel: each term of a chunk's defined names once. whole = 1 when the term
-- is a whole name (lower-cased; `name` then spells it as defined), 0 when it is only a part
-- of one (camelCase, snake_case and digit boundaries; `name` is NULL). No foreign key: an
-- index on chunk_id for the cascade would double the table; pix gc deletes the rows of
-- chunks that are gone in one statement.
CREATE TABLE symbol (
    term     TEXT NOT NULL,
    chunk_id INTEGER NOT NULL,
    whole    INTEGER NOT NULL,
    name     TEXT,
    PRIMARY KEY (term, chunk_id)
) WITHOUT ROWID;

-- Needs the sqlite-vec extension. Vectors are L2-normalised, scaled by 127 to int8. Blocks of
-- 128 vectors: vec0 allocates a block at a time (1,024 by default, 393 KB).
CREATE VIRTUAL TABLE chunk_vec USING vec0(
    chunk_id INTEGER PRIMARY KEY,
    embedding int8[384] distance_metric=cosine,
    chunk_size=128
);

-- Trigram index for `pix discover`: which blobs can contain a literal string. detail=none
-- keeps only which rows hold a trigram (a third of detail=full); a literal is narrowed by the
-- AND of its trigrams and every candidate verified on its text. pix inserts a blob's rows
-- itself (with the text at hand); deleting a blob removes them. The stock tokenizer only, so
-- the sqlite3 shell answers LIKE from it:
--   SELECT f.path FROM blob_trigram t JOIN blob b ON b.id = t.rowid
--   JOIN snapshot_file f ON f.blob_sha = b.sha WHERE t.text LIKE '%get!_object%' ESCAPE '!';
CREATE VIRTUAL TABLE blob_trigram USING fts5(
    text, content='blob_text', content_rowid='id',
    tokenize='trigram case_sensitive 0', detail=none
);
CREATE TRIGGER blob_trigram_delete AFTER DELETE ON blob BEGIN
    INSERT INTO blob_trigram(blob_trigram, rowid, text)
    VALUES ('delete', old.id, CAST(sqlar_uncompress(old.content, old.text_size) AS TEXT));
END;
