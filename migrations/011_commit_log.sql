-- The git log before each snapshot's commit: its newest commits' subjects and the files each
-- changed. The log channel (pix/retrieve/commit_log.py) matches a change description against
-- these subjects and votes for the files the matching commits changed: "ssh: complete hosts
-- from known_hosts" finds the commits that touched completions/ssh before. A commit is stored
-- once however many snapshots reach it; snapshot_log_commit says which snapshot's log holds it.
--   -- the commits whose subject speaks of redirects, before the newest snapshot
--   SELECT c.sha, c.subject FROM log_commit_fts JOIN log_commit c ON c.id = log_commit_fts.rowid
--   JOIN snapshot_log_commit s ON s.commit_id = c.id
--   WHERE log_commit_fts MATCH 'redirect' AND s.snapshot_id = (SELECT max(id) FROM snapshot);
CREATE TABLE log_commit (
    id        INTEGER PRIMARY KEY,
    sha       TEXT NOT NULL UNIQUE,
    committed INTEGER NOT NULL,  -- committer time, Unix seconds
    subject   TEXT NOT NULL,     -- secrets masked as a file's are
    parts     TEXT NOT NULL      -- its compound names' parts (known_hosts: known hosts), as chunk.parts
);
CREATE TABLE log_commit_file (
    commit_id INTEGER NOT NULL REFERENCES log_commit(id) ON DELETE CASCADE,
    path      TEXT NOT NULL,
    PRIMARY KEY (commit_id, path)
) WITHOUT ROWID;
CREATE TABLE snapshot_log_commit (
    snapshot_id INTEGER NOT NULL REFERENCES snapshot(id) ON DELETE CASCADE,
    commit_id   INTEGER NOT NULL REFERENCES log_commit(id),
    PRIMARY KEY (snapshot_id, commit_id)
) WITHOUT ROWID;
CREATE INDEX snapshot_log_commit_by_commit ON snapshot_log_commit(commit_id);
-- How many commits of the log the snapshot holds; NULL where none was read: a folder without
-- git, or a snapshot written before this migration (`pix index` reads it for the next one).
ALTER TABLE snapshot ADD COLUMN log_commits INTEGER;
-- The subjects' words and parts, as chunk_fts reads a chunk's text.
CREATE VIRTUAL TABLE log_commit_fts USING fts5(
    subject, parts, content='log_commit', content_rowid='id',
    tokenize="porter unicode61 tokenchars '_'"
);
CREATE TRIGGER log_commit_fts_insert AFTER INSERT ON log_commit BEGIN
    INSERT INTO log_commit_fts(rowid, subject, parts) VALUES (new.id, new.subject, new.parts);
END;
CREATE TRIGGER log_commit_fts_delete AFTER DELETE ON log_commit BEGIN
    INSERT INTO log_commit_fts(log_commit_fts, rowid, subject, parts)
    VALUES ('delete', old.id, old.subject, old.parts);
END;
-- A newer secret detector masks a stored subject again (pix/store/content.py).
CREATE TRIGGER log_commit_fts_update AFTER UPDATE OF subject, parts ON log_commit BEGIN
    INSERT INTO log_commit_fts(log_commit_fts, rowid, subject, parts)
    VALUES ('delete', old.id, old.subject, old.parts);
    INSERT INTO log_commit_fts(rowid, subject, parts) VALUES (new.id, new.subject, new.parts);
END;
