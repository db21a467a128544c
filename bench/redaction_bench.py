"""Secret detection (pix/output/redact.py) over the benchmark corpora: what it flags, how fast.

    python -m bench.redaction_bench [--corpora requests,click,large,huge] [--runs 3]

Scans every git-tracked file of each cached corpus that decodes as UTF-8 and holds no NUL, with
the language pix gives its path. Prints on stdout:
  1. one markdown row per corpus: files, MB, secrets by kind, flagged files and secrets per
     1,000 files, scan speed (MB/s, median of --runs full passes; decoding not timed);
  2. every flagged value as path:line, kind, the text before it on its line (so a person can
     see the key name) and a 4-character preview, with where it sits (test, docs, example or
     source, from the path) to help judge it;
  3. the measurements behind redact._ENTROPY_BITS: the Shannon entropy of random strings of the
     alphabets secrets are made of, beside string literals of real code that pass every other
     rule of the `secret` kind;
  4. every quoted value with whitespace under a password name, masked as a passphrase or kept
     as a message (redact._MESSAGE), so the line between the two can be judged.
"""

from __future__ import annotations

import argparse
import functools
import random
import re
import statistics
import string
import subprocess
import time
from collections import Counter
from pathlib import Path

from bench import corpora
from pix.ingest import redact  # its private helpers too: this bench measures their rules
from pix.ingest.chunk import language_for_path

DEFAULT_CORPORA = ("requests", "click", "large", "huge")
# A quoted literal that could be a secret value: long, no whitespace, no quote inside.
_LITERAL = re.compile(r"[\"']([^\s\"'\\]{16,256})[\"']")


@functools.cache
def tracked_texts(root: Path) -> list[tuple[str, str, str | None]]:
    """(path, text, language) of every tracked file that is UTF-8 text without NUL."""
    out = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True
    ).stdout
    files = []
    for rel in sorted(p for p in out.decode().split("\0") if p):
        try:
            text = (root / rel).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if "\0" not in text:
            files.append((rel, text, language_for_path(rel)))
    return files


def where(path: str) -> str:
    parts = path.lower().split("/")
    if any(p.startswith("test") or p.endswith(("_test.py", "_tests.py")) for p in parts):
        return "test"
    if any(p in ("doc", "docs") or p.endswith((".rst", ".md", ".txt")) for p in parts):
        return "docs"
    if any("example" in p or "sample" in p or "template" in p for p in parts):
        return "example"
    return "source"


def scan(files: list[tuple[str, str, str | None]], runs: int) -> tuple[list, float]:
    """(per file: its secrets, median seconds of one full pass)."""
    times, found = [], []
    for _ in range(runs):
        began = time.perf_counter()
        found = [redact.find_secrets(text, lang) for _, text, lang in files]
        times.append(time.perf_counter() - began)
    return found, statistics.median(times)


def report_corpus(name: str, runs: int, flagged: list[str]) -> str:
    files = tracked_texts(corpora.corpus(name))
    found, seconds = scan(files, runs)
    mb = sum(len(text.encode()) for _, text, _ in files) / 1e6
    kinds: Counter[str] = Counter()
    for (path, text, _), secrets in zip(files, found, strict=True):
        for s in secrets:
            kinds[s.kind] += 1
            line_start = text.rfind("\n", 0, s.start) + 1
            before = text[line_start : s.start].strip()[-32:]
            line = text.count("\n", 0, s.start) + 1
            preview = text[s.start : min(s.end, s.start + 4)] + "…"
            cells = (name, f"`{path}:{line}`", s.kind, f"`{before}`", f"`{preview}`", where(path))
            flagged.append("| " + " | ".join(cells) + " |")
    total = sum(kinds.values())
    files_hit = sum(1 for secrets in found if secrets)
    by_kind = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) or "-"
    return (
        f"| {name} | {len(files):,} | {mb:.1f} | {total} | {by_kind} | {files_hit} | "
        f"{1000 * total / len(files):.1f} | {mb / seconds:.1f} |"
    )


THRESHOLDS = (2.5, 2.75, 3.0, 3.25, 3.5)


def entropy_report(names: list[str]) -> list[str]:
    """Share of each sample at or above each candidate threshold: random secrets should pass,
    the structured literals of real code that pass every other rule of the kind should not."""
    rng = random.Random(7)
    alphabets = {
        "hex": "0123456789abcdef",
        "base62": string.ascii_letters + string.digits,
        "base64url": string.ascii_letters + string.digits + "-_",
    }
    head = " | ".join(f">= {t}" for t in THRESHOLDS)
    rows = [f"| sample | n | {head} |", "|---|---|" + "---|" * len(THRESHOLDS)]
    for label, alphabet in alphabets.items():
        for length in (16, 20, 32, 40):
            draws = ["".join(rng.choice(alphabet) for _ in range(length)) for _ in range(5000)]
            draws = [d for d in draws if redact._mixed(d)]  # the kind needs letters and digits
            rows.append(_share_row(f"random {label}, {length} chars", draws))
    literals: set[str] = set()
    for name in names:
        for _, text, _ in tracked_texts(corpora.corpus(name)):
            literals.update(m[1] for m in _LITERAL.finditer(text))
    gated = sorted(v for v in literals if redact._looks_random(v, min_bits=0.0))
    rows.append(_share_row("distinct corpus literals passing every other rule", gated))
    rows.append("")
    low = sorted(gated, key=redact._shannon_entropy)[:8]
    rows.append("Lowest-entropy corpus literals: " + ", ".join(f"`{v[:24]}`" for v in low))
    return rows


def _share_row(label: str, values: list[str]) -> str:
    scores = [redact._shannon_entropy(v) for v in values]
    shares = " | ".join(
        f"{100 * sum(s >= t for s in scores) / max(len(scores), 1):.1f}%" for t in THRESHOLDS
    )
    return f"| {label} | {len(values)} | {shares} |"


def passphrase_report(names: list[str]) -> list[str]:
    """Quoted values holding whitespace under a password name: passphrase (masked) or message."""
    rows = ["| corpus | where | value | masked |", "|---|---|---|---|"]
    for name in names:
        for path, text, _ in tracked_texts(corpora.corpus(name)):
            lowered = text.lower()
            if len(lowered) != len(text) or "pass" not in lowered and "pwd" not in lowered:
                continue
            for m in redact._assignment_matches(text, lowered):
                value = m["dq"] if m["dq"] is not None else m["sq"]
                if m["pw"] is None or value is None or not any(c.isspace() for c in value):
                    continue
                line = text.count("\n", 0, m.start()) + 1
                masked = redact._password_value(value, m["pw"], quoted=True)
                rows.append(f"| {name} | `{path}:{line}` | `{value!r}` | {masked} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default=",".join(DEFAULT_CORPORA))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    names = [n for n in args.corpora.split(",") if n]
    flagged: list[str] = []
    print("| corpus | files | MB | secrets | by kind | files flagged | per 1,000 files | MB/s |")
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        print(report_corpus(name, args.runs, flagged), flush=True)
    print()
    print("| corpus | where | kind | before it on the line | value | path says |")
    print("|---|---|---|---|---|---|")
    print("\n".join(flagged) if flagged else "| - | - | - | - | - | - |")
    print()
    print(f"Shannon entropy (bits/char) behind redact._ENTROPY_BITS = {redact._ENTROPY_BITS}:")
    print()
    print("\n".join(entropy_report(names)))
    print()
    print("Quoted values with whitespace under a password name (passphrase or message):")
    print()
    print("\n".join(passphrase_report(names)))


if __name__ == "__main__":
    main()
