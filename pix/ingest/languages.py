"""Which language a file is written in: by its name, and for a file without an extension by
its first line (`#!/usr/bin/env bash`) or an editor mode line (`-*- shell-script -*-`,
`vim: ft=sh`); a '.h' header by what it shows (C or C++). The names are pix's own (`shell`,
`csharp`, `objc`...): they are stored in the database (`blob.language`) and decide the
grammar, the secret rules and the chunker.
"""

from __future__ import annotations

import os
import re

_EXTENSIONS: dict[str, str] = {
    **dict.fromkeys(("py", "pyi", "pyw"), "python"),
    **dict.fromkeys(("js", "mjs", "cjs", "jsx"), "javascript"),
    **dict.fromkeys(("ts", "mts", "cts"), "typescript"),
    "tsx": "tsx",
    "go": "go",
    "rs": "rust",
    "java": "java",
    **dict.fromkeys(("c", "h"), "c"),
    **dict.fromkeys(("cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx", "h++", "ipp", "tpp"), "cpp"),
    **dict.fromkeys(("cu", "cuh"), "cuda"),
    **dict.fromkeys(("rb", "rake", "gemspec", "ru"), "ruby"),
    **dict.fromkeys(("md", "markdown", "mdown", "mkd"), "markdown"),
    "rst": "rst",
    **dict.fromkeys(("txt", "text"), "text"),
    **dict.fromkeys(("sh", "bash", "zsh", "ksh", "bats", "fish"), "shell"),
    **dict.fromkeys(("yml", "yaml"), "yaml"),
    **dict.fromkeys(("json", "jsonc", "json5", "ipynb"), "json"),
    **dict.fromkeys(("html", "htm", "xhtml"), "html"),
    **dict.fromkeys(("css", "scss", "sass", "less"), "css"),
    **dict.fromkeys(("kt", "kts"), "kotlin"),
    **dict.fromkeys(("scala", "sc"), "scala"),
    **dict.fromkeys(("php", "phtml"), "php"),
    **dict.fromkeys(("cs", "csx"), "csharp"),
    **dict.fromkeys(("pl", "pm", "psgi"), "perl"),
    **dict.fromkeys(("m", "mm"), "objc"),
    **dict.fromkeys(("ex", "exs"), "elixir"),
    **dict.fromkeys(("hs", "lhs"), "haskell"),
    "ml": "ocaml",
    "mli": "ocaml_interface",
    **dict.fromkeys(("clj", "cljs", "edn"), "clojure"),
    **{ext: ext for ext in "toml ini cfg xml sql lua swift dart r vue svelte zig".split()},
    "proto": "protobuf",
    **dict.fromkeys(("tf", "tfvars", "hcl"), "terraform"),
    **dict.fromkeys(("ps1", "psm1", "psd1"), "powershell"),
    "bat": "batch",
    "nim": "nim",
    "jl": "julia",
    "erl": "erlang",
    "cmake": "cmake",
    **dict.fromkeys(("gradle", "groovy"), "groovy"),
    **dict.fromkeys(("fs", "fsi", "fsx"), "fsharp"),
    "sol": "solidity",
    **dict.fromkeys(("f90", "f95", "f03", "f08", "f", "for", "fpp", "f77"), "fortran"),
}
_FILENAMES: dict[str, str] = {
    "makefile": "make",
    "gnumakefile": "make",
    "dockerfile": "dockerfile",
    "cmakelists.txt": "cmake",
    "rakefile": "ruby",
    "gemfile": "ruby",
    "vagrantfile": "ruby",
    "podfile": "ruby",
    "brewfile": "ruby",
    "jenkinsfile": "groovy",
    ".bashrc": "shell",
    ".bash_profile": "shell",
    ".profile": "shell",
    ".zshrc": "shell",
}
# Interpreters named by a '#!' line, and editor modes, mapped to pix's language names.
_INTERPRETERS: dict[str, str] = {
    **dict.fromkeys(("sh", "bash", "zsh", "ksh", "dash", "ash", "shell-script", "shell"), "shell"),
    **dict.fromkeys(("python", "python2", "python3", "pypy", "pypy3"), "python"),
    **dict.fromkeys(("node", "nodejs", "deno", "bun", "js", "javascript"), "javascript"),
    **dict.fromkeys(("ruby", "perl", "php", "lua", "elixir", "julia", "swift"), ""),
    **dict.fromkeys(("runhaskell", "runghc", "haskell"), "haskell"),
    "ts-node": "typescript",
    **dict.fromkeys(("pwsh", "powershell"), "powershell"),
    "tclsh": "tcl",
    "rscript": "r",
}
# '.h' is C's header and C++'s (abseil, LevelDB, spdlog, fmt name theirs so), and the C
# grammar reads a C++ header badly: errors swallow its classes and templates. A header that
# shows C++ is C++: a template, a class (an export macro before its name, its brace on the
# next line or not), a namespace, an access label, `using`, `std::` on a line that is no
# comment, a standard C++ header included, a `-*- C++ -*-` mode line. No header of a
# development repository shows any (tmux's, astropy's); most of LevelDB's and spdlog's do, and
# give the identifier channel more names than they gave as C (spdlog's twice as many)
# (`python -m bench.chunk_bench --headers`, bench/README.md).
_CPP_HEADER = re.compile(
    r"^[ \t]*(?:template[ \t]*<"
    r"|class[ \t]+(?:[A-Z][A-Z0-9_]*[ \t]+)?\w+[ \t]*(?:final[ \t]*)?(?:[:{]|$)"
    r"|namespace(?:[ \t]+[\w:]+)?[ \t]*\{|(?:public|private|protected)[ \t]*:"
    r"|using[ \t]+(?:namespace[ \t]+)?[\w:]+[ \t]*[=;]"
    r"|#[ \t]*include[ \t]*<(?:cstdint|cstddef|cstdlib|cstring|cstdio|cassert|cmath|climits"
    r"|string|string_view|vector|map|set|list|array|memory|utility|functional|algorithm"
    r"|type_traits|iterator|tuple|optional|atomic|mutex|thread|chrono|limits|iosfwd|[io]?stream"
    r"|sstream|unordered_map|unordered_set|initializer_list|new)>)"
    r"|^(?![ \t]*(?://|/\*|\*))[^\n]*?\bstd::\w|-\*-[ \t]*[Cc]\+\+[ \t]*-\*-",
    re.M,
)
# An Objective-C header stays with the C reading, whose retry finds the Objective-C grammar
# (pix/ingest/chunk.py `_parse_code`): the C++ grammar reads `@interface` as errors.
_OBJC_HEADER = re.compile(r"^[ \t]*(?:@(?:interface|protocol|class|end)\b|#[ \t]*import\b)", re.M)
_SNIFF_CHARS = 100_000  # a header's C++ shows early; a generated giant is not read whole
_SHEBANG = re.compile(r"#!\s*(?:\S*/)?(?:env\s+(?:-\S+\s+)*)?([\w.+-]+)")
_EMACS_MODE = re.compile(r"-\*-\s*(?:mode:\s*)?([\w+-]+)\s*(?:;[^\n]*?)?-\*-", re.I)
_VIM_MODE = re.compile(r"\bvim?:.*?\b(?:ft|filetype)=([\w+-]+)")


def language_for_path(path: str) -> str:
    """pix's language name for a path, by its file name or extension ('text' if unknown)."""
    name = os.path.basename(path).lower()
    if name in _FILENAMES:
        return _FILENAMES[name]
    if name.startswith("dockerfile"):
        return "dockerfile"
    _, dot, ext = name.rpartition(".")
    return _EXTENSIONS.get(ext, "text") if dot else "text"


def language_for(path: str, text: str) -> str:
    """As `language_for_path`; a file it calls 'text' that has no extension is named by its
    '#!' line or an editor mode line near its top or bottom instead, if one is given, and a
    '.h' header that shows C++ is C++."""
    language = language_for_path(path)
    if language == "c" and path.lower().endswith(".h"):
        head = text[:_SNIFF_CHARS]
        return "cpp" if _CPP_HEADER.search(head) and not _OBJC_HEADER.search(head) else "c"
    if language != "text" or "." in os.path.basename(path).lstrip("."):
        return language
    head = text[:500].split("\n", 3)
    found = _SHEBANG.match(head[0]) if head else None
    for match in (found, *(_EMACS_MODE.search(line) for line in head[:3])):
        if match:
            return _interpreter(match.group(1)) or language
    vim = _VIM_MODE.search(text[-300:])
    return (_interpreter(vim.group(1)) if vim else None) or language


def _interpreter(name: str) -> str | None:
    name = name.lower()
    stripped = name.rstrip("0123456789.")
    for key in (name, stripped):
        if key in _INTERPRETERS:
            return _INTERPRETERS[key] or key
    return {"sh": "shell", "bash": "shell", "zsh": "shell"}.get(name)
