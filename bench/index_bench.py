"""Indexing speed, size and memory of pix on the bench corpora: one markdown table on stdout.

    python -m bench.index_bench [--corpora requests,click,large] [--embed-limit N]

Per corpus, in a fresh temporary folder (the cached corpus itself is never touched):
  1. `git clone` the cached corpus, so the one-file edit of step 4 cannot dirty the cache.
  2. A worker subprocess indexes it into a new database with the pix API
     (`index_repository(embed=False)`, then `embed_pending`), so its peak RSS is its own.
  3. This process runs the same ONNX model on the same chunk texts with a plain onnxruntime
     loop written here (not pix's), for the pix/raw throughput ratio.
  4. One source file gets a few lines appended and the `pix` CLI re-indexes, timed as a whole
     process (interpreter start, imports and model load included).
Progress and notes go to stderr; see bench/README.md for what every column means.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from bench import corpora

RAW_BATCH = 32
# Appended to one file for the incremental run: a whole new function, so the changed blob
# gets at least one new chunk to store (and embed).
PROBE = "\n\ndef pix_bench_incremental_probe():\n    return 'changed by bench.index_bench'\n"


@dataclass
class Row:
    corpus: str
    files: int
    chunks: int  # chunk rows of the snapshot's blobs
    source_bytes: int  # bytes of the indexed files (skipped files excluded)
    keyword_s: float
    embed_inputs: int  # distinct chunk texts the model ran on (identical texts share a run)
    embed_total: int  # distinct chunk texts the snapshot has (differs only with --embed-limit)
    embed_s: float
    tokens: int  # model tokens of the embedded texts (truncated to the window, no padding)
    raw_s: float
    incremental_s: float | None
    incremental_kind: str  # 'full', 'keyword only' or 'n/a'
    incremental_note: str
    db_bytes: int
    peak_rss_kib: int


# -- the worker: runs in its own process so that its memory high-water mark is measurable ----


def worker(repo: str, db: str, limit: int | None) -> None:
    """Index `repo` into `db` with the pix API; print timings as JSON on stdout."""
    from pix.index import embed_pending, index_repository
    from pix.store import open_store

    t0 = time.perf_counter()
    report = index_repository(repo, db=db, embed=False)
    keyword_wall = time.perf_counter() - t0
    store = open_store(Path(db), create=False)
    try:
        t1 = time.perf_counter()
        embedded = embed_pending(store, report.snapshot_id, limit=limit)
        embed_s = time.perf_counter() - t1
    finally:
        store.close()
    out = asdict(report)
    out.update(keyword_wall=keyword_wall, embedded=embedded, embed_s=embed_s)
    print(json.dumps(out))


# -- measuring ------------------------------------------------------------------------------


def _env() -> dict[str, str]:
    """Subprocesses import pix and bench from this checkout, whatever is installed."""
    root = str(corpora.repo_root())
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": root + (os.pathsep + path if path else "")}


def run_measured(cmd: list[str], log: Path) -> tuple[str, float, int]:
    """Run `cmd`; return its stdout, wall seconds and ru_maxrss (KiB) from wait4.

    wait4 gives the rusage of exactly this child: on Linux its ru_maxrss is the largest RSS
    high-water mark of the child or of any descendant it waited for (git, here), not a sum.
    """
    out_path = log.with_suffix(".out")
    with out_path.open("wb") as out, log.open("wb") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=_env())
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here; Popen must not wait
    stdout = out_path.read_text(errors="replace")
    if proc.returncode != 0:
        # pix reports errors as JSON on stdout under --json, tracebacks go to stderr: keep both.
        raise RuntimeError(
            f"{' '.join(cmd[2:5])} failed (exit {proc.returncode}): "
            + (stdout[-2000:] + log.read_text(errors="replace")[-2000:]).strip()
        )
    return stdout, seconds, usage.ru_maxrss


def snapshot_facts(db: Path, snapshot_id: int) -> tuple[int, int, list[str]]:
    """Chunk count, indexed bytes and the distinct embedded texts, as pix fed them."""
    from pix.index import embed_text
    from pix.store import open_store

    store = open_store(db, create=False)
    try:
        conn = store.conn
        blobs = "SELECT blob_sha FROM snapshot_file WHERE snapshot_id = ?"
        (chunks,) = conn.execute(
            f"SELECT count(*) FROM chunk WHERE blob_sha IN ({blobs})", (snapshot_id,)
        ).fetchone()
        (source,) = conn.execute(
            "SELECT coalesce(sum(size), 0) FROM snapshot_file WHERE snapshot_id = ?",
            (snapshot_id,),
        ).fetchone()
        # One text per embed_sha, picked as pix's own pending query picks it.
        rows = conn.execute(
            "SELECT min(c.context), min(c.text) FROM chunk c "
            f"WHERE c.blob_sha IN ({blobs}) AND c.id IN (SELECT chunk_id FROM chunk_vec) "
            "GROUP BY c.embed_sha ORDER BY c.embed_sha",
            (snapshot_id,),
        ).fetchall()
    finally:
        store.close()
    return chunks, source, [embed_text(context, text) for context, text in rows]


def raw_embed(texts: list[str]) -> tuple[float, int]:
    """The same model on the same texts with a plain onnxruntime loop: tokenize, sort by
    length, batches of 32, run, mean-pool, normalize. Returns (seconds, tokens).

    Session creation is outside the timing (pix's embed time includes its model load, which
    the ratio therefore charges to pix); the session uses onnxruntime's default options, so
    a ratio far below 1 would also flag pix's own session settings.
    """
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from pix.ingest.embed import manifest, model_path
    from pix.paths import MODELS_DIR

    spec = manifest()
    tokenizer = Tokenizer.from_file(str(MODELS_DIR / spec["tokenizer"]["file"]))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=int(spec["max_tokens"]))
    session = ort.InferenceSession(str(model_path()), providers=["CPUExecutionProvider"])
    inputs = {i.name for i in session.get_inputs()}

    t0 = time.perf_counter()
    encodings = tokenizer.encode_batch(texts)
    order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
    tokens = 0
    for start in range(0, len(order), RAW_BATCH):
        batch = [encodings[i].ids for i in order[start : start + RAW_BATCH]]
        width = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, seq in enumerate(batch):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
            tokens += len(seq)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (hidden,) = session.run(None, {k: v for k, v in feed.items() if k in inputs})[:1]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    return time.perf_counter() - t0, tokens


def probe_file(repo: Path) -> Path:
    """The file the incremental run edits: the median-sized tracked .py file (any file if
    there is none), a typical edit rather than the cheapest or the worst."""
    out = subprocess.run(
        ["git", "-C", str(repo), "ls-files", "-z"], capture_output=True, check=True
    ).stdout.decode("utf-8", "surrogateescape")
    paths = [p for p in out.split("\0") if p]
    candidates = [p for p in paths if p.endswith(".py")] or paths
    by_size = sorted((os.path.getsize(repo / p), p) for p in candidates)
    return repo / by_size[len(by_size) // 2][1]


def db_size(db: Path) -> int:
    """The database with its WAL and shared-memory files, as it sits on disk."""
    return sum(
        p.stat().st_size for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")) if p.exists()
    )


def bench_corpus(name: str, limit: int | None) -> Row:
    source_repo = corpora.corpus(name)
    with tempfile.TemporaryDirectory(prefix=f"pix-bench-{name}-") as tmp:
        work = Path(tmp)
        repo = work / "repo"
        subprocess.run(
            ["git", "clone", "-q", str(source_repo), str(repo)], check=True, capture_output=True
        )
        db = work / "index.pix.db"

        _say(f"{name}: indexing {repo} (worker process)")
        cmd = [sys.executable, "-m", "bench.index_bench", "--worker", str(repo), str(db)]
        if limit is not None:
            cmd += ["--limit", str(limit)]
        out, _, maxrss = run_measured(cmd, work / "worker.log")
        report = json.loads(out.strip().splitlines()[-1])
        db_bytes = db_size(db)
        pending = report["embed_pending"] - report["embedded"]

        chunks, source_bytes, texts = snapshot_facts(db, report["snapshot_id"])
        if len(texts) != report["embedded"]:
            _say(f"{name}: NOTE pix reports {report['embedded']} embedded inputs, "
                 f"the database holds vectors for {len(texts)} distinct texts")
        _say(f"{name}: raw onnxruntime loop over {len(texts)} texts")
        raw_s, tokens = raw_embed(texts)

        incremental_s, incremental_kind, note = _incremental(
            name, repo, db, keyword_only=pending > 0
        )
    return Row(
        corpus=name,
        files=report["files"],
        chunks=chunks,
        source_bytes=source_bytes,
        keyword_s=report["seconds"].get("keyword", report["keyword_wall"]),
        embed_inputs=report["embedded"],
        embed_total=report["embed_pending"],
        embed_s=report["embed_s"],
        tokens=tokens,
        raw_s=raw_s,
        incremental_s=incremental_s,
        incremental_kind=incremental_kind,
        incremental_note=note,
        db_bytes=db_bytes,
        peak_rss_kib=maxrss,
    )


def _incremental(
    name: str, repo: Path, db: Path, keyword_only: bool
) -> tuple[float | None, str, str]:
    """Seconds for `pix index` as a whole process after one file changed, what was measured
    ('full', 'keyword only' or 'n/a') and a note for stderr."""
    import importlib.util

    if importlib.util.find_spec("pix.cli") is None:
        return None, "n/a", "pix.cli is missing"
    target = probe_file(repo)
    # With --embed-limit the database still has unembedded chunks, and a full `pix index`
    # would embed them all: that is not an incremental cost, so stop at the keyword index.
    if keyword_only:
        seconds, note = _reindex(name, repo, db, target, no_embed=True)
        return seconds, "keyword only", note + " (--embed-limit left chunks unembedded)"
    seconds, note = _reindex(name, repo, db, target, no_embed=False)
    if seconds is not None:
        return seconds, "full", note
    # The full re-index failed: still measure the keyword part, after a second edit (the
    # failed run may have recorded the first one already), and say so.
    kw_seconds, kw_note = _reindex(name, repo, db, target, no_embed=True)
    kind = "keyword only" if kw_seconds is not None else "n/a"
    return kw_seconds, kind, f"{note}; then --no-embed: {kw_note}"


def _reindex(
    name: str, repo: Path, db: Path, target: Path, no_embed: bool
) -> tuple[float | None, str]:
    with target.open("a", encoding="utf-8") as fh:
        fh.write(PROBE)
    rel = target.relative_to(repo).as_posix()
    _say(f"{name}: incremental re-index after editing {rel}" + (" (--no-embed)" * no_embed))
    cmd = [sys.executable, "-m", "pix.cli", "index", str(repo), "--db", str(db), "--quiet",
           "--json"] + ["--no-embed"] * no_embed
    try:
        out, seconds, _ = run_measured(cmd, repo.parent / "incremental.log")
    except RuntimeError as exc:  # a broken re-index is a finding to print, not a crash
        return None, f"edited {rel}; FAILED: {' '.join(str(exc).split())}"
    try:
        report = json.loads(out)
        facts = (f"new_blobs={report.get('new_blobs')} chunks_added={report.get('chunks_added')}"
                 f" embedded={report.get('embedded')}")
    except json.JSONDecodeError:
        facts = "the CLI printed no JSON report"
    return seconds, f"edited {rel}; {seconds:.2f}s; {facts}"


# -- output ----------------------------------------------------------------------------------

COLUMNS = [
    "corpus", "files", "chunks", "source MB", "keyword s", "files/s", "MB/s", "embedded",
    "embed chunks/s", "embed tok/s", "raw chunks/s", "pix/raw", "incremental s", "DB/source",
    "peak RSS MiB",
]


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else float("nan")


def render(rows: list[Row]) -> str:
    lines = [
        "| " + " | ".join(COLUMNS) + " |",
        "|---|" + "---:|" * (len(COLUMNS) - 1),
    ]
    for r in rows:
        mb = r.source_bytes / 1e6
        pix_rate = _ratio(r.embed_inputs, r.embed_s)
        raw_rate = _ratio(r.embed_inputs, r.raw_s)
        embedded = str(r.embed_inputs)
        if r.embed_inputs != r.embed_total:
            embedded += f" of {r.embed_total}"
        incremental = "n/a" if r.incremental_s is None else f"{r.incremental_s:.2f}"
        if r.incremental_s is not None and r.incremental_kind != "full":
            incremental += f" ({r.incremental_kind})"
        cells = [
            r.corpus, str(r.files), str(r.chunks), f"{mb:.2f}", f"{r.keyword_s:.2f}",
            f"{_ratio(r.files, r.keyword_s):.0f}", f"{_ratio(mb, r.keyword_s):.2f}", embedded,
            f"{pix_rate:.1f}", f"{_ratio(r.tokens, r.embed_s):.0f}", f"{raw_rate:.1f}",
            f"{_ratio(pix_rate, raw_rate):.2f}", incremental,
            f"{_ratio(r.db_bytes, r.source_bytes):.2f}", f"{r.peak_rss_kib / 1024:.0f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.index_bench",
        description="Index each corpus into a fresh database; print one markdown table.",
    )
    parser.add_argument("--corpora", default="requests,click,large",
                        help=f"comma-separated, from: {', '.join(corpora.CORPORA)}")
    parser.add_argument("--embed-limit", type=int, default=None, metavar="N",
                        help="embed only N chunk texts of the 'large' corpus (default: all); "
                             "its incremental run then skips embedding (--no-embed)")
    # Internal: the measured subprocess of step 2.
    parser.add_argument("--worker", nargs=2, metavar=("REPO", "DB"), help=argparse.SUPPRESS)
    parser.add_argument("--limit", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker[0], args.worker[1], args.limit)
        return

    names = [n for n in args.corpora.split(",") if n]
    unknown = [n for n in names if n not in corpora.CORPORA]
    if unknown:
        parser.error(f"unknown corpora: {', '.join(unknown)}")
    rows = []
    for name in names:
        limit = args.embed_limit if name == "large" else None
        # Timings are wall-clock: other load on the machine slows them (and the pix/raw ratio
        # only stays fair if the load is steady), so print the load beside them.
        _say(f"{name}: load average before {_load()}")
        row = bench_corpus(name, limit)
        _say(f"{name}: {row.incremental_note}")
        _say(f"{name}: load average after {_load()}")
        rows.append(row)
    print(render(rows))
    _say(f"machine: {os.cpu_count()} cpus, python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
