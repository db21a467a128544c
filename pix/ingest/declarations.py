"""Names a file declares beside its functions and types: constants, module and class-level
variables, fields, properties, enum members and macros (`DEFAULT_LOG_FORMAT = ...`,
`const defaultJumpLabels = ...`, `#define TTY_FEATURES_BASE`, `static let validationFailure`,
`public const COMPLETION_API_VERSION`).

The chunker cuts on definitions (pix.ingest.definitions); these names do not cut anything,
they only join the `declares` of the chunk holding them (the `symbol` table's rows with
`declared = 1`), so the definition step (pix.retrieve.define) knows where they are
declared. Locals are not declarations: the walk never enters a function's body.

Per grammar, a table of the node types that declare; the name is found the same way for all:
the node's `name` field(s), else its `left` side (an assignment), else the declarator chain
(C), else its `pattern`, else the first declarator-like child.
"""

from __future__ import annotations

from tree_sitter import Node

from pix.ingest import definitions as defs
from pix.ingest.treesitter import clean_name, node_text


def _s(names: str) -> frozenset[str]:
    return frozenset(names.split())


_C = _s("preproc_def declaration field_declaration enumerator")
_JS = _s(
    "variable_declarator public_field_definition field_definition property_signature"
    " enum_assignment enum_body"
)
DECLARES: dict[str, frozenset[str]] = {
    "python": _s("assignment"),
    "go": _s("const_spec var_spec field_declaration"),
    "rust": _s("const_item static_item field_declaration enum_variant"),
    "c": _C,
    "cpp": _C,
    "cuda": _C,
    "objc": _C,
    "javascript": _JS,
    "typescript": _JS,
    "tsx": _JS,
    "java": _s("field_declaration constant_declaration enum_constant"),
    "kotlin": _s("property_declaration enum_entry"),
    "scala": _s("val_definition var_definition val_declaration var_declaration"),
    "swift": _s("property_declaration enum_entry protocol_property_declaration"),
    "php": _s("const_declaration property_declaration enum_case"),
    "csharp": _s("field_declaration event_field_declaration enum_member_declaration"),
    "ruby": _s("assignment"),
    "lua": _s("variable_declaration assignment_statement"),
    "shell": _s("variable_assignment"),
    "haskell": _s("data_constructor field"),
    # `package Mojo::Loader;` (the class the next subs are in) and the attributes of Moose, Moo
    # and Mojo::Base classes: `has app => sub {...}`, `has [qw(listen silent)]`.
    "perl": _s("package_statement ambiguous_function_call_expression function_call_expression"),
    "solidity": _s(
        "state_variable_declaration event_definition error_declaration struct_member enum_value"
    ),
}

# Where a declaration's names stop being the file's: function bodies and function values
# (the grammars' function units, plus closures and initializer blocks; Lua's anonymous
# `function() ... end` is a `function_definition`, every other grammar's is a unit already).
_FUNCTIONS = _s(
    "arrow_function function_expression function function_definition generator_function"
    " func_literal lambda lambda_expression lambda_literal closure_expression anonymous_function"
    " anonymous_function_definition static_initializer anonymous_initializer function_body"
    " block_argument do_block"
)
# Children that carry a declaration's name when it has no name field of its own.
_HOLDERS = _s(
    "variable_declaration variable_declarator init_declarator const_element property_element"
    " variable_list pattern prefix record variable_name field_name"
)
_LEAVES = _s(
    "identifier field_identifier type_identifier simple_identifier property_identifier"
    " constant name constructor variable_name variable"
)
# What an assignment's left side may be to declare a name (not `self.x = ...` or `a[i] = ...`).
_ASSIGNED = _s("identifier constant")
MAX_DEPTH = 6


def _leaf(node: Node | None) -> Node | None:
    """The name under `node`: itself if a name, else down its holders (at most a few steps)."""
    for _ in range(MAX_DEPTH):
        if node is None:
            return None
        if node.type in _LEAVES and not node.named_children:
            return node
        if node.type == "dot_index_expression":  # Lua `M.X = 1` declares X
            node = node.child_by_field_name("field")
            continue
        if node.type == "function_declarator":  # a prototype declares a function elsewhere
            return None
        node = (
            node.child_by_field_name("name")
            or node.child_by_field_name("bound_identifier")
            or node.child_by_field_name("declarator")
            or node.child_by_field_name("constructor")
            or _child(node)
        )
    return None


def _child(node: Node) -> Node | None:
    """The child that holds a name: a declarator-like child first (a type may come before it,
    `EventHandler Ev`), else a name."""
    children = node.named_children
    return next((c for c in children if c.type in _HOLDERS), None) or next(
        (c for c in children if c.type in _LEAVES), None
    )


def _extern(node: Node) -> bool:
    """A C or C++ declaration of something defined elsewhere (`extern const struct cmd_entry
    cmd_new_pane_entry;`: tmux's cmd.c lists every command that way, so a lookup of the
    command's name lifted cmd.c beside the file that defines it)."""
    return any(
        c.type == "storage_class_specifier" and node_text(c) == "extern"
        for c in node.named_children
    )


_PERL_NAMES = _s("autoquoted_bareword bareword string_literal interpolated_string_literal")


def _perl_attributes(node: Node) -> list[str]:
    """The attributes a Perl `has` declares: its first argument, a name or a `qw()` list
    (`has 'x';`, `has x => sub {...}`, `has [qw(a b)] => ...`)."""
    if node_text(node.child_by_field_name("function")) != "has":
        return []
    first = node.child_by_field_name("arguments")  # the argument itself when it is the only one
    for container in ("list_expression", "anonymous_array_expression"):
        if first is not None and first.type == container:
            first = first.named_children[0] if first.named_children else None
    if first is None:
        return []
    if first.type == "quoted_word_list":
        return node_text(first.child_by_field_name("content")).split()
    if first.type in _PERL_NAMES:
        content = first.child_by_field_name("content")
        return [node_text(content if content is not None else first)]
    return []


def names_of(node: Node) -> list[str]:
    """The names one declaring node introduces."""
    if node.type == "declaration" and _extern(node):
        return []  # C's `extern int x;` names a variable another file defines
    if node.type == "assignment":  # Python and Ruby: only a plain name on the left
        left = node.child_by_field_name("left")
        return [node_text(left)] if left is not None and left.type in _ASSIGNED else []
    if node.type in ("variable_declaration", "assignment_statement"):  # Lua
        values = next((c for c in node.named_children if c.type == "expression_list"), None)
        if values is not None and any(
            v.type == "function_definition" for v in values.named_children
        ):
            return []  # a function: the definitions table names it already
    if node.type == "package_statement":  # Perl: `Mojo::Loader` is asked for as `Loader`
        return [clean_name(node_text(node.child_by_field_name("name"))).rsplit(".", 1)[-1]]
    if node.type in ("ambiguous_function_call_expression", "function_call_expression"):
        return _perl_attributes(node)
    if node.type == "enum_body":  # TypeScript: plain members are the body's name fields
        starts = [c for i, c in enumerate(node.children) if node.field_name_for_child(i) == "name"]
        return [node_text(c) for c in starts]
    holders = [c for i, c in enumerate(node.children) if node.field_name_for_child(i) == "name"]
    if not holders:
        first = (
            node.child_by_field_name("left")
            or node.child_by_field_name("declarator")
            or node.child_by_field_name("pattern")
            or node.child_by_field_name("constructor")
            or _child(node)
        )
        holders = [first] if first is not None else []
    out = []
    for holder in holders:
        leaf = _leaf(holder)
        if leaf is not None:
            out.append(clean_name(node_text(leaf)))
    return [name for name in out if name]


def declared(root: Node, lang: str) -> list[tuple[int, str]]:
    """(row, name) of every declaration outside function bodies, in file order."""
    return [(node.start_point[0], name) for node, name in declared_nodes(root, lang)]


def declared_nodes(root: Node, lang: str) -> list[tuple[Node, str]]:
    """(declaring node, name) of every declaration outside function bodies, in file order."""
    kinds = DECLARES.get(lang)
    if not kinds:
        return []
    stop = defs.SPECS[lang].funcs | _FUNCTIONS
    out: list[tuple[Node, str]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in kinds:
            out.extend((node, name) for name in names_of(node))
        stack.extend(
            child
            for child in reversed(node.named_children)
            if child.type not in stop and child.type != "ERROR"
        )
    return out
