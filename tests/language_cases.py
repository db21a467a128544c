"""Small real snippets in every language with a grammar, and what pix must find in each
(tests/test_chunk_languages.py)."""

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
