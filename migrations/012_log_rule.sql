-- Which commits a snapshot's log kept (pix/ingest/commit_log.py): "newest 1000 commits of 1-20
-- files". A re-index at the same commit copies the log of the last snapshot instead of reading
-- git again, so a log read under an older rule (commits of 1-5 files, before the thirty-fifth
-- session) would be kept for ever; a log whose rule is not the running pix's is read again.
-- NULL where no log was read, or one was read before this migration (its rule unknown).
--   -- how each snapshot's log was read
--   SELECT id, commit_sha, log_commits, log_rule FROM snapshot ORDER BY id;
ALTER TABLE snapshot ADD COLUMN log_rule TEXT;
