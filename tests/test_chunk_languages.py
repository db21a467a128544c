"""Definition-level chunks in every language with a grammar, the fallback for the rest, and
language detection by name, '#!' line and editor mode line."""

import warnings

import pytest
from language_cases import CASES
from test_chunk import check_invariants

from pix.ingest import treesitter
from pix.ingest.chunk import chunk_file, language_for
from pix.ingest.definitions import SPECS


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
