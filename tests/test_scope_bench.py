"""bench/scope_bench.py on a small repository: the two databases it builds (the newest commit
alone, and beside older ones) answer alike cold and warm, the second holding more chunks than
its snapshot."""

from __future__ import annotations

import subprocess

from conftest import commit, new_repo, write

from bench import scope_bench


def test_the_bench_asks_a_database_of_many_snapshots_warm_and_cold(tmp_path, monkeypatch, capsys):
    repo = new_repo(tmp_path / "work", {"src/app.py": "def serve(port):\n    return port\n"})
    for n in range(1, 5):
        write(repo, {f"src/part{n}.py": f"def handle_{n}(request):\n    return request.body\n"})
        write(repo, {"src/app.py": f"def serve(port):\n    return port + {n}\n"})
        commit(repo, f"Handle requests of kind {n}")
    mirrors = tmp_path / "mirrors"
    subprocess.run(
        ["git", "clone", "--bare", "-q", str(repo), str(mirrors / "acme+shop" / "repo")],
        check=True,
    )
    monkeypatch.setenv("PIX_BENCH_CACHE", str(tmp_path / "cache"))
    args = ["--repo", "acme/shop", "--snapshots", "3", "--every", "2", "--queries", "3"]
    scope_bench.main([*args, "--mirrors", str(mirrors)])
    rows = [line.split("|")[1:-1] for line in capsys.readouterr().out.splitlines()]
    rows = {r[0].strip(): [c.strip() for c in r[1:]] for r in rows if len(r) == 7}
    one, many = rows["one"], rows["many (3 snapshots)"]
    in_turn = rows["many (3 snapshots), newest and oldest in turn"]
    assert int(one[0]) == int(one[1]) > 0  # chunks: the database's are the snapshot's
    assert int(many[0]) > int(many[1]) == int(one[1])
    assert one[5] == many[5] == "3/3"  # warm answers are the cold ones, and warm they were
    assert in_turn[5] == "6/6"  # each subject at two snapshots, both warm
