"""Split a source file into retrieval chunks of whole lines.

Code is cut along its syntax tree (tree-sitter): each function, method and class is a unit
with its leading comments, decorators and attributes; code between definitions becomes
'module' chunks; units longer than `max_chars` are cut between statements, and every piece
that no longer shows the unit's signature carries it as `context`. Markdown and
reStructuredText are cut at headings (`pix.ingest.prose`); anything else, and code no grammar
parses, is cut into blocks at blank lines and indentation (`pix.ingest.paragraphs`). Small
neighbours are merged afterwards so the index is not flooded with one-line chunks.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field

from tree_sitter import Node, Tree

from pix.ingest import definitions as defs
from pix.ingest import treesitter as ts
from pix.ingest.declarations import declared, declared_nodes
from pix.ingest.languages import language_for, language_for_path
from pix.ingest.lines import CONTEXT_CHARS, Lines, Piece, merge
from pix.ingest.paragraphs import block_pieces
from pix.ingest.prose import markdown_pieces, rst_pieces

__all__ = [
    "CHUNKER_VERSION",
    "Chunk",
    "chunk_file",
    "definition_sites",
    "has_grammar",
    "language_for",
    "language_for_path",
]

# What cut a database's chunks, recorded in its `meta` table (pix.store.content.rechunk_outdated):
# raise it whenever chunks, their names or what the model reads of them change, so that the
# next `pix index` cuts every stored text again. 1: databases before 2026-12-04 (no record);
# 2: grammars for Perl, PowerShell, F#, Solidity and Fortran, C#/F# documentation as words;
# 3: a definition cut from a long documentation comment is named by the piece with its name;
# definitions under a condition (Python `try`/`if`, Ruby `begin`/`if`, shell, PHP and Elixir
# `if`, Lua `do`); 4: C's `extern` declarations declare nothing (pix.ingest.declarations);
# 5: nor do the locals of a Lua callback (`vim.schedule(function() local x ... end)`), and a
# Scala body written by indentation ends on its own last line (pix.ingest.treesitter.end_row);
# 6: a '.h' header that shows C++ is cut by the C++ grammar (pix.ingest.languages).
CHUNKER_VERSION = 6

_MAX_DEPTH = 8  # deeper nesting is treated like plain lines when ranking split points


@dataclass(frozen=True)
class Chunk:
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    kind: str  # 'function' | 'method' | 'class' | 'module' | 'section' | 'window' | 'block'
    symbol: str | None  # dotted path of the unit ('Session.request'); None for module/block
    context: str | None  # enclosing signature line(s) of a piece cut from a longer unit
    text: str  # exactly lines start_line..end_line, joined with '\n'
    defines: tuple[str, ...]  # names defined in this chunk, in order, deduplicated
    # names it declares (constants, fields, ...: pix.ingest.declarations), not defined in it
    declares: tuple[str, ...] = ()


@dataclass
class _Unit:
    start: int  # rows are 0-based and inclusive throughout this module
    end: int
    kind: str
    symbol: str
    names: list[str]  # simple names this unit itself defines
    outer: Node  # the whole definition (wrappers included), for ranking split points
    sig: tuple[int, int]  # rows of the signature
    found: defs.Found  # what resolve found: where its name is, when a lookup asks
    members: list[_Unit] = field(default_factory=list)

    def all_names(self) -> list[str]:
        return self.names + [n for m in self.members for n in m.all_names()]


class _CodeChunker:
    def __init__(self, f: Lines, lang: str, source: bytes) -> None:
        self.f = f
        self.lang = lang
        self.source = source  # the bytes the tree was parsed from (end rows need them)
        self.spec = defs.SPECS[lang]
        self._kids: dict[int, tuple[list[Node], list[int]]] = {}
        self._prefix = defs.PREFIX | self.spec.prefix
        self._namespaces = self.spec.transparent | self.spec.anonymous
        self._containers = self._namespaces | self.spec.conditions

    # -- finding units ---------------------------------------------------------------------

    def end(self, node: Node) -> int:
        return ts.end_row(node, self.source)

    def is_prefix(self, node: Node) -> bool:
        glue = self.spec.glue
        return node.type in self._prefix or (glue is not None and glue(node))

    def items(self, node: Node) -> list[Node]:
        """Children of a container in source order, its body (and enum bodies, and the
        spec's member containers) flattened; a body that is itself a definition stays whole."""
        spec = self.spec
        body = node.child_by_field_name("body")
        if body is not None and (body.type in spec.funcs or body.type in spec.classes):
            body = None
        flat = defs.FLATTEN | spec.bodies
        out: list[Node] = []
        for child in node.named_children:
            if child == body or child.type in flat:
                out.extend(_flat(child, flat))
            else:
                out.append(child)
        return out

    def container(self, node: Node) -> bool:
        return node.type in self._containers

    def vouches(self, node: Node) -> bool:
        """Whether a top-level node with a syntax error inside still counts as parsed: a
        definition or a namespace does (its units are found around the error); a condition
        (`if`, `try`, Elixir's `if ... do`) is ordinary code."""
        found = self.resolve(node)
        if isinstance(found, defs.Found):
            return True
        return found is not None and found.type in self._namespaces

    def resolve(self, node: Node) -> Node | defs.Found | None:
        """The container (a namespace), or the definition, an item holds; None if neither."""
        spec, kind = self.spec, node.type
        if self.container(node):
            return node
        if kind in spec.funcs or kind in spec.classes:
            return self.found(node, None, kind in spec.classes)
        if kind in spec.wrappers:
            # A definition first: `if ...; fi && f() {` wraps a condition and a function.
            first = None
            for child in node.named_children:
                found = self.resolve(child)
                if isinstance(found, defs.Found):
                    return found
                if first is None:
                    first = found
            return first
        if spec.resolver is not None:
            return spec.resolver(node)
        value = name = None
        if kind in spec.variables:
            decls = [c for c in node.named_children if c.type == "variable_declarator"]
            if len(decls) == 1:
                value, name = decls[0].child_by_field_name("value"), decls[0]
        elif kind in spec.fields:
            value, name = node.child_by_field_name("value"), node
        if value is None or value.type not in defs.FUNCTION_VALUES or name is None:
            return None
        name_node = name.child_by_field_name("name") or name.child_by_field_name("property")
        return self.found(value, name_node, value.type in ("class_expression", "class"))

    def found(self, node: Node, name_node: Node | None, is_class: bool) -> defs.Found:
        if name_node is not None:
            names = [ts.clean_name(ts.node_text(name_node))]
        else:
            names = defs.def_names(node, self.lang)
        return defs.Found(node, [n for n in names if n], is_class, name_node)

    def collect(self, items: list[Node], prefix: str, in_class: bool) -> list[_Unit]:
        units: list[_Unit] = []
        glue_start, glue_end = -1, -2  # rows of the comment/attribute run just above
        prev_end = -1
        for item in items:
            first = item.start_point[0]
            if self.is_prefix(item):
                if first > prev_end:  # a comment trailing code on its line belongs to that code
                    glue_start = glue_start if glue_end >= first - 1 else first
                    glue_end = self.end(item)
                prev_end = self.end(item)
                continue
            start = glue_start if glue_end >= first - 1 else first
            glue_end = -2
            prev_end = self.end(item)
            found = self.resolve(item)
            if found is None:
                continue
            if isinstance(found, Node):
                named = found.type in self.spec.transparent and not found.type.startswith("pre")
                label = _name_field(found) if named else ""
                inner = f"{prefix}{label}." if label else prefix
                units.extend(self.collect(self.items(found), inner, in_class))
                continue
            unit = self.make_unit(item, found, start, prefix, in_class)
            if unit is not None:
                units.append(unit)
                prev_end = unit.end
        return units

    def make_unit(
        self,
        outer: Node,
        found: defs.Found,
        start: int,
        prefix: str,
        in_class: bool,
    ) -> _Unit | None:
        node, names, is_class = found.node, found.names, found.is_class
        if not names:
            return None
        if is_class:
            kind = "class"
        elif in_class or "." in names[0]:  # Go receivers and C++ 'Foo::bar' qualify the name
            kind = "method"
        else:
            kind = "function"
        unit = _Unit(
            start=start,
            end=max(start, self.end(outer)),
            kind=kind,
            symbol=prefix + names[0],
            names=[n.rsplit(".", 1)[-1] for n in names],
            outer=outer,
            sig=_signature_rows(node, found.name_node),
            found=found,
        )
        if is_class:
            unit.members = self.collect(self.items(node), unit.symbol + ".", True)
        return unit

    # -- turning units into pieces ---------------------------------------------------------

    def chunk(self, root: Node) -> list[Piece]:
        units = self.collect(self.items(root), "", False)
        return self.layout(units, 0, len(self.f.lines) - 1, root, "module", None, None, None, -1)

    def layout(
        self,
        units: list[_Unit],
        lo: int,
        hi: int,
        node: Node,
        kind: str,
        symbol: str | None,
        first_ctx: str | None,
        ctx: str | None,
        head_end: int,
    ) -> list[Piece]:
        """Pieces for rows lo..hi: each unit laid out on its own, the rows between units cut
        as `kind`/`symbol` code (a class header and fields, or module code). The first piece
        shows the enclosing signature itself, so only later ones carry `ctx`. Rows up to
        `head_end` (comments, decorators, signature) are not cut apart if avoidable."""
        pieces: list[Piece] = []

        def gap(a: int, b: int) -> None:
            rank = self.ranks(node, a, b)
            for row in range(a + 1, min(b, head_end) + 1):
                rank.pop(row, None)
            for s, e in self.f.split(a, b, rank):
                pieces.append(Piece(s, e, kind, symbol, ctx if pieces else first_ctx, []))

        cur = lo
        for unit in units:
            start, end = max(unit.start, cur), min(unit.end, hi)
            if end < start:  # shares its only line with the previous unit
                if pieces:
                    pieces[-1].defines.extend(unit.all_names())
                continue
            if start > cur:
                gap(cur, start - 1)
            pieces += self.unit_pieces(unit, start, end, ctx if pieces else first_ctx)
            cur = end + 1
        if cur <= hi:
            gap(cur, hi)
        return pieces

    def unit_pieces(self, unit: _Unit, start: int, end: int, parent: str | None) -> list[Piece]:
        if self.f.size(start, end) <= self.f.max:
            return [Piece(start, end, unit.kind, unit.symbol, parent, unit.all_names())]
        sig = self.f.signature(unit.sig)
        # Enclosing signatures first, unless that would bury the unit's own one.
        own = f"{parent}\n{sig}" if parent and len(parent) + len(sig) < 2 * CONTEXT_CHARS else sig
        pieces = self.layout(
            unit.members, start, end, unit.outer, unit.kind, unit.symbol, parent, own, unit.sig[1]
        )
        # The piece holding the name's row defines it: a documentation comment too long to
        # share a piece with the signature is cut off above it, and the definition step
        # (pix.retrieve.define) must lift the piece that reads `ExecuteOutcomeAsync(`, not
        # the prose before it.
        named = next((p for p in pieces if p.start <= unit.sig[0] <= p.end), pieces[0])
        named.defines[:0] = unit.names
        return pieces

    def ranks(self, node: Node, lo: int, hi: int) -> dict[int, int]:
        """Row -> nesting depth of the shallowest named node starting on it, within lo..hi.

        Blocks do not count as a level. A node right under a comment or attribute does not
        offer its row, so the comment stays with what it describes. Only multi-line nodes are
        descended into, which keeps this linear in the size of the range.
        """
        rank: dict[int, int] = {}
        if self.f.size(lo, hi) <= self.f.max:
            return rank
        stack = [(self.children_from(node, lo), 0)]
        while stack:
            children, depth = stack.pop()
            glued, prev_end = -2, -1
            for child in children:
                first, last = child.start_point[0], child.end_point[0]
                if first > hi:
                    break
                block = child.type in defs.BLOCKS
                d = depth if block else depth + 1
                if last >= lo:
                    if not block and first >= lo and first != glued and rank.get(first, 99) > d:
                        rank[first] = d
                    if last > first and d < _MAX_DEPTH:
                        stack.append((self.children_from(child, lo), d))
                own_line = self.is_prefix(child) and first > prev_end
                prev_end = self.end(child)
                glued = prev_end + 1 if own_line else -2
        return rank

    def children_from(self, node: Node, lo: int) -> list[Node]:
        """Named children of `node` from the first one reaching row lo. Long child lists (a
        module, a big class body) are cached with their end rows, so that cutting many ranges
        out of one container does not rescan it each time."""
        hit = self._kids.get(node.id)
        if hit is None:
            kids = node.named_children
            if len(kids) < 32:
                return kids
            hit = self._kids[node.id] = (kids, [k.end_point[0] for k in kids])
        kids, ends = hit
        return kids[bisect.bisect_left(ends, lo) :]


def _flat(node: Node, flat: frozenset[str]) -> list[Node]:
    out: list[Node] = []
    for child in node.named_children:
        out.extend(_flat(child, flat) if child.type in flat else [child])
    return out


def _name_field(node: Node) -> str:
    name = node.child_by_field_name("name")
    return ts.clean_name(ts.node_text(name)) if name is not None else ""


def _signature_rows(node: Node, name_node: Node | None) -> tuple[int, int]:
    """From the name's row to where the body opens: the '{' line, or the line with ':' in
    Python (a Python block starts at its first statement, hence the look at the token before)."""
    first = (name_node or node.child_by_field_name("name") or node).start_point[0]
    body = node.child_by_field_name("body")
    if body is None:
        return first, first
    last = body.start_point[0]
    before = body.prev_sibling
    while before is not None and before.type in defs.PREFIX:
        before = before.prev_sibling
    if before is not None and ts.end_row(before) < last:
        last = ts.end_row(before)
    return first, max(first, last)


# -- entry point -------------------------------------------------------------------------------


def chunk_file(text: str, path: str, max_chars: int = 1000, min_chars: int = 200) -> list[Chunk]:
    """Split one file's text into chunks."""
    if not text.strip():
        return []
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    f = Lines(lines, max(1, max_chars), min_chars)
    lang = language_for(path, text)
    pieces: list[Piece] | None = None
    if lang in defs.SPECS:
        pieces = _code_pieces(f, lang, text)
    elif lang == "markdown":
        pieces = markdown_pieces(f)
    elif lang == "rst":
        pieces = rst_pieces(f)
    if pieces is None:
        pieces = block_pieces(f, lang)
    return [
        Chunk(
            start_line=p.start + 1,
            end_line=p.end + 1,
            kind=p.kind,
            symbol=p.symbol,
            context=p.context,
            text="\n".join(lines[p.start : p.end + 1]),
            defines=tuple(dict.fromkeys(p.defines)),
            declares=tuple(p.declares),
        )
        for p in pieces
    ]


def _code_pieces(f: Lines, lang: str, text: str) -> list[Piece] | None:
    source = text.encode("utf-8", "replace")
    tree, parsed = _parse_code(lang, source)
    if tree is None or parsed is None:
        return None
    lang = parsed
    chunker = _CodeChunker(f, lang, source)
    if not _parsed_enough(tree.root_node, f.lines, chunker):
        return None
    try:
        pieces = merge(f, chunker.chunk(tree.root_node))
        _add_declared(pieces, declared(tree.root_node, lang))
    except RecursionError:
        # Grammars nest each `elsif` / `#elif` branch in the one before: a chain of a
        # thousand (generated dispatch code) is deeper than Python's stack. Blank-line
        # blocks still serve such a file; an index must not stop at it.
        return None
    return pieces


def definition_sites(text: str, lang: str | None) -> dict[str, list[int]]:
    """Every name `text`, a whole file, defines or declares -> the rows (0-based, ascending)
    of the lines naming it.

    A chunk knows the names it defines but not where: small neighbours are merged into one
    chunk named for the first, so `frobnicate_gizmo` may be defined 16 lines into a chunk
    named `process_batch_1`. The file is read as `pix index` reads it (the same units, the
    same declarations), so a row is the one the index meant; a chunk's text alone parses
    badly wherever it is a piece of a longer definition (a local variable then looks like
    the definition).
    """
    source = text.encode("utf-8", "replace")
    tree, lang = _parse_code(lang, source)
    if tree is None or lang is None:
        return {}
    lines = text.split("\n")
    chunker = _CodeChunker(Lines(lines, 1, 0), lang, source)
    try:
        if not _parsed_enough(tree.root_node, lines, chunker):
            return {}  # pix index cut it into blank-line blocks, which place nothing
        units = chunker.collect(chunker.items(tree.root_node), "", False)
        declarations = declared_nodes(tree.root_node, lang)
    except RecursionError:  # as in _code_pieces: a thousand nested `elsif`s
        return {}
    sites: dict[str, set[int]] = {}
    while units:
        unit = units.pop()
        row = _name_row(unit.found, unit.names[0])
        for name in unit.names:
            sites.setdefault(name, set()).add(row)
        units.extend(unit.members)
    spelled: dict[int, dict[str, int]] = {}  # one walk per declaring node (an enum's body)
    for node, name in declarations:
        if node.id not in spelled:
            spelled[node.id] = _spellings(node)
        sites.setdefault(name, set()).add(spelled[node.id].get(name, node.start_point[0]))
    return {name: sorted(rows) for name, rows in sites.items()}


def has_grammar(lang: str | None) -> bool:
    """Whether a grammar reads `lang`, so that definition_sites can place names in it."""
    return lang in defs.SPECS


def _name_row(found: defs.Found, name: str) -> int:
    """The row of a definition's name: its name node's, else the end of its chain of
    declarators (C and C++: `struct gadget *` above `gadget(int v)`), else the first token
    outside the body spelled as the name, else the row its signature starts on."""
    node = found.name_node or found.node.child_by_field_name("name")
    if node is not None:
        return node.start_point[0]
    node = found.node.child_by_field_name("declarator")
    while node is not None and node.child_by_field_name("declarator") is not None:
        node = node.child_by_field_name("declarator")
    if node is not None and ts.clean_name(ts.node_text(node)).rsplit(".", 1)[-1] == name:
        return node.start_point[0]
    row = _first_spelled(found.node, name, found.node.child_by_field_name("body"))
    return row if row is not None else _signature_rows(found.node, None)[0]


# Tokens under these never name what they annotate: `@Option(name: "retry_count")` above a
# field spells its name in a string, `@Inject` a type.
_NOT_NAMES = frozenset(
    """annotation marker_annotation attribute attribute_list attribute_item
    inner_attribute_item decorator""".split()
)


def _tokens(node: Node, skip: Node | None = None) -> Iterator[Node]:
    """The tokens under `node` in source order, none under `skip` or under an annotation,
    attribute or decorator."""
    stack = [child for child in reversed(node.children) if child != skip]
    while stack:
        child = stack.pop()
        if child.type in _NOT_NAMES:
            continue
        if child.child_count:
            stack.extend(reversed(child.children))
        else:
            yield child


def _first_spelled(node: Node, name: str, skip: Node | None = None) -> int | None:
    """The row of the first token under `node` (not under `skip`) spelled as `name`."""
    return next((t.start_point[0] for t in _tokens(node, skip) if ts.node_text(t) == name), None)


def _spellings(node: Node) -> dict[str, int]:
    """Each token under `node` -> the row it is first spelled on (one walk for all the names
    a node declares: an enum's members)."""
    rows: dict[str, int] = {}
    for token in _tokens(node):
        rows.setdefault(ts.node_text(token), token.start_point[0])
    return rows


def _parse_code(lang: str | None, data: bytes) -> tuple[Tree | None, str | None]:
    """The syntax tree of a file in `lang` and the language that read it: '.h' is shared with
    C++ (and Objective-C), and a C++ or Objective-C header only parses cleanly with its own
    grammar. (None, None) when no grammar reads it."""
    if lang not in defs.SPECS:
        return None, None
    tree = ts.parse(lang, data)
    if tree is not None and tree.root_node.has_error and lang == "c":
        for other in ("cpp", "objc"):
            retry = ts.parse(other, data)
            if retry is not None and not retry.root_node.has_error:
                return retry, other
    return tree, lang


def _add_declared(pieces: list[Piece], names: list[tuple[int, str]]) -> None:
    """Each declared name (constants, fields, ...) joins the declares of the piece holding its
    row, unless the piece defines it."""
    starts = [p.start for p in pieces]
    for row, name in names:
        i = bisect.bisect_right(starts, row) - 1
        if i >= 0 and row <= pieces[i].end and name not in pieces[i].defines:
            if name not in pieces[i].declares:
                pieces[i].declares.append(name)


def _parsed_enough(root: Node, lines: list[str], chunker: _CodeChunker) -> bool:
    """False when syntax errors swallow most of the file, where blank-line blocks serve better.
    A root that is itself an ERROR often still holds whole definitions (one odd construct
    near the top of a 3,000-line script is enough), so what counts is the share of the file's
    non-blank rows covered by top-level nodes that are definitions or have no error."""
    if not root.has_error:
        return True
    good = bytearray(len(lines))
    broken = [c for c in root.named_children if c.type == "ERROR"]
    for child in root.named_children:
        if child.type != "ERROR" and (not child.has_error or chunker.vouches(child)):
            first, last = child.start_point[0], chunker.end(child)
            good[first : last + 1] = b"\x01" * (last + 1 - first)
    for child in broken:  # a row an ERROR touches is broken, whatever else starts on it
        first, last = child.start_point[0], chunker.end(child)
        good[first : last + 1] = bytes(last + 1 - first)
    filled = [r for r, line in enumerate(lines) if line.strip()]
    return 2 * sum(good[r] for r in filled) >= len(filled)
