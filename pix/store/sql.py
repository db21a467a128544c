"""Named SQL statements for indexing, status and gc. Bound parameters only."""

# A stored blob's language, or no row: the content is new.
BLOB_LANGUAGE = "SELECT language FROM blob WHERE sha = ?"
BLOB_ID = "SELECT id FROM blob WHERE sha = ?"
INSERT_BLOB = """
INSERT INTO blob(sha, size, line_count, language, text_size, content) VALUES (?, ?, ?, ?, ?, ?)
"""
BLOB_CONTENT = "SELECT content, text_size FROM blob WHERE id = ?"
# A blob's text and the language it was stored as (which decides what the model reads of it).
BLOB_FOR_EMBEDDING = "SELECT content, text_size, language FROM blob WHERE id = ?"
# A blob's trigram rows, written and (on re-masking) deleted with the text at hand.
INSERT_TRIGRAMS = "INSERT INTO blob_trigram(rowid, text) VALUES (?, ?)"
DELETE_TRIGRAMS = "INSERT INTO blob_trigram(blob_trigram, rowid, text) VALUES ('delete', ?, ?)"
INSERT_SECRET = """
INSERT INTO secret(blob_id, seq, kind, start_line, end_line) VALUES (?, ?, ?, ?, ?)
"""
INSERT_CHUNK = """
INSERT INTO chunk(
    blob_id, seq, start_line, end_line, start_char, end_char, kind, symbol, context, parts,
    embed_key
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
INSERT_CHUNK_FTS = "INSERT INTO chunk_fts(rowid, text, parts) VALUES (?, ?, ?)"
INSERT_SYMBOL = "INSERT INTO symbol(term, chunk_id, whole, name, declared) VALUES (?, ?, ?, ?, ?)"

# --- re-masking a stored text (pix.store.content.remask_blob)
BLOB_FOR_REMASK = """
SELECT b.content, b.text_size, (SELECT min(f.path) FROM snapshot_file f WHERE f.blob_sha = b.sha),
       b.language
FROM blob b WHERE b.id = ?
"""
ALL_BLOBS = "SELECT id, language FROM blob ORDER BY id"
NEXT_SECRET_SEQ = "SELECT coalesce(max(seq) + 1, 0) FROM secret WHERE blob_id = ?"
DELETE_VECTORS_OF_BLOB = """
DELETE FROM chunk_vec WHERE chunk_id IN (SELECT id FROM chunk WHERE blob_id = ?)
"""
DELETE_STATIC_VECTORS_OF_BLOB = """
DELETE FROM chunk_vec_static WHERE chunk_id IN (SELECT id FROM chunk WHERE blob_id = ?)
"""
DELETE_SYMBOLS_OF_BLOB = """
DELETE FROM symbol WHERE chunk_id IN (SELECT id FROM chunk WHERE blob_id = ?)
"""
DELETE_CHUNKS_OF_BLOB = "DELETE FROM chunk WHERE blob_id = ?"
# Every vector of each tier by the model input it was made from (content.rechunk_outdated): a
# chunk cut again with the same input takes it back instead of being embedded again.
VECTORS_BY_EMBED_KEY = """
SELECT c.embed_key, min(v.embedding) FROM chunk c JOIN chunk_vec v ON v.chunk_id = c.id
GROUP BY c.embed_key
"""
STATIC_VECTORS_BY_EMBED_KEY = """
SELECT c.embed_key, min(v.embedding) FROM chunk c JOIN chunk_vec_static v ON v.chunk_id = c.id
GROUP BY c.embed_key
"""
CHUNK_KEYS_OF_BLOB = "SELECT id, embed_key FROM chunk WHERE blob_id = ? ORDER BY id"
UPDATE_BLOB_CONTENT = "UPDATE blob SET text_size = ?, content = ? WHERE id = ?"
SET_BLOB_LANGUAGE = "UPDATE blob SET language = :language WHERE id = :id"

LATEST_SNAPSHOT_OF_ROOT = """
SELECT id, commit_sha, branch, dirty, fingerprint FROM snapshot
WHERE root = ? AND kind IN ('worktree', 'folder')
ORDER BY id DESC LIMIT 1
"""
ANY_SNAPSHOT = "SELECT EXISTS (SELECT 1 FROM snapshot)"
# Whether a plain folder's latest snapshot holds a file under one of its subfolders: paths
# from :prefix ("sub/dir/") up to :after ("sub/dir0", '0' being the code point after '/').
FOLDER_COVERS = """
SELECT EXISTS (
    SELECT 1 FROM snapshot_file
    WHERE snapshot_id = (
        SELECT id FROM snapshot WHERE root = :root AND kind = 'folder' ORDER BY id DESC LIMIT 1
    )
    AND path > :prefix AND path < :after
)
"""
COMMIT_SNAPSHOT = "SELECT id FROM snapshot WHERE kind = 'commit' AND commit_sha = ?"
SNAPSHOT_FILES = "SELECT path, blob_sha, size, mtime_ns FROM snapshot_file WHERE snapshot_id = ?"
SNAPSHOT_SKIPPED = (
    "SELECT path, reason, size, mtime_ns, blob_sha FROM skipped WHERE snapshot_id = ?"
)
INSERT_SNAPSHOT = """
INSERT INTO snapshot(kind, root, commit_sha, branch, dirty, created_at, fingerprint)
VALUES (?, ?, ?, ?, ?, ?, ?)
"""
INSERT_SNAPSHOT_FILE = """
INSERT INTO snapshot_file(snapshot_id, path, blob_sha, size, mtime_ns, recent_commits)
VALUES (?, ?, ?, ?, ?, ?)
"""
# A snapshot kept as it was (nothing changed) but written before its history was counted.
SNAPSHOT_UNCOUNTED = (
    "SELECT EXISTS (SELECT 1 FROM snapshot_file WHERE snapshot_id = ? AND recent_commits IS NULL)"
)
SNAPSHOT_RECENT_COMMITS = "SELECT path, recent_commits FROM snapshot_file WHERE snapshot_id = ?"
# A snapshot's history counts: zero, then each counted path (by its primary key: a join to
# json_each scanned the whole object per file, minutes at 60,000 files).
ZERO_RECENT_COMMITS = "UPDATE snapshot_file SET recent_commits = 0 WHERE snapshot_id = :snapshot"
COUNT_RECENT_COMMITS = """
UPDATE snapshot_file SET recent_commits = :commits WHERE snapshot_id = :snapshot AND path = :path
"""
# A path not seen before gets an id (RETURNING gives none for a known one) and then its terms.
INSERT_PATH = "INSERT INTO path(path) VALUES (?) ON CONFLICT(path) DO NOTHING RETURNING id"
INSERT_PATH_TERM = "INSERT OR IGNORE INTO path_term(term, path_id) VALUES (?, ?)"
# Texts cut by this pix stored in a database a newer pix cut (its chunker version recorded
# above this one's): the record goes down to this version, so the newer pix cuts every text
# again, these included (pix.store.content._mark_cut_here).
LOWER_CHUNKER_VERSION = """
UPDATE meta SET value = :version
WHERE key = :key AND CAST(value AS INTEGER) > CAST(:version AS INTEGER)
"""
INSERT_SKIPPED = """
INSERT INTO skipped(snapshot_id, path, reason, size, mtime_ns, blob_sha) VALUES (?, ?, ?, ?, ?, ?)
"""
# A new work-tree snapshot replaces the previous one of the same root; blobs stay for `pix gc`.
DELETE_OLDER_WORKTREE_SNAPSHOTS = """
DELETE FROM snapshot WHERE root = ? AND kind IN ('worktree', 'folder') AND id <> ?
"""

# The blobs of a snapshot, by id: what its chunks hang off.
_SNAPSHOT_BLOBS = """
SELECT b.id FROM snapshot_file f JOIN blob b ON b.sha = f.blob_sha WHERE f.snapshot_id = :snapshot
"""
# Identical chunk texts share one model run: a vector already computed for the same input.
# (Read out and written back with vec_int8(?): an INSERT ... SELECT from the int8 column loses
# the value's int8 subtype and sqlite-vec then takes the bytes for float32.)
KNOWN_VECTORS_FOR_PENDING = f"""
SELECT pending.id, min(known.embedding)
FROM (
    SELECT c.id, c.embed_key FROM chunk c
    WHERE c.blob_id IN ({_SNAPSHOT_BLOBS})
      AND NOT EXISTS (SELECT 1 FROM chunk_vec v WHERE v.chunk_id = c.id)
) AS pending
JOIN chunk twin ON twin.embed_key = pending.embed_key AND twin.id <> pending.id
JOIN chunk_vec known ON known.chunk_id = twin.id
GROUP BY pending.id
"""
# Chunks still lacking a vector, with where their text is: one representative per distinct
# input (the lowest chunk id) is run through the model. Texts are cut from their blob's text in
# Python, so each blob is inflated once.
PENDING_EMBEDDINGS = f"""
SELECT c.embed_key, c.context, c.blob_id, c.start_char, c.end_char
FROM chunk c
WHERE c.id IN (
    SELECT min(p.id) FROM chunk p
    WHERE p.blob_id IN ({_SNAPSHOT_BLOBS})
      AND NOT EXISTS (SELECT 1 FROM chunk_vec v WHERE v.chunk_id = p.id)
    GROUP BY p.embed_key)
ORDER BY c.embed_key
"""
CHUNKS_FOR_EMBED_KEY = """
SELECT c.id FROM chunk c
WHERE c.embed_key = ? AND NOT EXISTS (SELECT 1 FROM chunk_vec v WHERE v.chunk_id = c.id)
"""
INSERT_VECTOR = "INSERT INTO chunk_vec(chunk_id, embedding) VALUES (?, vec_int8(?))"

# --- the static tier (migrations/006_static_tier.sql)
# Chunks of a snapshot with neither vector yet, with where their text is (as PENDING_EMBEDDINGS).
STATIC_PENDING = f"""
SELECT c.id, c.context, c.blob_id, c.start_char, c.end_char
FROM chunk c
WHERE c.blob_id IN ({_SNAPSHOT_BLOBS})
  AND NOT EXISTS (SELECT 1 FROM chunk_vec v WHERE v.chunk_id = c.id)
  AND NOT EXISTS (SELECT 1 FROM chunk_vec_static s WHERE s.chunk_id = c.id)
ORDER BY c.id
"""
INSERT_STATIC_VECTOR = "INSERT INTO chunk_vec_static(chunk_id, embedding) VALUES (?, vec_int8(?))"
# Which of these chunks (a JSON array of ids) have a vector of either tier already.
HAVE_A_VECTOR = """
SELECT chunk_id FROM chunk_vec_static WHERE chunk_id IN (SELECT value FROM json_each(?))
UNION
SELECT chunk_id FROM chunk_vec WHERE chunk_id IN (SELECT value FROM json_each(?1))
"""
# Which of a question's best candidates (a JSON array of chunk ids, best first) the
# transformer has not embedded yet, in that order, with what it reads for each
# (pix/retrieve/refine.py).
CHUNKS_WITHOUT_VECTOR = """
SELECT c.id, c.embed_key, c.context, c.blob_id, c.start_char, c.end_char
FROM json_each(?) j JOIN chunk c ON c.id = j.value
WHERE NOT EXISTS (SELECT 1 FROM chunk_vec v WHERE v.chunk_id = c.id)
ORDER BY j.key
"""
# A chunk that got its transformer vector no longer needs its static one.
DELETE_STATIC_VECTOR = "DELETE FROM chunk_vec_static WHERE chunk_id = ?"
DELETE_ALL_STATIC_VECTORS = "DELETE FROM chunk_vec_static"

# --- status
SNAPSHOTS = """
SELECT s.id, s.kind, s.root, s.commit_sha, s.branch, s.dirty, s.created_at,
       (SELECT count(*) FROM snapshot_file f WHERE f.snapshot_id = s.id) AS files,
       (SELECT count(*) FROM skipped k WHERE k.snapshot_id = s.id) AS skipped
FROM snapshot s ORDER BY s.id
"""
# The snapshot's distinct chunks (content at two paths is chunked once) and how many of them
# have a vector: status's embedded share, and the share of chunks meaning search covers.
# Vectors are counted in vec0's own _rowids tables (one row a vector, its rowid the chunk's id,
# as knn.py reads them): vec0 answers count(*) and `chunk_id IN (...)` by reading every vector
# (these two statements took 220 ms on a database of 248,000 chunks, paid by each one-shot
# query and by `pix status` for each snapshot), where its _rowids table answers by key in a few.
SNAPSHOT_COUNTS = f"""
WITH snapshot_chunk AS (SELECT c.id FROM chunk c WHERE c.blob_id IN ({_SNAPSHOT_BLOBS}))
SELECT count(*) AS chunks,
       (SELECT count(*) FROM snapshot_chunk s JOIN chunk_vec_rowids v ON v.rowid = s.id)
           AS embedded,
       (SELECT count(*) FROM snapshot_chunk s JOIN chunk_vec_static_rowids v ON v.rowid = s.id)
           AS static
FROM snapshot_chunk
"""
# Every chunk and vector in the database: when a snapshot holds them all, its scope is the
# whole database (pix.query.QueryEngine.whole_scope).
CHUNK_TOTALS = """
SELECT (SELECT count(*) FROM chunk), (SELECT count(*) FROM chunk_vec_rowids),
       (SELECT count(*) FROM chunk_vec_static_rowids)
"""
TOTALS = """
SELECT (SELECT count(*) FROM blob), (SELECT coalesce(sum(size), 0) FROM blob),
       (SELECT count(*) FROM chunk), (SELECT count(*) FROM chunk_vec_rowids)
"""
SKIPPED_BY_REASON = """
SELECT reason, count(*) FROM skipped WHERE snapshot_id = ? GROUP BY reason ORDER BY reason
"""

# --- gc: what no snapshot references. Vectors and chunks before their blobs (the FTS delete
# trigger reads a chunk's text from its blob); secrets and trigram rows go with the blob.
_UNREFERENCED_BLOBS = "SELECT id FROM blob WHERE sha NOT IN (SELECT blob_sha FROM snapshot_file)"
# Commit snapshots beyond the `?` newest (by when they were indexed); work-tree snapshots stay.
GC_OLD_COMMIT_SNAPSHOTS = """
DELETE FROM snapshot WHERE kind = 'commit' AND id NOT IN (
    SELECT id FROM snapshot WHERE kind = 'commit' ORDER BY id DESC LIMIT ?)
"""
# The work trees of other folders in a folder's own .pix.db: a repository copied or moved
# with it leaves its old folder's snapshot behind once it is indexed where it is now.
GC_OTHER_TREES = """
DELETE FROM snapshot WHERE kind IN ('worktree', 'folder') AND root <> :root
  AND EXISTS (SELECT 1 FROM snapshot WHERE kind IN ('worktree', 'folder') AND root = :root)
"""
GC_VECTORS = f"""
DELETE FROM chunk_vec WHERE chunk_id IN (
    SELECT c.id FROM chunk c WHERE c.blob_id IN ({_UNREFERENCED_BLOBS}))
"""
GC_STATIC_VECTORS = f"""
DELETE FROM chunk_vec_static WHERE chunk_id IN (
    SELECT c.id FROM chunk c WHERE c.blob_id IN ({_UNREFERENCED_BLOBS}))
"""
GC_CHUNKS = f"DELETE FROM chunk WHERE blob_id IN ({_UNREFERENCED_BLOBS})"
GC_SYMBOLS = "DELETE FROM symbol WHERE chunk_id NOT IN (SELECT id FROM chunk)"
GC_BLOBS = "DELETE FROM blob WHERE sha NOT IN (SELECT blob_sha FROM snapshot_file)"
GC_PATHS = "DELETE FROM path WHERE path NOT IN (SELECT path FROM snapshot_file)"
GC_PATH_TERMS = "DELETE FROM path_term WHERE path_id NOT IN (SELECT id FROM path)"
# A commit's files go with it (ON DELETE CASCADE), its FTS row by trigger.
GC_LOG_COMMITS = """
DELETE FROM log_commit WHERE NOT EXISTS (
    SELECT 1 FROM snapshot_log_commit s WHERE s.commit_id = log_commit.id)
"""

# --- discover
# Every file of a snapshot with what discover needs to narrow and cite it: its blob id (the
# trigram index's rowid) and its line count.
DISCOVER_FILES = """
SELECT f.path, f.blob_sha, b.id, b.line_count
FROM snapshot_file f JOIN blob b ON b.sha = f.blob_sha
WHERE f.snapshot_id = ?
ORDER BY f.path
"""
DISCOVER_SKIPPED = "SELECT path, reason FROM skipped WHERE snapshot_id = ? ORDER BY path"
# Blob ids holding every trigram of the FTS5 expression (quoted trigrams joined by AND / OR).
TRIGRAM_CANDIDATES = "SELECT rowid FROM blob_trigram WHERE blob_trigram MATCH ?"
# Where a blob's masked secrets were, by line (pix.output.shown).
SECRETS_OF_BLOB = """
SELECT s.seq, s.kind, s.start_line, s.end_line FROM secret s JOIN blob b ON b.id = s.blob_id
WHERE b.sha = ? ORDER BY s.seq
"""
