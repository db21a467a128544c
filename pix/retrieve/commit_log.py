"""The log channel: past commits whose subjects match a change description name its files.

A commit subject ("ssh: complete hosts from known_hosts", "Fix retry of a job that raised")
asks where a change of some kind belongs, and the repository's own history has answered
questions of that kind before: the commits whose subjects use the same words changed files
that such a change touches again (the "similar past reports" of bug localization, Zhou, Zhang
and Lo's BugLocator, 2012). The channel matches the query's terms against the subjects (and
their compound names' parts) of the snapshot's git log (pix/ingest/commit_log.py: of its newest
1,000 commits, those of 1-20 files), takes
the TOP_COMMITS best by BM25, and gives each file they changed a vote: each commit's BM25 score
over the best one's, divided by the square root of how many files it changed (a one-file
commit says where more surely than a twenty-file one). The files, ranked by their votes, are
fused after the SQL as the component channel's are (pix/retrieve/named.py), each with its
votes over the first file's as its share of the channel's weight.

Measured with bench/log_bench.py, each commit subject asked with the log of the commits
before its own (the log at the pinned commit holds the very commit asked about); figures in
bench/README.md, "thirty-fourth session" and "thirty-fifth session".
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import apsw

from pix.retrieve.named import NamedFile

CHANNEL = "log"
TOP_COMMITS = 20  # the subjects that vote
LIMIT = 20  # files the channel may name, as many as the path channel
MIN_SHARE = 0.01  # a file of fewer votes than this share of the first's adds nothing visible
SHOWN = 3  # the commits an explanation names for a file, best match first
SHA_CHARS = 12

# The snapshot's commits whose subject holds any of the terms, best first (bm25() is lower
# for a better match; ties by commit id, so the answer does not depend on FTS5's order).
MATCHING_COMMITS = """
SELECT l.commit_id, -bm25(log_commit_fts) AS score, c.sha, c.subject
FROM log_commit_fts JOIN snapshot_log_commit l
  ON l.commit_id = log_commit_fts.rowid AND l.snapshot_id = :snapshot AND l.newest = 1
JOIN log_commit c ON c.id = l.commit_id
WHERE log_commit_fts MATCH :fts
ORDER BY score DESC, l.commit_id
LIMIT :top
"""
# Each file those commits (:commits, best match first) changed that the snapshot holds (within
# :paths, if given), with how many files its commit changed in all; in the commits' order.
CHANGED_FILES = """
WITH changed AS (
    SELECT m.key AS place, f.commit_id, f.path,
           count(*) OVER (PARTITION BY f.commit_id) AS files
    FROM json_each(:commits) AS m JOIN log_commit_file f ON f.commit_id = m.value
)
SELECT c.commit_id, c.path, c.files FROM changed c
WHERE EXISTS (
    SELECT 1 FROM snapshot_file s WHERE s.snapshot_id = :snapshot AND s.path = c.path)
  AND (:paths IS NULL OR c.path IN (SELECT value FROM json_each(:paths)))
ORDER BY c.place, c.path
"""


def _said(sha: str, subject: str) -> dict[str, str]:
    """A commit as an explanation names it, as `git show` takes it."""
    return {"sha": sha[:SHA_CHARS], "subject": subject}


def explained(commits: list[Cited]) -> tuple[tuple[str, object], ...]:
    """What a file's explanation adds for the cited commits that changed it (NamedFile's
    `explained`): the first SHOWN of them, as the log channel's files name theirs."""
    return (("commits", [_said(c.sha, c.subject) for c in commits[:SHOWN]]),) if commits else ()


def _changed_files(
    conn: apsw.Connection, snapshot_id: int, commits: list[int], paths: list[str] | None
) -> list[tuple[int, str, int]]:
    """(commit, path, files it changed) for the files of `commits` the snapshot holds, within
    `paths` if given, in the commits' order."""
    params = {
        "snapshot": snapshot_id,
        "commits": json.dumps(commits),
        "paths": json.dumps(paths) if paths is not None else None,
    }
    return conn.execute(CHANGED_FILES, params).fetchall()


def log_files(
    conn: apsw.Connection, snapshot_id: int, fts: str, paths: list[str] | None
) -> list[NamedFile]:
    """The files the log channel names for an FTS5 query (`fts`, the query's terms as the
    BM25 channel reads them), best first (ties by path); none when no subject matches."""
    matched = conn.execute(
        MATCHING_COMMITS, {"snapshot": snapshot_id, "fts": fts, "top": TOP_COMMITS}
    ).fetchall()
    if not matched or matched[0][1] <= 0:
        return []
    best = matched[0][1]
    weight = {commit: score / best for commit, score, _, _ in matched}
    said = {commit: _said(sha, subject) for commit, _, sha, subject in matched}
    votes: dict[str, float] = {}
    voters: dict[str, list[int]] = {}  # path -> its commits, best match first (as the rows)
    for commit, path, files in _changed_files(conn, snapshot_id, list(weight), paths):
        votes[path] = votes.get(path, 0.0) + weight[commit] / math.sqrt(files)
        voters.setdefault(path, []).append(commit)
    ranked = sorted(votes.items(), key=lambda item: (-item[1], item[0]))[:LIMIT]
    if not ranked:
        return []
    top = ranked[0][1]
    return [
        NamedFile(
            path,
            round(vote, 6),
            share=vote / top,
            explained=(("commits", [said[c] for c in voters[path][:SHOWN]]),),
        )
        for path, vote in ranked
        if vote >= MIN_SHARE * top
    ]


# --- commits a report cites -------------------------------------------------------------------

# The commits of the snapshot's history whose message cites any of the numbers (its log's,
# and older ones kept for their citations: pix/ingest/commit_log.py CITING), newest first.
CITING_COMMITS = """
SELECT l.commit_id, c.sha, c.subject
FROM snapshot_log_commit l JOIN log_commit c ON c.id = l.commit_id
WHERE l.snapshot_id = :snapshot AND l.commit_id IN (
    SELECT commit_id FROM log_commit_citation
    WHERE number IN (SELECT value FROM json_each(:numbers)))
ORDER BY c.committed DESC, c.id
"""


@dataclass(frozen=True)
class Cited:
    """A past commit whose message cites a number an issue report cites."""

    sha: str
    subject: str
    total: int  # the files it changed
    paths: tuple[str, ...]  # those of them the snapshot holds (within a path filter)


def cited_changes(
    conn: apsw.Connection, snapshot_id: int, numbers: list[str], paths: list[str] | None
) -> list[Cited]:
    """The past commits of the snapshot's history whose message cites one of `numbers` (an
    issue report's `#7964`: the fix of the issue it follows up, the pull request it says broke
    something) and that changed a file the snapshot holds (within `paths`, if given), newest
    first."""
    if not numbers:
        return []
    params = {"snapshot": snapshot_id, "numbers": json.dumps([int(n) for n in numbers])}
    commits = {
        commit: (sha, subject) for commit, sha, subject in conn.execute(CITING_COMMITS, params)
    }
    if not commits:
        return []
    changed: dict[int, tuple[int, list[str]]] = {}
    for commit, path, files in _changed_files(conn, snapshot_id, list(commits), paths):
        changed.setdefault(commit, (files, []))[1].append(path)
    return [
        Cited(sha, subject, changed[commit][0], tuple(changed[commit][1]))
        for commit, (sha, subject) in commits.items()
        if commit in changed
    ]
