"""The git log the log channel reads (pix/retrieve/commit_log.py): a snapshot's newest commits.

Read at index time from the commits reachable from the snapshot's commit, that commit included
(so `pix index --at` an old commit reads that commit's past), newest first: of the newest LIMIT
commits (merges included), those that changed 1 to MAX_FILES files, each with its subject and
the files it changed. A commit that changed more (a sweep, a merge of a long-lived branch, a
rename of a folder) says nothing about where a change of its kind goes. A merge's files are
what it brought to its first parent (`--diff-merges=first-parent`): a pull request merged as
"Merge pull request #8265 from tk0miya/7964_tuple_in_signature" changed what its branch did,
and an issue report citing #8265 names those files (pix/retrieve/commit_log.py
`cited_changes`). A re-index
at the same commit (an edit in the work tree) keeps the last snapshot's log without reading
git again, if that log was read by the same rule (`snapshot.log_rule`, migration 012): one read
by an older pix's rule is read again, and replaces the snapshot's links.

Beside the log, the newest CITING commits (of 1-20 files, merges by what they brought) whose
message cites an issue or pull request (`Fix #7964: ...`, a body's `Closes #7964`), however far
back: an issue report citing #7964 names what they changed, and a project's fix of #7964 is
often thousands of commits before the report (migration 013). Read with git's own filter
(`--grep`), which computes the changed files of those commits only.

Stored once per commit (log_commit, log_commit_file, and the numbers its message cites,
log_commit_citation) however many snapshots reach it, and linked to each snapshot
(snapshot_log_commit: `newest` 1 for the log, 0 for a commit kept only for its citations);
`snapshot.log_commits` counts the log's links, NULL where no log was read (a folder without
git, or a snapshot written before migration 011), and `snapshot.log_rule` says which commits
were kept.
Subjects are masked as a file's text is (pix/ingest/mask.py), and again by a newer detector.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import apsw

from pix.errors import PixError
from pix.ingest import scan
from pix.ingest.history import log
from pix.ingest.mask import mask
from pix.ingest.redact import may_hold_secret
from pix.ingest.terms import identifier_parts
from pix.store import codec

LIMIT = 1000
# A commit of up to 20 files still says where its kind of change goes (its vote for each file
# is divided by the square root of the count: pix/retrieve/commit_log.py). At 5 the language
# sets' mean nDCG@10 was 0.004-0.005 lower; 40 was no better (bench/README.md, "thirty-fifth
# session").
MAX_FILES = 20
# A merge by what it brought (before the forty-sixth session a merge listed no files, so no
# subject citing a pull request as "Merge pull request #N" named any). The log channel reads
# merges' subjects too: the 14 language sets' mean moved 0.733 / 0.721 -> 0.734 / 0.722
# static-only (symfony-console +0.006, whose merges are subjects of their own: "feature #54135
# [Console] Add a way to use custom lock factory"); bench/README.md, "forty-sixth session".
MERGES = True
MERGE_DIFF = "--diff-merges=first-parent"  # git 2.31 (2021) and later
# The commits kept for the numbers they cite: of the newest CITING whose message git finds a
# `#NN` in (MAY_CITE, looser than CITATION: `color: #333;` passes it), those of 1-20 files that
# CITATION confirms. sphinx's fix of #7964, which a report follows up, is 1,700 commits before
# it. 0: none read (bench/log_bench.py --no-citing).
CITING = 5000
# An issue or pull request cited as GitHub and GitLab link it (`Fix #7964: ...`, `Implement
# integrate (#2653)`, a report's `a followup to #7964`): not `owner/repo#12` (another
# repository's; `PR#12` is not read either), an HTML entity (`&#8212;`), a number led by 0 (never
# a link), a CSS colour (`#fff`, `#333;`) or a one-digit list marker. Seven digits at most: no
# repository has ten million issues.
CITATION = re.compile(r"(?<![\w/&#;])#([1-9][0-9]{1,6})\b(?!;)")
# What git's --grep looks for first (POSIX ERE): a message that may cite; CITATION decides.
MAY_CITE = "--grep=#[1-9][0-9]"

INSERT_COMMITS = """
INSERT INTO log_commit(sha, committed, subject, parts)
SELECT j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3
FROM json_each(:commits) AS j WHERE true
ON CONFLICT(sha) DO NOTHING
"""
INSERT_FILES = """
INSERT OR IGNORE INTO log_commit_file(commit_id, path)
SELECT c.id, f.value
FROM json_each(:commits) AS j JOIN log_commit c ON c.sha = j.value ->> 0,
    json_each(j.value -> 4) AS f
"""
UNLINK_COMMITS = "DELETE FROM snapshot_log_commit WHERE snapshot_id = :snapshot"
INSERT_CITATIONS = """
INSERT OR IGNORE INTO log_commit_citation(commit_id, number)
SELECT c.id, n.value
FROM json_each(:commits) AS j JOIN log_commit c ON c.sha = j.value ->> 0,
    json_each(j.value -> 5) AS n
"""
# The log first (newest 1), then the commits kept for their citations alone (newest 0): a
# commit in both stays the log's.
LINK_COMMITS = """
INSERT OR IGNORE INTO snapshot_log_commit(snapshot_id, commit_id, newest)
SELECT :snapshot, c.id, :newest
FROM json_each(:commits) AS j JOIN log_commit c ON c.sha = j.value ->> 0
"""
COPY_LINKS = """
INSERT OR IGNORE INTO snapshot_log_commit(snapshot_id, commit_id, newest)
SELECT :snapshot, commit_id, newest FROM snapshot_log_commit WHERE snapshot_id = :source
"""
COUNT_LINKS = """
UPDATE snapshot SET log_commits = (
    SELECT count(*) FROM snapshot_log_commit WHERE snapshot_id = :snapshot AND newest = 1
), log_rule = :rule WHERE id = :snapshot
"""
SNAPSHOT_LOG_RULE = "SELECT log_rule FROM snapshot WHERE id = ? AND log_commits IS NOT NULL"
ALL_SUBJECTS = "SELECT id, subject FROM log_commit"
SET_SUBJECT = "UPDATE log_commit SET subject = ?, parts = ? WHERE id = ?"


@dataclass(frozen=True)
class Log:
    """What a snapshot's log is: read from git by `rule` (`commits`: [sha, committed, subject,
    parts, [paths]] each; `citing`), or the same as another snapshot's (`source`, a snapshot of
    the same commit read by the same rule)."""

    rule: str
    commits: tuple[tuple, ...] = ()
    source: int | None = None
    # The commits kept for their citations: [sha, committed, subject, parts, [paths],
    # [numbers]] each.
    citing: tuple[tuple, ...] = ()


def rule(max_files: int | None = None, merges: bool | None = None) -> str:
    """Which commits a log keeps, as `snapshot.log_rule` records it. Any change to which
    commits `_kept` keeps must change this text, or logs read before it stay."""
    most = MAX_FILES if max_files is None else max_files
    merged = MERGES if merges is None else merges
    return (
        f"newest {LIMIT} commits of 1-{most} files"
        + (", a merge by its first parent's diff" if merged else "")
        + f"; of the newest {CITING} that may cite an issue, those that do"
    )


def read(conn: apsw.Connection, listing: scan.Listing, previous: tuple | None = None) -> Log | None:
    """The log for a listing's snapshot (None: no commit, or git could not read its history:
    the snapshot's log stays unread, never a failed index). `previous` (id, commit, ...): the
    work tree's last snapshot, whose log stands if it is of the same commit and current."""
    sha = listing.commit_sha
    if listing.kind == "folder" or not sha:
        return None
    if previous and previous[1] == sha and is_current(conn, previous[0]):
        return Log(rule=rule(), source=previous[0])
    try:
        return from_git(listing.root, sha)
    except (PixError, ValueError):
        return None


def from_git(root: Path, rev: str, max_files: int | None = None) -> Log:
    """The log at `rev` as `git log` gives it, of commits that changed 1 to `max_files` files
    (default MAX_FILES; PixError: git could not read it)."""
    most = MAX_FILES if max_files is None else max_files
    if MERGES:
        try:
            entries = log(root, "%H %ct %s", MERGE_DIFF, f"--max-count={LIMIT}", rev)
            citing = _citing(root, rev, most, MERGE_DIFF)
            return Log(rule(most), tuple(_kept(entries, most)), citing=citing)
        except PixError:
            # A git before 2.31 has no --diff-merges: the log without merges' files, recorded
            # as read by that rule (so the next index tries again, and a newer git reads the
            # merges). Any other failure of either read fails again below, and the snapshot's
            # log stays unread (`read`).
            pass
    entries = log(root, "%H %ct %s", f"--max-count={LIMIT}", rev)
    citing = _citing(root, rev, most)
    return Log(rule(most, merges=False), tuple(_kept(entries, most)), citing=citing)


# A citing commit's head, then its message's body after a \x01 (git's %b may hold any byte but
# NUL, which the log's fields are split by).
_CITING_FORM = "%H %ct %s%x01%b"


def _citing(root: Path, rev: str, max_files: int, *merges: str) -> tuple[tuple, ...]:
    """The commits at `rev` of 1 to `max_files` files whose subject or body cites a number, of
    the newest CITING that may (git's --grep reads the whole message and computes the files of
    those commits only), as [sha, committed, subject, parts, paths, numbers] (the numbers
    ascending); none when CITING is 0."""
    if not CITING:
        return ()
    found = log(root, _CITING_FORM, *merges, "--extended-regexp", MAY_CITE,
                f"--max-count={CITING}", rev)  # fmt: skip
    out = []
    for head, changed in found:
        head, _, body = head.partition("\x01")
        subject = (head.split(" ", 2) + [""])[2]
        numbers = sorted({int(n) for n in CITATION.findall(subject + "\n" + body)})
        if numbers:
            out.extend((*kept, numbers) for kept in _kept([(head, changed)], max_files))
    return tuple(out)


def _kept(entries: list[tuple[str, list[str]]], max_files: int) -> list[tuple]:
    """The commits that changed 1 to `max_files` files, as [sha, committed, subject, parts,
    paths], each path as the database stores it (pix.store.codec.stored_path: a name that is
    not UTF-8 is written with escapes, as pix names it everywhere)."""
    kept = []
    for head, changed in entries:
        sha, committed, subject = (head.split(" ", 2) + [""])[:3]
        if 0 < len(changed) <= max_files:
            subject = masked(subject)
            paths = sorted({codec.stored_path(p) for p in changed})
            kept.append((sha, int(committed), subject, identifier_parts(subject), paths))
    return kept


def masked(subject: str) -> str:
    """A subject with its secrets masked as a file's are: a token pasted into a commit
    message is no safer in the database than one in the code."""
    return mask(subject, None).text if may_hold_secret(subject) else subject


def remask(conn: apsw.Connection) -> int:
    """Mask every stored subject again (a newer secret detector: pix/store/content.py
    remask_outdated), inside the caller's transaction; how many changed."""
    changed = 0
    for commit_id, subject in conn.execute(ALL_SUBJECTS).fetchall():
        now = masked(subject)
        if now != subject:
            conn.execute(SET_SUBJECT, (now, identifier_parts(now), commit_id))
            changed += 1
    return changed


def is_current(conn: apsw.Connection, snapshot_id: int) -> bool:
    """Whether the snapshot's log was read, by this pix's rule (else migration 011 or 012
    came after it, or an older pix kept other commits)."""
    row = conn.execute(SNAPSHOT_LOG_RULE, (snapshot_id,)).fetchone()
    return bool(row) and row[0] == rule()


def write(conn: apsw.Connection, snapshot_id: int, found: Log | None) -> None:
    """Link the snapshot to its log, inside the caller's transaction (nothing when unread),
    in place of any log it had (one read by an older rule)."""
    if found is None:
        return
    # A source was chosen before the write began: another pix may have replaced that snapshot
    # since. Then this one's log stays as it was, and the next index reads it from git. A
    # snapshot is never its own source (its log would be unlinked, then copied from nothing,
    # and recorded as current).
    if found.source is not None and (
        found.source == snapshot_id or not is_current(conn, found.source)
    ):
        return
    conn.execute(UNLINK_COMMITS, {"snapshot": snapshot_id})
    if found.source is not None:
        conn.execute(COPY_LINKS, {"snapshot": snapshot_id, "source": found.source})
    else:
        commits, citing = json.dumps(found.commits), json.dumps(found.citing)
        for listed in (commits, citing):
            conn.execute(INSERT_COMMITS, {"commits": listed})
            conn.execute(INSERT_FILES, {"commits": listed})
        conn.execute(INSERT_CITATIONS, {"commits": citing})
        conn.execute(LINK_COMMITS, {"snapshot": snapshot_id, "commits": commits, "newest": 1})
        conn.execute(LINK_COMMITS, {"snapshot": snapshot_id, "commits": citing, "newest": 0})
    conn.execute(COUNT_LINKS, {"snapshot": snapshot_id, "rule": found.rule})
