"""What defines what, per grammar: the node types the chunker cuts on and the names they
introduce (the `defines` of a chunk, which fill the identifier channel's `symbol` table).

Most languages are tables (`Spec`); a few define things in ways a node type alone cannot say
(Elixir's `def`/`defmodule` are ordinary calls, Lua assigns functions to table fields, Zig
and Julia bind types and one-line functions with `=`), and have a `resolver` that looks at
the node itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tree_sitter import Node

from pix.ingest.treesitter import clean_name, node_text


@dataclass(frozen=True)
class Found:
    """One definition: the node holding it (whose body is searched for members if it is a
    class), its names (the first may be qualified: 'Server.Handle', 'M.attach') and the node
    where its signature starts."""

    node: Node
    names: list[str]
    is_class: bool
    name_node: Node | None = None


@dataclass(frozen=True)
class Spec:
    """Which node types matter for chunking in one grammar."""

    funcs: frozenset[str]  # function-like units ('method' when inside a class)
    classes: frozenset[str]  # class/type-like units; their bodies are searched for members
    # namespaces and #ifdef blocks: their contents count as siblings
    transparent: frozenset[str] = frozenset()
    wrappers: frozenset[str] = frozenset()  # decorators/export/template wrappers around one def
    variables: frozenset[str] = frozenset()  # JS `const f = () => ...` declarations
    fields: frozenset[str] = frozenset()  # JS class fields holding arrow functions
    anonymous: frozenset[str] = frozenset()  # transparent containers that do not qualify names
    # control-flow clauses looked through for definitions (`try:`, `begin`, `if`): containers
    # that qualify no name and, unlike a namespace, vouch for none of a broken file's rows
    conditions: frozenset[str] = frozenset()
    bodies: frozenset[str] = frozenset()  # member containers that are not a 'body' field
    prefix: frozenset[str] = frozenset()  # more nodes that glue onto the definition below
    leaves: frozenset[str] = frozenset()  # name nodes, for definitions without a 'name' field
    fixed: dict[str, str] = field(default_factory=dict)  # node type -> its name ('init')
    # definitions no node type tells (or a container: Elixir's `if ... do defmodule`)
    resolver: Callable[[Node], Node | Found | None] | None = None
    glue: Callable[[Node], bool] | None = None  # more prefix nodes, by their text (Elixir '@doc')


def _s(names: str) -> frozenset[str]:
    return frozenset(names.split())


# Nodes that glue onto the definition right below them (no blank line in between).
PREFIX = _s("comment line_comment block_comment attribute_item decorator")
# Statement lists that do not count as a nesting level when ranking split points.
BLOCKS = _s(
    "block statement_block compound_statement declaration_list field_declaration_list class_body"
    " interface_body enum_body enum_body_declarations body_statement statement_list"
    " constructor_body do_block block_body then else template_body protocol_body"
    " enum_class_body function_body statements"
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


# -- languages whose definitions need a look at the node -------------------------------------

_EX_FUNCS = _s("def defp defmacro defmacrop defguard defguardp defdelegate defn defnp")
_EX_MODULES = _s("defmodule defprotocol defimpl")
_EX_CONDITIONS = _s("if unless")


def _elixir(node: Node) -> Node | Found | None:
    """`def name(args) do ... end` and `defmodule Name do ... end` are calls of macros; so is
    `if Code.ensure_loaded?(Jason) do defmodule ... end`, a container of what it defines."""
    if node.type != "call":
        return None
    keyword = node_text(node.child_by_field_name("target"))
    if keyword in _EX_CONDITIONS:
        return node
    if keyword not in _EX_FUNCS and keyword not in _EX_MODULES:
        return None
    args = next((c for c in node.named_children if c.type == "arguments"), None)
    head = args.named_children[0] if args is not None and args.named_children else None
    while head is not None and head.type == "binary_operator":  # `def f(x) when x > 0`
        head = head.child_by_field_name("left")
    if head is not None and head.type == "call":
        head = head.child_by_field_name("target")
    if head is None or head.type not in ("identifier", "alias"):
        return None
    return Found(node, [node_text(head)], keyword in _EX_MODULES, head)


def _elixir_glue(node: Node) -> bool:
    """Module attributes that describe the definition below: `@doc`, `@spec`, `@impl`."""
    return node.type == "unary_operator" and node_text(node).startswith(("@doc", "@spec", "@imp"))


def _lua(node: Node) -> Found | None:
    """`M.foo = function(...)` and `local foo = function(...)`: a function bound to a name."""
    if node.type == "variable_declaration" and node.named_children:
        node = node.named_children[0]
    if node.type != "assignment_statement":
        return None
    targets = next((c for c in node.named_children if c.type == "variable_list"), None)
    values = next((c for c in node.named_children if c.type == "expression_list"), None)
    if targets is None or values is None:
        return None
    if len(targets.named_children) != 1 or len(values.named_children) != 1:
        return None
    if values.named_children[0].type != "function_definition":
        return None
    name = targets.named_children[0]
    return Found(node, [clean_name(node_text(name))], False, name)


_ZIG_TYPES = _s("struct_declaration enum_declaration union_declaration opaque_declaration")


def _zig(node: Node) -> Found | None:
    """`const Point = struct { ... };`: a type is a value bound to a name."""
    if node.type != "variable_declaration":
        return None
    name = next((c for c in node.named_children if c.type == "identifier"), None)
    body = next((c for c in node.named_children if c.type in _ZIG_TYPES), None)
    if name is None or body is None:
        return None
    return Found(body, [node_text(name)], True, name)


def _julia_callee(node: Node) -> Node | None:
    """The function name of a signature: `f` in `f(x)`, `Base.show` in `Base.show(io, x)`."""
    queue = [node]
    while queue:
        cur = queue.pop(0)
        if cur.type == "call_expression" and cur.named_children:
            callee = cur.named_children[0]
            return callee if callee.type in ("identifier", "field_expression") else None
        queue.extend(c for c in cur.named_children if c.type in _JULIA_SIGNATURES)
    return None


_JULIA_SIGNATURES = _s("signature call_expression where_expression typed_expression")
_JULIA_TYPES = _s("struct_definition abstract_definition primitive_definition")


def _julia(node: Node) -> Found | None:
    """`function f(x) ... end`, `macro m(x) ... end`, the one-liner `f(x) = ...`, and
    `struct Point{T} ... end` (named by its type head, not its first field)."""
    if node.type in _JULIA_TYPES:
        head = next((c for c in node.named_children if c.type == "type_head"), None)
        while head is not None and head.type != "identifier":
            head = head.named_children[0] if head.named_children else None
        return Found(node, [node_text(head)], True, head) if head is not None else None
    if node.type in ("function_definition", "macro_definition"):
        sig = next((c for c in node.named_children if c.type == "signature"), None)
        callee = _julia_callee(sig) if sig is not None else None
    elif node.type == "assignment" and node.named_children:
        first = node.named_children[0]
        callee = _julia_callee(first) if first.type in _JULIA_SIGNATURES else None
    else:
        return None
    if callee is None:
        return None
    return Found(node, [clean_name(node_text(callee))], False, callee)


def _fsharp_member(node: Node) -> Found | None:
    """`member this.Greet() = ...`: the name after the self-identifier (`this.`, `x.`, `_.`)."""
    if node.type != "member_defn":
        return None
    defn = next((c for c in node.named_children if c.type == "method_or_prop_defn"), None)
    name = defn.child_by_field_name("name") if defn is not None else None
    if name is None:
        return None
    return Found(node, [node_text(name).rsplit(".", 1)[-1]], False, name)


# -- the tables ------------------------------------------------------------------------------

_JS = Spec(
    funcs=_s("function_declaration generator_function_declaration method_definition"),
    classes=_s("class_declaration class"),
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
)
_CPP = Spec(
    funcs=_C.funcs,
    classes=_C.classes | _s("class_specifier"),
    transparent=_C.transparent | _s("namespace_definition"),
    wrappers=_s("template_declaration"),
)
_OCAML = Spec(
    funcs=_s("value_definition external value_specification"),
    classes=_s(
        "type_definition module_definition module_type_definition class_definition"
        " exception_definition"
    ),
    bodies=_s("module_binding structure signature"),
    leaves=_s(
        "value_name type_constructor module_name module_type_name class_name constructor_name"
    ),
)

SPECS: dict[str, Spec] = {
    "python": Spec(
        funcs=_s("function_definition"),
        classes=_s("class_definition"),
        wrappers=_s("decorated_definition"),
        # `try: ... except ImportError: def f` and `if sys.version_info ...: def f`: a
        # definition under a condition is still a definition (their blocks are reached only
        # through these clauses, never from a function body).
        conditions=_s(
            "if_statement elif_clause else_clause try_statement except_clause finally_clause block"
        ),
    ),
    "javascript": _JS,
    "typescript": _TS,
    "tsx": _TS,
    "go": Spec(
        funcs=_s("function_declaration method_declaration"),
        classes=_s("type_declaration"),
    ),
    "rust": Spec(
        funcs=_s("function_item function_signature_item macro_definition"),
        classes=_s("struct_item enum_item union_item trait_item impl_item type_item"),
        transparent=_s("mod_item"),
    ),
    "java": Spec(
        funcs=_s("method_declaration constructor_declaration compact_constructor_declaration"),
        classes=_s(
            "class_declaration interface_declaration enum_declaration record_declaration"
            " annotation_type_declaration"
        ),
    ),
    "c": _C,
    "cpp": _CPP,
    "cuda": _CPP,
    "objc": Spec(
        funcs=_C.funcs | _s("method_definition method_declaration"),
        classes=_C.classes
        | _s(
            "class_interface class_implementation protocol_declaration category_interface"
            " category_implementation"
        ),
        transparent=_C.transparent,
        wrappers=_s("implementation_definition"),
        leaves=_s("identifier"),
    ),
    "ruby": Spec(
        funcs=_s("method singleton_method"),
        classes=_s("class module"),
        transparent=_s("singleton_class"),
        # `begin; require "x"; class Adapter ...; rescue LoadError; end`, `if defined?(X)`
        conditions=_s("begin rescue ensure if unless elsif then else"),
    ),
    "shell": Spec(
        funcs=_s("function_definition"),
        classes=frozenset(),
        wrappers=_s("list"),  # `f() { ... } && complete -F f cmd`
        conditions=_s("if_statement elif_clause else_clause"),  # `if [[ $BASH ]]; then f() {`
    ),
    "kotlin": Spec(
        funcs=_s("function_declaration secondary_constructor getter setter"),
        classes=_s("class_declaration object_declaration companion_object type_alias"),
        bodies=_s("class_body enum_class_body"),
        leaves=_s("identifier simple_identifier type_identifier"),
        fixed={"companion_object": "Companion", "secondary_constructor": "constructor"},
    ),
    "scala": Spec(
        funcs=_s("function_definition function_declaration"),
        classes=_s(
            "class_definition object_definition trait_definition enum_definition"
            " type_definition given_definition"
        ),
        transparent=_s("package_object"),
        wrappers=_s("extension_definition"),
        anonymous=_s("package_clause"),
    ),
    "swift": Spec(
        funcs=_s(
            "function_declaration protocol_function_declaration init_declaration"
            " deinit_declaration subscript_declaration"
        ),
        classes=_s("class_declaration protocol_declaration typealias_declaration"),
        fixed={
            "init_declaration": "init",
            "deinit_declaration": "deinit",
            "subscript_declaration": "subscript",
        },
    ),
    "php": Spec(
        funcs=_s("function_definition method_declaration"),
        classes=_s("class_declaration interface_declaration trait_declaration enum_declaration"),
        # `if (!function_exists('app')) { function app() ... }`: Laravel's helpers, WordPress
        anonymous=_s("namespace_definition"),
        conditions=_s("if_statement else_if_clause else_clause"),
    ),
    "csharp": Spec(
        funcs=_s(
            "method_declaration constructor_declaration destructor_declaration"
            " operator_declaration conversion_operator_declaration property_declaration"
            " indexer_declaration local_function_statement"
        ),
        classes=_s(
            "class_declaration interface_declaration struct_declaration enum_declaration"
            " record_declaration record_struct_declaration delegate_declaration"
        ),
        anonymous=_s(
            "namespace_declaration file_scoped_namespace_declaration preproc_if preproc_region"
        ),
        fixed={
            "operator_declaration": "operator",
            "conversion_operator_declaration": "operator",
            "indexer_declaration": "this",
        },
    ),
    "lua": Spec(
        funcs=_s("function_declaration"),
        classes=frozenset(),
        resolver=_lua,
        conditions=_s("do_statement"),  # `do local function f() ... end end`: a scope
    ),
    "elixir": Spec(
        funcs=frozenset(),
        classes=frozenset(),
        bodies=_s("do_block else_block"),
        resolver=_elixir,
        glue=_elixir_glue,
    ),
    "haskell": Spec(
        funcs=_s("function bind signature"),
        classes=_s("data_type newtype type_synonym type_family class instance"),
        anonymous=_s("declarations"),
        bodies=_s("class_declarations instance_declarations"),
        prefix=_s("haddock"),
    ),
    "zig": Spec(
        funcs=_s("function_declaration"),
        classes=frozenset(),
        resolver=_zig,
    ),
    "ocaml": _OCAML,
    "ocaml_interface": _OCAML,
    "julia": Spec(
        funcs=frozenset(),
        classes=frozenset(),
        transparent=_s("module_definition"),
        prefix=_s("string_literal"),
        leaves=_s("identifier"),
        resolver=_julia,
    ),
    "perl": Spec(
        funcs=_s("subroutine_declaration_statement method_declaration_statement"),
        classes=_s("class_statement"),
    ),
    "powershell": Spec(
        funcs=_s("function_statement class_method_definition"),
        classes=_s("class_statement enum_statement"),
        anonymous=_s("statement_list"),
        leaves=_s("function_name simple_name"),
    ),
    "fsharp": Spec(
        funcs=_s("declaration_expression"),
        classes=_s("type_definition module_defn exception_definition"),
        anonymous=_s("named_module namespace"),
        bodies=_s(
            "anon_type_defn record_type_defn union_type_defn interface_type_defn"
            " class_type_defn type_extension type_extension_elements"
        ),
        prefix=_s("xml_doc block_comment line_comment"),
        leaves=_s("identifier"),
        resolver=_fsharp_member,
    ),
    "solidity": Spec(
        funcs=_s(
            "function_definition modifier_definition constructor_definition"
            " fallback_receive_definition"
        ),
        classes=_s(
            "contract_declaration interface_declaration library_declaration struct_declaration"
            " enum_declaration"
        ),
        fixed={"constructor_definition": "constructor"},
    ),
    "fortran": Spec(
        funcs=_s("function subroutine module_procedure"),
        classes=_s("module submodule program derived_type_definition interface"),
        bodies=_s("internal_procedures"),
        leaves=_s("name type_name"),
    ),
    "sql": Spec(
        funcs=_s("create_function create_procedure create_trigger"),
        classes=_s("create_table create_view create_materialized_view create_type"),
        wrappers=_s("statement"),
        leaves=_s("object_reference"),
    ),
}


# -- names -----------------------------------------------------------------------------------


def _declarator_name(node: Node) -> str:
    cur: Node | None = node.child_by_field_name("declarator")
    while cur is not None and cur.type not in _NAME_LEAVES:
        nxt = cur.child_by_field_name("declarator")
        if nxt is None:
            break
        cur = nxt
    return node_text(cur)


def _descend(node: Node, spec: Spec) -> Node | None:
    """The first name under `node`, breadth first, outside its body: a 'name' field or one of
    the spec's name leaves."""
    level = [node]
    for _ in range(4):
        below: list[Node] = []
        for cur in level:
            for i, child in enumerate(cur.children):
                if not child.is_named or cur.field_name_for_child(i) == "body":
                    continue
                if child.type in BLOCKS:
                    continue
                if child.type in spec.leaves:
                    return child
                named = child.child_by_field_name("name")
                if named is not None:
                    return named
                below.append(child)
        level = below
    return None


def def_names(node: Node, lang: str) -> list[str]:
    """Names a definition node introduces, first one qualified ('Server.Handle', 'Foo.bar')."""
    kind = node.type
    spec = SPECS[lang]
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
            node_text(child.child_by_field_name("name"))
            for child in node.named_children
            if child.type in ("type_spec", "type_alias")
        ]
    if kind == "impl_item":
        return [clean_name(node_text(node.child_by_field_name("type")))]
    if lang in ("c", "cpp", "cuda", "objc") and kind in ("function_definition", "type_definition"):
        return [clean_name(_declarator_name(node))]
    if lang == "haskell":
        names = node.child_by_field_name("names")  # `x, y :: Int`
        if names is not None:
            return [node_text(n) for n in names.named_children]
        infix = next((c for c in node.named_children if c.type == "infix"), None)
        if infix is not None and node.child_by_field_name("name") is None:  # a <+> b = ...
            operator = infix.child_by_field_name("operator")
            return [node_text(operator)] if operator is not None else []
    if kind in spec.fixed:
        return [spec.fixed[kind]]
    name_node = node.child_by_field_name("name") or node.child_by_field_name("property")
    if name_node is None and spec.leaves:
        name_node = _descend(node, spec)
    return [clean_name(node_text(name_node))]
