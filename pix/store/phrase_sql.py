"""The phrase step's statements (pix.retrieve.phrase): which files of a snapshot hold a literal
string, and which chunks hold each place it occurs.

The trigram index (`blob_trigram`, detail=none) narrows: a blob holding every trigram of the
phrase may hold the phrase; pix then verifies each candidate on its text. Both statements take
the snapshot and the path filter (:paths, a JSON array or NULL) like the retrieval statement,
so a filtered-out file is never a candidate.
"""

# Blobs of the snapshot that hold every trigram of :expr (an FTS5 AND of quoted trigrams), with
# their stored text (secrets masked), at most :limit of them. MATCH first: FTS5 answers it from
# its doclists; the snapshot check is an indexed probe per candidate.
PHRASE_CANDIDATES = """
SELECT b.id, b.content, b.text_size
FROM blob b
WHERE b.id IN (SELECT rowid FROM blob_trigram WHERE blob_trigram MATCH :expr)
  AND EXISTS (
      SELECT 1 FROM snapshot_file f
      WHERE f.blob_sha = b.sha AND f.snapshot_id = :snapshot
        AND (:paths IS NULL OR f.path IN (SELECT value FROM json_each(:paths)))
  )
ORDER BY b.id
LIMIT :limit
"""

# For each verified occurrence [blob id, start char, end char, phrase index, line] in :spans (a JSON
# array), every chunk whose text holds it whole, at every path of the snapshot holding the blob.
# Chunks are whole lines and an occurrence lies within one line, so one chunk at least holds it;
# overlapping window chunks may both hold it.
PHRASE_CHUNKS = """
WITH span(blob_id, start_char, end_char, phrase, line) AS (
    SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'),
           json_extract(value, '$[2]'), json_extract(value, '$[3]'), json_extract(value, '$[4]')
    FROM json_each(:spans)
)
SELECT f.path, c.id, b.sha, c.start_line, c.end_line, c.kind, c.symbol, b.language,
       s.phrase, s.line
FROM span s
JOIN chunk c ON c.blob_id = s.blob_id
            AND c.start_char <= s.start_char AND c.end_char >= s.end_char
JOIN blob b ON b.id = s.blob_id
JOIN snapshot_file f ON f.blob_sha = b.sha AND f.snapshot_id = :snapshot
WHERE :paths IS NULL OR f.path IN (SELECT value FROM json_each(:paths))
ORDER BY f.path, c.start_line, c.id, s.start_char
"""
