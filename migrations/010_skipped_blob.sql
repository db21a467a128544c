-- The git blob id of a file skipped for what its bytes hold (binary, not UTF-8, generated,
-- minified): the work-tree check before a query then judges such a file by its content when
-- only its mtime moved (a `touch`, a checkout there and back, a lock file rewritten with the
-- same bytes), as it judges an indexed file. NULL where the bytes decide nothing or were not
-- read (too large, a symlink, unreadable, a submodule) and for a file skipped as a secret
-- (by its name, or as a key file), whose content pix keeps nothing of; NULL too in the rows
-- of an older pix, until the next index. (A key file saved as UTF-16 or with a NUL byte is
-- skipped as not_text or binary before the key check, and keeps its blob id: git's own
-- hash of it, as `git ls-files -s` shows for a tracked file.)
ALTER TABLE skipped ADD COLUMN blob_sha TEXT;
