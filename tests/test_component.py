"""The component channel (pix/retrieve/component.py): a change description that opens with a
component (`FormatWriter: ...`, `fix(trie-router): ...`, `[Console] ...`) votes for the files
and folders so named. A real git repository in a temp folder, indexed with the real model,
asked through the real query path; a decoy file says the subject's words, so the other
channels alone prefer it (checked in each test, so a test fails if the channel does nothing).
"""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest
from conftest import new_repo, where

from pix.index import index_repository
from pix.query import QueryRequest, query
from pix.retrieve import component
from pix.retrieve.route import CHANNELS

FILES = {
    "core/FormatWriter.scala": (
        "package core\n\nclass FormatWriter(out: StringBuilder) {\n"
        "  def emit(token: String): Unit = out.append(token)\n"
        "  def newline(): Unit = out.append('\\n')\n}\n"
    ),
    "core/Comments.scala": (
        "package core\n\n// Blank lines before comments: keep blank lines before comments when\n"
        "// the comments follow blank lines, so blank lines before comments survive.\n"
        "object Comments {\n  def keepBlankLinesBeforeComments(lines: Int): Int = lines\n}\n"
    ),
    "src/adapter/workers/index.ts": "export { handle } from './handler'\n",
    "src/adapter/workers/handler.ts": ("export const handle = (app) => (req) => app.fetch(req)\n"),
    "src/adapter/workers/utils.ts": "export const getContent = (res) => res.body\n",
    "src/adapter/workers/websocket.ts": "export const upgrade = (ws) => ws.accept()\n",
    "src/stream.ts": (
        "// Buffer the response body content: do not buffer content twice; buffer content once.\n"
        "export const bufferContent = (body) => body\n"
    ),
    "Output/ConsoleOutput.php": (
        "<?php\nclass ConsoleOutput {\n    public function help() { return 'help'; }\n}\n"
    ),
}

# A project named for itself: its own name is a folder of every source file.
PROJECT = {
    f"javalin/src/io/javalin/{name}.java": f"class {name} {{ void start() {{}} }}\n"
    for name in ("Javalin", "Context", "Router", "Config", "Server", "http/Router")
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory, embedder) -> Path:
    root = new_repo(tmp_path_factory.mktemp("component") / "repo", FILES)
    index_repository(str(root), embedder=embedder)
    return root


def ask(repo: Path, text: str, channels: list[str] | None = None) -> list[dict]:
    request = QueryRequest(text, mode="file", top=5, explain=True, no_content=True)
    request.channels = channels
    return query(request, cwd=str(repo))["results"]


WITHOUT = [name for name in CHANNELS if name != component.CHANNEL]


def test_a_file_named_by_the_component_comes_first(repo: Path) -> None:
    text = "FormatWriter: keep blank lines before comments"
    assert where(ask(repo, text, WITHOUT)[0]) == "core/Comments.scala"  # the words alone
    first = ask(repo, text)[0]
    assert where(first) == "core/FormatWriter.scala"
    assert first["explain"]["channels"]["component"]["weight"] == 1.0


def test_a_folder_shares_its_vote_among_its_files(repo: Path) -> None:
    text = "workers: do not buffer content"
    assert where(ask(repo, text, WITHOUT)[0]) == "src/stream.ts"
    results = ask(repo, text)
    voted = [r for r in results if "component" in r["explain"]["channels"]]
    assert {where(r) for r in voted} <= {
        f"src/adapter/workers/{n}.ts" for n in ("index", "handler", "utils", "websocket")
    }
    assert voted and all(r["explain"]["channels"]["component"]["weight"] == 0.25 for r in voted)
    # a quarter of a vote each does not outvote the words
    assert where(results[0]) == "src/stream.ts"


@pytest.mark.parametrize(
    "text",
    [
        "fix(format-writer): keep blank lines before comments",
        "[FormatWriter] keep blank lines before comments",
        "format_writer: keep blank lines before comments",
    ],
)
def test_every_form_of_component_and_spelling(repo: Path, text: str) -> None:
    first = ask(repo, text)[0]
    assert where(first) == "core/FormatWriter.scala"
    assert "component" in first["explain"]["channels"]


def test_only_whole_names_count(repo: Path) -> None:
    """`Console: ...` is no vote for ConsoleOutput.php: Console is only a part of its name."""
    results = ask(repo, "Console: fix the help command")
    assert all("component" not in r["explain"]["channels"] for r in results)


def test_a_question_without_a_component_leaves_the_channel_empty(repo: Path) -> None:
    results = ask(repo, "where is the format writer newline emitted")
    assert all("component" not in r["explain"]["channels"] for r in results)


def test_the_projects_own_name_counts_only_as_a_file_name(tmp_path: Path, embedder) -> None:
    root = new_repo(tmp_path / "project", PROJECT)
    index_repository(str(root), embedder=embedder)
    conn = apsw.Connection(str(root / ".pix.db"), flags=apsw.SQLITE_OPEN_READONLY)
    (snapshot,) = conn.execute("SELECT max(id) FROM snapshot").fetchone()
    files = component.component_files(conn, snapshot, "javalin: start the server twice", None)
    assert [(f.path, f.share) for f in files] == [("javalin/src/io/javalin/Javalin.java", 1.0)]
    # Two files of one name share a vote.
    routers = component.component_files(conn, snapshot, "router: x", None)
    assert [(f.path.rsplit("/", 2)[-2], f.share) for f in routers] == [
        ("javalin", 0.5),
        ("http", 0.5),
    ]
    # A path filter is the scope: the folder's files outside it are not named.
    scoped = component.component_files(
        conn, snapshot, "router: x", ["javalin/src/io/javalin/Config.java"]
    )
    assert scoped == []


def test_a_path_of_folders_names_its_last_folder_not_the_first(tmp_path: Path) -> None:
    # `helper/route: ...` names src/helper/route/: its file takes the whole vote, where it
    # shared one with every file under src/helper/ (hono's subject ranked helper/dev first).
    helpers = {f"src/helper/{name}/index.ts": f"export const {name} = 1\n" for name in HELPERS}
    # (more files besides, so that `helper` is not the project's own name: SHARED)
    others = {f"src/{name}.ts": f"export class {name.title()} {{}}\n" for name in OTHERS}
    root = new_repo(tmp_path / "helpers", {**helpers, **others})
    index_repository(str(root), embed=False)
    conn = apsw.Connection(str(root / ".pix.db"), flags=apsw.SQLITE_OPEN_READONLY)
    (snapshot,) = conn.execute("SELECT max(id) FROM snapshot").fetchone()
    files = component.component_files(conn, snapshot, "helper/route: fix the type errors", None)
    assert [(f.path, f.share) for f in files] == [
        ("src/helper/route/index.ts", 1.0),
        *(
            (f"src/helper/{name}/index.ts", 1 / 3) for name in ("dev", "html", "cookie")
        ),  # shorter paths first
    ]
    # One folder named: its files share the vote alike, as before.
    files = component.component_files(conn, snapshot, "helper: fix the type errors", None)
    assert sorted(f.share for f in files) == [0.25] * 4


HELPERS = ("route", "dev", "cookie", "html")
OTHERS = ("router", "context", "request", "response", "compose")


def test_names() -> None:
    assert component.names("trie-router: fix") == [("trierouter", ["trie", "trierouter"])]
    assert [n for n, _ in component.names("utils/cookie.ts: set priority")] == ["utils", "cookie"]
    assert [n for n, _ in component.names("feat(RedundantBraces)!: x")] == ["redundantbraces"]
    assert component.names("why are cookies lost on redirect") == []
    assert component.names("http://example.com: down") == []
