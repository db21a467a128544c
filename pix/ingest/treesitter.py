"""Tree-sitter grammars: which wheel parses each language, cached parsers, and small helpers
for reading nodes. `pix.ingest.definitions` says which node types define what;
`pix.ingest.chunk` owns the chunking. A grammar that cannot be loaded yields no parser, and
the chunker falls back to blank-line blocks for that file.
"""

from __future__ import annotations

import ctypes
import importlib
import re
import threading

from tree_sitter import Language, Node, Parser, Tree

# language -> (module, function returning the grammar pointer). Each module is one PyPI wheel
# pinned in pyproject.toml; every one loads with tree-sitter 0.26 (ABI 14 or 15).
GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "cuda": ("tree_sitter_cpp", "language"),  # C++ with kernels: the C++ grammar reads most of it
    "objc": ("tree_sitter_objc", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "shell": ("tree_sitter_bash", "language"),
    "kotlin": ("tree_sitter_kotlin", "language"),
    "scala": ("tree_sitter_scala", "language"),
    "swift": ("tree_sitter_swift", "language"),
    "php": ("tree_sitter_php", "language_php"),
    "csharp": ("tree_sitter_c_sharp", "language"),
    "lua": ("tree_sitter_lua", "language"),
    "elixir": ("tree_sitter_elixir", "language"),
    "haskell": ("tree_sitter_haskell", "language"),
    "zig": ("tree_sitter_zig", "language"),
    "ocaml": ("tree_sitter_ocaml", "language_ocaml"),
    "ocaml_interface": ("tree_sitter_ocaml", "language_ocaml_interface"),
    "julia": ("tree_sitter_julia", "language"),
    "sql": ("tree_sitter_sql", "language"),
    "perl": ("tree_sitter_perl", "language"),
    "powershell": ("tree_sitter_powershell", "language"),
    "fsharp": ("tree_sitter_fsharp", "language"),
    "solidity": ("tree_sitter_solidity", "language"),
    "fortran": ("tree_sitter_fortran", "language"),
}

_PARSERS: dict[str, tuple[Parser, threading.Lock] | None] = {}
_LOAD_LOCK = threading.Lock()
_CAPSULE_NEW = ctypes.pythonapi.PyCapsule_New
_CAPSULE_NEW.restype = ctypes.py_object
_CAPSULE_NEW.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def _as_capsule(grammar: object) -> object:
    """Older grammar wheels (Perl's, Solidity's) hand back the TSLanguage pointer as a bare
    int, which tree-sitter 0.25+ still takes but deprecates; wrapped in the capsule newer wheels
    return, it loads the same way and keeps loading once the int form is gone."""
    if isinstance(grammar, int):
        return _CAPSULE_NEW(grammar, b"tree_sitter.Language", None)
    return grammar


def _parser(lang: str) -> tuple[Parser, threading.Lock] | None:
    if lang in _PARSERS:
        return _PARSERS[lang]
    with _LOAD_LOCK:
        if lang not in _PARSERS:
            entry = None
            if lang in GRAMMARS:
                module, func = GRAMMARS[lang]
                try:
                    pointer = getattr(importlib.import_module(module), func)()
                    grammar = Language(_as_capsule(pointer))
                    entry = (Parser(grammar), threading.Lock())
                except Exception:  # a broken or missing wheel must not stop indexing
                    entry = None
            _PARSERS[lang] = entry
    return _PARSERS[lang]


def parse(lang: str, data: bytes) -> Tree | None:
    """Parse with the cached parser for `lang`; None if the grammar or the parse fails."""
    entry = _parser(lang)
    if entry is None:
        return None
    parser, lock = entry
    try:
        # Parser objects are not safe to share between threads mid-parse.
        with lock:
            return parser.parse(data)
    except Exception:
        return None


def end_row(node: Node, source: bytes | None = None) -> int:
    """Last row holding text of `node` (a node ending with its newline ends at column 0).

    With the `source` the tree was parsed from, trailing whitespace the node holds after its
    last descendant does not count: Scala's indentation-based blocks end where the next
    line's indentation does (the grammar's scanner reads it to close the block), so a `def`
    ended on the row of the `class` after it, whose name line then fell into the def's
    chunk. Only whitespace: a node may end in text no child shows (the closing quotes of a
    Scala interpolated string, a Rust raw string's delimiter)."""
    end, (row, col) = node.end_byte, node.end_point
    if source is not None:
        last = node
        while last.child_count:  # down the last children while only whitespace follows each
            last = last.child(last.child_count - 1)
            if source[last.end_byte : end].strip():
                break
            end, (row, col) = last.end_byte, last.end_point
    return row - 1 if col == 0 and row > node.start_point[0] else row


def node_text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


_LUA_METHOD = re.compile(r"[\w.]+:\w+")


def clean_name(raw: str) -> str:
    """'Foo<T>' -> 'Foo', 'a::B' -> 'a.B', '*Server' -> 'Server', '"mod"' -> 'mod',
    'M:method' -> 'M.method', 'A\\B' -> 'A.B'."""
    name = raw.strip().strip("\"'`").replace("::", ".").replace("\\", ".")
    if _LUA_METHOD.fullmatch(name):
        name = name.replace(":", ".")
    if not name.startswith("operator"):
        for stop in "<[({":
            name = name.split(stop, 1)[0]
    return " ".join(name.lstrip("&*").split())
