"""How big a .pix.db is beside the source it indexes, and where the bytes go.

    python -m bench.size_bench [--corpora requests,click,large,huge] [--model-for N]

For each corpus: clone it into a temporary folder, `pix index` it into a new database, close,
checkpoint, and measure the database file (and its WAL, if any) against the bytes of the
indexed files. The breakdown comes from SQLite's dbstat (pages per table and index, grouped).

Vectors are the one part whose size does not depend on their values: every chunk gets one
int8[384] row. Embedding django with the transformer takes most of an hour on 2 cores, so
corpora with more than `--model-for` chunks (default 10,000) get their vectors from the
same INSERT path with a constant vector instead of the model; the table says which (a
vec0 row takes the same bytes whatever its values).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import corpora

GROUPS = (  # (label, table-name prefixes), first match wins
    ("trigrams", ("blob_trigram",)),
    ("text (blob)", ("blob", "sqlite_autoindex_blob")),
    ("FTS5 words", ("chunk_fts",)),
    ("vectors", ("chunk_vec",)),
    ("chunks", ("chunk", "sqlite_autoindex_chunk")),
    ("symbols", ("symbol",)),
    ("files & paths", ("snapshot_file", "path", "sqlite_autoindex_path", "skipped", "snapshot")),
)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def fill_vectors(db: Path) -> int:
    """A vector for every chunk without one, through pix's own INSERT statement."""
    import numpy as np

    from pix.store import open_store, sql

    store = open_store(db, create=False)
    try:
        vector = np.zeros(384, dtype=np.int8)
        vector[0] = 127
        blob = vector.tobytes()
        with store.write():
            ids = store.conn.execute(
                "SELECT id FROM chunk WHERE id NOT IN (SELECT chunk_id FROM chunk_vec)"
            ).fetchall()
            store.conn.executemany(sql.INSERT_VECTOR, ((i, blob) for (i,) in ids))
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return len(ids)
    finally:
        store.close()


def measure(db: Path) -> dict:
    from pix.store import open_store

    store = open_store(db, create=False)
    try:
        conn = store.conn
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
        (source,) = conn.execute("SELECT coalesce(sum(size), 0) FROM blob").fetchone()
        (chunks,) = conn.execute("SELECT count(*) FROM chunk").fetchone()
        (vectors,) = conn.execute("SELECT count(*) FROM chunk_vec").fetchone()
        (files,) = conn.execute("SELECT count(*) FROM snapshot_file").fetchone()
    finally:
        store.close()
    groups = dict.fromkeys([g for g, _ in GROUPS] + ["other"], 0)
    for name, size in pages:
        label = next((g for g, prefixes in GROUPS if name.startswith(prefixes)), "other")
        groups[label] += size
    wal = Path(f"{db}-wal")
    total = db.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    return {
        "files": files, "chunks": chunks, "vectors": vectors, "source": source,
        "total": total, "groups": groups,
    }  # fmt: skip


def bench(name: str, model_for: int) -> dict:
    source_repo = corpora.corpus(name)
    with tempfile.TemporaryDirectory(prefix=f"pix-size-{name}-") as tmp:
        repo = Path(tmp) / "repo"
        subprocess.run(["git", "clone", "-q", str(source_repo), str(repo)], check=True)
        db = Path(tmp) / "index.pix.db"
        pix = [sys.executable, "-m", "pix.cli"]
        t0 = time.perf_counter()
        subprocess.run([*pix, "index", str(repo), "--db", str(db), "--no-embed", "-q"], check=True)
        counted = measure(db)
        if counted["chunks"] <= model_for:
            how = "model"
            _say(f"{name}: embedding {counted['chunks']} chunks with the model")
            subprocess.run([*pix, "index", str(repo), "--db", str(db), "-q"], check=True)
        else:
            how = "filled"
            _say(f"{name}: {counted['chunks']} chunks: vectors filled without the model")
            fill_vectors(db)
        result = measure(db)
        result.update(corpus=name, vectors_by=how, seconds=time.perf_counter() - t0)
        return result


def table(results: list[dict]) -> str:
    labels = [g for g, _ in GROUPS] + ["other"]
    head = ["corpus", "files", "chunks", "source MB", "db MB", "db/source", "vectors by"]
    head += [f"{label} x" for label in labels]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        source = r["source"] or 1
        cells = [
            r["corpus"], f"{r['files']:,}", f"{r['chunks']:,}", f"{r['source'] / 1e6:.2f}",
            f"{r['total'] / 1e6:.2f}", f"**{r['total'] / source:.2f}**", r["vectors_by"],
        ]  # fmt: skip
        cells += [f"{r['groups'][label] / source:.2f}" for label in labels]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpora", default="requests,click,large,huge")
    parser.add_argument(
        "--model-for", type=int, default=10_000,
        help="embed with the model up to this many chunks; fill vectors above it",
    )  # fmt: skip
    args = parser.parse_args(argv)
    results = [bench(name, args.model_for) for name in args.corpora.split(",")]
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
