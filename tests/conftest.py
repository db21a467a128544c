"""Shared fixtures: real git repositories in temp folders, the real model, real databases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pix.index import index_repository
from pix.ingest.embed import Embedder

GIT_ENV = {
    "GIT_AUTHOR_NAME": "pix tests",
    "GIT_AUTHOR_EMAIL": "tests@pix.invalid",
    "GIT_COMMITTER_NAME": "pix tests",
    "GIT_COMMITTER_EMAIL": "tests@pix.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


# Two small modules (and a question for the first) that several test files index.
GEOMETRY = '''def circle_area(radius):
    """Area of a circle of the given radius."""
    return 3.14159 * radius * radius


def rectangle_area(width, height):
    """Area of a rectangle."""
    return width * height
'''
GREETING = '''def greet(name):
    """Say hello to a person by name."""
    return f"hello {name}"
'''
AREA = "area of a circle"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **GIT_ENV},
    )
    return done.stdout.strip()


def write(repo: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")


def commit(repo: Path, message: str = "change") -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def indexed_repo(base: Path, files: dict[str, str | bytes], embedder) -> tuple[Path, Path]:
    """A git repository of `files` (one commit) in base/repo, indexed into base/index.db: what
    a module-scoped fixture shares among its tests."""
    root = base / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, files)
    commit(root, "initial")
    db = base / "index.db"
    index_repository(str(root), str(db), embedder=embedder)
    return root, db


@pytest.fixture
def make_repo(tmp_path: Path):
    """make_repo({path: text}) -> a git repository with one commit of those files."""
    count = 0

    def make(files: dict[str, str | bytes], name: str | None = None) -> Path:
        nonlocal count
        count += 1
        repo = tmp_path / (name or f"repo{count}")
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        write(repo, files)
        commit(repo, "initial")
        return repo

    return make


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return Embedder(verify=True)


@pytest.fixture
def index(embedder):
    """index(repo, **options) with the session's model loaded once."""

    def run(repo: Path, **options):
        return index_repository(str(repo), embedder=embedder, **options)

    return run


def pix(*args: str, cwd: Path | None = None, stdin: str | None = None, env: dict | None = None):
    """The real command line, in a child process: (exit code, stdout, stderr)."""
    done = subprocess.run(
        # -P: as with the console script, the cwd is not on sys.path (a repo's copy.py
        # must not shadow the standard library)
        [sys.executable, "-P", "-m", "pix.cli", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV, **(env or {})},
    )
    return done.returncode, done.stdout, done.stderr


def pix_json(*args: str, **kw):
    code, out, err = pix(*args, **kw)
    return code, json.loads(out) if out.strip() else None, err
