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

import bisect
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
# quoting `at x.js:3` is not read as a trace; `\r?$`: a report pasted with CRLF line ends.
# No pattern may rescan a long run of text from every place in it: an unanchored Ruby
# pattern took 6 s over a pasted 30,000-character token (now milliseconds).
_Builder = Callable[[re.Match], str]
_PYTHON = re.compile(r'File "(?P<path>[^"\n]+)", line (?P<line>\d+)(?:, in (?P<fn>[\w<>.]+))?')
PATTERNS: tuple[tuple[re.Pattern, _Builder | None, bool], ...] = (
    (_PYTHON, None, False),
    # V8: `    at fn (path:line:col)`, `    at path:line:col`, `    at async fn (...)`; a
    # dev server's `?t=...` after the path
    (
        re.compile(
            r"^[ \t]*at (?:async )?(?:(?P<fn>[^\s()][^()\n]*?) \()?(?:file://)?"
            r"(?P<path>\S+?\.(?:[cm]?[jt]sx?|vue|svelte))(?:\?[^\s:]*)?:(?P<line>\d+):\d+\)?"
            r"[ \t]*\r?$",
            re.M,
        ),
        None,
        True,
    ),
    # JVM: `\tat io.javalin.http.Context.json(Context.kt:123)`, with a module or class
    # loader before it (`at java.base/java.lang.Thread.run(...)`, `at app//com.example.A.b(...)`)
    (
        re.compile(
            r"^[ \t]*at (?:[\w.@+\-]*/){0,2}(?P<qualified>[\w$]+(?:\.[\w$<>]+)+)\("
            r"(?P<path>[\w$\-]+\.(?:java|kt|kts|scala|groovy)):(?P<line>\d+)\)",
            re.M,
        ),
        _java_path,
        True,
    ),
    # .NET: `   at Polly.Retry.RetryEngine.Implementation(...) in /src/RetryEngine.cs:line 42`
    (
        re.compile(
            r"^[ \t]*at (?P<fn>[^\s(]+)\([^()\n]*\) in (?P<path>[^\n]*?\.(?:cs|fs|vb))"
            r":line (?P<line>\d+)",
            re.M,
        ),
        None,
        True,
    ),
    # Go: `\t/home/me/fzf/src/terminal.go:123 +0x1d` under the function's line (with
    # GOTRACEBACK=system, ` fp=... sp=... pc=...` after it)
    (
        re.compile(
            r"^[ \t]+(?P<path>\S+\.go):(?P<line>\d+)(?: \+0x[0-9a-f]+(?: [^\n]*)?)?[ \t]*\r?$",
            re.M,
        ),
        None,
        True,
    ),
    # Rust: `             at ./src/parser.rs:10:5`, `panicked at src/parser.rs:10:5`; then
    # the panic line before 1.73, `panicked at 'message', src/parser.rs:10:5` (the innermost)
    (re.compile(r"\bat (?P<path>[^\s:'\"]+\.rs):(?P<line>\d+):\d+"), None, True),
    (re.compile(r"panicked at '[^\n]*?', (?P<path>[^\s:'\"]+\.rs):(?P<line>\d+):\d+"), None, True),
    # Ruby: `lib/sidekiq/client.rb:123:in 'push'` (older: `push'); a path starts after a
    # space, a quote or a bracket, never inside a longer run of text
    (
        re.compile(
            r"(?<![^\s'\"`(\[])(?P<path>[^\s:'\"`(]+\.(?:rb|rake|erb|haml|slim|ru))"
            r":(?P<line>\d+):in [`'](?P<fn>[^'`\n]+)'"
        ),
        None,
        True,
    ),
    # PHP: `#0 /app/src/Command/Command.php(123): ...`, then where it was thrown (printed
    # before the trace, the innermost place: `... in /app/src/Foo.php:42`, `thrown in
    # /app/src/Foo.php on line 42`, Laravel's `at /app/Http/FooController.php:25`)
    (re.compile(r"#\d+ (?P<path>[^\s()]+\.php)\((?P<line>\d+)\)"), None, True),
    (
        re.compile(r"(?:\bin|\bat) (?P<path>[^\s()]+\.php)(?::| on line )(?P<line>\d+)"),
        None,
        True,
    ),
    # Elixir: `(oban 2.17.0) lib/oban/queue.ex:12: Oban.Queue.start/1`
    (
        re.compile(r"\([\w]+ [\w.\-+]+\) (?P<path>\S+\.exs?):(?P<line>\d+): (?P<fn>[\w.?!]+)/\d+"),
        None,
        True,
    ),
)
# Where a trace's cause begins (Java's `Caused by:`, Node's `[cause]:`): each part is printed
# innermost first, the root cause last.
_CAUSE = re.compile(r"^[ \t]*(?:Caused by:|\[cause\]:)", re.M)


def frames(text: str) -> list[Frame]:
    """Every stack frame of a (cleaned) issue text, each trace outermost first: Python's in
    the order printed, the others' reversed (they print the innermost first)."""
    causes = [m.start() for m in _CAUSE.finditer(text)]
    out: list[Frame] = []
    for pattern, build, innermost_first in PATTERNS:
        found = []
        for m in pattern.finditer(text):
            path = build(m) if build else m["path"]
            frame = Frame(path.replace("\\", "/"), int(m["line"]), m.groupdict().get("fn"))
            # (the part of the trace it is in, its place): a part's innermost frame last
            part = bisect.bisect_right(causes, m.start())
            found.append(((part, -m.start() if innermost_first else m.start()), frame))
        out += [frame for _, frame in sorted(found, key=lambda item: item[0])]
    return out


def without_frames(text: str) -> str:
    """`text` with every frame blanked out: what is left may name files by path."""
    for pattern, _, _ in PATTERNS:
        text = pattern.sub(" ", text)
    return text


def has_frames(text: str) -> bool:
    return any(pattern.search(text) for pattern, _, _ in PATTERNS)
