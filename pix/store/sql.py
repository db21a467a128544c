"""Named SQL statements for indexing, status and gc. Bound parameters only."""

BLOB_EXISTS = "SELECT 1 FROM blob WHERE sha = ?"
INSERT_BLOB = """
INSERT INTO blob(sha, size, line_count, language, content) VALUES (?, ?, ?, ?, ?)
"""
INSERT_CHUNK = """
INSERT INTO chunk(
    blob_sha, seq, start_line, end_line, kind, symbol, context, text, parts, embed_sha
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
INSERT_SYMBOL = "INSERT OR IGNORE INTO symbol(chunk_id, name, term, whole) VALUES (?, ?, ?, ?)"

LATEST_SNAPSHOT_OF_ROOT = """
SELECT id, commit_sha, branch, dirty, fingerprint FROM snapshot
WHERE root = ? AND kind IN ('worktree', 'folder')
ORDER BY id DESC LIMIT 1
"""
ANY_SNAPSHOT = "SELECT EXISTS (SELECT 1 FROM snapshot)"
COMMIT_SNAPSHOT = "SELECT id FROM snapshot WHERE kind = 'commit' AND commit_sha = ?"
SNAPSHOT_FILES = "SELECT path, blob_sha, size, mtime_ns FROM snapshot_file WHERE snapshot_id = ?"
SNAPSHOT_SKIPPED = "SELECT path, reason, size, mtime_ns FROM skipped WHERE snapshot_id = ?"
INSERT_SNAPSHOT = """
INSERT INTO snapshot(kind, root, commit_sha, branch, dirty, created_at, fingerprint)
VALUES (?, ?, ?, ?, ?, ?, ?)
"""
INSERT_SNAPSHOT_FILE = """
INSERT INTO snapshot_file(snapshot_id, path, blob_sha, size, mtime_ns) VALUES (?, ?, ?, ?, ?)
"""
INSERT_PATH_TERM = "INSERT OR IGNORE INTO path_term(snapshot_id, path, term) VALUES (?, ?, ?)"
INSERT_SKIPPED = """
INSERT INTO skipped(snapshot_id, path, reason, size, mtime_ns) VALUES (?, ?, ?, ?, ?)
"""
# A new work-tree snapshot replaces the previous one of the same root; blobs stay for `pix gc`.
DELETE_OLDER_WORKTREE_SNAPSHOTS = """
DELETE FROM snapshot WHERE root = ? AND kind IN ('worktree', 'folder') AND id <> ?
"""

# Identical chunk texts share one model run: a vector already computed for the same input.
# (Read out and written back with vec_int8(?): an INSERT ... SELECT from the int8 column loses
# the value's int8 subtype and sqlite-vec then takes the bytes for float32.)
KNOWN_VECTORS_FOR_PENDING = """
SELECT pending.id, min(known.embedding)
FROM (
    SELECT c.id, c.embed_sha FROM chunk c
    WHERE c.blob_sha IN (SELECT blob_sha FROM snapshot_file WHERE snapshot_id = :snapshot)
      AND NOT EXISTS (SELECT 1 FROM chunk_vec v WHERE v.chunk_id = c.id)
) AS pending
JOIN chunk twin ON twin.embed_sha = pending.embed_sha AND twin.id <> pending.id
JOIN chunk_vec known ON known.chunk_id = twin.id
GROUP BY pending.id
"""
# One representative text per distinct input still lacking a vector.
PENDING_EMBEDDINGS = """
SELECT c.embed_sha, min(c.context), min(c.text)
FROM chunk c
WHERE c.blob_sha IN (SELECT blob_sha FROM snapshot_file WHERE snapshot_id = :snapshot)
  AND NOT EXISTS (SELECT 1 FROM chunk_vec v WHERE v.chunk_id = c.id)
GROUP BY c.embed_sha
ORDER BY c.embed_sha
"""
CHUNKS_FOR_EMBED_SHA = """
SELECT c.id FROM chunk c
WHERE c.embed_sha = ? AND NOT EXISTS (SELECT 1 FROM chunk_vec v WHERE v.chunk_id = c.id)
"""
INSERT_VECTOR = "INSERT INTO chunk_vec(chunk_id, embedding) VALUES (?, vec_int8(?))"

# --- status
SNAPSHOTS = """
SELECT s.id, s.kind, s.root, s.commit_sha, s.branch, s.dirty, s.created_at,
       (SELECT count(*) FROM snapshot_file f WHERE f.snapshot_id = s.id) AS files,
       (SELECT count(*) FROM skipped k WHERE k.snapshot_id = s.id) AS skipped
FROM snapshot s ORDER BY s.id
"""
# The snapshot's distinct chunks (content at two paths is chunked once) and how many of them
# have a vector: status's embedded share, and the share of chunks meaning search covers.
SNAPSHOT_COUNTS = """
SELECT count(*) AS chunks,
       (SELECT count(*) FROM chunk_vec v WHERE v.chunk_id IN (
            SELECT c2.id FROM chunk c2 WHERE c2.blob_sha IN (
                SELECT blob_sha FROM snapshot_file WHERE snapshot_id = :snapshot))) AS embedded
FROM chunk c
WHERE c.blob_sha IN (SELECT blob_sha FROM snapshot_file WHERE snapshot_id = :snapshot)
"""
TOTALS = """
SELECT (SELECT count(*) FROM blob), (SELECT coalesce(sum(size), 0) FROM blob),
       (SELECT count(*) FROM chunk), (SELECT count(*) FROM chunk_vec)
"""
SKIPPED_BY_REASON = """
SELECT reason, count(*) FROM skipped WHERE snapshot_id = ? GROUP BY reason ORDER BY reason
"""

# --- gc: what no snapshot references
GC_VECTORS = """
DELETE FROM chunk_vec WHERE chunk_id IN (
    SELECT c.id FROM chunk c WHERE c.blob_sha NOT IN (SELECT blob_sha FROM snapshot_file))
"""
GC_CHUNKS = "DELETE FROM chunk WHERE blob_sha NOT IN (SELECT blob_sha FROM snapshot_file)"
GC_BLOBS = "DELETE FROM blob WHERE sha NOT IN (SELECT blob_sha FROM snapshot_file)"

# --- discover (migrations/003_trigram.sql)
# A new blob's decoded text, which the blob_text triggers index as trigrams. Same sha, same
# text: a row left by a blob deleted without the cascade is kept as it is.
INSERT_BLOB_TEXT = "INSERT INTO blob_text(sha, text) VALUES (?, ?) ON CONFLICT(sha) DO NOTHING"
# Every file of a snapshot with what discover needs to narrow and cite it: the id of its text
# row (NULL while the blob has none) and its line count.
DISCOVER_FILES = """
SELECT f.path, f.blob_sha, t.id, b.line_count
FROM snapshot_file f
JOIN blob b ON b.sha = f.blob_sha
LEFT JOIN blob_text t ON t.sha = f.blob_sha
WHERE f.snapshot_id = ?
ORDER BY f.path
"""
DISCOVER_SKIPPED = "SELECT path, reason FROM skipped WHERE snapshot_id = ? ORDER BY path"
SNAPSHOT_LACKS_TEXT = """
SELECT EXISTS (
    SELECT 1 FROM snapshot_file f
    WHERE f.snapshot_id = ? AND NOT EXISTS (SELECT 1 FROM blob_text t WHERE t.sha = f.blob_sha)
)
"""
# Blobs of a snapshot that have no text row yet (stored before migration 003), oldest first.
BLOBS_WITHOUT_TEXT = """
SELECT b.sha, b.content FROM blob b
WHERE b.sha IN (SELECT blob_sha FROM snapshot_file WHERE snapshot_id = ?)
  AND NOT EXISTS (SELECT 1 FROM blob_text t WHERE t.sha = b.sha)
ORDER BY b.rowid
LIMIT ?
"""
# Text rows holding every trigram of the FTS5 expression (quoted trigrams joined by AND / OR).
TRIGRAM_CANDIDATES = "SELECT rowid FROM blob_trigram WHERE blob_trigram MATCH ?"
BLOB_TEXT = "SELECT text FROM blob_text WHERE id = ?"
BLOB_CONTENT = "SELECT content FROM blob WHERE sha = ?"
