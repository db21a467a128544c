-- The static tier: meaning search from the first seconds of `pix index`, before the
-- transformer has embedded anything.
--
-- A static vector is the weighted mean of a table of token vectors (models/static/, distilled
-- from the transformer; pix.ingest.static): computing one costs about as much as tokenising,
-- so every chunk gets it as it is stored. The transformer then fills chunk_vec behind, and a
-- chunk's static vector is deleted once its transformer vector is written: a fully embedded
-- index holds transformer vectors only. The two spaces differ (256 and 384 dimensions, other
-- cosine scales), so queries search them as two channels (dense and static), each ranked on
-- its own before fusion.
--   -- how far the transformer has come
--   SELECT (SELECT count(*) FROM chunk_vec) AS transformer,
--          (SELECT count(*) FROM chunk_vec_static) AS static_only;
CREATE VIRTUAL TABLE chunk_vec_static USING vec0(
    chunk_id INTEGER PRIMARY KEY,
    embedding int8[256] distance_metric=cosine,
    chunk_size=128
);
