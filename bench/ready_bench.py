"""How soon a fresh repository answers by meaning: the static tier beside the transformer.

    python -m bench.ready_bench [--corpora click,large,huge] [--sample 300] [--full click]

For each corpus: clone it into a temporary folder and run `pix index --static-only` as a whole
process, from its start to its exit: when it exits, every channel (words, names, paths and
meaning through the static tier) answers. Then one `pix query` process checks that meaning
search is on (the static channel ranks the results, or the dense channel for the candidates
the transformer read on the spot); then the first result's file is edited and one `pix query
--refresh` process timed (it re-reads that file and leaves the transformer's backlog to `pix
index`). Peak memory is the index process's own high-water mark
(getrusage of a wrapper's only child).

Beside it, the transformer-only path: the time until every chunk has a transformer vector.
Corpora named in --full are embedded to the end (`pix index` once more) and timed; for the
others the transformer's rate is measured on --sample chunks and the total extrapolated from
it, which the table says. Run it on an otherwise idle machine: every figure is wall time.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import corpora

QUESTION = "where is the configuration file read and parsed"
# A child that runs one command and prints its own peak RSS (KiB) on stderr's last line.
WRAPPER = (
    "import resource, subprocess, sys; code = subprocess.call(sys.argv[1:]); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
    "sys.exit(code)"
)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def timed(args: list[str], cwd: Path) -> tuple[float, int, str]:
    """(wall seconds, peak RSS MiB, stdout) of one pix command as its own process."""
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, sys.executable, "-m", "pix.cli", *args],
        cwd=cwd, capture_output=True, text=True, check=True,
    )  # fmt: skip
    seconds = time.perf_counter() - t0
    return seconds, int(done.stderr.strip().splitlines()[-1]) // 1024, done.stdout


def transformer_rate(db: Path, sample: int) -> float:
    """Chunks per second of the transformer on the first `sample` pending inputs."""
    from pix.ingest.embed import Embedder
    from pix.ingest.vectors import embed_pending
    from pix.store import open_store

    embedder = Embedder()
    store = open_store(db, create=False)
    try:
        (snapshot,) = store.conn.execute("SELECT max(id) FROM snapshot").fetchone()
        t0 = time.perf_counter()
        done = embed_pending(store, snapshot, embedder=embedder, limit=sample)
        return done / (time.perf_counter() - t0)
    finally:
        store.close()


def bench(name: str, sample: int, full: bool) -> dict:
    source = corpora.corpus(name)
    with tempfile.TemporaryDirectory(prefix=f"pix-ready-{name}-") as tmp:
        repo = Path(tmp) / "repo"
        subprocess.run(["git", "clone", "-q", str(source), str(repo)], check=True)
        _say(f"{name}: pix index --static-only")
        seconds, rss, out = timed(["index", "--static-only", "--json", "--quiet"], repo)
        report = json.loads(out)
        q_seconds, _, out = timed(["query", QUESTION, "--json", "--explain"], repo)
        answer = json.loads(out)
        # Meaning ranks a result through the static tier or, for the candidates the
        # transformer read on the spot (pix/retrieve/refine.py), through the dense channel.
        static_ranked = sum(
            bool({"static", "dense"} & set(r["explain"]["channels"])) for r in answer["results"]
        )
        # One file edited, then a query with --refresh: on an index the transformer has not
        # finished, a refresh re-reads that file and leaves the backlog to `pix index`.
        edited = repo / answer["results"][0]["path"]
        edited.write_text(edited.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
        r_seconds, _, out = timed(["query", QUESTION, "--json", "--refresh"], repo)
        refreshed = json.loads(out)["refreshed"]
        row = {
            "corpus": name, "files": report["files"], "chunks": report["staticVectors"],
            "ready": seconds, "keyword": report["seconds"]["keyword"],
            "static": report["seconds"]["static"], "rss": rss, "query": q_seconds,
            "static_ranked": static_ranked, "results": len(answer["results"]),
            "refresh": r_seconds, "refreshed_blobs": refreshed["newBlobs"],
        }  # fmt: skip
        if full:
            _say(f"{name}: pix index (the transformer, to the end)")
            t_seconds, t_rss, out = timed(["index", "--json", "--quiet"], repo)
            row.update(transformer=seconds + t_seconds, measured=True, t_rss=t_rss)
            row["rate"] = json.loads(out)["embedded"] / t_seconds
        else:
            _say(f"{name}: the transformer on {sample} chunks")
            row["rate"] = transformer_rate(repo / ".pix.db", sample)
            row.update(transformer=seconds + report["embedPending"] / row["rate"], measured=False)
            row["t_rss"] = None
        return row


def table(rows: list[dict]) -> str:
    head = [
        "corpus", "files", "chunks", "all channels searchable s", "(keyword s", "static s)",
        "peak RSS MiB", "first query s", "meaning ranked", "query --refresh s (new blobs)",
        "transformer chunks/s",
        "transformer-only searchable s", "speed-up",
    ]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        how = "" if r["measured"] else " (extrapolated)"
        rss = f"{r['rss']}" + (f" / {r['t_rss']} full" if r["t_rss"] else "")
        lines.append(
            "| " + " | ".join([
                r["corpus"], f"{r['files']:,}", f"{r['chunks']:,}", f"**{r['ready']:.2f}**",
                f"{r['keyword']:.2f}", f"{r['static']:.2f}", rss, f"{r['query']:.2f}",
                f"{r['static_ranked']}/{r['results']}",
                f"{r['refresh']:.2f} ({r['refreshed_blobs']})", f"{r['rate']:.1f}",
                f"{r['transformer']:,.0f}{how}", f"{r['transformer'] / r['ready']:,.0f}x",
            ]) + " |"
        )  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpora", default="click,large,huge")
    parser.add_argument("--sample", type=int, default=300, help="chunks to time the transformer")
    parser.add_argument("--full", default="click", help="corpora embedded to the end")
    args = parser.parse_args(argv)
    full = set(args.full.split(",")) if args.full else set()
    rows = [bench(name, args.sample, name in full) for name in args.corpora.split(",")]
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
