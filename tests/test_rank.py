"""The ranking stage after fusion (pix/retrieve/rank.py): standing out, file evidence.

A real git repository in a temp folder, indexed with the real model into real SQLite; answers
through pix.query.query and validated against schema/query-response.v2.json. The arithmetic
of the two steps is also checked on the hits that retrieval returns for a real query.

Corpus:
- csv/a_single.py   the function that reads CSV rows (the strongest chunk for the CSV question),
                    and an unrelated one
- csv/b_double.py   two functions that load and parse CSV lines, each a little weaker: a file
                    that two chunks point to. Ranked by its strongest chunk a_single would
                    lead; with file evidence b_double does.
- quota.py          the only chunk that names `frobnicate_quota_ledger` (four times): BM25's
                    first hit by far, so it stands out in that channel
- mail.py, shapes.py   unrelated files
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from conftest import GEOMETRY, MAILER, new_repo, where

from pix.index import index_repository
from pix.query import QueryEngine, QueryRequest, query, retrieve
from pix.retrieve import rank, route
from pix.retrieve.search import RRF_K

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[1] / "schema" / "query-response.v2.json").read_text()
)

READ_ROWS = '''def read_csv_rows(handle, delimiter=","):
    """Read the rows of a CSV file: comma separated values, one record per line."""
    rows = []
    for line in handle:
        line = line.rstrip("\\n")
        if line and not line.startswith("#"):
            rows.append([field.strip() for field in line.split(delimiter)])
    return rows
'''
UNRELATED = '''def blink_status_led(pin, times):
    """Blink the status light on a board pin a number of times."""
    for _ in range(times):
        pin.on()
        pin.off()
'''
LOAD = '''def load_csv_records(handle, delimiter=","):
    """Load the records of a CSV file, one per line, split at the commas."""
    records = []
    for number, line in enumerate(handle):
        line = line.rstrip("\\n")
        if not line.strip():
            continue
        fields = line.split(delimiter)
        if len(fields) < 2:
            raise ValueError(f"record {number}: expected at least two fields")
        records.append(fields)
    return records
'''
PARSE = '''def parse_csv_lines(lines, delimiter=","):
    """Parse lines of comma separated values from a CSV file into lists of fields."""
    parsed = []
    for line in lines:
        if line.startswith("#"):
            continue
        fields = [field.strip() for field in line.split(delimiter)]
        while fields and not fields[-1]:
            fields.pop()
        parsed.append(fields)
    return parsed
'''
QUOTA = '''def charge_account(account, amount):
    """Charge an account, recording the amount in the ledger."""
    frobnicate_quota_ledger(account)
    frobnicate_quota_ledger(amount)
    frobnicate_quota_ledger(account, amount)
    return frobnicate_quota_ledger
'''
FILES = {
    "csv/a_single.py": READ_ROWS + "\n\n" + UNRELATED,
    "csv/b_double.py": LOAD + "\n\n" + PARSE,
    "quota.py": QUOTA,
    "mail.py": MAILER,
    "shapes.py": GEOMETRY,
}
CSV = "read rows of a CSV file"


@pytest.fixture(scope="module")
def repo(tmp_path_factory, embedder) -> Path:
    root = new_repo(tmp_path_factory.mktemp("rank") / "repo", FILES)
    index_repository(str(root), embedder=embedder)
    return root


def ask(repo: Path, text: str, **options) -> dict:
    response = query(QueryRequest(text, **options), cwd=str(repo))
    jsonschema.validate(response, SCHEMA)
    return response


def hits(repo: Path, text: str, fusion: str = "rrf"):
    """The fused chunks before and after the ranking stage, for one real query."""
    engine = QueryEngine(cwd=str(repo))
    try:
        request = QueryRequest(text, fusion=fusion)
        with engine.store.read():
            found = retrieve(engine, request, [])
        return found.hits
    finally:
        engine.close()


def test_a_file_that_several_chunks_point_to_beats_one_with_a_single_match(repo):
    chunks = hits(repo, CSV)  # each chunk at its own score
    single = [h for h in chunks if h.path == "csv/a_single.py"]
    double = [h for h in chunks if h.path == "csv/b_double.py"]
    # The fixture does what it claims: a_single holds the strongest chunk of all (a file
    # ranked by its strongest chunk would lead), b_double two weaker candidates.
    assert chunks[0].path == "csv/a_single.py"
    assert len(double) == 2 and max(h.score for h in double) < single[0].score

    files = ask(repo, CSV, mode="file", top=5, explain=True)["results"]
    assert [r["file"] for r in files[:2]] == ["csv/b_double.py", "csv/a_single.py"]
    top = files[0]["explain"]["rank"]
    assert top["chunks"] == 2
    # Evidence: the second chunk's score above the weakest candidate's, times FILE_DECAY.
    weakest = min(h.score for h in chunks)
    expected = (double[1].score - weakest) * rank.FILE_DECAY
    assert top["evidence"] == pytest.approx(expected, abs=1e-5)
    assert files[0]["score"] == pytest.approx(double[0].score + top["evidence"], abs=1e-5)
    assert files[1]["explain"]["rank"]["evidence"] == 0
    # A file's score is never below its best chunk's, and stays below twice that: length
    # alone does not make a file lead.
    for r in files:
        best = max(h.score for h in chunks if h.path == r["file"])
        assert best - 1e-6 <= r["score"] < 2 * best  # (the response rounds to 6 places)


def test_in_chunk_mode_a_files_strongest_chunk_carries_the_files_score(repo):
    from pix.output.render import explain_line

    files = ask(repo, CSV, mode="file", top=5, explain=True)["results"]
    chunks = ask(repo, CSV, top=100, explain=True)["results"]
    # The first chunks name the files in file mode's order: b_double's strongest chunk
    # leads, though a_single's is stronger on its own (the test above).
    named = list(dict.fromkeys(where(r) for r in chunks))
    assert named[:2] == [r["file"] for r in files[:2]] == ["csv/b_double.py", "csv/a_single.py"]
    lead = chunks[0]
    assert lead["score"] == pytest.approx(files[0]["score"], abs=1e-5)
    assert lead["explain"]["rank"] == files[0]["explain"]["rank"]
    assert lead["explain"]["prior"] == files[0]["explain"]["prior"]
    assert f"file evidence +{lead['explain']['rank']['evidence']:.4f} (2 chunks)" in explain_line(
        lead
    )
    # The file's other chunk keeps its own score, after a_single's strongest chunk.
    (second,) = [r for r in chunks[1:] if where(r) == "csv/b_double.py"]
    assert "evidence" not in second["explain"]["rank"]
    assert chunks.index(second) > [where(r) for r in chunks].index("csv/a_single.py")
    assert second["score"] < lead["score"] - lead["explain"]["rank"]["evidence"]


def test_carried_scores_each_files_strongest_chunk_as_its_file():
    def hit(path: str, chunk: int, score: float, sha: str = "b1") -> rank.Hit:
        return rank.Hit(path, chunk, sha, 1, 2, "function", None, score, score, "source",
                        "python", {})  # fmt: skip

    chunks = [hit("a.py", 1, 0.9), hit("b.py", 2, 0.8, "b2"), hit("b.py", 3, 0.7, "b2"),
              hit("c.py", 2, 0.6, "b2")]  # fmt: skip
    files = [
        rank.revised(chunks[1], score=1.0, rank={"evidence": 0.2}, copies=("z.py",)),
        chunks[0],
    ]
    # every chunk at every path, as pix pack reads them: c.py holds b.py's chunk 2 (the
    # same blob), at its own score
    out = rank.carried(chunks, files)
    assert [(h.path, h.chunk_id, h.score) for h in out] == [
        ("b.py", 2, 1.0), ("a.py", 1, 0.9), ("b.py", 3, 0.7), ("c.py", 2, 0.6)
    ]  # fmt: skip
    # chunk mode folds it into b.py's; the file list's copies (other paths of the whole
    # blob) are not the chunk's
    shown = rank.arrange(out, False)
    assert [(h.path, h.chunk_id) for h in shown] == [("b.py", 2), ("a.py", 1), ("b.py", 3)]
    assert shown[0].copies == ("c.py",) and shown[0].rank == {"evidence": 0.2}
    assert shown[2].copies == () and shown[2].rank == {}


def test_a_chunk_far_ahead_in_one_channel_stands_out(repo):
    results = ask(repo, "frobnicate_quota_ledger charge", top=100, explain=True)["results"]
    first = results[0]
    assert where(first) == "quota.py"
    bm25 = first["explain"]["channels"]["bm25"]
    assert bm25["rank"] == 1
    assert first["explain"]["rank"]["standout"] > 0
    # Fused = channel contributions + standout; the path prior multiplies both.
    parts = sum(c["contribution"] for c in first["explain"]["channels"].values())
    standout = first["explain"]["rank"]["standout"]
    assert first["explain"]["fused"] == pytest.approx(parts + standout, abs=1e-5)
    # Most candidates stand out nowhere: at or below the mean of each channel's best scores.
    assert sum(r["explain"]["rank"]["standout"] == 0 for r in results) > len(results) / 2


def test_standout_is_each_channels_z_score_over_its_best_scores(repo):
    before = hits(repo, CSV)
    stats = rank.channel_stats(before)
    assert set(stats) >= {"bm25"} and "static" not in stats
    for hit in before:
        expected = (
            sum(
                hit.channels[name]["weight"]
                * rank.STANDOUT[name]
                * max((hit.channels[name]["score"] - m) / sd, 0)
                for name, (m, sd) in stats.items()
                if name in hit.channels
            )
            / RRF_K
        )
        assert hit.rank.get("standout", 0.0) == pytest.approx(expected, abs=1e-9)
    # Ordered by the new score, then path and line, as the SQL orders.
    keys = [(-h.score, h.path, h.start_line, h.chunk_id) for h in before]
    assert keys == sorted(keys)


def test_dbsf_is_left_to_its_own_scores(repo):
    for hit in hits(repo, CSV, fusion="dbsf"):
        assert hit.rank == {}
        assert hit.score == pytest.approx(hit.fused * (hit.score / hit.fused))


def test_a_single_channel_winner_overtakes_a_two_channel_compromise(repo):
    """Plain RRF prefers a chunk that BM25 ranks 3rd and the dense channel 7th over one that
    the dense channel ranks 1st by far (and BM25 13th): the case of the NL->function set,
    where the meaning channel knows. Standing out reverses that. The hits are the real ones of
    a query with their channels set to that case (rescore is a function of the channels)."""
    real = hits(repo, CSV)
    assert len(real) >= 2

    def channel(rank_: int, score: float) -> dict:
        return {"rank": rank_, "score": score, "weight": 1.0, "contribution": 1 / (RRF_K + rank_)}

    def case(hit, **channels):  # no path prior in play: score = fused
        fused = sum(c["contribution"] for c in channels.values())
        return replace(hit, channels=channels, rank={}, fused=fused, score=fused)

    winner = case(real[0], dense=channel(1, 0.64), bm25=channel(13, 4.0))
    compromise = case(real[1], bm25=channel(3, 7.05), dense=channel(7, 0.40))
    crowd = [
        case(real[i % len(real)], bm25=channel(i, 8 - i * 0.2), dense=channel(i, 0.45 - i * 0.005))
        for i in (1, 2, 4, 5, 6, 8, 9, 10, 11, 12, 14, 15, 16, 17, 18, 19, 20, 21)
    ]
    assert compromise.score > winner.score  # 1/63 + 1/67 > 1/61 + 1/73

    ranked = rank.rescore([winner, compromise, *crowd])
    order = [h.channels for h in ranked]
    assert order.index(winner.channels) < order.index(compromise.channels)


def test_the_same_query_gives_the_same_bytes(repo):
    once = ask(repo, CSV, mode="file", top=10, explain=True)
    twice = ask(repo, CSV, mode="file", top=10, explain=True)
    assert json.dumps(once, sort_keys=True) == json.dumps(twice, sort_keys=True)


def test_a_howto_naming_its_language_weighs_bm25_below_meaning(repo):
    """`python read rows ...` asks as a web search does: the route halves BM25's votes, and
    every candidate's explanation carries that weight (pix/retrieve/route.py, howto)."""
    response = ask(repo, "python read rows of a csv file", mode="file", top=3, explain=True)
    assert response["explain"]["shape"] == "howto"
    weights = response["explain"]["weights"]
    assert weights["bm25"] == route.WEIGHTS["howto"]["bm25"] < weights["dense"]
    assert response["results"][0]["file"].startswith("csv/")
    chunks = ask(repo, "python read rows of a csv file", top=20, explain=True)["results"]
    bm25 = [r["explain"]["channels"].get("bm25") for r in chunks]
    assert any(bm25) and all(c["weight"] == weights["bm25"] for c in bm25 if c)


def test_pack_reads_the_chunks_in_chunk_modes_order(repo):
    """`pix pack` fills its budget in the order chunk mode shows: b_double, which two chunks
    point to, before a_single, whose one chunk is the strongest on its own."""
    from pix.pack import PackRequest, run_pack

    engine = QueryEngine(cwd=str(repo))
    try:
        packet = run_pack(engine, PackRequest(CSV, budget=120))
    finally:
        engine.close()
    assert [span["path"] for span in packet["spans"]] == ["csv/b_double.py"]
    # what did not fit is named at its score: the carrying chunk's, the file's
    left = {(item["path"], item["startLine"]) for item in packet["omitted"]["items"]}
    assert ("csv/a_single.py", 1) in left


def test_a_workspace_pack_reads_the_chunks_in_chunk_modes_order(repo, tmp_path):
    """The same packet across a workspace of that repository and an unrelated one."""
    from pix.pack import PackRequest
    from pix.shards import ShardSet
    from pix.shards_tools import pack_shards
    from pix.workspace import load_workspace

    other = new_repo(tmp_path / "other", {"mail.py": MAILER})
    index_repository(str(other), embed=False)
    (tmp_path / "pix.toml").write_text(f'[[repo]]\npath = "{repo}"\nname = "rank"\n\n'
                                       '[[repo]]\npath = "other"\n')  # fmt: skip
    shards = ShardSet(load_workspace(tmp_path))
    try:
        packet = pack_shards(shards, PackRequest(CSV, budget=120))
    finally:
        shards.close()
    assert [(span["repo"], span["path"]) for span in packet["spans"]] == [
        ("rank", "csv/b_double.py")
    ]
