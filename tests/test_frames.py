"""Stack frames of every runtime an issue report may paste (pix/retrieve/frames.py), and the
evidence channel reading a Go trace in a real repository: the innermost frame's file first,
its line's chunk first in chunk mode."""

from __future__ import annotations

import pytest
from conftest import new_repo

from pix.index import index_repository
from pix.query import QueryRequest, query
from pix.retrieve import evidence
from pix.retrieve.frames import frames, has_frames, without_frames

TRACES = {
    "python": (
        "Traceback (most recent call last):\n"
        '  File "/home/me/bug.py", line 6, in <module>\n'
        '  File "/opt/venv/site-packages/shop/pricing.py", line 13, in round_price\n'
        "ZeroDivisionError: division by zero\n",
        [
            ("/home/me/bug.py", 6, "<module>"),
            ("/opt/venv/site-packages/shop/pricing.py", 13, "round_price"),
        ],
    ),
    "javascript": (
        "TypeError: Cannot read properties of undefined (reading 'handler')\n"
        "    at Router.match (/app/node_modules/hono/dist/router/trie-router/node.js:42:17)\n"
        "    at async dispatch (file:///app/src/compose.ts:31:5)\n"
        "    at /app/src/index.ts:8:3\n",
        [
            ("/app/src/index.ts", 8, None),
            ("/app/src/compose.ts", 31, "dispatch"),
            ("/app/node_modules/hono/dist/router/trie-router/node.js", 42, "Router.match"),
        ],
    ),
    "java": (
        "java.lang.IllegalStateException: no route\n"
        "\tat io.javalin.http.Context.json(Context.kt:123)\n"
        "\tat io.javalin.router.Routing$Inner.run(Routing.java:40)\n"
        "\tat MainKt.main(Main.kt:5)\n",
        [
            ("Main.kt", 5, None),
            ("io/javalin/router/Routing.java", 40, None),
            ("io/javalin/http/Context.kt", 123, None),
        ],
    ),
    "csharp": (
        "System.InvalidOperationException: bad state\n"
        "   at Polly.Retry.RetryEngine.Implementation(Func`1 action) in "
        "C:\\src\\Polly\\Retry\\RetryEngine.cs:line 42\n"
        "   at Polly.Policy.Execute() in /src/Polly/Policy.cs:line 7\n",
        [
            ("/src/Polly/Policy.cs", 7, "Polly.Policy.Execute"),
            ("C:/src/Polly/Retry/RetryEngine.cs", 42, "Polly.Retry.RetryEngine.Implementation"),
        ],
    ),
    "go": (
        "panic: runtime error: index out of range [3] with length 3\n\n"
        "goroutine 1 [running]:\n"
        "github.com/junegunn/fzf/src.(*Terminal).printList(...)\n"
        "\t/home/me/fzf/src/terminal.go:1204 +0x1d\n"
        "main.main()\n"
        "\t/home/me/fzf/main.go:12\n",
        [("/home/me/fzf/main.go", 12, None), ("/home/me/fzf/src/terminal.go", 1204, None)],
    ),
    "rust": (
        "thread 'main' panicked at src/parser.rs:10:5:\nunexpected token\n"
        "   0: just::run\n             at ./src/run.rs:31:9\n",
        [("./src/run.rs", 31, None), ("src/parser.rs", 10, None)],
    ),
    "ruby": (
        "lib/sidekiq/client.rb:123:in `push': undefined method (NoMethodError)\n"
        "\tfrom lib/sidekiq/worker.rb:88:in 'perform_async'\n",
        [("lib/sidekiq/worker.rb", 88, "perform_async"), ("lib/sidekiq/client.rb", 123, "push")],
    ),
    "php": (
        "PHP Fatal error:  Uncaught LogicException\n"
        "#0 /app/vendor/symfony/console/Command/Command.php(255): execute()\n"
        "#1 /app/bin/console(12): run()\n",
        [("/app/vendor/symfony/console/Command/Command.php", 255, None)],
    ),
    "elixir": (
        "** (ArgumentError) bad queue\n"
        "    (oban 2.17.0) lib/oban/queue.ex:12: Oban.Queue.start/1\n"
        "    (elixir 1.15.7) lib/enum.ex:975: Enum.each/2\n",
        [("lib/enum.ex", 975, "Enum.each"), ("lib/oban/queue.ex", 12, "Oban.Queue.start")],
    ),
}


@pytest.mark.parametrize("runtime", sorted(TRACES))
def test_each_runtimes_frames_outermost_first(runtime):
    text, expected = TRACES[runtime]
    assert [(f.path, f.line, f.function) for f in frames(text)] == expected
    assert has_frames(text)
    # blanked out, the frames' paths are not read again as plain mentions
    assert all(path.rsplit("/", 1)[-1] not in without_frames(text) for path, _, _ in expected)


@pytest.mark.parametrize(
    "prose",
    [
        "the router at src/router.ts is slow",  # `at` and a path, but no line: no frame
        "I looked at main.go:12 and it seems fine",  # not a Go trace line (not indented)
        "File main.py, line 3",  # Python's frame quotes its path
    ],
)
def test_prose_that_quotes_a_place_is_no_frame(prose):
    assert frames(prose) == [] and not has_frames(prose)


GO_FILES = {
    "go.mod": "module example.com/lister\n\ngo 1.22\n",
    "main.go": 'package main\n\nimport "example.com/lister/list"\n\nfunc main() {\n'
    "\titems := list.Load()\n\tlist.Print(items, 3)\n}\n",
    "list/load.go": "package list\n\n// Load reads the items of the list from the store.\n"
    'func Load() []string {\n\treturn []string{"a", "b", "c"}\n}\n',
    "list/print.go": 'package list\n\nimport "fmt"\n\n'
    + "".join(
        f"// Format{i} formats the items of the list for column {i}.\n"
        f"func Format{i}(items []string) string {{\n\treturn fmt.Sprint(items)\n}}\n\n"
        for i in range(6)
    )
    + "// Print prints the first n items of the list.\nfunc Print(items []string, n int) {\n"
    "\tfor i := 0; i <= n; i++ {\n\t\tfmt.Println(items[i])\n\t}\n}\n",
}
GO_REPORT = """Printing the list panics with an index out of range

When I print the first three items of a list of three, the program panics instead of
printing them all. The list has three items and I ask for three.

```
panic: runtime error: index out of range [3] with length 3

goroutine 1 [running]:
example.com/lister/list.Print(...)
\t/home/me/lister/list/print.go:{line} +0x1d
main.main()
\t/home/me/lister/main.go:7 +0x25
```
"""


def test_a_go_trace_names_its_innermost_file_and_line(tmp_path, embedder):
    repo = new_repo(tmp_path / "lister", GO_FILES)
    index_repository(str(repo), embedder=embedder)
    line = GO_FILES["list/print.go"].splitlines().index("\t\tfmt.Println(items[i])") + 1
    report = GO_REPORT.replace("{line}", str(line))
    ev = evidence.extract(report)
    assert [(f.path, f.line) for f in ev.frames] == [
        ("/home/me/lister/main.go", 7), ("/home/me/lister/list/print.go", line)
    ]  # fmt: skip
    alone = query(QueryRequest(report, mode="file", channels=["evidence"]), cwd=str(repo))
    # (a deep path's file name alone names nothing: /home/me/lister/main.go is no main.go of
    # the repository for certain, list/print.go is)
    assert [r["file"] for r in alone["results"]] == ["list/print.go"]
    chunks = query(QueryRequest(report, explain=True), cwd=str(repo))
    assert chunks["explain"]["shape"] == "issue"
    top = chunks["results"][0]
    assert top["path"] == "list/print.go" and top["startLine"] <= line <= top["endLine"]


def test_a_cause_chains_root_cause_frame_comes_last():
    text = (
        "java.lang.RuntimeException: wrapped\n"
        "\tat com.shop.Service.run(Service.java:42)\n"
        "\tat com.shop.Main.main(Main.java:3)\n"
        "Caused by: java.io.IOException: closed\n"
        "\tat com.shop.io.Reader.read(Reader.java:77)\n"
        "\tat com.shop.Service.run(Service.java:40)\n"
        "\t... 1 more\n"
    )
    assert [(f.path, f.line) for f in frames(text)] == [
        ("com/shop/Main.java", 3), ("com/shop/Service.java", 42),
        ("com/shop/Service.java", 40), ("com/shop/io/Reader.java", 77),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # CRLF line ends (reports pasted from GitHub often have them)
        ("Error: x\r\n    at run (/app/src/a.ts:3:1)\r\n    at /app/src/b.ts:9:2\r\n",
         [("/app/src/b.ts", 9), ("/app/src/a.ts", 3)]),
        ("goroutine 1 [running]:\r\nmain.f()\r\n\t/app/f.go:4 +0x1d\r\n", [("/app/f.go", 4)]),
        # a dev server's query string; a Vue file
        ("    at setup (http://localhost:5173/src/App.vue?t=1700000:12:9)\n",
         [("http://localhost:5173/src/App.vue", 12)]),
        # JVM modules and class loaders
        ("\tat java.base/java.util.Objects.requireNonNull(Objects.java:233)\n"
         "\tat app//com.example.FooTest.test(FooTest.kt:18)\n",
         [("com/example/FooTest.kt", 18), ("java/util/Objects.java", 233)]),
        # Go with GOTRACEBACK=system
        ("main.main()\n\t/app/main.go:12 +0x25 fp=0xc000 sp=0xc000 pc=0x4a\n",
         [("/app/main.go", 12)]),
        # Rust before 1.73
        ("thread 'main' panicked at 'bad token', src/lexer.rs:88:13\n", [("src/lexer.rs", 88)]),
        # PHP: where it was thrown is the innermost place
        ("PHP Fatal error:  Uncaught RuntimeException: boom in /app/src/Foo.php:42\n"
         "Stack trace:\n#0 /app/src/Bar.php(10): Foo->run()\n#1 {main}\n"
         "  thrown in /app/src/Foo.php on line 42\n",
         [("/app/src/Bar.php", 10), ("/app/src/Foo.php", 42), ("/app/src/Foo.php", 42)]),
    ],
)  # fmt: skip
def test_more_of_what_runtimes_print(text, expected):
    assert [(f.path, f.line) for f in frames(text)] == expected


@pytest.mark.parametrize(
    "text", ["x" * 32_000, "a.rb" * 8_000, "/" * 32_000, "at " + "a(" * 16_000]
)
def test_a_long_run_of_text_holds_no_frame(text):
    assert frames(text) == [] and without_frames(text) == text
