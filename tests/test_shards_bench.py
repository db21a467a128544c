"""bench/shards_bench.py's routing table: where the question's own repository stood."""

from bench.shards_bench import ROUTING_GROUPS, routing_group, routing_table, with_questions
from pix.workspace import Shard

LARGEST, HALF, TENTH, BELOW = ROUTING_GROUPS


def listing(**factors: float) -> list[dict]:
    return [{"name": name, "factor": f} for name, f in factors.items()]


def test_groups_by_share_of_the_largest_factor():
    repos = listing(a=1.0, b=0.6, c=0.5, d=0.2, e=0.1, f=0.05, g=0.0)
    assert routing_group(repos, "a") == LARGEST
    assert routing_group(repos, "b") == HALF
    assert routing_group(repos, "c") == HALF
    assert routing_group(repos, "d") == TENTH
    assert routing_group(repos, "e") == TENTH
    assert routing_group(repos, "f") == BELOW
    assert routing_group(repos, "g") == BELOW


def test_a_tie_goes_to_the_first_in_workspace_order():
    repos = listing(a=0.8, b=0.8)
    assert routing_group(repos, "a") == LARGEST
    assert routing_group(repos, "b") == HALF


def test_a_repository_left_out_of_the_listing_is_below_a_tenth():
    assert routing_group(listing(a=1.0), "b") == BELOW


def test_table_pools_each_group():
    hit, miss = (["r/x"], ["r/x"]), (["r/y"], ["r/x"])
    routed = [(LARGEST, hit, hit), (LARGEST, hit, miss), (TENTH, hit, miss)]
    lines = routing_table(routed).splitlines()
    assert lines[2] == f"| {LARGEST} | 2 | 0.667 | 1.000 | 0.500 |"
    assert lines[3] == f"| {TENTH} | 1 | 0.333 | 1.000 | 0.000 |"
    assert len(lines) == 4  # groups without questions are left out


def test_with_questions_asks_each_repository_its_developers_questions(tmp_path):
    shards = [Shard(name, tmp_path / name, tmp_path / f"{name}.db") for name in ("tmux", "click")]
    asked = with_questions([(shard, [{"query": "a commit subject"}]) for shard in shards])
    assert [shard for shard, _ in asked] == shards
    tmux, click = (qs for _, qs in asked)
    assert tmux and {q["set"] for q in tmux} == {"tmux"}
    assert {q["kind"] for q in tmux} == {"symbol", "concept", "architecture"}
    assert click == []  # no developers' questions: a shard that is never asked
