-- pix database, schema 1. Every table is meant to be read at the sqlite3 prompt.
-- File contents are zlib streams: in the sqlite3 shell, sqlar_uncompress(content, size) reads them.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

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

-- One row per distinct file content, keyed by its git blob id.
CREATE TABLE blob (
    sha        TEXT PRIMARY KEY,
    size       INTEGER NOT NULL,
    line_count INTEGER NOT NULL,
    language   TEXT NOT NULL,
    content    BLOB NOT NULL
);

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

-- Lower-cased path components and their identifier parts, for the path channel.
CREATE TABLE path_term (
    snapshot_id INTEGER NOT NULL REFERENCES snapshot(id) ON DELETE CASCADE,
    path        TEXT NOT NULL,
    term        TEXT NOT NULL,
    PRIMARY KEY (snapshot_id, term, path)
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

CREATE TABLE chunk (
    id         INTEGER PRIMARY KEY,
    blob_sha   TEXT NOT NULL REFERENCES blob(sha),
    seq        INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    end_line   INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    symbol     TEXT,
    context    TEXT,
    text       TEXT NOT NULL,
    -- identifier parts (camelCase, snake_case, digit boundaries) not already whole words of text,
    -- so the stock FTS5 tokenizer can match them.
    parts      TEXT NOT NULL,
    -- sha1 of what the model embeds: identical chunks share one embedding run.
    embed_sha  TEXT NOT NULL,
    UNIQUE (blob_sha, seq)
);
CREATE INDEX chunk_embed_sha ON chunk(embed_sha);

CREATE VIRTUAL TABLE chunk_fts USING fts5(
    text, parts, content='chunk', content_rowid='id',
    tokenize="porter unicode61 tokenchars '_'"
);
CREATE TRIGGER chunk_fts_insert AFTER INSERT ON chunk BEGIN
    INSERT INTO chunk_fts(rowid, text, parts) VALUES (new.id, new.text, new.parts);
END;
CREATE TRIGGER chunk_fts_delete AFTER DELETE ON chunk BEGIN
    INSERT INTO chunk_fts(chunk_fts, rowid, text, parts) VALUES ('delete', old.id, old.text, old.parts);
END;

-- Names defined in a chunk (whole = 1) and their lower-cased parts (whole = 0).
CREATE TABLE symbol (
    chunk_id INTEGER NOT NULL REFERENCES chunk(id) ON DELETE CASCADE,
    name     TEXT NOT NULL,
    term     TEXT NOT NULL,
    whole    INTEGER NOT NULL,
    PRIMARY KEY (term, chunk_id, name)
) WITHOUT ROWID;
CREATE INDEX symbol_chunk ON symbol(chunk_id);

-- Needs the sqlite-vec extension. Vectors are L2-normalised, scaled by 127 to int8.
CREATE VIRTUAL TABLE chunk_vec USING vec0(
    chunk_id INTEGER PRIMARY KEY,
    embedding int8[384] distance_metric=cosine
);
