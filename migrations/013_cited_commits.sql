-- The commits of a snapshot's history that cite an issue or pull request ("Fix #7964: ...",
-- "Merge pull request #8265 from ...", a message body's "Closes #7964"), however old: an issue
-- report citing #7964 names the code they changed (pix/retrieve/commit_log.py cited_changes).
-- Those of 1-20 files among the newest CITING (pix/ingest/commit_log.py) whose message git
-- finds a `#NN` in are linked to the snapshot beside its log; `newest` says which links are the log the log channel reads (the
-- newest 1,000 commits of 1-20 files) and which are kept only for the numbers they cite. A log
-- read before this migration read no citation, and its rule says so: `pix index` reads it
-- again.
--   -- the commits citing #7964 that the newest snapshot's history holds
--   SELECT c.sha, c.subject FROM log_commit_citation n JOIN log_commit c ON c.id = n.commit_id
--   JOIN snapshot_log_commit s ON s.commit_id = c.id
--   WHERE n.number = 7964 AND s.snapshot_id = (SELECT max(id) FROM snapshot);
ALTER TABLE snapshot_log_commit ADD COLUMN newest INTEGER NOT NULL DEFAULT 1;
CREATE TABLE log_commit_citation (
    commit_id INTEGER NOT NULL REFERENCES log_commit(id) ON DELETE CASCADE,
    number    INTEGER NOT NULL,  -- the issue or pull request its message cites: 7964 for #7964
    PRIMARY KEY (commit_id, number)
) WITHOUT ROWID;
CREATE INDEX log_commit_citation_by_number ON log_commit_citation(number);
