-- A submodule, or a git repository nested in the tree, is recorded as skipped (reason
-- 'submodule'): its files belong to another repository, which is indexed on its own (a
-- workspace asks them together). SQLite cannot change a CHECK constraint in place, so the
-- table is made again with the same rows.
CREATE TABLE skipped_new (
    snapshot_id INTEGER NOT NULL REFERENCES snapshot(id) ON DELETE CASCADE,
    path        TEXT NOT NULL,
    reason      TEXT NOT NULL CHECK (reason IN ('binary', 'too_large', 'generated', 'minified',
                                                'secret', 'symlink', 'unreadable', 'not_text',
                                                'submodule')),
    size        INTEGER NOT NULL,
    mtime_ns    INTEGER NOT NULL,
    PRIMARY KEY (snapshot_id, path)
) WITHOUT ROWID;
INSERT INTO skipped_new SELECT snapshot_id, path, reason, size, mtime_ns FROM skipped;
DROP TABLE skipped;
ALTER TABLE skipped_new RENAME TO skipped;
