"""Benchmark corpora: source distributions from PyPI, made into git repositories in a cache.

No corpus file is ever committed to pix: each is downloaded at run time into
`$PIX_BENCH_CACHE` (default `~/.cache/pix-bench`), once, and reused after that.

    corpus("requests") -> Path   # a git repository with one commit holding the sdist
    queries("requests") -> list[dict]  # ../shared/eval/commitloc/requests/queries.jsonl
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Sdist:
    package: str
    version: str


# Exact pins: a corpus that drifts makes numbers from two runs incomparable.
CORPORA: dict[str, Sdist] = {
    # The two commitloc development sets (../shared/README.md names these exact versions).
    "requests": Sdist("requests", "2.34.2"),
    "click": Sdist("click", "8.5.1"),
    # 'large' is for indexing speed only (it has no queries). It must be real code, >= 1,000
    # indexable files, and cheap enough to embed in full: the int8 MiniLM runs ~30 chunks/s on
    # this 2-core machine, and the bench embeds everything twice (pix, then the raw loop), so
    # ~15,000 chunks (~2 x 8 min) is the ceiling. Measured with pix's scanner and chunker
    # (indexable files / chunks / MB): twisted 26.10.0 1386 / 25.5k / 14.6 (too many chunks),
    # sphinx 9.0.4 1802 / 23.7k (half of it .po translations), sqlalchemy 2.1.9 85k chunks,
    # pygments 2.21.0 57k (test fixtures), ansible-core 2.19.14 25k, jedi 0.20.1 22k (typeshed
    # stubs), pylint 4.1.4 4320 / 12.3k (mostly 1.5 KB functional-test snippets), networkx 3.6.1
    # only 892 files, pyinstaller 6.22.3 1401 / 8.8k / 5.7 MB. PyInstaller wins: a real
    # application (package, ~480 hook modules, tests, a C bootloader with its waf build), mixed
    # Python/C/rst/YAML/shell so several grammars run, and headroom below the chunk ceiling
    # if the chunker starts cutting finer.
    "large": Sdist("pyinstaller", "6.22.3"),
    # Discovery speed only (bench/discover_bench.py): >= 5,000 files, never embedded. Django's
    # sdist: ~6,900 files (Python, templates, JS/CSS, docs, .po/.mo translations).
    "huge": Sdist("django", "5.2.19"),
}

MARKER = "pix-bench-ready"  # inside .git, so it is never a tracked file of the corpus
# A fixed author and date make the corpus commit's sha the same on every machine, so a
# snapshot can be compared across runs.
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}


def cache_dir() -> Path:
    return Path(os.environ.get("PIX_BENCH_CACHE") or Path.home() / ".cache" / "pix-bench")


def repo_root() -> Path:
    """The pix checkout this file belongs to (bench/ sits at its top)."""
    return Path(__file__).resolve().parent.parent


def shared_dir() -> Path:
    """`../shared` beside the checkout, else $PIX_SHARED (CI may lay it elsewhere)."""
    beside = repo_root().parent / "shared"
    if beside.is_dir():
        return beside
    env = os.environ.get("PIX_SHARED")
    if env and Path(env).is_dir():
        return Path(env)
    raise FileNotFoundError(
        f"no shared folder: neither {beside} exists nor $PIX_SHARED points to one"
    )


def queries(name: str) -> list[dict]:
    """The commitloc queries of one set: dicts with id, query, body, gold_files."""
    path = shared_dir() / "eval" / "commitloc" / name / "queries.jsonl"
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def query_sets() -> list[str]:
    """Names of every commitloc set present in the shared folder."""
    base = shared_dir() / "eval" / "commitloc"
    return sorted(p.parent.name for p in base.glob("*/queries.jsonl"))


def corpus(name: str) -> Path:
    """A ready git repository of the named corpus, downloaded and committed on first use."""
    try:
        spec = CORPORA[name]
    except KeyError:
        raise KeyError(f"unknown corpus {name!r}; known: {', '.join(CORPORA)}") from None
    target = cache_dir() / f"{spec.package}-{spec.version}"
    if (target / ".git" / MARKER).exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with _lock(target.parent / f".{target.name}.lock"):
        if (target / ".git" / MARKER).exists():  # another process built it while we waited
            return target
        _build(spec, target)
    return target


@contextmanager
def _lock(path: Path) -> Iterator[None]:
    """Two benches started at once must not download into the same folder."""
    with path.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _build(spec: Sdist, target: Path) -> None:
    # Build beside the target and rename at the end, so a killed run never leaves a
    # half-made repository that looks ready.
    with tempfile.TemporaryDirectory(prefix=f".{target.name}-", dir=target.parent) as tmp:
        work = Path(tmp)
        archive = _download(spec, work / "dl")
        tree = work / "tree"
        _extract(archive, tree)
        _git(tree, "init", "-q")
        _git(tree, "add", "-A")
        _git(
            tree,
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@localhost",
            "-c",
            "commit.gpgsign=false",
            "commit",
            "-qm",
            "corpus",
            "--no-verify",
        )
        (tree / ".git" / MARKER).write_text(f"{spec.package}=={spec.version}\n")
        if target.exists():  # a stale, unmarked attempt
            shutil.rmtree(target)
        tree.rename(target)


def _download(spec: Sdist, dest: Path) -> Path:
    dest.mkdir(parents=True)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-binary",
        ":all:",
        "--disable-pip-version-check",
        "-q",
        f"{spec.package}=={spec.version}",
        "-d",
        str(dest),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    files = [p for p in dest.iterdir() if p.is_file()]
    if done.returncode != 0 or len(files) != 1:
        raise RuntimeError(
            f"pip download {spec.package}=={spec.version} failed "
            f"(exit {done.returncode}):\n{done.stderr.strip()}"
        )
    return files[0]


def _extract(archive: Path, dest: Path) -> None:
    """Unpack and strip the single top folder ('requests-2.34.2/')."""
    unpacked = dest.parent / "unpacked"
    unpacked.mkdir()
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(unpacked)
    else:
        with tarfile.open(archive) as tf:
            tf.extractall(unpacked, filter="data")  # refuses absolute paths and links out
    tops = list(unpacked.iterdir())
    if len(tops) != 1 or not tops[0].is_dir():
        raise RuntimeError(f"{archive.name}: expected one top folder, found {len(tops)} entries")
    tops[0].rename(dest)
    unpacked.rmdir()


def _git(cwd: Path, *args: str) -> None:
    env = {**os.environ, **_GIT_ENV}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def main() -> None:
    """`python -m bench.corpora [names...]`: fetch corpora and print where they are."""
    names = sys.argv[1:] or list(CORPORA)
    for name in names:
        path = corpus(name)
        out = subprocess.run(
            ["git", "-C", str(path), "ls-files"], capture_output=True, text=True, check=True
        ).stdout
        print(f"{name}\t{len(out.splitlines())} tracked files\t{path}")


if __name__ == "__main__":
    main()
