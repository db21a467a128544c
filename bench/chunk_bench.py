"""What a grammar gives a language over the fallback chunker, on a real repository each.

    python -m bench.chunk_bench [--mirrors DIR] [--langs perl,powershell,...] [--headers]

Every file of the language in the repository at its pinned commit (read from the bare mirror,
`git ls-tree` and `git cat-file`; nothing is checked out) is chunked as `pix index` chunks it
(pix.ingest.chunk.chunk_file, default sizes), once with the language's grammar and once with
the fallback (pix/ingest/paragraphs.py: the same file with the grammar's spec left out), and
the table says, per language and chunker: files, the share the grammar parsed without an error
node, chunks per file, the share of chunks that are one definition (function, method, class),
the names the identifier channel gets from a file (definitions) and the definition step
(declarations), median and p90 chunk size in characters, and the median milliseconds to chunk
a file. Progress on stderr, one table on stdout.

`--headers` instead: every '.h' file of two C++ projects and of the tmux development set's C
(`HEADERS`), chunked as chunker 5 did (every '.h' is C; the C grammar retries with C++ only
if C++ parses it cleanly) and as pix does now (a header that shows C++ is C++,
pix.ingest.languages), with the share of headers read as C++; then what the two readings do to
retrieval on the C++ development sets (bench/devsets: spdlog, leveldb; each indexed static-only
at its pin both ways, cached as `headers-<set>[-c]`): their commit subjects (pix file mode,
nDCG@10 / MRR@10) and a lookup of each class or struct one header of the set defines (its bare
name; up to 80 a set, chosen with a fixed seed; the share with that header first, MRR@10).
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from bench import devcorpora, devsets, metrics, quality
from pix.index import index_repository
from pix.ingest import definitions, languages, treesitter
from pix.ingest.chunk import chunk_file
from pix.ingest.languages import language_for_path
from pix.query import QueryEngine

# language -> (repository, pinned commit): well-known projects written mostly in it.
REPOS: dict[str, tuple[str, str]] = {
    "perl": ("mojolicious/mojo", "b4de430651b722f560b1577da9018e3f402d96ab"),
    "powershell": ("pester/Pester", "ec8ca45bc782a055cf3c87bdb60a497f5a77536f"),
    "fsharp": ("giraffe-fsharp/Giraffe", "18e1be3ed33e49096d565e6f48c85e3cbee51960"),
    "solidity": (
        "OpenZeppelin/openzeppelin-contracts",
        "fddac901ccdbdb06be90536822936ea765dd9218",
    ),
    "fortran": ("fortran-lang/fpm", "80b06defc4cad13dc26505d6aa12c07575446214"),
    # The gitsigns development set's pinned commit: Lua's declared names (CHUNKER_VERSION 5).
    "lua": ("lewis6991/gitsigns.nvim", "31d6fb2d618bca1482b9f274751ead5f03461408"),
}
# `--headers`: C++ projects whose headers are '.h' (neither is in a public retrieval benchmark
# that we know of) and the tmux development set's C at its pin.
HEADERS: dict[str, tuple[str, str]] = {
    "leveldb": ("google/leveldb", "78a352f47ed6c1e9d750545e9b242289185b87e1"),
    "spdlog": ("gabime/spdlog", "62302019babd8fdf63c1c6dc4c9faa48d441a7f0"),
    "tmux": ("tmux/tmux", "c1f947a3c5bc72a40c32dead736f84c4628791ec"),
}
DEFINITION_KINDS = frozenset({"function", "method", "class"})
MAX_BYTES = 1_000_000  # pix skips files this large (pix.ingest.scan)


def files_of(repo: str, sha: str, language: str) -> Iterator[tuple[str, str]]:
    """(path, text) of every file of `language` in `repo` at `sha`, in path order."""
    git = ["git", "--git-dir", str(devcorpora.mirror(repo))]
    listing = subprocess.run(
        [*git, "ls-tree", "-r", "-z", "--format=%(objectname) %(objectsize) %(path)", sha],
        capture_output=True, check=True, text=True,
    ).stdout  # fmt: skip
    for entry in sorted(filter(None, listing.split("\0")), key=lambda e: e.split(" ", 2)[2]):
        blob, size, path = entry.split(" ", 2)
        if language_for_path(path) != language or not size.isdigit() or int(size) > MAX_BYTES:
            continue
        data = subprocess.run([*git, "cat-file", "blob", blob], capture_output=True, check=True)
        text = data.stdout.decode("utf-8", "replace")
        if "\0" not in text:
            yield path, text


@contextmanager
def without_grammar(language: str) -> Iterator[None]:
    """The fallback chunker for `language`: its spec left out while the block runs."""
    spec = definitions.SPECS.pop(language)
    try:
        yield
    finally:
        definitions.SPECS[language] = spec


@contextmanager
def every_header_c() -> Iterator[None]:
    """Chunker 5's reading of '.h': C, whatever the header shows."""
    sniff = languages._CPP_HEADER
    languages._CPP_HEADER = re.compile(r"(?!)")  # matches nothing
    try:
        yield
    finally:
        languages._CPP_HEADER = sniff


def headers() -> list[tuple[str, str, str, dict[str, float]]]:
    """`--headers`: each repository's '.h' files as chunker 5 and as pix now cuts them."""
    rows = []
    for name, (repo, sha) in HEADERS.items():
        files = [(p, t) for p, t in files_of(repo, sha, "c") if p.endswith(".h")]
        cpp = sum(languages.language_for(p, t) == "cpp" for p, t in files) / max(len(files), 1)
        at = f"{repo}@{sha[:10]}"
        with every_header_c():
            before = measure(files, "c", False)
        rows.append((name, at, "every .h C (chunker 5)", {**before, "read as C++": 0.0}))
        now = measure(files, "c", False)
        rows.append((name, at, "C++ if it shows C++ (6)", {**now, "read as C++": cpp}))
        print(f"{name}: {len(files)} headers", file=sys.stderr)
    return rows


# `--headers`: a class or struct defined in a header (an export macro between the keyword and
# the name, as spdlog's SPDLOG_API and leveldb's LEVELDB_EXPORT), for the lookups.
DEFINED_CLASS = re.compile(
    r"^[ \t]*(?:class|struct)[ \t]+(?:[A-Z_]+[ \t]+)?(\w+)[ \t]*(?:final[ \t]*)?(?::[^;{]*)?\{",
    re.M,
)
LOOKUPS = 80


def class_lookups(root: Path) -> list[tuple[str, str]]:
    """(name, header) of up to LOOKUPS classes that exactly one source header of the snapshot
    defines (names of four letters or more), in a seeded random order."""
    listing = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True)
    where: dict[str, set[str]] = {}
    for path in listing.stdout.decode().split("\0"):
        if path.endswith(".h") and devsets.is_source(path, devsets.ECOSYSTEMS["cpp"]):
            for match in DEFINED_CLASS.finditer((root / path).read_text(errors="replace")):
                where.setdefault(match.group(1), set()).add(path)
    once = sorted((n, ps.pop()) for n, ps in where.items() if len(ps) == 1 and len(n) > 3)
    random.Random(11).shuffle(once)
    return once[:LOOKUPS]


def cpp_sets() -> list[str]:
    """The C++ development sets (spdlog, leveldb) among the commitloc-more ones."""
    return [
        name
        for name in devsets.committed_sets("commitloc-more")
        if devsets.load_set(name)[0]["rules"]["source"]["ecosystem"] == "cpp"
    ]


def header_retrieval() -> list[tuple[str, dict[str, float | str]]]:
    """Each C++ development set asked of both readings of its headers."""
    rows = []
    for name in cpp_sets():
        meta, qs = devsets.load_set(name)
        root = devcorpora.snapshot(meta["repo"], meta["pinned_commit"])
        lookups = class_lookups(root)
        for label, reading, suffix in (
            ("every .h C (chunker 5)", every_header_c, "-c"),
            ("C++ if it shows C++ (6)", nullcontext, ""),
        ):
            db = devcorpora.database(f"headers-{name}{suffix}", "-static")
            with reading():
                index_repository(str(root), str(db), embed=False)
            engine = QueryEngine(db=str(db), cwd=str(root))
            try:
                subjects = [(quality.rank_files(engine, q["query"]), q["gold_files"]) for q in qs]
                found = [(quality.rank_files(engine, n), [path]) for n, path in lookups]
            finally:
                engine.close()
            asked = metrics.evaluate(subjects)
            looked = metrics.evaluate(found, ks=(1,))
            rows.append((f"{name} | {label}", {
                "subjects": len(qs), "subjects nDCG@10 / MRR@10":
                    f"{asked['ndcg@10']:.3f} / {asked['mrr@10']:.3f}",
                "lookups": len(lookups), "lookups first / MRR@10":
                    f"{looked['recall@1']:.3f} / {looked['mrr@10']:.3f}",
            }))  # fmt: skip
        print(f"{name}: {len(qs)} subjects, {len(lookups)} lookups", file=sys.stderr)
    return rows


def measure(files: list[tuple[str, str]], language: str, grammar: bool) -> dict[str, float]:
    sizes, ms, chunks, defining, names, declared = [], [], 0, 0, 0, 0
    for path, text in files:
        t0 = time.perf_counter()
        cut = chunk_file(text, path)
        ms.append((time.perf_counter() - t0) * 1000)
        chunks += len(cut)
        defining += sum(c.kind in DEFINITION_KINDS for c in cut)
        names += len({n for c in cut for n in c.defines})
        declared += len({n for c in cut for n in c.declares})
        sizes.extend(len(c.text) for c in cut)
    n = max(len(files), 1)
    parsed = sum(
        tree is not None and not tree.root_node.has_error
        for tree in (treesitter.parse(language, t.encode()) for _, t in files)
    ) if grammar else float("nan")  # fmt: skip
    return {
        "files": len(files),
        "parsed": parsed / n,
        "chunks/file": chunks / n,
        "definition chunks": defining / max(chunks, 1),
        "names/file": names / n,
        "declared/file": declared / n,
        "median chars": statistics.median(sizes) if sizes else 0.0,
        "p90 chars": statistics.quantiles(sizes, n=10)[-1] if len(sizes) > 1 else 0.0,
        "ms/file": statistics.median(ms) if ms else 0.0,
    }


def render(rows: list[tuple[str, str, str, dict[str, float]]]) -> str:
    columns = list(rows[0][3]) if rows else []
    out = [
        "| language | repository | chunker | " + " | ".join(columns) + " |",
        "|---|---|---|" + "---:|" * len(columns),
    ]
    for language, repo, chunker, m in rows:
        cells = [
            f"{m[c]:.0f}" if c in ("files", "median chars", "p90 chars")
            else "-" if m[c] != m[c]  # NaN: not the grammar's row
            else f"{m[c]:.0%}" if c in ("parsed", "definition chunks", "read as C++")
            else f"{m[c]:.2f}"
            for c in columns
        ]  # fmt: skip
        out.append(f"| {language} | {repo} | {chunker} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirrors", help="folder of <owner>+<name>/repo bare git dirs")
    parser.add_argument("--langs", default=",".join(REPOS))
    parser.add_argument("--headers", action="store_true", help="'.h' as C and as sniffed")
    args = parser.parse_args(argv)
    devcorpora.set_mirrors(args.mirrors)
    if args.headers:
        print(render(headers()))
        retrieval = header_retrieval()
        columns = list(retrieval[0][1])
        print("\n| set | headers | " + " | ".join(columns) + " |")
        print("|---|---|" + "---:|" * len(columns))
        for label, cells in retrieval:
            print(f"| {label} | " + " | ".join(str(cells[c]) for c in columns) + " |")
        return
    rows = []
    for language in args.langs.split(","):
        if language not in REPOS:
            raise SystemExit(f"chunk_bench: no repository for {language!r} ({', '.join(REPOS)})")
        repo, sha = REPOS[language]
        files = list(files_of(repo, sha, language))
        at = f"{repo}@{sha[:10]}"
        rows.append((language, at, "grammar", measure(files, language, True)))
        with without_grammar(language):
            rows.append((language, at, "fallback", measure(files, language, False)))
        print(f"{language}: {len(files)} files", file=sys.stderr)
    print(render(rows))


if __name__ == "__main__":
    main()
