"""Shared fixtures: real git repositories in temp folders, the real model, real databases."""

from __future__ import annotations

import json
import os
import pty
import select
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pix.index import index_repository
from pix.ingest.embed import Embedder
from pix.query import QueryEngine, QueryRequest, query

GIT_ENV = {
    "GIT_AUTHOR_NAME": "pix tests",
    "GIT_AUTHOR_EMAIL": "tests@pix.invalid",
    "GIT_COMMITTER_NAME": "pix tests",
    "GIT_COMMITTER_EMAIL": "tests@pix.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}

# The files that take longest, slowest first (`pytest --durations=0` summed per file, 2026-12-06:
# 196, 186, 106, 90, 86 and 85 s, then 69 down to 56 s). The README's command gives each of
# the two processes one file at a time. Left to itself, xdist starts the files with the most
# tests first, so test_cluster.py (6 tests, over 3 minutes) began last and ran alone while the
# other process sat idle: longest first is what keeps both busy to the end.
SLOWEST_FILES = (
    "test_cluster.py",
    "test_query_cli.py",
    "test_wheel.py",
    "test_mcp.py",
    "test_alias.py",
    "test_static.py",
    "test_cli_output.py",
    "test_damage.py",
    "test_concurrency.py",
    "test_interrupt.py",
    "test_query.py",
    "test_index.py",
)


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config.option, "loadscopereorder"):  # xdist: keep the order set below
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(SLOWEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest as found


# Files about other things, as most of a repository is (tests/test_outline.py,
# test_titled.py): what the files a report is about stand out among.
OTHER_TOOLS = {
    f"tools/{name}.py": f"def {name}_start(job):\n    return job.{name}()\n\n\n"
    f"def {name}_stop(job):\n    return job.stop_{name}()\n"
    for name in ("upload", "download", "schedule", "notify", "cache", "retry", "login", "backup")
}


# Two small modules (and a question for the first) that several test files index.
# Six renderers with the same body under different names: nothing in a report's words tells
# them apart, so only its evidence (a cited number, a link) can name one (test_issue_cited.py,
# test_issue_links.py).
RENDERER_KINDS = ("tuples", "lists", "maps", "sets", "order", "bytes")
RENDERER = '''def render_{kind}(value, depth=0):
    """Write the value as source text."""
    parts = []
    for item in value:
        parts.append(str(item))
    return "(" + ", ".join(parts) + ")"
'''
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
# A small code corpus the query tests share: tables (the Celsius converter last), weather, mail.
TABLES = '''def parse_csv_rows(handle, delimiter=","):
    """Read rows of comma separated values from an open text handle."""
    rows = []
    for number, line in enumerate(handle):
        line = line.rstrip("\\n")
        if not line or line.startswith("#"):
            continue
        fields = [field.strip() for field in line.split(delimiter)]
        if len(fields) < 2:
            raise ValueError(f"line {number}: expected at least two fields")
        rows.append(fields)
    return rows


def summarize_columns(rows):
    """Count distinct values per column of a parsed table."""
    counts = {}
    for row in rows:
        for index, value in enumerate(row):
            counts.setdefault(index, set()).add(value)
    return {index: len(values) for index, values in counts.items()}


def render_table(rows, width=12):
    """Format a table of rows as fixed width text for a terminal."""
    out = []
    for row in rows:
        out.append(" | ".join(str(cell).ljust(width) for cell in row))
    return "\\n".join(out)


def convert_celsius_to_fahrenheit(celsius):
    """Convert a temperature in degrees Celsius to degrees Fahrenheit."""
    fahrenheit = celsius * 9 / 5 + 32
    if fahrenheit < -459.67:
        raise ValueError("temperature below absolute zero")
    return round(fahrenheit, 2)
'''

WEATHER = '''def average_temperature(readings):
    """Mean of the temperature readings of one weather station, in degrees Celsius."""
    values = [r for r in readings if r is not None]
    if not values:
        raise ValueError("no temperature readings")
    return sum(values) / len(values)


def hottest_day(days):
    """The day with the highest temperature reading."""
    return max(days, key=lambda day: day.temperature)
'''

MAILER = '''import smtplib


def send_welcome_email(address, name):
    """Send the welcome message to a newly registered user over SMTP."""
    body = f"Hello {name}, welcome aboard."
    with smtplib.SMTP("localhost") as server:
        server.sendmail("noreply@example.invalid", [address], body)
    return True
'''


def where(result: dict) -> str:
    """A query result's path: a file result (seed 000) names it `file`, a chunk result `path`."""
    return result["file"] if "file" in result else result["path"]


def clipboard(tmp_path: Path) -> tuple[dict, Path]:
    """A fake clipboard: PIX_CLIPBOARD set to a command that writes stdin to a file."""
    target = tmp_path / "clipboard.txt"
    command = f"sh -c {shlex.quote('cat > ' + shlex.quote(str(target)))}"
    return {"PIX_CLIPBOARD": command}, target


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


def new_repo(root: Path, files: dict[str, str | bytes], message: str = "initial") -> Path:
    """A git repository at `root` with one commit of `files`."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    write(root, files)
    commit(root, message)
    return root


def private_db(db: Path, tmp_path: Path) -> Path:
    """A copy of a module's indexed database that one test may change."""
    mine = tmp_path / "pix.db"
    shutil.copy(db, mine)
    return mine


def indexed_repo(base: Path, files: dict[str, str | bytes], embedder) -> tuple[Path, Path]:
    """A git repository of `files` (one commit) in base/repo, indexed into base/index.db: what
    a module-scoped fixture shares among its tests."""
    root = new_repo(base / "repo", files)
    db = base / "index.db"
    index_repository(str(root), str(db), embedder=embedder)
    return root, db


def opened_engine(tmp_path_factory, name: str, files: dict[str, str | bytes], embedder):
    """`indexed_repo` of `files` in a folder called `name`, opened as a QueryEngine and closed
    after: what a module fixture yields from."""
    root, db = indexed_repo(tmp_path_factory.mktemp(name), files, embedder)
    engine = QueryEngine(db=str(db), cwd=str(root))
    yield engine
    engine.close()


def evidence_scores(engine: QueryEngine, request) -> dict[str, float]:
    """The files the evidence channel names in the answer to `request` (file mode, explained),
    and the evidence score of each."""
    out = {}
    for result in engine.query(request)["results"]:
        channel = result["explain"]["channels"].get("evidence")
        if channel:
            out[result["file"]] = channel["score"]
    return out


def keyword_indexed(base: Path, files: dict[str, str | bytes]) -> Path:
    """A git repository of `files` (one commit) in base/repo, indexed without the transformer
    into its own .pix.db: enough for the keyword channels and the priors."""
    root = new_repo(base / "repo", files)
    index_repository(str(root), embed=False)
    return root


def bm25_files(repo: Path, words: str, priors: bool, top: int) -> list[dict]:
    """File-mode results of the BM25 channel alone, explained: what the priors make of plain
    word matches."""
    request = QueryRequest(
        words, mode="file", top=top, explain=True, priors=priors, channels=["bm25"]
    )
    return query(request, cwd=str(repo))["results"]


def indexed_in_place(base: Path, files: dict[str, str | bytes], embedder) -> Path:
    """A git repository of `files` (one commit) in base/repo, indexed into its own .pix.db,
    where `pix query` run in it looks."""
    root = new_repo(base / "repo", files)
    index_repository(str(root), embedder=embedder)
    return root


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


def on_pty(*args: str, cwd: Path, stream: str = "stdout", env: dict | None = None):
    """Run pix with its `stream` (stdout or stderr) on a pseudo-terminal and the other
    discarded: (exit code, what it showed, CRLF as LF)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-P", "-m", "pix.cli", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=follower if stream == "stdout" else subprocess.DEVNULL,
        stderr=follower if stream == "stderr" else subprocess.DEVNULL,
        env={**os.environ, **GIT_ENV, "COLUMNS": "100", **(env or {})},
    )
    os.close(follower)
    chunks = []
    while True:  # read while it writes: a full terminal buffer would block it
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            proc.kill()
            raise AssertionError("pix did not finish on the terminal")
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the process closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    code = proc.wait(timeout=60)
    return code, b"".join(chunks).decode("utf-8", errors="replace").replace("\r\n", "\n")


def pix_json(*args: str, **kw):
    code, out, err = pix(*args, **kw)
    return code, json.loads(out) if out.strip() else None, err


def default_sigint() -> None:
    """preexec_fn for a pix that a test signals: a harness that runs the suite in the
    background (nohup, `cmd &`) starts it with SIGINT ignored, which children inherit and
    Python then leaves ignored, so the signal would never arrive."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
