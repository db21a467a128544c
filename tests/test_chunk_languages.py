"""Definition-level chunks in every language with a grammar, the fallback for the rest, and
language detection by name, '#!' line and editor mode line."""

import warnings

import pytest
from test_chunk import check_invariants

from pix.ingest import treesitter
from pix.ingest.chunk import chunk_file, language_for
from pix.ingest.definitions import SPECS

# path -> (source, {symbol: (kind, names its chunk defines)}). Snippets are small but real
# code in each language's common style; chunked with min_chars=0 so nothing is merged.
CASES: dict[str, tuple[str, dict[str, tuple[str, set[str]]]]] = {
    "completions/ssh": (
        """\
# ssh(1) completion                                        -*- shell-script -*-

_comp_cmd_ssh__compgen_ciphers()
{
    local ciphers='aes128-cbc aes192-cbc'
    _comp_compgen -- -W "$ciphers"
}

function _comp_xfunc_ssh_options {
    echo "-o"
}

_comp_cmd_ssh()
{
    local cur prev words cword comp_args
    _comp_initialize -n : -- "$@" || return
} &&
    complete -F _comp_cmd_ssh ssh slogin
""",
        {
            "_comp_cmd_ssh__compgen_ciphers": ("function", {"_comp_cmd_ssh__compgen_ciphers"}),
            "_comp_xfunc_ssh_options": ("function", {"_comp_xfunc_ssh_options"}),
            "_comp_cmd_ssh": ("function", {"_comp_cmd_ssh"}),
        },
    ),
    "src/main/kotlin/io/javalin/Javalin.kt": (
        """\
package io.javalin

/** The server. */
class Javalin(private val cfg: JavalinConfig) {
    fun start(port: Int): Javalin {
        return this
    }

    companion object {
        @JvmStatic
        fun create(): Javalin = Javalin(JavalinConfig())
    }
}

object ContextUtil {
    fun pathParam(key: String): String = key
}

fun String.isLocalhost(): Boolean = this == "localhost"
""",
        {
            "Javalin": ("class", {"Javalin", "start", "Companion", "create"}),
            "ContextUtil": ("class", {"ContextUtil", "pathParam"}),
            "isLocalhost": ("function", {"isLocalhost"}),
        },
    ),
    "core/src/main/scala/Formatter.scala": (
        """\
package org.scalafmt

object Scalafmt {
  def format(code: String): String = code
}

trait Rewrite {
  def rewrite(tree: Tree): Tree
}

case class Token(start: Int, end: Int)

extension (s: String) def indentWidth: Int = s.length
""",
        {
            "Scalafmt": ("class", {"Scalafmt", "format"}),
            "Rewrite": ("class", {"Rewrite", "rewrite"}),
            "Token": ("class", {"Token"}),
            "indentWidth": ("function", {"indentWidth"}),
        },
    ),
    "Sources/ArgumentParser/Flag.swift": (
        """\
import Foundation

/// A type that can be parsed.
public protocol ParsableCommand {
  func run() throws
}

extension ParsableCommand {
  public static func main() {
    print("main")
  }
}

public struct Flag<Value> {
  init(wrappedValue: Value) { self.wrappedValue = wrappedValue }
  subscript(index: Int) -> Int { index }
}

func helpMessage(for command: ParsableCommand.Type) -> String { "" }
""",
        {
            "ParsableCommand": ("class", {"ParsableCommand", "run"}),
            "Flag": ("class", {"Flag", "init", "subscript"}),
            "helpMessage": ("function", {"helpMessage"}),
        },
    ),
    "Helper/Table.php": (
        """\
<?php

namespace Symfony\\Component\\Console\\Helper;

/**
 * Renders a table.
 */
final class Table
{
    public function __construct(OutputInterface $output)
    {
        $this->output = $output;
    }

    public function render(): void {}
}

interface HelperInterface { public function getName(): string; }

function table_width(array $rows): int { return 0; }
""",
        {
            "Table": ("class", {"Table", "__construct", "render"}),
            "HelperInterface": ("class", {"HelperInterface", "getName"}),
            "table_width": ("function", {"table_width"}),
        },
    ),
    "src/Polly.Core/Retry/RetryStrategy.cs": (
        """\
using System;

namespace Polly.Retry;

/// <summary>Retries.</summary>
public sealed class RetryStrategy<T> : ResilienceStrategy
{
    public RetryStrategy(int count) { Count = count; }

    public int Count { get; }

    protected override ValueTask<Outcome<T>> ExecuteCore(Func<T> callback)
    {
        return default;
    }
}

public interface IRetryable { void Retry(); }
""",
        {
            "RetryStrategy": ("class", {"RetryStrategy", "Count", "ExecuteCore"}),
            "IRetryable": ("class", {"IRetryable", "Retry"}),
        },
    ),
    "lua/gitsigns/actions.lua": (
        """\
local M = {}

--- Stage the hunk under the cursor.
function M.stage_hunk(range)
  return range
end

function M:reset_buffer() end

local function get_cursor_hunk(bufnr)
  return bufnr
end

M.preview_hunk = function()
  return get_cursor_hunk(0)
end

return M
""",
        {
            "M.stage_hunk": ("method", {"stage_hunk"}),
            "M.reset_buffer": ("method", {"reset_buffer"}),
            "get_cursor_hunk": ("function", {"get_cursor_hunk"}),
            "M.preview_hunk": ("method", {"preview_hunk"}),
        },
    ),
    "lib/oban/queue.ex": (
        """\
defmodule Oban.Queue do
  @moduledoc false

  @doc "Start a queue."
  @spec start_link(keyword()) :: GenServer.on_start()
  def start_link(opts) do
    GenServer.start_link(__MODULE__, opts)
  end

  defp fetch(conf) when is_map(conf), do: conf

  defmacro with_queue(name, do: block) do
    quote do: unquote(block)
  end
end

defprotocol Oban.Sized do
  def size(data)
end
""",
        {
            "Oban.Queue": ("class", {"Queue", "start_link", "fetch", "with_queue"}),
            "Oban.Sized": ("class", {"Sized", "size"}),
        },
    ),
    "src/PostgREST/App.hs": (
        """\
module PostgREST.App (run) where

-- | Run the server.
run :: AppConfig -> IO ()
run conf = do
  print conf

data AppState = AppState
  { statePool :: Pool
  }

class Monad m => MonadApp m where
  getConfig :: m AppConfig
""",
        {
            "run": ("function", {"run"}),
            "AppState": ("class", {"AppState"}),
            "MonadApp": ("class", {"MonadApp", "getConfig"}),
        },
    ),
    "src/main.zig": (
        """\
const std = @import("std");

/// Entry point.
pub fn main() !void {
    std.debug.print("hi", .{});
}

const Point = struct {
    x: i32,
    pub fn init(x: i32) Point {
        return .{ .x = x };
    }
};
""",
        {"main": ("function", {"main"}), "Point": ("class", {"Point", "init"})},
    ),
    "src/lexer.ml": (
        """\
(** Tokens. *)
type token = Int of int | Plus

let rec tokenize s =
  if s = "" then [] else [Plus]

module Buffer = struct
  let create () = ()
end
""",
        {
            "token": ("class", {"token"}),
            "tokenize": ("function", {"tokenize"}),
            "Buffer": ("class", {"Buffer", "create"}),
        },
    ),
    "src/geometry.jl": (
        """\
\"\"\"
    area(r)
The area of a circle.
\"\"\"
function area(r)
    pi * r^2
end

perimeter(r) = 2pi * r

struct Circle{T}
    r::T
end
""",
        {
            "area": ("function", {"area"}),
            "perimeter": ("function", {"perimeter"}),
            "Circle": ("class", {"Circle"}),
        },
    ),
    "Classes/Parser.m": (
        """\
#import <Foundation/Foundation.h>

@implementation Parser
- (void)parse:(NSString *)text {
    NSLog(@"%@", text);
}
@end

static int helper(int x) { return x; }
""",
        {"Parser": ("class", {"Parser", "parse"}), "helper": ("function", {"helper"})},
    ),
    "schema/users.sql": (
        """\
CREATE TABLE users (id int primary key, name text);

-- Adds two numbers.
CREATE FUNCTION add_numbers(a int, b int) RETURNS int AS $$ SELECT a + b $$ LANGUAGE sql;
""",
        {"users": ("class", {"users"}), "add_numbers": ("function", {"add_numbers"})},
    ),
    "lib/Mojo/Loader.pm": (
        """\
package Mojo::Loader;
use Mojo::Base -strict;

# Load a class by name.
sub load_class {
    my $class = shift;
    return undef;
}

sub find_modules { () }

1;
""",
        {
            "load_class": ("function", {"load_class"}),
            "find_modules": ("function", {"find_modules"}),
        },
    ),
    "src/functions/Mock.ps1": (
        """\
# Replaces a command with a mock.
function Invoke-Mock {
    param([string]$CommandName)
    Write-Host $CommandName
}

class MockTable {
    [string]$Name
    MockTable([string]$n) { $this.Name = $n }
    [void] Clear() { $this.Name = '' }
}
""",
        {
            "Invoke-Mock": ("function", {"Invoke-Mock"}),
            "MockTable": ("class", {"MockTable", "Clear"}),
        },
    ),
    "src/Giraffe/Routing.fs": (
        """\
module Giraffe.Routing

open System

/// Matches a route exactly.
let route (path: string) = path.ToLowerInvariant()

type RouteResult =
    | Matched of string
    | Skipped

type Router(prefix: string) =
    member this.Handle(path: string) = prefix + path
    static member Create() = Router("/")
""",
        {
            "route": ("function", {"route"}),
            "RouteResult": ("class", {"RouteResult"}),
            "Router": ("class", {"Router", "Handle", "Create"}),
        },
    ),
    "contracts/token/ERC20.sol": (
        """\
pragma solidity ^0.8.20;

/// A fungible token.
contract ERC20 is IERC20 {
    uint256 private _totalSupply;
    event Transfer(address indexed from, address indexed to, uint256 value);

    modifier nonZero(address a) { require(a != address(0)); _; }

    function transfer(address to, uint256 value) public returns (bool) {
        return true;
    }
}

library SafeCast {
    function toUint8(uint256 value) internal pure returns (uint8) { return uint8(value); }
}
""",
        {
            "ERC20": ("class", {"ERC20", "transfer", "nonZero"}),
            "SafeCast": ("class", {"SafeCast", "toUint8"}),
        },
    ),
    "src/fpm_filesystem.f90": (
        """\
! Paths and files.
module fpm_filesystem
    implicit none
contains
    function join_path(a, b) result(path)
        character(*), intent(in) :: a, b
        character(:), allocatable :: path
        path = a // '/' // b
    end function join_path

    subroutine mkdir(dir)
        character(*), intent(in) :: dir
        print *, dir
    end subroutine mkdir
end module fpm_filesystem
""",
        {"fpm_filesystem": ("class", {"fpm_filesystem", "join_path", "mkdir"})},
    ),
}


@pytest.mark.parametrize("path", sorted(CASES))
def test_definitions_become_chunks(path):
    source, expected = CASES[path]
    chunks = check_invariants(source, path, max_chars=2000, min_chars=0)
    got: dict[str, list] = {}
    for c in chunks:
        got.setdefault(c.symbol, []).append(c)
    for symbol, (kind, names) in expected.items():
        assert symbol in got, f"{symbol} not among {sorted(s for s in got if s)}"
        assert {c.kind for c in got[symbol]} == {kind}
        defined = {n for c in got[symbol] for n in c.defines}  # a Swift extension repeats
        assert names <= defined, defined
        assert symbol.rsplit(".", 1)[-1] in got[symbol][0].text
    for max_chars, min_chars in ((80, 20), (1000, 200)):
        check_invariants(source, path, max_chars, min_chars)


def test_an_indented_scala_body_ends_on_its_own_last_line():
    """tree-sitter-scala ends an indentation-based body where the next definition's
    indentation does, so `def next` ended on the row of `class StateQueue`, whose name line
    then fell into the def's chunk (scalafmt: 141 of 4,440 names outside their chunk)."""
    source = """\
object Router:
  def next(state: Int): Int =
    val step = state + 1
    step * 2

  final class StateQueue(limit: Int):
    def push(x: Int): Unit = ()

  def drain(queue: StateQueue): Unit =
    queue.push(1)
"""
    chunks = check_invariants(source, "core/Router.scala", max_chars=90, min_chars=0)
    first_lines = {c.symbol: c.text.splitlines()[0].strip() for c in chunks}
    assert first_lines["Router.StateQueue"] == "final class StateQueue(limit: Int):"
    assert first_lines["Router.drain"] == "def drain(queue: StateQueue): Unit ="
    (nxt,) = (c for c in chunks if c.symbol == "Router.next")
    assert nxt.text.rstrip().endswith("step * 2")


def test_a_node_ending_in_text_no_child_shows_keeps_its_end():
    """Only whitespace after a node's last child is left out of its rows: a Scala
    interpolated string's closing quotes are no child of it, and a `def` whose body is one
    ended on the string's first line, so the rest of it and the next `def` went to a chunk
    named for the object (review)."""
    lines = "".join(f"    |line {i}\n" for i in range(2, 16))
    source = (
        'object Help:\n  def banner(name: String): String = s"""Hello ${name}\n'
        + lines
        + '    |"""\n\n  def other(x: Int): Int =\n    x + 1\n'
    )
    chunks = check_invariants(source, "core/Help.scala", max_chars=200, min_chars=0)
    spans = {c.symbol: (c.start_line, c.end_line) for c in chunks if c.defines}
    assert spans["Help.other"] == (19, 20)
    banner = [c for c in chunks if c.symbol == "Help.banner"]
    assert banner[0].start_line == 2 and banner[-1].end_line >= 17  # the closing quotes


@pytest.mark.parametrize("lang", sorted(treesitter.GRAMMARS))
def test_every_grammar_loads_and_has_a_spec(lang):
    # As errors: Perl's and Solidity's wheels hand over a bare int pointer, which tree-sitter
    # deprecates; pix wraps it in a capsule, so no grammar loads through a deprecated path.
    loaded = treesitter._PARSERS.pop(lang, None)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert treesitter.parse(lang, b"x") is not None
    finally:  # a failure must not leave the grammar unloaded for the rest of the session
        if loaded is not None:
            treesitter._PARSERS[lang] = loaded
    assert lang in SPECS


def test_leading_doc_comment_and_attributes_glue_to_the_definition():
    source, _ = CASES["lib/oban/queue.ex"]
    chunks = check_invariants(source, "lib/oban/queue.ex", max_chars=200, min_chars=0)
    start_link = next(c for c in chunks if "start_link" in c.defines)
    assert start_link.text.startswith('  @doc "Start a queue."')


def test_one_broken_construct_does_not_cost_the_file_its_definitions():
    # tree-sitter-bash cannot parse an extglob pattern inside [[ ]]: an ERROR node swallows
    # the rest of the file. The definitions before it are still units, not blank-line blocks.
    functions = "\n".join(f"_f{i}()\n{{\n    echo {i}\n    return 0\n}}\n" for i in range(20))
    odd = "_g()\n{\n    if (($# != 2)); then\n        return 2\n"
    odd += "    elif [[ $1 == @(A|B|_*|[0-9]*) ]]; then\n        return 2\n    fi\n}\n"
    text = functions + "\n" + odd + "\n_h()\n{\n    echo h\n}\n"
    chunks = check_invariants(text, "bash_completion.sh", max_chars=2000, min_chars=0)
    assert treesitter.parse("shell", text.encode()).root_node.has_error
    assert {f"_f{i}" for i in range(20)} <= {c.symbol for c in chunks if c.kind == "function"}


@pytest.mark.parametrize(
    ("path", "head", "language"),
    [
        ("completions/ssh", "# ssh(1) completion   -*- shell-script -*-\n", "shell"),
        ("bin/tool", "#!/usr/bin/env bash\nset -e\n", "shell"),
        ("bin/tool", "#!/bin/sh\n", "shell"),
        ("scripts/run", "#!/usr/bin/env python3\nprint(1)\n", "python"),
        ("bin/serve", "#!/usr/bin/env node\n", "javascript"),
        ("bin/console", "#!/usr/bin/env php\n<?php\n", "php"),
        ("hooks/x", "echo hi\n# vim: set ft=bash:\n", "shell"),
        ("LICENSE", "MIT License\n", "text"),
        ("notes.txt", "#!/bin/bash\n", "text"),  # an extension wins over a '#!' line
        ("app.kts", "", "kotlin"),
        ("Foo.cs", "", "csharp"),
        ("x.exs", "", "elixir"),
        ("a.mli", "", "ocaml_interface"),
        ("lib/Mojo.pm", "", "perl"),
        ("tools/build", "#!/usr/bin/env pwsh\n", "powershell"),
        ("src/Program.fs", "", "fsharp"),
        ("contracts/Token.sol", "", "solidity"),
        ("src/main.F90", "", "fortran"),
    ],
)
def test_language_by_name_first_line_or_mode_line(path, head, language):
    assert language_for(path, head) == language


def test_fallback_cuts_at_blank_lines_and_indentation():
    # No grammar for Nim here: blocks at the top-level blank lines and dedents, nothing cut
    # inside an indented body, and definitions found by keyword.
    procs = [
        f"proc handler_{i}(x: int): int =\n  let y = x\n\n  return y * {i}\n" for i in range(8)
    ]
    text = "import strutils\n\n" + "\n".join(procs)
    chunks = check_invariants(text, "src/app.nim", max_chars=120, min_chars=0)
    assert {c.kind for c in chunks} == {"block"}
    starts = {c.start_line for c in chunks}
    for c in chunks:
        assert not c.text.startswith(("  return", "  let"))  # never cut inside a proc
    assert {n for c in chunks for n in c.defines} == {f"handler_{i}" for i in range(8)}
    assert all(
        f"handler_{i}" in c.defines
        for i in range(8)
        for c in chunks
        if c.text.startswith(f"proc handler_{i}(")
    )
    assert len(starts) >= 8
    merged = check_invariants(text, "src/app.nim", max_chars=1000, min_chars=200)
    assert len(merged) < len(chunks)  # small blocks merge up to the minimum size


def test_fallback_yaml_keys_split_and_no_definitions():
    text = "".join(
        f"job_{i}:\n  runs-on: ubuntu\n  steps:\n    - run: make {i}\n" for i in range(30)
    )
    chunks = check_invariants(text, ".github/workflows/ci.yml", max_chars=300, min_chars=0)
    assert all(c.text.startswith("job_") for c in chunks)  # cut where a top-level key starts
    assert not any(c.defines for c in chunks)


def test_chunk_file_sniffs_extensionless_scripts():
    text = "#!/bin/bash\n\nmain() {\n    echo hi\n}\n"
    chunks = chunk_file(text, "bin/tool", min_chars=0)
    assert [(c.kind, c.symbol) for c in chunks] == [("module", None), ("function", "main")]


def test_dart_without_a_grammar_still_names_its_classes():
    # The only Dart grammar wheel is a one-release fork, so Dart takes the fallback: blocks at
    # blank lines, and the keyword rule still gives the identifier channel its classes.
    text = (
        "import 'package:flutter/widgets.dart';\n\n"
        "class Greeting extends StatelessWidget {\n"
        "  @override\n  Widget build(BuildContext context) {\n    return Text('hi');\n  }\n}\n\n"
        "mixin class Loud {\n  void shout() {}\n}\n"
    )
    chunks = check_invariants(text, "lib/widget.dart", max_chars=120, min_chars=0)
    assert {c.kind for c in chunks} == {"block"}
    assert {n for c in chunks for n in c.defines} == {"Greeting", "Loud"}


def test_a_perl_package_is_declared_where_it_opens():
    source, _ = CASES["lib/Mojo/Loader.pm"]
    chunks = check_invariants(source, "lib/Mojo/Loader.pm", max_chars=2000, min_chars=0)
    holding = [c for c in chunks if "Loader" in c.declares]  # asked for as Mojo::Loader
    assert len(holding) == 1 and holding[0].start_line == 1
