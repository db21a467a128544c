"""The retrieval statement: five channels and their fusion, in one SQL statement.

Every channel is restricted to `scope`: the chosen snapshot's chunks at paths that pass the
path filters, so a filtered-out file cannot come back through any channel. Each channel ranks
at most :depth candidates. Fusion is weighted reciprocal-rank fusion (RRF) or
distribution-based score fusion (DBSF, each channel's scores scaled by mean ± 3 sd). A path prior
(`pix_path_role`, a function the connection registers) multiplies the fused score.

Parameters: :snapshot, :paths (JSON array or NULL), :qvec (int8 query vector), :svec (the
query's static-tier vector), :fts (FTS5 query), :ident_terms and :path_terms (JSON arrays of
the query terms the identifier and path channels match; an issue-shaped query gives each its
own, pix/retrieve/evidence.py), :code_terms (terms of the query's code-shaped words: only
these may match a name's parts),
:depth, :path_depth, :rrf_k, :w_dense, :w_static, :w_bm25, :w_ident, :w_path, :priors (0/1),
:p_test, :p_docs, :p_example, :p_vendored, :p_config.
"""

# `scope` as a set restricts a vector scan (vec0 takes the chunk ids to keep) and the FTS
# matches (_FTS_IN_SCOPE); the other channels find a few hundred candidates and locate each
# through indexes.
_SCOPE = """
WITH
scope AS MATERIALIZED (
    SELECT f.path, c.id AS chunk_id
    FROM snapshot_file f JOIN blob b ON b.sha = f.blob_sha JOIN chunk c ON c.blob_id = b.id
    WHERE f.snapshot_id = :snapshot
      AND (:paths IS NULL OR f.path IN (SELECT value FROM json_each(:paths)))
),
-- A candidate's paths in scope (a blob may sit at several), found through chunk, blob and
-- snapshot_file's blob index. Not materialized: joined to a channel's few hundred candidates
-- it is three index lookups each, where a join to the materialized scope made SQLite build an
-- automatic index over every chunk in scope once per channel (5 x 11,000 rows on pylint).
located(path, chunk_id) AS (
    SELECT f.path, c.id FROM chunk c JOIN blob b ON b.id = c.blob_id
    JOIN snapshot_file f ON f.blob_sha = b.sha
    WHERE f.snapshot_id = :snapshot
      AND (:paths IS NULL OR f.path IN (SELECT value FROM json_each(:paths)))
),
"""

# The vector scans. Restricted to the scope in general; when the scope is the whole database
# (no path filter, and the snapshot holds every chunk and every vector: pix.query
# whole_scope) the restriction keeps every row, and dropping it spares building the list of
# every chunk in scope for vec0 on each query. Same rows either way.
_KNN_SCOPED = """
knn AS MATERIALIZED (
    SELECT chunk_id, distance
    FROM chunk_vec
    WHERE embedding MATCH vec_int8(:qvec) AND k = :depth
      AND chunk_id IN (SELECT chunk_id FROM scope)
),
knn_static AS MATERIALIZED (
    SELECT chunk_id, distance
    FROM chunk_vec_static
    WHERE embedding MATCH vec_int8(:svec) AND k = :depth
      AND chunk_id IN (SELECT chunk_id FROM scope)
),
"""
_KNN_WHOLE = """
knn AS MATERIALIZED (
    SELECT chunk_id, distance
    FROM chunk_vec
    WHERE embedding MATCH vec_int8(:qvec) AND k = :depth
),
knn_static AS MATERIALIZED (
    SELECT chunk_id, distance
    FROM chunk_vec_static
    WHERE embedding MATCH vec_int8(:svec) AND k = :depth
),
"""

# The same rows when a warm engine found them in memory (pix/retrieve/knn.py: :dense_near
# and :static_near, JSON arrays of [chunk id, distance], the scan's rows to the bit).
_KNN_GIVEN = """
knn AS MATERIALIZED (
    SELECT j.value ->> 0 AS chunk_id, j.value ->> 1 AS distance FROM json_each(:dense_near) j
),
knn_static AS MATERIALIZED (
    SELECT j.value ->> 0 AS chunk_id, j.value ->> 1 AS distance FROM json_each(:static_near) j
),
"""
# The scans on their own (what _KNN_WHOLE runs) and the JSON read (what _KNN_GIVEN runs): the
# two ways of finding a channel's candidates, side by side (tests/test_knn.py, bench/knn_bench).
DENSE_SCAN = "SELECT chunk_id, distance FROM chunk_vec WHERE embedding MATCH vec_int8(?) AND k = ?"
STATIC_SCAN = (
    "SELECT chunk_id, distance FROM chunk_vec_static WHERE embedding MATCH vec_int8(?) AND k = ?"
)
NEAR_FROM_JSON = "SELECT j.value ->> 0, j.value ->> 1 FROM json_each(?) j"
DENSE_VECTORS = "SELECT chunk_id, embedding FROM chunk_vec ORDER BY chunk_id"
STATIC_VECTORS = "SELECT chunk_id, embedding FROM chunk_vec_static ORDER BY chunk_id"
# Where vec0 keeps each vector (its own _rowids table: block, offset in block): it decides
# between equal distances.
DENSE_STORED = "SELECT rowid, chunk_id, chunk_offset FROM chunk_vec_rowids ORDER BY rowid"
STATIC_STORED = "SELECT rowid, chunk_id, chunk_offset FROM chunk_vec_static_rowids ORDER BY rowid"
# How many rows a table has, and how many of them are some chunks' (a JSON array of their
# ids, each found by its key).
DENSE_ROWS = """
SELECT (SELECT count(*) FROM chunk_vec_rowids),
       (SELECT count(*) FROM json_each(?) j JOIN chunk_vec_rowids r ON r.rowid = j.value)
"""
STATIC_ROWS = """
SELECT (SELECT count(*) FROM chunk_vec_static_rowids),
       (SELECT count(*) FROM json_each(?) j JOIN chunk_vec_static_rowids r ON r.rowid = j.value)
"""
# The same for some chunks (a JSON array of their ids): a snapshot's, when the database holds
# others' too. Each is looked up by its key (vec0 answers `chunk_id IN (...)` by a scan).
DENSE_VECTORS_OF = """
SELECT v.chunk_id, v.embedding FROM json_each(?) j JOIN chunk_vec v ON v.chunk_id = j.value
ORDER BY v.chunk_id
"""
STATIC_VECTORS_OF = """
SELECT v.chunk_id, v.embedding FROM json_each(?) j JOIN chunk_vec_static v ON v.chunk_id = j.value
ORDER BY v.chunk_id
"""
DENSE_STORED_OF = """
SELECT r.rowid, r.chunk_id, r.chunk_offset
FROM json_each(?) j JOIN chunk_vec_rowids r ON r.rowid = j.value ORDER BY r.rowid
"""
STATIC_STORED_OF = """
SELECT r.rowid, r.chunk_id, r.chunk_offset
FROM json_each(?) j JOIN chunk_vec_static_rowids r ON r.rowid = j.value ORDER BY r.rowid
"""
# The chunks in a query's scope (the snapshot's, at the paths a filter lets through: :paths, a
# JSON array, or NULL for every path), as _SCOPE above selects them.
SCOPE_CHUNK_IDS = """
SELECT DISTINCT c.id
FROM snapshot_file f JOIN blob b ON b.sha = f.blob_sha JOIN chunk c ON c.blob_id = b.id
WHERE f.snapshot_id = :snapshot
  AND (:paths IS NULL OR f.path IN (SELECT value FROM json_each(:paths)))
ORDER BY c.id
"""

# An FTS5 match may name a chunk outside the scope (another snapshot's, an older version's):
# those are dropped as the matches are read, before bm25() scores them. A database of many
# snapshots holds many versions of each chunk (sphinx's 41: 69,179 matches for a question,
# 4,809 of them in scope); scoring them all first took the words-only statement 107 ms, the
# filter first 31 (bench/README.md, scope_bench). The `+` keeps the scope out of FTS5's plan,
# which would otherwise run the MATCH once per chunk in scope. In a whole-database scope every
# FTS row is a chunk in scope (a chunk's row goes with it: the chunk_fts_delete trigger), so
# the filter is left out.
_FTS_IN_SCOPE = """
      AND +rowid IN (SELECT chunk_id FROM scope)"""
_FTS_WHOLE = ""

_CHANNELS_A = """
dense AS (
    SELECT chunk_id, 1.0 - distance AS score,
           row_number() OVER (ORDER BY distance, chunk_id) AS rank
    FROM knn
    WHERE :w_dense > 0
),
-- The static tier: chunks the transformer has not embedded yet have a static vector instead
-- (another space, so its own channel, ranked on its own).
static AS (
    SELECT chunk_id, 1.0 - distance AS score,
           row_number() OVER (ORDER BY distance, chunk_id) AS rank
    FROM knn_static
    WHERE :w_static > 0
),
-- The matches, scored; in a scoped statement only those in scope (_FTS_IN_SCOPE).
fts_match AS MATERIALIZED (
    SELECT rowid AS chunk_id, -bm25(chunk_fts, 1.0, 0.5) AS score
    FROM chunk_fts
    WHERE :w_bm25 > 0 AND chunk_fts MATCH :fts"""

_CHANNELS_B = """
),
bm25 AS (
    SELECT chunk_id, score, row_number() OVER (ORDER BY score DESC, chunk_id) AS rank
    FROM (
        SELECT chunk_id, score FROM fts_match
        ORDER BY score DESC, chunk_id
        LIMIT :depth
    )
),
ident AS (
    SELECT chunk_id, score, row_number() OVER (ORDER BY score DESC, chunk_id) AS rank
    FROM (
        SELECT s.chunk_id, count(DISTINCT s.term) + 0.5 * max(s.whole) AS score
        FROM symbol s
        WHERE :w_ident > 0
          AND s.term IN (SELECT value FROM json_each(:ident_terms))
          AND (s.whole = 1 OR s.term IN (SELECT value FROM json_each(:code_terms)))
          AND s.declared = 0  -- definitions only (migrations/007_declared_names.sql)
          AND EXISTS (SELECT 1 FROM located l WHERE l.chunk_id = s.chunk_id)
        GROUP BY s.chunk_id
        ORDER BY score DESC, s.chunk_id
        LIMIT :depth
    )
),
path_hit AS (
    SELECT path, score, row_number() OVER (ORDER BY score DESC, length(path), path) AS rank
    FROM (
        SELECT p.path, count(*) AS score
        FROM path_term t JOIN path p ON p.id = t.path_id
        WHERE :w_path > 0
          AND t.term IN (SELECT value FROM json_each(:path_terms))
          AND EXISTS (SELECT 1 FROM located l WHERE l.path = p.path)
        GROUP BY p.path
        ORDER BY score DESC, length(p.path), p.path
        LIMIT :path_depth
    )
),
-- CROSS JOIN: each channel's candidates are the outer loop, each located by index. Left to
-- itself the planner took the scope as the outer loop for bm25 and ident (every chunk in
-- scope, with an automatic index on the candidates: 9 of pylint's 27 ms).
hit(path, chunk_id, channel, rank, score) AS (
    SELECT s.path, s.chunk_id, 'dense', d.rank, d.score
    FROM dense d CROSS JOIN located s USING (chunk_id)
    UNION ALL
    SELECT s.path, s.chunk_id, 'static', t.rank, t.score
    FROM static t CROSS JOIN located s USING (chunk_id)
    UNION ALL
    SELECT s.path, s.chunk_id, 'bm25', b.rank, b.score
    FROM bm25 b CROSS JOIN located s USING (chunk_id)
    UNION ALL
    SELECT s.path, s.chunk_id, 'ident', i.rank, i.score
    FROM ident i CROSS JOIN located s USING (chunk_id)
    UNION ALL
    SELECT s.path, s.chunk_id, 'path', p.rank, p.score
    FROM path_hit p CROSS JOIN located s USING (path)
),
weight(channel, w) AS (
    VALUES ('dense', :w_dense), ('static', :w_static), ('bm25', :w_bm25), ('ident', :w_ident),
           ('path', :w_path)
),
"""

# RRF: each channel adds w / (k + rank).
_RRF = """
contribution AS (
    SELECT h.path, h.chunk_id, h.channel, h.rank, h.score, w.w AS weight,
           w.w / (:rrf_k + h.rank) AS part
    FROM hit h CROSS JOIN weight w USING (channel)  -- not an automatic index on every hit
),
"""

# DBSF: each channel's raw scores scaled to [0, 1] by its own mean ± 3 standard deviations.
_DBSF = """
stats AS (
    SELECT channel, avg(score) AS mean,
           sqrt(max(avg(score * score) - avg(score) * avg(score), 0.0)) AS sd
    FROM (SELECT DISTINCT chunk_id, channel, score FROM hit)
    GROUP BY channel
),
contribution AS (
    SELECT h.path, h.chunk_id, h.channel, h.rank, h.score, w.w AS weight,
           w.w * CASE WHEN st.sd = 0 THEN 1.0
                      ELSE min(max((h.score - (st.mean - 3 * st.sd)) / (6 * st.sd), 0.0), 1.0)
                 END AS part
    FROM hit h JOIN weight w USING (channel) JOIN stats st USING (channel)
),
"""

_FUSE = """
fused AS MATERIALIZED (
    SELECT path, chunk_id, sum(part) AS fused,
           -- the hit's channels as Python reads them: {name: {rank, score, weight,
           -- contribution}}, names in order (an explanation prints them so)
           json_group_object(
               channel,
               json_object('rank', rank, 'score', score, 'weight', weight, 'contribution', part)
               ORDER BY channel
           ) AS channels
    FROM contribution
    WHERE weight > 0
    GROUP BY path, chunk_id
),
prior(role, factor) AS (
    VALUES ('source', 1.0), ('test', :p_test), ('docs', :p_docs), ('example', :p_example),
           ('vendored', :p_vendored), ('config', :p_config)
),
-- One call of the (Python) role function per distinct path, not per chunk.
path_role AS MATERIALIZED (
    SELECT path, pix_path_role(path) AS role FROM (SELECT DISTINCT path FROM fused)
)
SELECT f.path, f.chunk_id, b.sha, c.start_line, c.end_line, c.kind, c.symbol,
       f.fused * CASE WHEN :priors THEN p.factor ELSE 1.0 END AS score,
       f.fused, r.role, b.language, f.channels
FROM fused f
JOIN chunk c ON c.id = f.chunk_id
JOIN blob b ON b.id = c.blob_id
JOIN path_role r USING (path)
JOIN prior p ON p.role = r.role
ORDER BY score DESC, f.path, c.start_line, f.chunk_id
"""

_SCOPED = _SCOPE + _KNN_SCOPED + _CHANNELS_A + _FTS_IN_SCOPE + _CHANNELS_B
_WHOLE = _SCOPE + _KNN_WHOLE + _CHANNELS_A + _FTS_WHOLE + _CHANNELS_B
SEARCH_RRF = _SCOPED + _RRF + _FUSE
SEARCH_DBSF = _SCOPED + _DBSF + _FUSE
# The same statements for a scope that is the whole database (same rows, less work).
SEARCH_RRF_WHOLE = _WHOLE + _RRF + _FUSE
SEARCH_DBSF_WHOLE = _WHOLE + _DBSF + _FUSE
# And for a whole-database scope whose nearest vectors a warm engine found (same rows again).
_GIVEN = _SCOPE + _KNN_GIVEN + _CHANNELS_A + _FTS_WHOLE + _CHANNELS_B
SEARCH_RRF_GIVEN = _GIVEN + _RRF + _FUSE
SEARCH_DBSF_GIVEN = _GIVEN + _DBSF + _FUSE
# And for any scope whose meaning candidates the caller found within it: a warm engine's
# (pix/retrieve/knn.py, chosen among the scope's rows) or a refined second pass's
# (pix/retrieve/refine.py: from a pass restricted to the scope already).
_GIVEN_SCOPED = _SCOPE + _KNN_GIVEN + _CHANNELS_A + _FTS_IN_SCOPE + _CHANNELS_B
SEARCH_RRF_GIVEN_SCOPED = _GIVEN_SCOPED + _RRF + _FUSE
SEARCH_DBSF_GIVEN_SCOPED = _GIVEN_SCOPED + _DBSF + _FUSE

SNAPSHOT_PATHS = "SELECT path FROM snapshot_file WHERE snapshot_id = ? ORDER BY path"
# A file's blob in a snapshot and its text's size (the evidence channel reads packages'
# re-exports, the text by BLOB_CONTENT_BY_SHA only when no summary of the blob is remembered).
SNAPSHOT_FILE_BLOB = """
SELECT b.sha, b.text_size FROM snapshot_file f JOIN blob b ON b.sha = f.blob_sha
WHERE f.snapshot_id = ? AND f.path = ?
"""
# The history prior's counts of the candidates' paths (pix/retrieve/history.py).
RECENT_COMMITS_OF_PATHS = """
SELECT path, recent_commits FROM snapshot_file
WHERE snapshot_id = ? AND recent_commits IS NOT NULL
  AND path IN (SELECT value FROM json_each(?))
"""
BLOB_CONTENT_BY_SHA = "SELECT content, text_size FROM blob WHERE sha = ?"
NEWEST_WORKTREE_SNAPSHOT = """
SELECT id, kind, root, commit_sha, branch, dirty, created_at FROM snapshot
WHERE root = ? AND kind IN ('worktree', 'folder') ORDER BY id DESC LIMIT 1
"""
NEWEST_ANY_WORKTREE_SNAPSHOT = """
SELECT id, kind, root, commit_sha, branch, dirty, created_at FROM snapshot
WHERE kind IN ('worktree', 'folder') ORDER BY id DESC LIMIT 1
"""
# The folder the newest snapshot of any kind was indexed in (a database of commits only).
NEWEST_SNAPSHOT_ROOT = "SELECT root FROM snapshot ORDER BY id DESC LIMIT 1"
# Every folder the snapshots were indexed in, the newest first.
SNAPSHOT_ROOTS = "SELECT root FROM snapshot GROUP BY root ORDER BY max(id) DESC"
SNAPSHOT_FOR_COMMIT = """
SELECT id, kind, root, commit_sha, branch, dirty, created_at FROM snapshot
WHERE commit_sha = ? AND (kind = 'commit' OR dirty = 0)
ORDER BY kind = 'commit' DESC, id DESC LIMIT 1
"""
# A work-tree snapshot at a commit with uncommitted changes: it is not that commit's content.
DIRTY_SNAPSHOT_AT = "SELECT 1 FROM snapshot WHERE commit_sha = ? AND dirty = 1 LIMIT 1"
INDEXED_COMMITS = "SELECT DISTINCT commit_sha FROM snapshot WHERE commit_sha IS NOT NULL"
# The commits --at can ask (SNAPSHOT_FOR_COMMIT's condition): the nearest indexed ancestor a
# hint names must be one of them, not a dirty work tree's commit (audit).
QUERYABLE_COMMITS = """
SELECT DISTINCT commit_sha FROM snapshot
WHERE commit_sha IS NOT NULL AND (kind = 'commit' OR dirty = 0)
"""
