"""Tree-sitter grammars and the node-type tables the chunker needs for each language.

The tables only name node types; `pix.ingest.chunk` owns the chunking logic. A grammar that
cannot be loaded yields no parser, and the chunker falls back to line windows for that file.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass

from tree_sitter import Language, Node, Parser, Tree

# language -> (module, function returning the grammar pointer)
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
    "ruby": ("tree_sitter_ruby", "language"),
}


@dataclass(frozen=True)
class Spec:
    """Which node types matter for chunking in one grammar."""

    funcs: frozenset[str]  # function-like units ('method' when inside a class)
    classes: frozenset[str]  # class/type-like units; their bodies are searched for members
    transparent: frozenset[str]  # namespaces and #ifdef blocks: their contents count as siblings
    wrappers: frozenset[str]  # decorators/export/template wrappers around one definition
    variables: frozenset[str] = frozenset()  # JS `const f = () => ...` declarations
    fields: frozenset[str] = frozenset()  # JS class fields holding arrow functions


def _s(names: str) -> frozenset[str]:
    return frozenset(names.split())


_JS = Spec(
    funcs=_s("function_declaration generator_function_declaration method_definition"),
    classes=_s("class_declaration class"),
    transparent=frozenset(),
    wrappers=_s("export_statement"),
    variables=_s("lexical_declaration variable_declaration"),
    fields=_s("field_definition public_field_definition"),
)
_TS = Spec(
    funcs=_JS.funcs | _s("function_signature"),
    classes=_JS.classes
    | _s("abstract_class_declaration interface_declaration type_alias_declaration")
    | _s("enum_declaration"),
    transparent=_s("internal_module module"),
    wrappers=_JS.wrappers | _s("ambient_declaration expression_statement"),
    variables=_JS.variables,
    fields=_JS.fields,
)
_C = Spec(
    funcs=_s("function_definition preproc_function_def"),
    classes=_s("struct_specifier union_specifier enum_specifier type_definition"),
    transparent=_s(
        "preproc_ifdef preproc_if preproc_else preproc_elif preproc_elifdef linkage_specification"
    ),
    wrappers=frozenset(),
)

SPECS: dict[str, Spec] = {
    "python": Spec(
        funcs=_s("function_definition"),
        classes=_s("class_definition"),
        transparent=frozenset(),
        wrappers=_s("decorated_definition"),
    ),
    "javascript": _JS,
    "typescript": _TS,
    "tsx": _TS,
    "go": Spec(
        funcs=_s("function_declaration method_declaration"),
        classes=_s("type_declaration"),
        transparent=frozenset(),
        wrappers=frozenset(),
    ),
    "rust": Spec(
        funcs=_s("function_item function_signature_item macro_definition"),
        classes=_s("struct_item enum_item union_item trait_item impl_item type_item"),
        transparent=_s("mod_item"),
        wrappers=frozenset(),
    ),
    "java": Spec(
        funcs=_s("method_declaration constructor_declaration compact_constructor_declaration"),
        classes=_s(
            "class_declaration interface_declaration enum_declaration record_declaration"
            " annotation_type_declaration"
        ),
        transparent=frozenset(),
        wrappers=frozenset(),
    ),
    "c": _C,
    "cpp": Spec(
        funcs=_C.funcs,
        classes=_C.classes | _s("class_specifier"),
        transparent=_C.transparent | _s("namespace_definition"),
        wrappers=_s("template_declaration"),
    ),
    "ruby": Spec(
        funcs=_s("method singleton_method"),
        classes=_s("class module"),
        transparent=_s("singleton_class"),
        wrappers=frozenset(),
    ),
}

# Nodes that glue onto the definition right below them (no blank line in between).
PREFIX = _s("comment line_comment block_comment attribute_item decorator")
COMMENTS = _s("comment line_comment block_comment")
# Statement lists that do not count as a nesting level when ranking split points.
BLOCKS = _s(
    "block statement_block compound_statement declaration_list field_declaration_list class_body"
    " interface_body enum_body enum_body_declarations body_statement statement_list"
    " constructor_body do_block block_body then else"
)
# Containers whose children are flattened into the member list of the enclosing definition.
FLATTEN = _s("enum_body_declarations")
FUNCTION_VALUES = _s(
    "arrow_function function_expression function generator_function class_expression class"
)
_NAME_LEAVES = _s(
    "identifier field_identifier qualified_identifier destructor_name operator_name"
    " type_identifier template_function primitive_type"
)

_PARSERS: dict[str, tuple[Parser, threading.Lock] | None] = {}
_LOAD_LOCK = threading.Lock()


def _parser(lang: str) -> tuple[Parser, threading.Lock] | None:
    if lang in _PARSERS:
        return _PARSERS[lang]
    with _LOAD_LOCK:
        if lang not in _PARSERS:
            entry = None
            if lang in GRAMMARS:
                module, func = GRAMMARS[lang]
                try:
                    grammar = Language(getattr(importlib.import_module(module), func)())
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


def end_row(node: Node) -> int:
    """Last row holding text of `node` (a node ending with its newline ends at column 0)."""
    row, col = node.end_point
    return row - 1 if col == 0 and row > node.start_point[0] else row


def node_text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


def clean_name(raw: str) -> str:
    """'Foo<T>' -> 'Foo', 'a::B' -> 'a.B', '*Server' -> 'Server', '"mod"' -> 'mod'."""
    name = raw.strip().strip("\"'`").replace("::", ".")
    if not name.startswith("operator"):
        for stop in "<[(":
            name = name.split(stop, 1)[0]
    return " ".join(name.lstrip("&*").split())


def _declarator_name(node: Node) -> str:
    cur: Node | None = node.child_by_field_name("declarator")
    while cur is not None and cur.type not in _NAME_LEAVES:
        nxt = cur.child_by_field_name("declarator")
        if nxt is None:
            break
        cur = nxt
    return node_text(cur)


def def_names(node: Node, lang: str) -> list[str]:
    """Names a definition node introduces, first one qualified ('Server.Handle', 'Foo.bar')."""
    kind = node.type
    if lang == "go" and kind == "method_declaration":
        receiver = node.child_by_field_name("receiver")
        recv_type = ""
        if receiver is not None:
            for param in receiver.named_children:
                recv_type = clean_name(node_text(param.child_by_field_name("type")))
                break
        name = node_text(node.child_by_field_name("name"))
        return [f"{recv_type}.{name}" if recv_type else name]
    if lang == "go" and kind == "type_declaration":
        return [
            node_text(spec.child_by_field_name("name"))
            for spec in node.named_children
            if spec.type in ("type_spec", "type_alias")
        ]
    if kind == "impl_item":
        return [clean_name(node_text(node.child_by_field_name("type")))]
    if lang in ("c", "cpp") and kind in ("function_definition", "type_definition"):
        return [clean_name(_declarator_name(node))]
    name_node = node.child_by_field_name("name") or node.child_by_field_name("property")
    return [clean_name(node_text(name_node))]
