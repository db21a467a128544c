"""Indexing speed, size and memory of pix on the bench corpora: one markdown table on stdout.

    python -m bench.index_bench [--corpora requests,click,large] [--embed-limit N]

Per corpus, in a fresh temporary folder (the cached corpus itself is never touched):
  1. `git clone` the cached corpus, so the one-file edit of step 4 cannot dirty the cache.
  2. A worker subprocess indexes it into a new database with the pix API
     (`index_repository(embed=False)`, then one `embed_pending` call), so its peak RSS is its
     own.
  3. This process runs the same ONNX model on the same chunk texts with a plain onnxruntime
     loop written here (not pix's), for the pix/raw throughput ratio. The two take turns every
     few seconds (see `Pacer`), so both see the same load from whatever else the machine runs.
  4. One source file gets a few lines appended and the `pix` CLI re-indexes, timed as a whole
     process (interpreter start, imports and model load included).
Progress and notes go to stderr; see bench/README.md for what every column means.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from bench import corpora

RAW_BATCH = 32
# How long pix embeds before handing the CPU to the raw loop for the same share of texts.
# Short enough that load from other processes hits both sides alike, long enough that the
# hand-over (a pipe round trip) costs nothing measurable.
TURN_SECONDS = 3.0
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
    embed_s: float  # wall seconds of embed_pending, the raw loop's turns taken out
    embed_cpu_s: float  # CPU seconds (all threads) of the same
    tokens: int  # model tokens of the embedded texts (truncated to the window, no padding)
    raw_inputs: int  # texts the raw loop ran (the same texts as `embed_inputs`)
    raw_s: float
    raw_cpu_s: float
    incremental_s: float | None
    incremental_kind: str  # 'full', 'keyword only' or 'n/a'
    incremental_note: str
    db_bytes: int
    peak_rss_kib: int


# -- the worker: its own process, so that its memory high-water mark is its own -------------


def _send(channel: IO[str], event: str, **fields: Any) -> None:
    channel.write(json.dumps({"event": event, **fields}) + "\n")
    channel.flush()


class Pacer:
    """Stands in for pix's Progress (start/advance/finish) inside `embed_pending`: after each
    TURN_SECONDS of embedding it tells the parent how far it got and waits until the parent's
    raw loop has done the same share. The wait is measured and taken out of pix's time."""

    def __init__(self, channel: IO[str]) -> None:
        self.channel = channel
        self.total = self.done = 0
        self.paused_s = self.paused_cpu_s = 0.0
        self.turn_start = time.perf_counter()

    def start(self, label: str, total: int, work: int | None = None) -> None:
        self.total, self.done = total, 0
        self.turn_start = time.perf_counter()

    def advance(self, n: int = 1, work: int = 0) -> None:
        self.done += n
        if time.perf_counter() - self.turn_start >= TURN_SECONDS:
            self.hand_over()

    def finish(self) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        # Any other Progress method pix may call (drawing, notes) is a no-op here.
        return lambda *args, **kwargs: None

    def hand_over(self) -> None:
        t0, c0 = time.perf_counter(), time.process_time()
        _send(self.channel, "turn", done=self.done, total=self.total)
        if sys.stdin.readline().strip() != "go":
            raise SystemExit("bench parent went away")
        self.paused_s += time.perf_counter() - t0
        self.paused_cpu_s += time.process_time() - c0
        self.turn_start = time.perf_counter()


def _vm_hwm_kib() -> int:
    """This process's own RSS high-water mark. Not ru_maxrss: Linux carries a forked child's
    maxrss over from the parent (and keeps it across exec), so a worker started by this
    bench, which holds its own model session, would report the parent's memory."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def worker(repo: str, db: str, limit: int | None) -> None:
    """Index `repo` into `db` with the pix API, talking JSON lines with the parent on
    stdout/stdin: 'keyword' (then wait for 'go'), 'turn's, and 'done' with the timings."""
    from pix.index import index_repository
    from pix.ingest.vectors import embed_pending
    from pix.store import open_store

    channel = sys.stdout
    sys.stdout = sys.stderr  # anything pix prints must not corrupt the protocol

    t0 = time.perf_counter()
    report = index_repository(repo, db=db, embed=False)
    keyword_wall = time.perf_counter() - t0
    _send(channel, "keyword", snapshot_id=report.snapshot_id)
    if sys.stdin.readline().strip() != "go":
        raise SystemExit("bench parent went away")

    store = open_store(Path(db), create=False)
    pacer = Pacer(channel)
    try:
        t1, c1 = time.perf_counter(), time.process_time()
        # The Pacer is duck-typed as pix's Progress.
        embedded = embed_pending(
            store,
            report.snapshot_id,
            progress=pacer,
            limit=limit,  # type: ignore[arg-type]
        )
        embed_s = time.perf_counter() - t1 - pacer.paused_s
        embed_cpu_s = time.process_time() - c1 - pacer.paused_cpu_s
    finally:
        store.close()
    out = asdict(report)
    out.update(
        keyword_wall=keyword_wall,
        embedded=embedded,
        embed_s=embed_s,
        embed_cpu_s=embed_cpu_s,
        vm_hwm_kib=_vm_hwm_kib(),
    )
    _send(channel, "done", report=out)


# -- the raw loop ---------------------------------------------------------------------------


class RawLoop:
    """The same model on the same texts with a plain onnxruntime loop: tokenize, sort by
    length, batches of 32, run, mean-pool, normalize; run in slices as the worker hands over.

    Session creation is not timed (pix's embed time includes its model load, which the ratio
    therefore charges to pix); tokenizing is. The session uses onnxruntime's default options,
    so a ratio far below 1 would also flag pix's own session settings.
    """

    def __init__(self, texts: list[str]) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        from pix.ingest.embed import manifest, model_path
        from pix.paths import MODELS_DIR

        spec = manifest()
        tokenizer = Tokenizer.from_str((MODELS_DIR / spec["tokenizer"]["file"]).read_text("utf-8"))
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=int(spec["max_tokens"]))
        self.session = ort.InferenceSession(str(model_path()), providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.texts = texts
        self.seconds = self.cpu_seconds = 0.0
        self.tokens = self.done = 0
        with self._timed():
            encodings = tokenizer.encode_batch(texts)
            self.ids = sorted((e.ids for e in encodings), key=len)

    def _timed(self) -> _Timer:
        return _Timer(self)

    def run_until(self, share: float) -> None:
        """Embed, in order, until `share` (0..1) of the texts are done."""
        target = min(len(self.ids), math.ceil(share * len(self.ids)))
        with self._timed():
            while self.done < target:
                self._batch(self.ids[self.done : self.done + RAW_BATCH])
                self.done = min(self.done + RAW_BATCH, len(self.ids))

    def _batch(self, batch: list[list[int]]) -> None:
        import numpy as np

        width = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, seq in enumerate(batch):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
            self.tokens += len(seq)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


class _Timer:
    def __init__(self, loop: RawLoop) -> None:
        self.loop = loop

    def __enter__(self) -> None:
        self.t0, self.c0 = time.perf_counter(), time.process_time()

    def __exit__(self, *exc: object) -> None:
        self.loop.seconds += time.perf_counter() - self.t0
        self.loop.cpu_seconds += time.process_time() - self.c0


# -- measuring ------------------------------------------------------------------------------


def _env() -> dict[str, str]:
    """Subprocesses import pix and bench from this checkout, whatever is installed."""
    root = str(corpora.repo_root())
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": root + (os.pathsep + path if path else "")}


def _reap(proc: subprocess.Popen, log: Path, what: str) -> int:
    """Wait for `proc` with wait4; return its ru_maxrss (KiB), raise if it failed.

    wait4 gives the rusage of exactly this child: on Linux its ru_maxrss is the largest RSS
    high-water mark of the child or of any descendant it waited for (git, here), not a sum.
    """
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here; Popen must not wait
    if proc.returncode != 0:
        raise RuntimeError(
            f"{what} failed (exit {proc.returncode}): "
            + log.read_text(errors="replace")[-3000:].strip()
        )
    return usage.ru_maxrss


def index_with_raw(
    repo: Path, db: Path, limit: int | None, log: Path
) -> tuple[dict, RawLoop, int, int]:
    """The worker's index with the raw loop taking turns beside it. Returns the worker's
    report, the finished raw loop, how many distinct texts the snapshot had to embed, and the
    worker's peak RSS in KiB."""
    cmd = [sys.executable, "-m", "bench.index_bench", "--worker", str(repo), str(db)]
    if limit is not None:
        cmd += ["--limit", str(limit)]
    with log.open("wb") as err:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            env=_env(),
            text=True,
            bufsize=1,
        )
    assert proc.stdin and proc.stdout
    try:
        message = _receive(proc)
        if message.get("event") != "keyword":
            raise RuntimeError(f"worker: expected 'keyword', got {message}")
        pending = pending_texts(db, message["snapshot_id"])
        texts = pending if limit is None else pending[:limit]
        raw = RawLoop(texts)
        proc.stdin.write("go\n")
        while (message := _receive(proc)).get("event") == "turn":
            raw.run_until(message["done"] / max(message["total"], 1))
            proc.stdin.write("go\n")
        if message.get("event") != "done":
            raise RuntimeError(f"worker: expected 'done', got {message}")
        raw.run_until(1.0)
    except Exception as exc:
        proc.kill()
        _reap_quietly(proc)
        tail = log.read_text(errors="replace")[-3000:].strip()
        raise RuntimeError(f"index worker: {exc}\n{tail}") from exc
    except BaseException:  # Ctrl-C: leave no worker behind
        proc.kill()
        _reap_quietly(proc)
        raise
    proc.stdin.close()
    proc.stdout.close()
    _reap(proc, log, "index worker")
    return message["report"], raw, len(pending), message["report"]["vm_hwm_kib"]


def _receive(proc: subprocess.Popen) -> dict:
    line = proc.stdout.readline() if proc.stdout else ""
    if not line:
        return {"event": "eof"}
    return json.loads(line)


def _reap_quietly(proc: subprocess.Popen) -> None:
    try:
        os.waitpid(proc.pid, 0)
        proc.returncode = -1
    except ChildProcessError:
        pass


# The blob ids of one snapshot (bound parameter: its id).
_BLOBS = (
    "SELECT b.id FROM snapshot_file f JOIN blob b ON b.sha = f.blob_sha WHERE f.snapshot_id = ?"
)


def pending_texts(db: Path, snapshot_id: int) -> list[str]:
    """The texts `embed_pending` will run, in its order: one per distinct embed_sha lacking a
    vector, ordered by embed_sha (what pix's PENDING_EMBEDDINGS selects; the texts are checked
    against the stored vectors afterwards, in `snapshot_facts`)."""
    from pix.store import open_store
    from pix.store.content import embed_text

    store = open_store(db, create=False)
    try:
        rows = store.conn.execute(
            "SELECT min(c.context), min(t.text), min(b.language) FROM chunk c "
            "JOIN chunk_text t ON t.id = c.id JOIN blob b ON b.id = c.blob_id "
            f"WHERE c.blob_id IN ({_BLOBS}) "
            "AND NOT EXISTS (SELECT 1 FROM chunk_vec v WHERE v.chunk_id = c.id) "
            "GROUP BY c.embed_key ORDER BY c.embed_key",
            (snapshot_id,),
        ).fetchall()
    finally:
        store.close()
    return [embed_text(context, text, language) for context, text, language in rows]


def snapshot_facts(db: Path, snapshot_id: int) -> tuple[int, int, list[str]]:
    """Chunk count, indexed bytes and the distinct texts that now have vectors."""
    from pix.store import open_store
    from pix.store.content import embed_text

    store = open_store(db, create=False)
    try:
        conn = store.conn
        (chunks,) = conn.execute(
            f"SELECT count(*) FROM chunk WHERE blob_id IN ({_BLOBS})", (snapshot_id,)
        ).fetchone()
        (source,) = conn.execute(
            "SELECT coalesce(sum(size), 0) FROM snapshot_file WHERE snapshot_id = ?",
            (snapshot_id,),
        ).fetchone()
        rows = conn.execute(
            "SELECT min(c.context), min(t.text), min(b.language) FROM chunk c "
            "JOIN chunk_text t ON t.id = c.id JOIN blob b ON b.id = c.blob_id "
            f"WHERE c.blob_id IN ({_BLOBS}) AND c.id IN (SELECT chunk_id FROM chunk_vec) "
            "GROUP BY c.embed_key ORDER BY c.embed_key",
            (snapshot_id,),
        ).fetchall()
    finally:
        store.close()
    return chunks, source, [embed_text(context, text, language) for context, text, language in rows]


def run_measured(cmd: list[str], log: Path) -> tuple[str, float]:
    """Run `cmd` to the end; return its stdout and wall seconds."""
    out_path = log.with_suffix(".out")
    with out_path.open("wb") as out, log.open("wb") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=_env())
        try:
            _reap(proc, log, " ".join(cmd[2:5]))
        except RuntimeError as exc:
            # pix reports errors as JSON on stdout under --json: add it to the message.
            stdout = out_path.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"{exc} {stdout}") from None
        seconds = time.perf_counter() - t0
    return out_path.read_text(errors="replace"), seconds


def probe_file(repo: Path) -> Path:
    """The file the incremental run edits: the median-sized tracked .py file outside test
    folders (else any .py file, else any file): a typical edit to the code itself, rather
    than the cheapest or the worst."""
    out = subprocess.run(
        ["git", "-C", str(repo), "ls-files", "-z"], capture_output=True, check=True
    ).stdout.decode("utf-8", "surrogateescape")
    paths = [p for p in out.split("\0") if p]
    python = [p for p in paths if p.endswith(".py")]
    candidates = [p for p in python if not _is_test(p)] or python or paths
    by_size = sorted((os.path.getsize(repo / p), p) for p in candidates)
    return repo / by_size[len(by_size) // 2][1]


def _is_test(path: str) -> bool:
    parts = path.split("/")
    folders = parts[:-1]
    return any(p in ("test", "tests", "testing") for p in folders) or parts[-1].startswith("test_")


def db_size(db: Path) -> int:
    """The database with its WAL and shared-memory files, as it sits on disk."""
    return sum(p.stat().st_size for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")) if p.exists())


def bench_corpus(name: str, limit: int | None) -> Row:
    source_repo = corpora.corpus(name)
    with tempfile.TemporaryDirectory(prefix=f"pix-bench-{name}-") as tmp:
        work = Path(tmp)
        repo = work / "repo"
        subprocess.run(
            ["git", "clone", "-q", str(source_repo), str(repo)], check=True, capture_output=True
        )
        db = work / "index.pix.db"

        _say(f"{name}: indexing {repo} (worker process, raw loop taking turns)")
        report, raw, embed_total, maxrss = index_with_raw(repo, db, limit, work / "worker.log")
        db_bytes = db_size(db)

        chunks, source_bytes, stored = snapshot_facts(db, report["snapshot_id"])
        if sorted(stored) != sorted(raw.texts) or len(stored) != report["embedded"]:
            _say(
                f"{name}: NOTE the raw loop did not run exactly the texts pix embedded: pix "
                f"reports {report['embedded']}, the raw loop ran {len(raw.texts)}, the "
                f"database has vectors for {len(stored)} distinct texts"
            )

        incremental_s, incremental_kind, note = _incremental(
            name, repo, db, keyword_only=report["embedded"] < embed_total
        )
    return Row(
        corpus=name,
        files=report["files"],
        chunks=chunks,
        source_bytes=source_bytes,
        keyword_s=report["seconds"].get("keyword", report["keyword_wall"]),
        embed_inputs=report["embedded"],
        embed_total=embed_total,
        embed_s=report["embed_s"],
        embed_cpu_s=report["embed_cpu_s"],
        tokens=raw.tokens,
        raw_inputs=len(raw.texts),
        raw_s=raw.seconds,
        raw_cpu_s=raw.cpu_seconds,
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
    cmd = [
        sys.executable,
        "-m",
        "pix.cli",
        "index",
        str(repo),
        "--db",
        str(db),
        "--quiet",
        "--json",
    ] + ["--no-embed"] * no_embed
    try:
        out, seconds = run_measured(cmd, repo.parent / "incremental.log")
    except RuntimeError as exc:  # a broken re-index is a finding to print, not a crash
        return None, f"edited {rel}; FAILED: {' '.join(str(exc).split())}"
    try:
        report = json.loads(out)
        facts = (
            f"newBlobs={report.get('newBlobs')} chunksAdded={report.get('chunksAdded')}"
            f" embedded={report.get('embedded')}"
        )
    except json.JSONDecodeError:
        facts = "the CLI printed no JSON report"
    return seconds, f"edited {rel}; {seconds:.2f}s; {facts}"


# -- output ----------------------------------------------------------------------------------

COLUMNS = [
    "corpus",
    "files",
    "chunks",
    "source MB",
    "keyword s",
    "files/s",
    "MB/s",
    "embedded",
    "embed chunks/s",
    "embed tok/s",
    "raw chunks/s",
    "pix/raw",
    "pix/raw CPU",
    "incremental s",
    "DB/source",
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
        raw_rate = _ratio(r.raw_inputs, r.raw_s)
        pix_cpu_rate = _ratio(r.embed_inputs, r.embed_cpu_s)  # texts per CPU second
        raw_cpu_rate = _ratio(r.raw_inputs, r.raw_cpu_s)
        embedded = str(r.embed_inputs)
        if r.embed_inputs != r.embed_total:
            embedded += f" of {r.embed_total}"
        incremental = "n/a" if r.incremental_s is None else f"{r.incremental_s:.2f}"
        if r.incremental_s is not None and r.incremental_kind != "full":
            incremental += f" ({r.incremental_kind})"
        cells = [
            r.corpus,
            str(r.files),
            str(r.chunks),
            f"{mb:.2f}",
            f"{r.keyword_s:.2f}",
            f"{_ratio(r.files, r.keyword_s):.0f}",
            f"{_ratio(mb, r.keyword_s):.2f}",
            embedded,
            f"{pix_rate:.1f}",
            f"{_ratio(r.tokens, r.embed_s):.0f}",
            f"{raw_rate:.1f}",
            f"{_ratio(pix_rate, raw_rate):.2f}",
            f"{_ratio(pix_cpu_rate, raw_cpu_rate):.2f}",
            incremental,
            f"{_ratio(r.db_bytes, r.source_bytes):.2f}",
            f"{r.peak_rss_kib / 1024:.0f}",
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
    parser.add_argument(
        "--corpora",
        default="requests,click,large",
        help=f"comma-separated, from: {', '.join(corpora.CORPORA)}",
    )
    parser.add_argument(
        "--embed-limit",
        type=int,
        default=None,
        metavar="N",
        help="embed only N chunk texts of the 'large' corpus (default: all); "
        "its incremental run then skips embedding (--no-embed)",
    )
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
        # Wall-clock timings depend on other load on the machine: print it beside them.
        _say(f"{name}: load average before {_load()}")
        row = bench_corpus(name, limit)
        _say(f"{name}: {row.incremental_note}")
        _say(f"{name}: load average after {_load()}")
        rows.append(row)
    print(render(rows))
    _say(f"machine: {os.cpu_count()} cpus, python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
