-- The git blob id of a file skipped for what its bytes hold (binary, not UTF-8, generated,
-- minified): the work-tree check before a query then judges such a file by its content when
-- only its mtime moved (a `touch`, a checkout there and back, a lock file rewritten with the
-- same bytes), as it judges an indexed file. NULL where the bytes decide nothing or were not
-- read (too large, a symlink, unreadable, a submodule) and for a secret file, whose content
-- pix keeps nothing of; NULL too in the rows of an older pix, until the next index.
ALTER TABLE skipped ADD COLUMN blob_sha TEXT;
