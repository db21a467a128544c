"""Keyword baselines: the grep-style count of ../shared/README.md (what an agent with
`grep -il` gets) and plain BM25 over code files (`BM25Files`, the bm25s package).

Files are ranked by how many distinct query words they contain (case-insensitive substring,
like `grep -il word` run once per word), ties broken by path. Words are the query's runs of
letters, lower-cased, of at least 3 letters, minus a short English stopword list. Files that
contain none of the words are not ranked at all, as grep would not list them.

    python -m bench.baselines [--sets requests,click]   # prints MRR@10, recall@k, nDCG@10
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from bench import corpora, metrics

# Short on purpose: an agent drops the obvious filler words, not domain words like 'add'.
STOPWORDS = frozenset(
    """the and for are but not you all any can had her was one our out has have him his how
    its let may new now old see two who did get got use via yet too than then them they this
    that these those there their what when where which while with will would should could
    into onto from upon over under also only just more most some such very been being were
    does doing done each other about after before again here once both same own off why""".split()
)
WORD = re.compile(r"[a-z]+")


def query_words(query: str) -> list[str]:
    """Distinct search words of a query, in first-seen order."""
    words = (w for w in WORD.findall(query.lower()) if len(w) >= 3 and w not in STOPWORDS)
    return list(dict.fromkeys(words))


class GrepIndex:
    """Lower-cased contents of every git-tracked file, read once so 100 queries stay cheap."""

    def __init__(self, root: Path) -> None:
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True
        ).stdout
        self.texts: dict[str, str] = {}
        for path in sorted(p for p in out.decode("utf-8", "surrogateescape").split("\0") if p):
            try:
                data = (root / path).read_bytes()
            except OSError:
                continue
            # grep -i matches bytes; decoding with 'replace' keeps ASCII words exact, and
            # query words are ASCII letters only.
            self.texts[path] = data.decode("utf-8", "replace").lower()

    def rank(self, query: str, top: int | None = None) -> list[str]:
        words = query_words(query)
        counts = [(sum(1 for w in words if w in text), path) for path, text in self.texts.items()]
        ranked = sorted(((-n, path) for n, path in counts if n > 0))
        paths = [path for _, path in ranked]
        return paths[:top] if top is not None else paths


IDENT = re.compile(r"[A-Za-z0-9]+")
CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def code_words(text: str) -> str:
    """Every alphanumeric run, plus its camelCase/snake_case parts when it has several."""
    out = []
    for word in IDENT.findall(text):
        parts = CAMEL.findall(word)
        out.append(word)
        if len(parts) > 1:
            out.extend(parts)
    return " ".join(out).lower()


class BM25Files:
    """Plain BM25 with one document per file: the baseline an off-the-shelf lexical engine
    gives. Words are alphanumeric runs and their camel/snake parts, lower-cased, English
    stopwords dropped, Snowball-stemmed (bm25s + PyStemmer, defaults k1=1.5, b=0.75).
    "Code files": every text file of the tree (UTF-8, <= 1 MiB) except what pix's path
    priors call docs (Markdown/RST/text, docs/ folders, changelogs), so changelogs that
    repeat commit subjects do not decide the baseline. A file's document is its path's words
    and its text's. Built from {path: text}; the caller can share `cache` (a text's words,
    keyed by any content id such as its blob) between corpora that share files: a path's
    words are never cached with them, since one text may sit at several paths."""

    def __init__(
        self, files: dict[str, str], keys: dict[str, str] | None = None, cache: dict | None = None
    ) -> None:
        import bm25s
        import Stemmer

        from pix.retrieve.priors import path_role

        self._bm25s = bm25s
        self.stemmer = Stemmer.Stemmer("english")
        self.paths = sorted(p for p in files if path_role(p) != "docs")
        cache = {} if cache is None else cache
        texts = []
        for path in self.paths:
            key = (keys or {}).get(path, path)
            if key not in cache:
                cache[key] = code_words(files[path])
            texts.append(code_words(path) + " " + cache[key])
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=self.stemmer, show_progress=False)
        self.index = bm25s.BM25()
        self.index.index(tokens, show_progress=False)

    def rank(self, query: str, top: int = 10) -> list[str]:
        q = self._bm25s.tokenize(
            [code_words(query)], stopwords="en", stemmer=self.stemmer, show_progress=False
        )
        if not q.vocab:
            return []
        k = min(top, len(self.paths))
        docs, scores = self.index.retrieve(q, k=k, show_progress=False)
        return [self.paths[d] for d, s in zip(docs[0], scores[0], strict=True) if s > 0]

    @classmethod
    def from_git(cls, root: Path, rev: str | None = None, cache: dict | None = None):
        """Every regular file of the work tree's index (rev None) or of commit `rev`."""
        from pix.ingest import scan

        if rev is None:
            out = subprocess.run(
                ["git", "-C", str(root), "ls-files", "-z", "-s"], capture_output=True, check=True
            ).stdout
        else:
            out = subprocess.run(
                ["git", "-C", str(root), "ls-tree", "-r", "-z", "-l", rev],
                capture_output=True, check=True,
            ).stdout  # fmt: skip
        entries = {}
        for record in out.decode("utf-8", "surrogateescape").split("\0"):
            if not record:
                continue
            meta, path = record.split("\t", 1)
            fields = meta.split()
            blob = fields[1] if rev is None else fields[2]
            # ls-tree's size is "BAD" for a blob the object store lacks (a fetched mirror
            # leaves out its largest files): there is nothing to read, as pix reads nothing.
            if fields[0] in ("100644", "100755") and (rev is None or fields[3].isdigit()):
                if rev is None or int(fields[3]) <= scan.DEFAULT_MAX_BYTES:
                    entries[path] = blob
        cache = {} if cache is None else cache
        wanted = sorted({b for b in entries.values() if b not in cache})
        texts: dict[str, str] = {}
        for blob, data in scan.read_blobs(root, wanted):
            if len(data) <= scan.DEFAULT_MAX_BYTES and b"\0" not in data[:8192]:
                texts[blob] = data.decode("utf-8", "replace")
        files = {}
        for path, blob in entries.items():
            if blob in texts:
                files[path] = texts[blob]
            elif blob in cache:
                files[path] = ""  # already tokenized; the text is not needed again
        return cls(files, keys=entries, cache=cache)


class _StandInModel:
    """Deterministic pseudo-random vectors in place of semble's model, which its wheel does
    not ship (it downloads minishlab/potion-code-16M-v2 from the Hugging Face hub). Searched
    with alpha=0, semble gives the semantic side no weight, so these vectors never count."""

    dim = 8

    def encode(self, texts, **_):
        import numpy as np

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.sha1(text.encode()).digest()[:4], "little")
            out[i] = np.random.default_rng(seed).standard_normal(self.dim)
        return out


class SembleLexical:
    """The semble peer without its embedding model: its own file walker and chunker, BM25,
    and its ranking stage (multi-chunk file boost, identifier boost, path penalties), with
    alpha=0. Files ranked by their best chunk among its top 50."""

    def __init__(self, root: Path) -> None:
        from semble.index.create import create_index_from_path
        from semble.index.index import SembleIndex
        from semble.types import ContentType

        model = _StandInModel()
        content = (ContentType.CODE,)
        self.index = None
        try:
            bm25, semantic, chunks, manifest = create_index_from_path(
                root, model=model, content=content, display_root=root, previous=None,
                show_progress_bar=False,
            )  # fmt: skip
        except ValueError as e:
            # A tree of files none of its languages knows (rbenv's early commits: extensionless
            # Bash scripts): the peer indexes nothing there, so it finds nothing.
            if "No supported files" not in str(e):
                raise
            return
        self.index = SembleIndex(
            model, bm25, semantic, chunks, "stand-in", root=root, content=content,
            manifest=manifest,
        )  # fmt: skip

    def rank(self, query: str, top: int = 10) -> list[str]:
        if self.index is None:
            return []
        results = self.index.search(query, top_k=50, alpha=0.0)
        return metrics.unique(r.chunk.file_path for r in results)[:top]

    def spans(self, query: str, top: int = 10) -> list[list]:
        """[path, first line, last line] of its first `top` chunks, as its own runner reads
        them (bench.peer_bench scores them so)."""
        if self.index is None:
            return []
        results = self.index.search(query, top_k=top, alpha=0.0)
        return [[r.chunk.file_path, r.chunk.start_line, r.chunk.end_line] for r in results]


def evaluate_ranker(rank, qs: Iterable[dict], **kw) -> dict[str, float]:
    return metrics.evaluate(((rank(q["query"]), q["gold_files"]) for q in qs), **kw)


def run(set_name: str, ks: Sequence[int] = metrics.DEFAULT_KS) -> dict[str, float]:
    """Mean metrics of the baseline on one commitloc set over its corpus."""
    index = GrepIndex(corpora.corpus(set_name))
    qs = corpora.queries(set_name)
    return metrics.evaluate(((index.rank(q["query"]), q["gold_files"]) for q in qs), ks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default="requests,click", help="commitloc sets, comma-separated")
    args = parser.parse_args()
    names = [s for s in args.sets.split(",") if s]
    cols = ["mrr@10", "recall@1", "recall@5", "recall@10", "ndcg@10"]
    print("| set | queries | " + " | ".join(cols) + " |")
    print("|---|---:|" + "---:|" * len(cols))
    for name in names:
        result = run(name)
        n = len(corpora.queries(name))
        print(f"| {name} | {n} | " + " | ".join(f"{result[c]:.3f}" for c in cols) + " |")


if __name__ == "__main__":
    main()
