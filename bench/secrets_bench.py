"""No secret is ever stored: plant one of every kind the detector knows, index, search.

    python -m bench.secrets_bench

Builds a git repository in a temporary folder with the fake secrets of tests/test_redact.py
(one file per case: every kind, in the languages the cases name, plus a private key in a file
whose name does not make pix skip it), indexes it with `pix index` (model included), and then
looks for every planted value:
  - in the bytes of the database file and of its write-ahead log;
  - in every text column of every table and view (chunk_text included), by instr();
  - among the words of the FTS5 index (fts5vocab);
  - and asks `pix query VALUE --channel bm25 --channel ident`: if the word channels rank the
    file that held the value first, and do not for a wrong guess of the same shape (every run
    of 8+ letters and digits shuffled, CONTROLS guesses; prefixes like ghp_ and separators
    kept) nor for the value without those runs, the index would confirm a guessed secret.
Prints one markdown row per kind and a total; every count should be 0.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

CONTROLS = 5
TESTS = Path(__file__).resolve().parent.parent / "tests"
GIT = {
    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@pix.invalid",
    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@pix.invalid",
}  # fmt: skip


def _path_for(stem: str, language: str | None) -> str:
    """A file name that pix reads as `language`: each case holds a secret in that language."""
    from pix.ingest.languages import _EXTENSIONS, language_for_path

    if language == "dockerfile":
        return f"{stem}/Dockerfile"
    ext = next((e for e, lang in _EXTENSIONS.items() if lang == language), "txt")
    assert language is None or language_for_path(f"{stem}.{ext}") == language, language
    return f"{stem}.{ext}"


def planted() -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """Files to write, and (kind, value, path) of every secret in them."""
    sys.path.insert(0, str(TESTS))
    import test_redact as cases  # the fakes, assembled from pieces

    files: dict[str, str] = {}
    values: list[tuple[str, str, str]] = []
    for i, (text, language, kind, value) in enumerate(cases.POSITIVE + cases.MORE_POSITIVE):
        path = _path_for(f"case_{i:02d}", language)
        files[path] = text + "\n"
        values.append((kind, value, path))
    files["keys/deploy_key.txt"] = "\n".join(cases.BODY) + f"\n{cases.END}\n"
    values.extend(("private_key", line, "keys/deploy_key.txt") for line in cases.BODY[1:])
    return files, values


def main() -> int:
    import os

    from pix.store import open_store

    files, values = planted()
    with tempfile.TemporaryDirectory(prefix="pix-secrets-") as tmp:
        repo = Path(tmp) / "repo"
        for rel, text in files.items():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(text, encoding="utf-8")
        env = {**os.environ, **GIT}
        for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "x"]):
            subprocess.run(["git", "-C", str(repo), *args], check=True, env=env)
        pix = [sys.executable, "-m", "pix.cli"]
        subprocess.run([*pix, "index", "-q"], cwd=repo, check=True)
        db = repo / ".pix.db"
        store = open_store(db, create=False)
        conn = store.conn
        indexed = conn.execute("SELECT count(*) FROM snapshot_file").fetchone()[0]
        skipped = conn.execute("SELECT count(*) FROM skipped").fetchone()[0]
        conn.execute("CREATE VIRTUAL TABLE temp.words USING fts5vocab(main, chunk_fts, row)")
        vocabulary = {w for (w,) in conn.execute("SELECT term FROM words")}
        columns = []  # (table, column) of every text-bearing column
        for (table,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE"
            " 'sqlite_%' AND name NOT LIKE '%_data' AND name NOT LIKE '%_idx'"
            " AND name NOT LIKE '%_docsize' AND name NOT LIKE '%_config'"
            " AND name NOT LIKE 'chunk_vec_%'"
        ).fetchall():
            for row in conn.execute("SELECT name FROM pragma_table_info(?)", (table,)):
                columns.append((table, row[0]))
        rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        raw = {p.name: p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.exists()}
        for kind, value, _ in values:
            r = rows[kind]
            r["planted"] += 1
            r["db file"] += value.encode() in raw.get(db.name, b"")
            r["WAL"] += value.encode() in raw.get(f"{db.name}-wal", b"")
            r["columns"] += sum(
                bool(conn.execute(f'SELECT 1 FROM "{t}" WHERE instr("{c}", ?)', (value,))  # noqa: S608
                     .fetchone())
                for t, c in columns
            )  # fmt: skip
            words = {w.lower() for w in re.findall(r"\w+", value) if len(w) >= 8}
            r["FTS words"] += len(words & vocabulary)
        store.close()
        shuffle = random.Random(0)

        def top(text: str) -> str | None:
            done = subprocess.run(
                [*pix, "query", text, "--channel", "bm25", "--channel", "ident", "--json",
                 "--no-content", "--top", "1"],
                cwd=repo, capture_output=True, text=True, check=True,
            )  # fmt: skip
            results = json.loads(done.stdout)["results"]
            return results[0]["path"] if results else None

        for kind, value, path in values:
            if top(value) != path:
                continue
            # Confirmed only if the file is found by the secret's own characters: not by the
            # value with its 8+ runs removed (the prefix and context words, such as `npm_`, are
            # not secret) and not by any of CONTROLS wrong guesses of the same shape.
            runs = r"[A-Za-z0-9]{8,}"
            controls = [re.sub(runs, " ", value).strip()] + [
                re.sub(runs, lambda m: "".join(shuffle.sample(m[0], len(m[0]))), value)
                for _ in range(CONTROLS)
            ]
            rows[kind]["confirmed by search"] += all(top(c) != path for c in controls)
    head = ["kind", "planted", "db file", "WAL", "columns", "FTS words", "confirmed by search"]
    print(f"{len(files)} files planted, {indexed} indexed, {skipped} skipped\n")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    total: dict[str, int] = defaultdict(int)
    for kind in sorted(rows):
        print("| " + " | ".join([kind] + [str(rows[kind][h]) for h in head[1:]]) + " |")
        for h in head[1:]:
            total[h] += rows[kind][h]
    print("| **all** | " + " | ".join(f"**{total[h]}**" for h in head[1:]) + " |")
    return 0 if all(total[h] == 0 for h in head[2:]) else 1


if __name__ == "__main__":
    sys.exit(main())
