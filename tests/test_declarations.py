"""Declared names (pix.ingest.declarations): constants, module and class-level variables,
fields, properties, enum members and macros join the declares of the chunk holding them, in
every grammar that has a table; locals inside function bodies never do. In the index they are
symbols flagged `declared`: the definition step finds them, the identifier channel does not.

Each snippet is real code in its language's common style, parsed by the pinned grammar wheel;
`loc` is a local in every one of them and must not be declared.
"""

from __future__ import annotations

import pytest

from pix.ingest import treesitter
from pix.ingest.chunk import chunk_file
from pix.ingest.declarations import DECLARES, declared

CASES: dict[str, tuple[str, list[str]]] = {
    "python": (
        'DEFAULT_LOG_FORMAT = "%(levelname)s %(message)s"\nlevel: int = 3\n\n\n'
        "class Handler:\n    LIMIT = 5\n\n    def emit(self):\n        loc = 1\n",
        ["DEFAULT_LOG_FORMAT", "level", "LIMIT"],
    ),
    "go": (
        'package p\n\nconst defaultJumpLabels = "asdf"\n\nconst (\n\tA = 1\n\tB\n)\n\n'
        "var x, y int\n\ntype S struct {\n\tName string\n}\n\n"
        "func f() {\n\tloc := 1\n\t_ = loc\n}\n",
        ["defaultJumpLabels", "A", "B", "x", "y", "Name"],
    ),
    "rust": (
        "const CHOOSER_CANCELLED_EXIT_STATUS: i32 = 130;\nstatic COUNT: u8 = 1;\n"
        "struct S {\n    field: u8,\n}\nenum E {\n    A,\n    B(u8),\n}\n"
        "fn f() {\n    let loc = 1;\n}\n",
        ["CHOOSER_CANCELLED_EXIT_STATUS", "COUNT", "field", "A", "B"],
    ),
    "c": (
        '#define TTY_FEATURES_BASE "a,b"\n'
        'const struct cmd_entry cmd_new_pane_entry = { .name = "new-pane" };\n'
        "static char *names[] = { NULL };\nint proto(void);\nstruct s { int fld; };\n"
        # `extern` names what another file defines (tmux's cmd.c lists every command so).
        "extern const struct cmd_entry cmd_kill_pane_entry;\nextern int global_flags;\n"
        "enum e { EA, EB = 2 };\nvoid f(void) { int loc = 1; }\n",
        ["TTY_FEATURES_BASE", "cmd_new_pane_entry", "names", "fld", "EA", "EB"],
    ),
    "typescript": (
        'export const COMPOSED_HANDLER = "__COMPOSED_HANDLER"\n'
        "class C {\n  static X = 1\n  private y: number = 2\n}\n"
        "interface I {\n  prop: string\n}\nenum E { A, B = 2 }\n"
        "function f() {\n  const loc = 1\n}\n",
        ["COMPOSED_HANDLER", "X", "y", "prop", "A", "B"],
    ),
    "java": (
        "class C {\n  public static final int MAX = 3;\n  private String name;\n"
        "  enum E { A, B }\n  void f() { int loc = 1; }\n}\n",
        ["MAX", "name", "A", "B"],
    ),
    "kotlin": (
        "class TlsConfig {\n  companion object {\n    val INTERMEDIATE = TlsConfig()\n"
        "    const val X = 1\n  }\n}\nenum class E { A, B }\nfun f() { val loc = 1 }\n",
        ["INTERMEDIATE", "X", "A", "B"],
    ),
    "scala": (
        'object ProjectFiles {\n  val defaultIncludePaths = Seq("glob:**.scala")\n'
        "  def f = { val loc = 1; loc }\n}\n",
        ["defaultIncludePaths"],
    ),
    "swift": (
        "extension ExitCode {\n  public static let validationFailure = ExitCode(64)\n}\n"
        "enum E {\n  case a, b\n}\nfunc f() {\n  let loc = 1\n}\n",
        ["validationFailure", "a", "b"],
    ),
    "php": (
        "<?php\nclass CompleteCommand {\n"
        "    public const COMPLETION_API_VERSION = '1';\n    private $items = [];\n"
        "    public function f() { $loc = 1; }\n}\n",
        ["COMPLETION_API_VERSION", "items"],
    ),
    "csharp": (
        "static class RetryConstants {\n    public const int DefaultRetryCount = 3;\n"
        "    public event EventHandler Changed;\n    static void F() { int loc = 1; }\n}\n"
        "enum E { A, B = 2 }\n",
        ["DefaultRetryCount", "Changed", "A", "B"],
    ),
    "ruby": (
        'module Sidekiq\n  class Scheduled\n    LUA_ZPOPBYSCORE = "x"\n\n'
        "    def f\n      loc = 1\n    end\n  end\nend\n",
        ["LUA_ZPOPBYSCORE"],
    ),
    "lua": (
        "local BLAME_THRESHOLD_LEN = 16\nlocal M = {}\nM.debounce = 100\n"
        "local function f()\n  local loc = 1\nend\nM.g = function() end\n"
        # locals of a callback, the way gitsigns passes them to the scheduler
        "M.run = async.create(function(bufnr)\n  local loc = bufnr\nend)\n"
        "vim.schedule(function()\n  local loc = 2\n  loc = 3\nend)\n",
        ["BLAME_THRESHOLD_LEN", "M", "debounce", "run"],
    ),
    "shell": (
        "COMP_CONFIGURE_HINTS=1\nexport BASH_COMPLETION_VERSINFO=2\n"
        "_comp_f() {\n    local loc=1\n}\n",
        ["COMP_CONFIGURE_HINTS", "BASH_COMPLETION_VERSINFO"],
    ),
    "haskell": (
        "module M where\n\ndata Cardinality = O2M Int | M2O { rel :: Int } | M2M\n",
        ["O2M", "M2O", "rel", "M2M"],
    ),
    "perl": (
        "package Mojo::Server;\nuse Mojo::Base -base;\n\nhas app => sub { 1 };\n"
        "has [qw(listen silent)];\nhas 'reverse_proxy' => (is => 'rw');\n"
        "has 'home';\nhas title;\nhas('log');\n"
        "sub load_class { my $x = 1; has inner => 1; }\n\npackage Mojo::Other;\n1;\n",
        ["Server", "app", "listen", "silent", "reverse_proxy", "home", "title", "log", "Other"],
    ),
    "solidity": (
        "contract Vault {\n    uint256 public total;\n    event Paid(address to);\n"
        "    error Empty();\n    struct Slot { uint256 amount; }\n"
        "    function pay() public { uint256 local = 1; }\n}\n",
        ["total", "Paid", "Empty", "amount"],
    ),
}


@pytest.mark.parametrize("lang", sorted(CASES))
def test_declared_names_outside_function_bodies(lang: str) -> None:
    source, names = CASES[lang]
    tree = treesitter.parse(lang, source.encode())
    assert tree is not None and not tree.root_node.has_error
    assert [name for _, name in declared(tree.root_node, lang)] == names


def test_every_table_has_a_case() -> None:
    assert set(DECLARES) - set(CASES) <= {"cpp", "cuda", "objc", "javascript", "tsx"}


def test_declared_names_join_the_declares_of_the_chunk_holding_them() -> None:
    text = (
        "import os\n\nTIMEOUT = 30\n\n\n"
        "def fetch(url):\n    attempts = 3\n    return os.get(url, attempts)\n\n\n"
        "class Client:\n    retries = 2\n\n    def send(self):\n        sent = True\n"
        "        return sent\n"
    )
    chunks = chunk_file(text, "client.py", max_chars=120, min_chars=0)
    names = {c.symbol: (c.defines, c.declares) for c in chunks}
    assert names["Client"] == (("Client", "send"), ("retries",))
    assert names["fetch"] == (("fetch",), ())  # `attempts` is a local
    assert any(c.declares == ("TIMEOUT",) for c in chunks if c.kind == "module")
    assert not any("sent" in c.declares for c in chunks)
