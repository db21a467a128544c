"""A workspace's chosen shards ranked STAGE at a time (issue 13, pix/shard_probe.py
`ceiling`, pix/shards.py `ShardSet._staged`): no score of a shard exceeds its ceiling, and
leaving out the shards whose ceiling cannot reach the merged top never changes the answer.
Six real repositories in temp folders, two embedded by the real model, four static-only."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import GEOMETRY, TABLES, WEATHER, new_repo

from pix.index import index_repository
from pix.query import QueryRequest
from pix.retrieve import outline, phrase, tested, titled
from pix.retrieve.route import route
from pix.shard_probe import STAGE, ceiling, probe
from pix.shards import ShardSet, merge, query_shards, shard_ranking
from pix.workspace import load_workspace

PARSER = '''def parse_flags(argv):
    """Parse the command line flags into a dict of option names and values."""
    options = {}
    for arg in argv:
        if arg.startswith("--"):
            name, _, value = arg[2:].partition("=")
            options[name] = value or True
    return options
'''
RETRY = '''import time


def retry(call, attempts=3, delay=0.5):
    """Retry a failed request, waiting longer after each failure."""
    for attempt in range(attempts):
        try:
            return call()
        except OSError:
            time.sleep(delay * 2**attempt)
    return call()
'''
# Many chunks of one file that all say the same words: the file evidence a ceiling must allow.
HASHES = "\n\n".join(
    f'def hash_password_{i}(password, salt):\n    """Hash a password with salt, round {i}."""\n'
    f"    return hash_password(password + salt) * {i}\n"
    for i in range(8)
)
REPOS = {
    "weather": ({"src/weather.py": WEATHER}, True),
    "tables": ({"src/tables.py": TABLES}, True),
    "shapes": ({"geometry.py": GEOMETRY}, False),
    "flags": ({"cli/flags.py": PARSER, "tests/test_flags.py": "def test_flags(): pass\n"}, False),
    "retry": ({"net/retry.py": RETRY}, False),
    "hashes": ({"auth/hashes.py": HASHES, "auth/more.py": HASHES}, False),
}
QUERIES = [
    "average temperature of the readings",
    "retry a failed request",
    "hash password",
    "parse_flags",
    "render rows as a table",
    "area",
    "parse the rows and the flags",
    "password salt of the request",
    "hottest day of the table",
    "options names and values",
    "convert the temperature",
    "wait after each failure",
]


TOPS = (1, 2, 3, 5, 10)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, embedder) -> Path:
    base = tmp_path_factory.mktemp("stages")
    for name, (files, embed) in REPOS.items():
        root = new_repo(base / name, files)
        index_repository(str(root), embedder=embedder, embed=embed)
    (base / "pix.toml").write_text("".join(f'[[repo]]\npath = "{n}"\n\n' for n in REPOS))
    return base


@pytest.mark.parametrize("fusion", ["rrf", "dbsf"])
@pytest.mark.parametrize("mode", ["file", "chunk"])
def test_no_score_exceeds_its_shards_ceiling(workspace, fusion, mode):
    """Every hit of every shard that no name or phrase lifts scores at most its ceiling, for
    every shape of query (keywords, a question, a name, an issue report); the closest one
    comes near it, so the bound says something."""
    report = (
        "Hashing fails with a long salt\n\nWhen I call `hash_password_3(password, salt)` with "
        "a salt of 300 characters the result is wrong:\n\n```\nTraceback (most recent call "
        'last):\n  File "auth/hashes.py", line 12, in hash_password_3\nValueError: salt\n```\n'
    )
    # The same report without its traceback: its title names auth/hashes.py, which the
    # titled-file step lifts (a frame in the file would leave the step out).
    untraced = "Hashing fails with a long salt\n\n" + "A salt of 300 characters is wrong.\n" * 12
    shards = ShardSet(load_workspace(workspace))
    nearest = 0.0
    titled_seen = quoted_seen = False
    try:
        for query in [*QUERIES, report, untraced, QUOTING]:
            request = QueryRequest(query=query, mode=mode, top=10, no_content=True, fusion=fusion)
            for name, engine in shards.engines.items():
                seen = probe(engine, request)
                if seen.lifts:
                    continue
                bound = ceiling(seen, request)
                ranked = shard_ranking(engine, request).ranked
                titled_seen |= any("titled" in hit.rank for hit in ranked)
                quoted_seen |= any("phrase" in hit.channels for hit in ranked)
                scores = [hit.score for hit in ranked]
                assert max(scores, default=0.0) <= bound, (query, name)
                nearest = max([nearest] + [s / bound for s in scores])
    finally:
        shards.close()
    assert nearest > 0.3
    assert titled_seen  # the bound holds the titled step in either mode
    assert quoted_seen  # and the vote of a message an issue report quotes


# An issue report quoting two docstrings word for word (pix.retrieve.phrase.rank_quoted).
QUOTING = (
    'Flags are lost after a retry\n\nThe docs of parse_flags say "Parse the command line flags'
    ' into a dict of option names and values." and those of retry say "Retry a failed request,'
    ' waiting longer after each failure." but when the request is retried the flags parsed'
    " before are gone.\n\nI pass --name=value on the command line, the first request fails,"
    " retry waits and calls again, and the options dict it gets is empty.\n"
)


def test_a_shards_ceiling_allows_for_a_quoted_messages_vote(workspace, monkeypatch):
    """The vote is one rank 1 at ISSUE_WEIGHT in every shard the report may quote."""
    shards = ShardSet(load_workspace(workspace))
    try:
        request = QueryRequest(query=QUOTING, mode="file", top=10, no_content=True)
        assert route(QUOTING).shape == "issue"
        seen = probe(shards.engines["flags"], request)
        with_vote = ceiling(seen, request)
        # Channels named without `phrase` leave the vote out, and so does a report that
        # quotes nothing of three words or more.
        named = QueryRequest(query=QUOTING, mode="file", channels=["bm25", "dense"])
        unquoted = QUOTING.replace('"', "")
        plain = QueryRequest(query=unquoted, mode="file", top=10, no_content=True)
        named_bound, plain_bound = ceiling(seen, named), ceiling(seen, plain)
        monkeypatch.setattr(phrase, "ISSUE_WEIGHT", 0.0)
        assert with_vote > ceiling(seen, request)
        assert ceiling(seen, named) == named_bound and ceiling(seen, plain) == plain_bound
    finally:
        shards.close()


def test_shards_left_out_by_their_ceiling_change_no_answer(workspace):
    """With four of the six shards chosen, ranked STAGE at a time: every answer (results,
    factors, order) is the one ranking all four gives, and the same bytes twice; a shard left
    out is listed unranked with no candidates."""
    ws = load_workspace(workspace)
    staged, every = ShardSet(ws, breadth=4), ShardSet(ws, breadth=4, ceilings=False)
    left_out = 0
    try:
        for query in QUERIES:
            for top in TOPS:
                request = QueryRequest(query=query, mode="file", top=top, no_content=True)
                fast, full = query_shards(staged, request), query_shards(every, request)
                assert fast["results"] == full["results"], (query, top)
                assert fast == query_shards(staged, request)
                factors = {r["name"]: r["factor"] for r in full["repos"]}
                assert {r["name"]: r["factor"] for r in fast["repos"]} == factors
                ranked = {r["name"] for r in fast["repos"] if r["ranked"]}
                assert ranked <= {r["name"] for r in full["repos"] if r["ranked"]}
                assert sum(r["ranked"] for r in full["repos"]) >= 4
                assert len(ranked) >= min(STAGE, 4)
                for r in fast["repos"]:
                    if not r["ranked"]:
                        assert r["candidates"] == 0 and r["results"] == 0
                left_out += sum(r["ranked"] for r in full["repos"]) - len(ranked)
    finally:
        staged.close()
        every.close()
    assert left_out > 0  # the ceilings left some chosen shard out


def test_the_shards_ranked_are_those_the_rule_keeps(workspace):
    """An oracle from every chosen shard's ranking: walking them STAGE at a time by factor, a
    shard is ranked exactly when its factor x ceiling reaches the `top`-th merged score of
    those ranked before it (a shard where a name or phrase lifts a chunk always is, first)."""
    ws = load_workspace(workspace)
    staged = ShardSet(ws, breadth=4)
    order = ws.names()
    try:
        for query in QUERIES:
            for top in TOPS:
                request = QueryRequest(query=query, mode="file", top=top, no_content=True)
                chosen, probes, factors = staged.choose(ws.shards, request, False)
                answers, _ = staged.rank(chosen, request, False, [], probes=probes)
                queue = sorted(
                    (s.name for s in chosen),
                    key=lambda n: (not probes[n].lifts, -factors[n].factor, order.index(n)),
                )
                expected: list[str] = []
                while queue:
                    expected += queue[:STAGE]
                    merged = merge({n: answers[n] for n in expected}, order, top, factors)
                    floor = merged[-1][1].score if len(merged) == top else 0.0
                    queue = [
                        n
                        for n in queue[STAGE:]
                        if probes[n].lifts
                        or factors[n].factor * ceiling(probes[n], request) >= floor
                    ]
                answer = query_shards(staged, request)
                assert {r["name"] for r in answer["repos"] if r["ranked"]} == set(expected)
    finally:
        staged.close()


def test_a_question_one_repository_answers_ranks_fewer_shards(workspace):
    """Asked for its single best file, a question that one repository answers clearly is
    decided by the first STAGE shards: the other chosen ones cannot reach it."""
    ws = load_workspace(workspace)
    staged = ShardSet(ws, breadth=4)
    try:
        request = QueryRequest(
            query="average temperature of the readings", mode="file", top=1, no_content=True
        )
        answer = query_shards(staged, request)
        assert answer["results"][0]["repo"] == "weather"
        assert sum(r["ranked"] for r in answer["repos"]) == STAGE
    finally:
        staged.close()


def test_an_issue_reports_ceiling_allows_the_outline_tested_and_titled_steps(
    workspace, monkeypatch
):
    """An issue report's files gain an outline bonus and a test's lent score (its own outline
    bonus in it) after the ranking stage, then a share of the first file's score if the title
    names them, in file mode and (on each file's strongest chunk) in chunk mode: the ceiling
    allows all three at their most (pix/retrieve/outline.py, tested.py, titled.py)."""
    report = "Hashing fails with a long salt\n\n```\nValueError: salt\n```\n" + "When I hash. " * 40
    assert route(report, None).shape == "issue"  # so the outline step runs on it
    lent = outline.most_share(None, "issue", tested.WEIGHT)  # both outline bonuses
    assert lent > 0
    factor = (1 + tested.WEIGHT * 0.3 + lent) * (1 + titled.WEIGHT)

    def ceilings() -> dict[str, float]:
        shards = ShardSet(load_workspace(workspace))
        try:
            engine = shards.engines["hashes"]
            by_mode = {}
            for mode in ("file", "chunk"):
                request = QueryRequest(query=report, mode=mode, top=10, no_content=True)
                by_mode[mode] = ceiling(probe(engine, request), request)
            return by_mode
        finally:
            shards.close()

    with_steps = ceilings()
    for step in (outline, tested, titled):
        monkeypatch.setattr(step, "WEIGHT", 0.0)
    without = ceilings()
    for mode in ("file", "chunk"):
        assert with_steps[mode] == pytest.approx(without[mode] * factor)
    assert with_steps["file"] == with_steps["chunk"]
