"""The phrase step's statements (pix.retrieve.phrase): which chunks of a snapshot may hold a
literal string, and their blobs' text to verify it on.

FTS5 narrows: a phrase query on `chunk_fts`'s text column finds the chunks whose tokens include
the phrase's tokens in a row (porter stems, case folded: a superset of the exact occurrences;
pix verifies each candidate on its text). Like the retrieval statement, it takes the snapshot
and the path filter (:paths, a JSON array or NULL), so a filtered-out file is never a
candidate; paths of the roles in :unlifted (a JSON array, `pix_path_role`) are left out too.
"""

# Chunks of the snapshot matching :fts (an FTS5 phrase query), at each path holding them, at
# most :limit rows. MATCH first: FTS5 answers it from its position lists; the snapshot and the
# paths are indexed probes per candidate.
PHRASE_CANDIDATES = """
WITH matched AS MATERIALIZED (
    SELECT rowid AS chunk_id FROM chunk_fts WHERE chunk_fts MATCH :fts
)
SELECT f.path, c.id, b.id, b.sha, c.start_line, c.end_line, c.start_char, c.end_char,
       c.kind, c.symbol, b.language
FROM matched m
JOIN chunk c ON c.id = m.chunk_id
JOIN blob b ON b.id = c.blob_id
JOIN snapshot_file f ON f.blob_sha = b.sha AND f.snapshot_id = :snapshot
WHERE (:paths IS NULL OR f.path IN (SELECT value FROM json_each(:paths)))
  AND pix_path_role(f.path) NOT IN (SELECT value FROM json_each(:unlifted))
ORDER BY f.path, c.start_line, c.id
LIMIT :limit
"""
