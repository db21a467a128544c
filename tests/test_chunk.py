import importlib.metadata
import random
from pathlib import Path

import pytest

from pix.ingest import treesitter
from pix.ingest.chunk import Chunk, chunk_file, definition_sites, language_for_path


def installed_file(distribution: str, suffix: str) -> Path:
    """A source file that ships with a package of the test environment (pix's own dependencies
    and pytest), found through its installed metadata: no path of one machine."""
    files = importlib.metadata.files(distribution) or []
    found = [f for f in files if f.as_posix().endswith(suffix)]
    assert found, f"{distribution} {importlib.metadata.version(distribution)} has no {suffix}"
    return Path(found[0].locate())


PY_SESSION = '''\
"""HTTP session helpers."""

import os

TIMEOUT = 30


# Sessions keep cookies.
@dataclass
class Session:
    """A session."""

    retries: int = 3

    def __init__(self, base):
        self.base = base

    # Sends one request.
    @traced
    def request(self, method, url,
                params=None, data=None):
        prepared = self.prepare(method, url)
        prepared.params = params or {}
        prepared.data = data
        for attempt in range(self.retries):
            response = self.send(prepared)
            if response.ok:
                return response
            self.log("retry %d of %s %s", attempt, method, url)
        raise RuntimeError("gave up on " + url)

    def close(self):
        self.open = False


def helper(x):
    return x * 2
'''

GO = """\
package server

import "net/http"

// Server answers requests.
type Server struct {
\taddr string
}

// Handle serves one request.
func (s *Server) Handle(w http.ResponseWriter, r *http.Request) error {
\treturn nil
}

func New(addr string) *Server {
\treturn &Server{addr: addr}
}
"""

RUST = """\
use std::fmt;

/// A point.
#[derive(Debug, Clone)]
pub struct Point {
    x: i32,
}

impl fmt::Display for Point {
    /// Formats the point.
    #[inline]
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.x)
    }
}

pub enum Shape { Dot }

mod tests {
    #[test]
    fn it_works() {}
}
"""

TS = """\
import { x } from "./x";

// A user record.
export interface User {
  id: number;
  name(): string;
}

export type Id = string | number;

export const fetchUser = async (id: Id): Promise<User> => {
  return x(id);
};

export class Repo<T> {
  private items: T[] = [];
  @logged
  add(item: T): void {
    this.items.push(item);
  }
}

function plain(a: number) { return a; }
"""

JS = """\
const util = require("util");

/** Adds. */
function add(a, b) {
  return a + b;
}

const mul = (a, b) => a * b;

class Calc {
  constructor() { this.v = 0; }
  plus(n) { this.v += n; return this; }
}

module.exports = { add, mul, Calc };
"""

JAVA = """\
package shop;

import java.util.List;

/** A shop. */
@Entity
public class Shop {
    private final List<String> items;

    public Shop(List<String> items) {
        this.items = items;
    }

    // Counts items.
    @Override
    public int size() {
        return items.size();
    }
}
"""

C = """\
#include <stdio.h>

/* Adds two ints. */
static int add(int a, int b)
{
    return a + b;
}

struct point { int x; int y; };

typedef struct { int w; } box_t;

int main(void) { return add(1, 2); }
"""

CPP = """\
#pragma once
namespace geo {
// A shape.
class Shape {
 public:
  virtual ~Shape();
  double area() const { return 0; }
};

double Shape::perimeter() const {
  return 1;
}
}  // namespace geo
"""

RUBY = """\
require "json"

module Store
  # A cart.
  class Cart < Base
    def initialize(items)
      @items = items
    end

    def self.empty
      new([])
    end
  end
end
"""

MARKDOWN = """\
Intro text before any heading.

# Title

Some words.

```sh
# not a heading
```

Setext Heading
--------------

More words.

## Sub Section ##

End.
"""

RST = """\
=========
Main Doc
=========

Preface.

Install
-------

Run it.

Too short title
===

Usage
~~~~~

Call it.
"""

FIXTURES = {
    "session.py": PY_SESSION,
    "server.go": GO,
    "lib.rs": RUST,
    "api.ts": TS,
    "api.tsx": TS,
    "app.js": JS,
    "Shop.java": JAVA,
    "util.c": C,
    "geo.hpp": CPP,
    "geo.h": CPP,
    "shop.rb": RUBY,
    "README.md": MARKDOWN,
    "guide.rst": RST,
    "notes.txt": "".join(f"line {i} of the notes\n" for i in range(100)),
}


def lines_of(text: str) -> list[str]:
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def check_invariants(text: str, path: str, max_chars: int = 1000, min_chars: int = 200):
    chunks = chunk_file(text, path, max_chars, min_chars)
    if not text.strip():
        assert chunks == []
        return chunks
    lines = lines_of(text)
    covered = [False] * len(lines)
    previous_start = 0
    for ch in chunks:
        assert isinstance(ch, Chunk)
        assert 1 <= ch.start_line <= ch.end_line <= len(lines)
        assert ch.start_line >= previous_start
        previous_start = ch.start_line
        assert ch.text == "\n".join(lines[ch.start_line - 1 : ch.end_line])
        assert len(ch.text) <= max_chars or ch.start_line == ch.end_line
        assert ch.kind in {"function", "method", "class", "module", "section", "window", "block"}
        assert len(set(ch.defines)) == len(ch.defines)
        if ch.kind in ("module", "window", "block"):
            assert ch.symbol is None
        for i in range(ch.start_line - 1, ch.end_line):
            covered[i] = True
    assert all(covered), f"line {covered.index(False) + 1} of {path} is in no chunk"
    assert chunk_file(text, path, max_chars, min_chars) == chunks  # deterministic
    return chunks


def by_symbol(chunks: list[Chunk]) -> dict[str | None, list[Chunk]]:
    out: dict[str | None, list[Chunk]] = {}
    for ch in chunks:
        out.setdefault(ch.symbol, []).append(ch)
    return out


def unit(chunks: list[Chunk], symbol: str) -> Chunk:
    found = by_symbol(chunks)[symbol]
    assert len(found) == 1, found
    return found[0]


# -- language detection ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a/b.py", "python"),
        ("x.pyi", "python"),
        ("web/app.jsx", "javascript"),
        ("m.mjs", "javascript"),
        ("src/a.ts", "typescript"),
        ("src/A.tsx", "tsx"),
        ("main.go", "go"),
        ("lib.rs", "rust"),
        ("Shop.java", "java"),
        ("util.c", "c"),
        ("util.h", "c"),
        ("geo.HPP", "cpp"),
        ("geo.cc", "cpp"),
        ("shop.rb", "ruby"),
        ("Rakefile", "ruby"),
        ("README.md", "markdown"),
        ("docs/guide.rst", "rst"),
        ("conf.yaml", "yaml"),
        ("Makefile", "make"),
        ("Dockerfile", "dockerfile"),
        ("LICENSE", "text"),
        ("data.weird", "text"),
    ],
)
def test_language_for_path(path, language):
    assert language_for_path(path) == language


# -- code units --------------------------------------------------------------------------------


def test_python_class_fits_in_one_chunk():
    chunks = check_invariants(PY_SESSION, "session.py", max_chars=2000, min_chars=0)
    session = unit(chunks, "Session")
    assert session.kind == "class"
    assert session.defines == ("Session", "__init__", "request", "close")
    assert session.declares == ("retries",)  # pix.ingest.declarations
    # Leading comment and decorator belong to the class.
    assert session.text.startswith("# Sessions keep cookies.\n@dataclass\nclass Session:")
    assert unit(chunks, "helper").kind == "function"
    assert chunks[0].kind == "module" and chunks[0].start_line == 1


def test_python_long_class_splits_into_methods():
    chunks = check_invariants(PY_SESSION, "session.py", max_chars=300, min_chars=0)
    header = by_symbol(chunks)["Session"][0]
    assert header.kind == "class"
    assert (header.defines, header.declares) == (("Session",), ("retries",))
    assert header.text.startswith("# Sessions keep cookies.\n@dataclass\nclass Session:")
    assert header.context is None
    init = unit(chunks, "Session.__init__")
    assert init.kind == "method" and init.defines == ("__init__",)
    assert init.context == "class Session:"
    pieces = by_symbol(chunks)["Session.request"]
    assert len(pieces) == 2
    assert all(p.kind == "method" for p in pieces)
    assert pieces[0].text.startswith("    # Sends one request.\n    @traced\n    def request(")
    assert pieces[0].defines == ("request",)
    assert pieces[0].context == "class Session:"
    assert pieces[1].context == (
        "class Session:\n"
        "    def request(self, method, url,\n"
        "                params=None, data=None):"
    )
    assert pieces[1].defines == ()
    assert pieces[1].text.lstrip().startswith("for attempt in range(self.retries):")
    assert pieces[1].start_line == pieces[0].end_line + 1


def test_long_function_split_with_context():
    body = "".join(f"    total += compute_value_{i}(x, y)\n" for i in range(60))
    text = f"import os\n\n\ndef accumulate(x, y):\n    total = 0\n{body}    return total\n"
    chunks = check_invariants(text, "acc.py", max_chars=500, min_chars=100)
    pieces = by_symbol(chunks)["accumulate"]
    assert len(pieces) >= 5
    assert pieces[0].text.startswith("import os") or pieces[0].text.startswith("def accumulate")
    assert all(p.kind == "function" for p in pieces)
    assert all(p.context == "def accumulate(x, y):" for p in pieces[1:])
    assert all(len(p.text) <= 500 for p in pieces)
    # Cut between statements: every later piece starts at a statement line.
    assert all(p.text.startswith("    total += ") for p in pieces[1:-1])
    assert pieces[-1].text.endswith("    return total")
    assert [d for p in pieces for d in p.defines] == ["accumulate"]


def test_definition_is_named_by_the_piece_with_its_name():
    # A documentation comment too long to share a piece with its signature: the piece that
    # reads `ExecuteOutcome(` defines the method, not the prose above it (the definition
    # step lifts the piece that defines a name).
    remark = "    /// Line {} of a long remark about outcomes and callbacks.\n"
    doc = "".join(remark.format(i) for i in range(14))
    text = (
        "public class Pipeline\n{\n"
        f"{doc}"
        "    public int ExecuteOutcome(int callback, int state)\n"
        "        => callback + state;\n"
        "}\n"
    )
    chunks = check_invariants(text, "Pipeline.cs", max_chars=500, min_chars=100)
    pieces = by_symbol(chunks)["Pipeline.ExecuteOutcome"]
    assert len(pieces) >= 2
    (named,) = [p for p in pieces if "ExecuteOutcome" in p.defines]
    assert "public int ExecuteOutcome(" in named.text
    assert named is not pieces[0]


CONDITIONAL = {
    # path: (source, the definitions it holds under a condition)
    "compat.py": (
        "try:\n    import simplejson as json\nexcept ImportError:\n"
        "    def loads(text):\n        return text\n"
        "if HAS_SSL:\n    class Secure:\n        def wrap(self, sock):\n            return sock\n"
        "else:\n    def unwrap(sock):\n        return sock\n"
        "\n\nclass Config:\n    if DEBUG:\n        def trace(self):\n            return 1\n",
        ["loads", "Secure", "wrap", "unwrap", "Config", "trace"],
    ),
    "adapter.rb": (
        'begin\n  require "active_job"\n\n  module ActiveJob\n    class SidekiqAdapter\n'
        "      def stopping?\n        @stopping\n      end\n    end\n  end\n"
        "rescue LoadError\n  def fallback\n    nil\n  end\nend\n",
        ["ActiveJob", "SidekiqAdapter", "stopping?", "fallback"],
    ),
    "bindings.bash": (
        "if [[ -n $BASH ]]; then\n  __fzf_history__() {\n    history\n  }\n"
        "else\n  __fzf_select__() {\n    find .\n  }\nfi\n",
        ["__fzf_history__", "__fzf_select__"],
    ),
    "helpers.php": (
        "<?php\n\nif (! function_exists('app')) {\n    function app($make = null)\n    {\n"
        "        return $make;\n    }\n} else {\n    function env($key)\n    {\n"
        "        return $key;\n    }\n}\n",
        ["app", "env"],
    ),
    "install.ex": (
        "if Code.ensure_loaded?(Igniter) do\n  defmodule Mix.Tasks.Install do\n"
        "    def igniter(task) do\n      task\n    end\n  end\nelse\n"
        "  defmodule Mix.Tasks.Install do\n    def run(_argv), do: :ok\n  end\nend\n",
        ["Install", "igniter", "Install", "run"],
    ),
    "async.lua": (
        "do\n  local function acquire(self)\n    return self\n  end\n"
        "  function M.release(self)\n    return self\n  end\nend\n",
        ["acquire", "release"],
    ),
}


@pytest.mark.parametrize("path", sorted(CONDITIONAL))
def test_definitions_under_a_condition_are_units(path):
    # `try: ... except ImportError: def loads`, Ruby's `begin ... rescue LoadError` around a
    # whole adapter, shell functions defined per shell, PHP's `if (!function_exists(...))`,
    # Elixir's `if Code.ensure_loaded?(...) do defmodule`, Lua's `do ... end` scopes.
    text, names = CONDITIONAL[path]
    chunks = check_invariants(text, path, max_chars=60, min_chars=0)
    defined = [d for c in chunks for d in c.defines]
    assert defined == names


def test_a_wrapper_takes_the_definition_before_a_condition():
    # The shell `list` wrapper holds `if ...; fi` and a function: the function is the unit.
    text = 'if [ -n "$X" ]; then :; fi && f() {\n  echo f\n}\n'
    chunks = check_invariants(text, "wrapped.sh", max_chars=20, min_chars=0)
    assert [d for c in chunks for d in c.defines] == ["f"]


def test_a_condition_with_broken_code_does_not_count_as_parsed():
    # A namespace or a definition with a syntax error inside still yields its units; a broken
    # `if` block is just broken code, so most of this file is unparsed: blank-line blocks.
    text = "import os\n\nif True:\n" + "".join(f"    x{i} = = ) ( {i}\n" for i in range(30))
    chunks = check_invariants(text, "broken.py")
    assert {c.kind for c in chunks} == {"block"}


@pytest.mark.parametrize(
    ("path", "head", "branch", "tail"),
    [
        (
            "dispatch.rb",
            "class D\n  if x == 0\n    def m0; end\n",
            "  elsif x == {i}\n    def m{i}; end\n",
            "  end\nend\n",
        ),
        (
            "dispatch.c",
            "#if A == 0\nint f0(void) { return 0; }\n",
            "#elif A == {i}\nint f{i}(void) {{ return {i}; }}\n",
            "#endif\n",
        ),
    ],
    ids=["ruby", "c"],
)
def test_branch_chains_deeper_than_the_stack_fall_back_to_blocks(path, head, branch, tail):
    # Each `elsif` / `#elif` nests in the one before; 1,500 of them is deeper than Python's
    # recursion limit. The file is still cut (blank-line blocks), never an exception.
    text = head + "".join(branch.format(i=i) for i in range(1, 1500)) + tail
    chunks = check_invariants(text, path)
    assert len(chunks) > 1


def test_single_huge_statement_is_cut_by_lines():
    items = "".join(f"        'key_{i}': {i},\n" for i in range(200))
    text = f"def table():\n    return {{\n{items}    }}\n"
    chunks = check_invariants(text, "table.py", max_chars=400, min_chars=100)
    assert len(chunks) > 5
    assert {c.symbol for c in chunks} == {"table"}
    assert all(c.context == "def table():" for c in chunks[1:])


def test_small_neighbours_are_merged():
    text = "".join(f"def f{i}(a):\n    return a + {i}\n\n\n" for i in range(6))
    unmerged = check_invariants(text, "small.py", max_chars=1000, min_chars=0)
    assert [c.symbol for c in unmerged if c.kind == "function"] == [f"f{i}" for i in range(6)]
    merged = check_invariants(text, "small.py", max_chars=1000, min_chars=200)
    assert len(merged) == 1
    assert merged[0].defines == tuple(f"f{i}" for i in range(6))
    assert merged[0].kind == "function"
    # A tight max keeps merged chunks within bounds.
    tight = check_invariants(text, "small.py", max_chars=80, min_chars=200)
    assert len(tight) == 3
    assert all(len(c.defines) == 2 for c in tight)


def test_merge_keeps_kind_and_symbol_of_larger_part():
    body = "".join(f"    a += {i}\n" for i in range(20))
    text = f"X = 1\n\n\ndef big(a):\n{body}    return a\n"
    chunks = check_invariants(text, "m.py", max_chars=1000, min_chars=200)
    assert len(chunks) == 1
    assert (chunks[0].kind, chunks[0].symbol, chunks[0].defines) == ("function", "big", ("big",))
    assert chunks[0].declares == ("X",)


def test_go_units():
    chunks = check_invariants(GO, "server.go", min_chars=0)
    handle = unit(chunks, "Server.Handle")
    assert handle.kind == "method"
    assert handle.defines == ("Handle",)
    assert handle.text.startswith("// Handle serves one request.\nfunc (s *Server) Handle(")
    server = unit(chunks, "Server")
    assert server.kind == "class" and server.text.startswith("// Server answers")
    assert unit(chunks, "New").kind == "function"


def test_rust_units():
    chunks = check_invariants(RUST, "lib.rs", max_chars=120, min_chars=0)
    point = by_symbol(chunks)["Point"]
    assert point[0].text.startswith("/// A point.\n#[derive(Debug, Clone)]\npub struct Point {")
    fmt = by_symbol(chunks)["Point.fmt"]
    assert fmt[0].kind == "method"
    assert fmt[0].text.startswith("    /// Formats the point.\n    #[inline]\n    fn fmt(")
    assert fmt[0].context == "impl fmt::Display for Point {"
    assert unit(chunks, "Shape").kind == "class"
    assert unit(chunks, "tests.it_works").text == "    #[test]\n    fn it_works() {}"


def test_typescript_units():
    for path in ("api.ts", "api.tsx"):
        chunks = check_invariants(TS, path, max_chars=70, min_chars=0)
        user = by_symbol(chunks)["User"][0]
        assert user.kind == "class" and (user.defines, user.declares) == (("User",), ("id",))
        assert user.text.startswith("// A user record.\nexport interface User {")
        assert unit(chunks, "Id").kind == "class"
        fetch = by_symbol(chunks)["fetchUser"]
        assert [f.kind for f in fetch] == ["function", "function"]
        assert fetch[0].defines == ("fetchUser",)
        assert fetch[1].context == "export const fetchUser = async (id: Id): Promise<User> => {"
        add = unit(chunks, "Repo.add")
        assert add.kind == "method"
        assert add.text.startswith("  @logged\n  add(item: T)")
        assert add.context == "export class Repo<T> {"
        assert unit(chunks, "plain").defines == ("plain",)


def test_javascript_units():
    chunks = check_invariants(JS, "app.js", min_chars=0)
    assert unit(chunks, "add").text.startswith("/** Adds. */\nfunction add(a, b) {")
    assert unit(chunks, "mul").kind == "function"
    calc = unit(chunks, "Calc")
    assert calc.defines == ("Calc", "constructor", "plus")
    assert chunks[-1].kind == "module" and chunks[-1].text.startswith("\nmodule.exports")


def test_java_units():
    chunks = check_invariants(JAVA, "Shop.java", max_chars=120, min_chars=0)
    size = unit(chunks, "Shop.size")
    assert size.kind == "method"
    assert size.text.startswith("    // Counts items.\n    @Override\n    public int size()")
    assert size.context == "public class Shop {"
    assert unit(chunks, "Shop.Shop").kind == "method"  # constructor
    header = by_symbol(chunks)["Shop"][0]
    assert header.text.startswith("/** A shop. */\n@Entity\npublic class Shop {")


def test_c_units():
    chunks = check_invariants(C, "util.c", min_chars=0)
    add = unit(chunks, "add")
    assert add.kind == "function"
    # The blank line after a unit joins it rather than standing alone.
    assert add.text == (
        "/* Adds two ints. */\nstatic int add(int a, int b)\n{\n    return a + b;\n}\n"
    )
    assert unit(chunks, "point").kind == "class"
    assert unit(chunks, "box_t").kind == "class"
    assert unit(chunks, "main").kind == "function"


def test_cpp_units_and_cpp_header_with_h_extension():
    for path in ("geo.hpp", "geo.h"):
        chunks = check_invariants(CPP, path, max_chars=80, min_chars=0)
        assert unit(chunks, "geo.Shape.area").kind == "method"
        perimeter = unit(chunks, "geo.Shape.perimeter")
        assert perimeter.kind == "method" and perimeter.defines == ("perimeter",)
        assert by_symbol(chunks)["geo.Shape"][0].text.startswith("// A shape.\nclass Shape {")


def test_ruby_units():
    chunks = check_invariants(RUBY, "shop.rb", max_chars=60, min_chars=0)
    init = unit(chunks, "Store.Cart.initialize")
    assert init.kind == "method"
    assert init.text.startswith("    def initialize(items)")
    assert init.context == "module Store\n  class Cart < Base"
    assert unit(chunks, "Store.Cart.empty").defines == ("empty",)
    assert by_symbol(chunks)["Store.Cart"][0].text.startswith("  # A cart.\n  class Cart")
    whole = check_invariants(RUBY, "shop.rb", min_chars=0)
    assert unit(whole, "Store").defines == ("Store", "Cart", "initialize", "empty")


# -- prose and fallbacks -----------------------------------------------------------------------


def test_markdown_sections():
    chunks = check_invariants(MARKDOWN, "README.md", min_chars=0)
    assert [(c.symbol, c.start_line) for c in chunks] == [
        (None, 1),
        ("Title", 3),
        ("Setext Heading", 11),
        ("Sub Section", 16),
    ]
    assert all(c.kind == "section" for c in chunks)
    assert "# not a heading" in chunks[1].text
    merged = check_invariants(MARKDOWN, "README.md", min_chars=200)
    assert len(merged) == 1


def test_markdown_front_matter_is_no_heading():
    text = "---\ntitle: x\n---\n\n# Real\n\ntext\n"
    chunks = check_invariants(text, "post.md", min_chars=0)
    assert [c.symbol for c in chunks] == [None, "Real"]


def test_long_markdown_section_is_windowed_with_symbol():
    text = "# Big\n\n" + "".join(f"sentence number {i} of the section.\n" for i in range(200))
    chunks = check_invariants(text, "big.md", max_chars=500, min_chars=0)
    assert len(chunks) > 10
    assert {c.symbol for c in chunks} == {"Big"}
    assert all(c.kind == "section" for c in chunks)
    assert all(c.context == "# Big" for c in chunks[1:])


def test_rst_sections():
    chunks = check_invariants(RST, "guide.rst", min_chars=0)
    assert [(c.symbol, c.start_line) for c in chunks] == [
        ("Main Doc", 1),
        ("Install", 7),
        ("Usage", 15),
    ]
    assert "Too short title" in chunks[1].text


def test_unknown_text_is_cut_at_blank_lines_not_windows():
    paragraphs = ["".join(f"line {i} of paragraph {p}\n" for i in range(6)) for p in range(12)]
    text = "\n".join(paragraphs)
    chunks = check_invariants(text, "notes.txt")
    assert all(c.kind == "block" and c.symbol is None and not c.defines for c in chunks)
    lines = text.split("\n")
    for c in chunks:  # every cut falls on a paragraph boundary
        assert c.start_line == 1 or not lines[c.start_line - 2].strip()
    assert chunks[1].start_line == chunks[0].end_line + 1  # no overlap
    narrow = check_invariants(text, "notes.txt", max_chars=100, min_chars=0)
    assert all(len(c.text) <= 100 for c in narrow)
    assert {1 + 7 * p for p in range(12)} <= {c.start_line for c in narrow}


def test_one_long_paragraph_is_cut_by_size():
    text = "".join(f"line {i} of the notes\n" for i in range(100))
    chunks = check_invariants(text, "notes.txt")
    assert {c.kind for c in chunks} == {"block"}
    assert all(len(c.text) <= 1000 for c in chunks) and len(chunks) == 3


def test_failed_grammar_degrades_to_blocks(monkeypatch):
    monkeypatch.setitem(treesitter._PARSERS, "go", None)
    chunks = check_invariants(GO, "server.go")
    assert {c.kind for c in chunks} == {"block"}


def test_unloadable_grammar_module_degrades_to_blocks(monkeypatch):
    monkeypatch.delitem(treesitter._PARSERS, "ruby", raising=False)
    monkeypatch.setitem(treesitter.GRAMMARS, "ruby", ("no_such_grammar_module", "language"))
    chunks = check_invariants(RUBY, "shop.rb")
    assert {c.kind for c in chunks} == {"block"}
    monkeypatch.delitem(treesitter._PARSERS, "ruby")


def test_unparsable_code_falls_back_to_blocks():
    text = "".join(f"}}}}}} ))) @@ {i} ((( {{{{\n" for i in range(50))
    chunks = check_invariants(text, "broken.java")
    assert {c.kind for c in chunks} == {"block"}


# -- invariants --------------------------------------------------------------------------------


def test_empty_and_whitespace_only():
    assert chunk_file("", "a.py") == []
    assert chunk_file("  \n\n\t\n", "a.py") == []
    assert chunk_file("\r\n\r\n", "a.md") == []


def test_crlf_and_missing_final_newline():
    text = "def f():\r\n    return 1\r\n\r\nclass A:\r\n    pass"
    chunks = check_invariants(text, "crlf.py", min_chars=0)
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks] == [("f", 1, 3), ("A", 4, 5)]
    assert "\r" not in "".join(c.text for c in chunks)
    assert chunks[-1].text == "class A:\n    pass"


def test_unicode_line_numbers_follow_rows_not_bytes():
    text = 'S = "ÄÖÜ 日本語 🎉"\n\n\ndef größe(x):\n    return "ß" * x\n'
    chunks = check_invariants(text, "u.py", min_chars=0)
    g = unit(chunks, "größe")
    assert (g.start_line, g.end_line) == (4, 5)
    assert g.text == 'def größe(x):\n    return "ß" * x'


def test_single_very_long_line_stands_alone():
    long_line = "x = [" + ", ".join(str(i) for i in range(2000)) + "]"
    text = f"import os\n{long_line}\ny = 2\n"
    for path in ("long.py", "long.txt", "long.md"):
        chunks = check_invariants(text, path, max_chars=200, min_chars=50)
        assert any(c.text == long_line for c in chunks)
    assert check_invariants(long_line, "one.js", max_chars=100)[0].text == long_line


def test_lone_carriage_return_does_not_shift_lines():
    text = "a = 1\rb = 2\ndef f():\n    pass\n"
    chunks = check_invariants(text, "cr.py", min_chars=0)
    assert unit(chunks, "f").start_line == 2


@pytest.mark.parametrize("path", sorted(FIXTURES))
@pytest.mark.parametrize(("max_chars", "min_chars"), [(1000, 200), (120, 40), (30, 10), (5, 0)])
def test_invariants_on_fixtures(path, max_chars, min_chars):
    check_invariants(FIXTURES[path], path, max_chars, min_chars)


def test_invariants_on_generated_inputs():
    rng = random.Random(1234)
    pool = [line for text in FIXTURES.values() for line in lines_of(text)]
    pool += ["", "   ", "\t\t", "é" * 300, "}" * 5, "# heading", "====", '"""', "/*", "*/"]
    paths = [*FIXTURES, "x.unknown"]
    for _ in range(300):
        text = "\n".join(rng.choice(pool) for _ in range(rng.randint(0, 80)))
        if rng.random() < 0.3:
            text = text.replace("\n", "\r\n")
        if rng.random() < 0.5:
            text += "\n"
        max_chars = rng.choice([20, 100, 400, 1000])
        check_invariants(text, rng.choice(paths), max_chars, rng.choice([0, 50, 200]))


@pytest.mark.parametrize(
    ("distribution", "suffix"),
    [
        ("jsonschema", "jsonschema/validators.py"),
        ("pytest", "_pytest/python.py"),
        ("numpy", "numpy/f2py/src/fortranobject.c"),
        ("numpy", "include/numpy/npy_math.h"),  # numpy/_core/ in 2.x, numpy/core/ in 1.x
        ("numpy", "numpy/ma/README.rst"),
    ],
)
def test_invariants_on_real_files(distribution, suffix):
    path = installed_file(distribution, suffix)
    text = path.read_text(encoding="utf-8", errors="replace")
    chunks = check_invariants(text, str(path))
    assert len(chunks) > 1
    for max_chars, min_chars in ((300, 50), (2000, 400)):
        check_invariants(text, str(path), max_chars, min_chars)


def test_real_python_file_has_units():
    path = installed_file("jsonschema", "jsonschema/validators.py")
    chunks = chunk_file(path.read_text(encoding="utf-8"), str(path))
    symbols = {c.symbol for c in chunks}
    assert {"create", "validate", "validator_for"} <= symbols
    assert any(s and s.startswith("_RefResolver.") for s in symbols)
    assert all(c.context for c in chunks if c.symbol == "create" and "create" not in c.defines)


def test_rst_adjacent_underlines_are_not_overlines():
    text = "Title A\n=======\nTitle B\n=======\n\nText.\n"
    chunks = check_invariants(text, "t.rst", min_chars=0)
    assert [(c.symbol, c.start_line) for c in chunks] == [("Title A", 1)]


# -- where a file defines a name (pix.retrieve.define places the query's names with it) -----

JAVA_CLASS = """class Pool {
  /** Docs. */
  public void open() {
    x();
  }
  @Inject
  static final int LIMIT = 3;
  static final int OTHER = 4;
}
"""


@pytest.mark.parametrize(
    ("lang", "text", "names", "within", "rows"),
    [
        # methods of a class: decorators and comments sit above the name
        (
            "python",
            "class A:\n    @property\n    def size(self):\n        return 1\n\n"
            "    def grow(self):\n        self.size_of(grow)\n",
            {"size", "grow"},
            None,
            {"size": 2, "grow": 5},
        ),
        # a call above the definition does not place it, nor a nested definition or a
        # local variable spelled the same
        (
            "python",
            "def a():\n    b()\n    def b():\n        pass\n    b = 1\n\ndef b():\n    pass\n",
            {"b"},
            None,
            {"b": 6},
        ),
        (
            "typescript",
            "export const stream = (c) => {\n  const stream = new Api(c)\n  return stream\n}\n",
            {"stream"},
            None,
            {"stream": 0},
        ),
        # a field's name, not its annotation's line; OTHER lies outside the rows asked
        ("java", JAVA_CLASS, {"open", "LIMIT", "OTHER"}, (1, 6), {"open": 2, "LIMIT": 6}),
        # a constructor is spelled as its class: the class comes first
        (
            "csharp",
            "/// Docs.\npublic sealed class Control\n{\n    public Control() { }\n}\n",
            {"Control"},
            None,
            {"Control": 1},
        ),
        # each member of an enum and of a constant group on its own line
        (
            "typescript",
            "export enum Status {\n  Waiting,\n  Streaming,\n}\n",
            {"Waiting", "Streaming"},
            None,
            {"Waiting": 1, "Streaming": 2},
        ),
        (
            "go",
            "package p\n\nconst (\n\tMaxRetry = 3\n\tMaxBackoff = 9\n)\n",
            {"MaxRetry", "MaxBackoff"},
            None,
            {"MaxRetry": 3, "MaxBackoff": 4},
        ),
        # a C function's name is in its declarator, below a return type spelled the same
        (
            "c",
            "/* Make. */\nstruct gadget *\ngadget(int v)\n{\n\treturn 0;\n}\n",
            {"gadget"},
            None,
            {"gadget": 2},
        ),
        (
            "go",
            "func (c *Client) Do(r *Request) error {\n\treturn nil\n}\n",
            {"Do"},
            None,
            {"Do": 0},
        ),
        # a C++ header stored as C is read with C++'s grammar, as pix index reads it
        ("c", "class Holder {\n public:\n  int count_;\n};\n", {"Holder"}, None, {"Holder": 0}),
        # an annotation spelling the name in a string is not where it is declared
        (
            "java",
            'class User {\n  @JsonProperty("displayName")\n  private String displayName;\n}\n',
            {"displayName"},
            None,
            {"displayName": 2},
        ),
        (
            "swift",
            'struct Options {\n  @Option(name: .customLong("retry_count"))\n'
            "  var retry_count: Int\n}\n",
            {"retry_count"},
            None,
            {"retry_count": 2},
        ),
        # Perl's `has` declares a string; a later use of the name is not its place
        (
            "perl",
            "package Foo;\nuse Moo;\n\nhas 'max_size' => (\n  is => 'rw',\n"
            "  trigger => sub { $_[0]->max_size },\n);\n1;\n",
            {"max_size"},
            None,
            {"max_size": 3},
        ),
        # pix index cuts a file too deep for the grammar into blank-line blocks: no place
        (
            "ruby",
            "def target_fn\n  1\nend\n\nif a == 0\n  0\n"
            + "".join(f"elsif a == {i}\n  {i}\n" for i in range(1, 3000))
            + "end\n",
            {"target_fn"},
            None,
            {},
        ),
        ("python", "x = 1\n", {"missing"}, None, {}),  # not defined here: not placed
        ("markdown", "# size\n", {"size"}, None, {}),  # no grammar: nothing placed
    ],
)
def test_definition_rows_place_each_name_on_the_line_naming_it(lang, text, names, within, rows):
    assert definition_rows(text, lang, names, within) == rows


def definition_rows(text, lang, names, within):
    """Each of `names`' first site among rows `within` (all rows if None), as
    pix.retrieve.define places a chunk's names."""
    first, last = within or (0, text.count("\n"))
    sites = definition_sites(text, lang)
    inside = {n: [r for r in sites.get(n, ()) if first <= r <= last] for n in names}
    return {n: rows[0] for n, rows in inside.items() if rows}
