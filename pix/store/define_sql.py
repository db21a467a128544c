"""The definition step's statement (pix.retrieve.define): which chunks of a snapshot define a
name, spelled exactly (the `symbol` table keeps each definition's name as written in `name`
beside its lower-cased `term`).

Like the retrieval statement it takes the snapshot and the path filter (:paths, a JSON array
or NULL); paths of the roles in :unlifted (a JSON array, `pix_path_role`) are left out.
"""

# Chunks of the snapshot defining one of :names (a JSON array), at each path holding them, at
# most :limit rows. The term index finds the rows; the exact spelling is checked on `name`.
# Declared names (constants, fields: migrations/007_declared_names.sql) count when :declared.
DEFINING_CHUNKS = """
SELECT f.path, c.id, b.sha, c.start_line, c.end_line, c.kind, c.symbol, b.language, s.name
FROM symbol s
JOIN chunk c ON c.id = s.chunk_id
JOIN blob b ON b.id = c.blob_id
JOIN snapshot_file f ON f.blob_sha = b.sha AND f.snapshot_id = :snapshot
WHERE s.term IN (SELECT lower(value) FROM json_each(:names))
  AND s.whole = 1
  AND (s.declared = 0 OR :declared)
  AND s.name IN (SELECT value FROM json_each(:names))
  AND (:paths IS NULL OR f.path IN (SELECT value FROM json_each(:paths)))
  AND pix_path_role(f.path) NOT IN (SELECT value FROM json_each(:unlifted))
ORDER BY f.path, c.start_line, c.id
LIMIT :limit
"""
