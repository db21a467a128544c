"""The grep-style keyword baseline of ../shared/README.md: what an agent with `grep -il` gets.

Files are ranked by how many distinct query words they contain (case-insensitive substring,
like `grep -il word` run once per word), ties broken by path. Words are the query's runs of
letters, lower-cased, of at least 3 letters, minus a short English stopword list. Files that
contain none of the words are not ranked at all, as grep would not list them.

    python -m bench.baselines [--sets requests,click]   # prints MRR@10, recall@k, nDCG@10
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections.abc import Sequence
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
