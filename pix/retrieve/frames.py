"""Stack frames in an issue report, as each runtime prints them.

A frame names a file and a line where the failure passed; the innermost one in the
repository is where it surfaced (pix/retrieve/evidence.py weighs it most, and the chunk
holding its line takes the file's whole share). Python prints the innermost frame last;
JavaScript and TypeScript (V8), Java, Kotlin and Scala, C#, Go, Rust, Ruby, PHP and Elixir
print it first. `frames` returns every trace outermost first, so the last frame is the
innermost for each of them.

A Java frame names only its file (`at io.javalin.http.Context.json(Context.kt:123)`): its
path is the class's package as folders, then the file (`io/javalin/http/Context.kt`), which
the evidence channel resolves by suffix like any other mention
(`javalin/src/main/java/io/javalin/http/Context.kt`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Frame:
    path: str
    line: int
    function: str | None


def _java_path(m: re.Match) -> str:
    """`io.javalin.http.Context.json` in `Context.kt` -> io/javalin/http/Context.kt (a nested
    class, `Outer$Inner`, and a Kotlin file class, `RoutesKt`, are in their package too)."""
    package = m["qualified"].rsplit(".", 1)[0].rpartition(".")[0]
    return "/".join([*package.split("."), m["path"]]) if package else m["path"]


# (pattern, path of a match, innermost first): each pattern names its groups path, line and
# fn (fn optional). Lines are anchored where a runtime indents its frames, so that prose
# quoting `at x.js:3` is not read as a trace.
_Builder = Callable[[re.Match], str]
_PYTHON = re.compile(r'File "(?P<path>[^"\n]+)", line (?P<line>\d+)(?:, in (?P<fn>[\w<>.]+))?')
PATTERNS: tuple[tuple[re.Pattern, _Builder | None, bool], ...] = (
    (_PYTHON, None, False),
    # V8: `    at fn (path:line:col)`, `    at path:line:col`, `    at async fn (...)`
    (
        re.compile(
            r"^[ \t]*at (?:async )?(?:(?P<fn>[\w$.<>\[\] ]+?) \()?(?:file://)?"
            r"(?P<path>[^\s()]+?\.[cm]?[jt]sx?):(?P<line>\d+):\d+\)?[ \t]*$",
            re.M,
        ),
        None,
        True,
    ),
    # JVM: `\tat io.javalin.http.Context.json(Context.kt:123)`
    (
        re.compile(
            r"^[ \t]*at (?P<qualified>[\w$]+(?:\.[\w$<>]+)+)\("
            r"(?P<path>[\w$\-]+\.(?:java|kt|kts|scala|groovy)):(?P<line>\d+)\)",
            re.M,
        ),
        _java_path,
        True,
    ),
    # .NET: `   at Polly.Retry.RetryEngine.Implementation(...) in /src/RetryEngine.cs:line 42`
    (
        re.compile(
            r"^[ \t]*at (?P<fn>[\w.`<>\[\],]+)\(.*?\) in (?P<path>\S[^\n]*?\.(?:cs|fs|vb))"
            r":line (?P<line>\d+)",
            re.M,
        ),
        None,
        True,
    ),
    # Go: `\t/home/me/fzf/src/terminal.go:123 +0x1d` under the function's line
    (
        re.compile(r"^[ \t]+(?P<path>\S+\.go):(?P<line>\d+)(?: \+0x[0-9a-f]+)?[ \t]*$", re.M),
        None,
        True,
    ),
    # Rust: `             at ./src/parser.rs:10:5`, `panicked at src/parser.rs:10:5`
    (re.compile(r"\bat (?P<path>[^\s:'\"]+\.rs):(?P<line>\d+):\d+"), None, True),
    # Ruby: `lib/sidekiq/client.rb:123:in 'push'` (older: `push')
    (
        re.compile(r"(?P<path>[^\s:'\"`(]+\.(?:rb|rake)):(?P<line>\d+):in [`'](?P<fn>[^'`\n]+)'"),
        None,
        True,
    ),
    # PHP: `#0 /app/src/Command/Command.php(123): ...`
    (re.compile(r"#\d+ (?P<path>[^\s()]+\.php)\((?P<line>\d+)\)"), None, True),
    # Elixir: `(oban 2.17.0) lib/oban/queue.ex:12: Oban.Queue.start/1`
    (
        re.compile(r"\([\w]+ [\w.\-+]+\) (?P<path>\S+\.exs?):(?P<line>\d+): (?P<fn>[\w.?!]+)/\d+"),
        None,
        True,
    ),
)


def frames(text: str) -> list[Frame]:
    """Every stack frame of a (cleaned) issue text, each trace outermost first: Python's in
    the order printed, the others' reversed (they print the innermost first)."""
    out: list[Frame] = []
    for pattern, build, innermost_first in PATTERNS:
        found = [
            Frame(
                (build(m) if build else m["path"]).replace("\\", "/"),
                int(m["line"]),
                m.groupdict().get("fn"),
            )
            for m in pattern.finditer(text)
        ]
        out += found[::-1] if innermost_first else found
    return out


def without_frames(text: str) -> str:
    """`text` with every frame blanked out: what is left may name files by path."""
    for pattern, _, _ in PATTERNS:
        text = pattern.sub(" ", text)
    return text


def has_frames(text: str) -> bool:
    return any(pattern.search(text) for pattern, _, _ in PATTERNS)
