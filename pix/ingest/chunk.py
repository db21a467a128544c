"""Split a source file into retrieval chunks of whole lines.

Code is cut along its syntax tree (tree-sitter): each function, method and class is a unit
with its leading comments, decorators and attributes; code between definitions becomes
'module' chunks; units longer than `max_chars` are cut between statements, and every piece
that no longer shows the unit's signature carries it as `context`. Markdown and
reStructuredText are cut at headings; anything else falls back to overlapping line windows.
Small neighbours are merged afterwards so the index is not flooded with one-line chunks.
"""

from __future__ import annotations

import bisect
import itertools
import os
import re
from dataclasses import dataclass, field

from tree_sitter import Node

from pix.ingest import treesitter as ts

WINDOW_LINES = 40
WINDOW_OVERLAP = 5
CONTEXT_CHARS = 200
_MAX_DEPTH = 8  # deeper nesting is treated like plain lines when ranking split points
_NO_BREAK = 1 << 20  # rank of a row where no syntax node begins


@dataclass(frozen=True)
class Chunk:
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    kind: str  # 'function' | 'method' | 'class' | 'module' | 'section' | 'window'
    symbol: str | None  # dotted path of the unit ('Session.request'); None for module/window
    context: str | None  # enclosing signature line(s) of a piece cut from a longer unit
    text: str  # exactly lines start_line..end_line, joined with '\n'
    defines: tuple[str, ...]  # names defined in this chunk, in order, deduplicated


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
    **dict.fromkeys(("rb", "rake", "gemspec", "ru"), "ruby"),
    **dict.fromkeys(("md", "markdown", "mdown", "mkd"), "markdown"),
    "rst": "rst",
    **dict.fromkeys(("txt", "text"), "text"),
    **dict.fromkeys(("sh", "bash", "zsh", "fish"), "shell"),
    **dict.fromkeys(("yml", "yaml"), "yaml"),
    **dict.fromkeys(("json", "jsonc", "json5", "ipynb"), "json"),
    **dict.fromkeys(("html", "htm", "xhtml"), "html"),
    **dict.fromkeys(("css", "scss", "sass", "less"), "css"),
    **dict.fromkeys(("kt", "kts"), "kotlin"),
    **dict.fromkeys(("pl", "pm"), "perl"),
    **dict.fromkeys(("m", "mm"), "objc"),
    **dict.fromkeys(("ex", "exs"), "elixir"),
    **dict.fromkeys(("hs", "lhs"), "haskell"),
    **dict.fromkeys(("ml", "mli"), "ocaml"),
    **dict.fromkeys(("clj", "cljs", "edn"), "clojure"),
    **{ext: ext for ext in "toml ini cfg xml sql lua php swift scala dart r vue svelte".split()},
    "cs": "csharp",
    "proto": "protobuf",
    "tf": "terraform",
    "ps1": "powershell",
    "bat": "batch",
    "zig": "zig",
    "nim": "nim",
    "jl": "julia",
    "erl": "erlang",
    "cmake": "cmake",
    "gradle": "groovy",
    "groovy": "groovy",
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
}


def language_for_path(path: str) -> str | None:
    """'python','javascript','typescript','tsx','go','rust','java','c','cpp','ruby','markdown',
    'rst', or a plain text language name by extension ('text' for unknown)."""
    name = os.path.basename(path).lower()
    if name in _FILENAMES:
        return _FILENAMES[name]
    if name.startswith("dockerfile"):
        return "dockerfile"
    _, dot, ext = name.rpartition(".")
    return _EXTENSIONS.get(ext, "text") if dot else "text"


@dataclass
class _Unit:
    start: int  # rows are 0-based and inclusive throughout this module
    end: int
    kind: str
    symbol: str
    names: list[str]  # simple names this unit itself defines
    outer: Node  # the whole definition (wrappers included), for ranking split points
    sig: tuple[int, int]  # rows of the signature
    members: list[_Unit] = field(default_factory=list)

    def all_names(self) -> list[str]:
        return self.names + [n for m in self.members for n in m.all_names()]


@dataclass
class _Piece:
    start: int
    end: int
    kind: str
    symbol: str | None
    context: str | None
    defines: list[str]


class _File:
    """One file's lines with prefix sums, so any row range's size is O(1)."""

    def __init__(self, lines: list[str], max_chars: int, min_chars: int) -> None:
        self.lines = lines
        self.max = max_chars
        self.min = min_chars
        # cum[i] = size of rows 0..i-1 with one '\n' each; size(a, b) drops the last '\n'.
        self.cum = [0, *itertools.accumulate(len(line) + 1 for line in lines)]

    def size(self, a: int, b: int) -> int:
        return self.cum[b + 1] - self.cum[a] - 1

    def blank(self, a: int, b: int) -> bool:
        return all(not self.lines[r].strip() for r in range(a, b + 1))

    def last_fit(self, a: int, limit: int) -> int:
        """Largest row e <= limit with size(a, e) <= max (a - 1 if row a alone is too long)."""
        e = bisect.bisect_right(self.cum, self.cum[a] + self.max + 1) - 2
        return min(e, limit)

    def signature(self, rows: tuple[int, int]) -> str:
        out: list[str] = []
        total = 0
        for line in self.lines[rows[0] : rows[1] + 1]:
            if out and total + len(line) + 1 > CONTEXT_CHARS:
                break
            out.append(line[:CONTEXT_CHARS])
            total += len(out[-1]) + 1
        return "\n".join(out)

    def split(self, lo: int, hi: int, rank: dict[int, int]) -> list[tuple[int, int]]:
        """Cut rows lo..hi into pieces <= max chars at the best-ranked row (shallowest syntax
        boundary) that still leaves a piece of min chars; a row too long on its own stands alone."""
        out: list[tuple[int, int]] = []
        s = lo
        while s <= hi:
            e = self.last_fit(s, hi)
            if e >= hi:
                out.append((s, hi))
                break
            if e < s:
                out.append((s, s))
                s += 1
                continue
            best, best_rank = e + 1, _NO_BREAK + 1
            floor = self.cum[s] + self.min + 1
            for r in range(e + 1, s, -1):  # latest first, so ties keep the biggest piece
                if self.cum[r] < floor:
                    break
                r_rank = rank.get(r, _NO_BREAK)
                if r_rank < best_rank:
                    best, best_rank = r, r_rank
            out.append((s, best - 1))
            s = best
        return out

    def windows(self, lo: int, hi: int) -> list[tuple[int, int]]:
        """Overlapping windows of at most WINDOW_LINES lines, ending at a blank line if one is
        in the second half so paragraphs stay together."""
        out: list[tuple[int, int]] = []
        s = lo
        while True:
            e = max(s, self.last_fit(s, min(hi, s + WINDOW_LINES - 1)))
            if out and e <= out[-1][1]:  # the overlap left no room for new lines
                s = out[-1][1] + 1
                e = max(s, self.last_fit(s, min(hi, s + WINDOW_LINES - 1)))
            if e < hi:
                for r in range(e, s + (e - s) // 2, -1):
                    if not self.lines[r].strip():
                        e = r
                        break
            out.append((s, e))
            if e >= hi:
                return out
            # Overlap by up to WINDOW_OVERLAP lines, but never more than a quarter of the window.
            overlap = min(WINDOW_OVERLAP, (e - s + 1) // 4)
            while overlap and self.size(e + 1 - overlap, e) > self.max // 4:
                overlap -= 1
            s = e + 1 - overlap


class _CodeChunker:
    def __init__(self, f: _File, lang: str) -> None:
        self.f = f
        self.lang = lang
        self.spec = ts.SPECS[lang]
        self._kids: dict[int, tuple[list[Node], list[int]]] = {}

    # -- finding units ---------------------------------------------------------------------

    def items(self, node: Node) -> list[Node]:
        """Children of a container in source order, its body (and enum bodies) flattened."""
        body = node.child_by_field_name("body")
        out: list[Node] = []
        for child in node.named_children:
            if child == body or child.type in ts.FLATTEN:
                out.extend(_flat(child))
            else:
                out.append(child)
        return out

    def resolve(self, node: Node) -> tuple[Node, Node | None] | None:
        """(definition node, its name node if not the usual one) for an item defining something."""
        spec, kind = self.spec, node.type
        if kind in spec.funcs or kind in spec.classes or kind in spec.transparent:
            return node, None
        if kind in spec.wrappers:
            for child in node.named_children:
                found = self.resolve(child)
                if found is not None:
                    return found
            return None
        value = name = None
        if kind in spec.variables:
            decls = [c for c in node.named_children if c.type == "variable_declarator"]
            if len(decls) == 1:
                value, name = decls[0].child_by_field_name("value"), decls[0]
        elif kind in spec.fields:
            value, name = node.child_by_field_name("value"), node
        if value is None or value.type not in ts.FUNCTION_VALUES or name is None:
            return None
        return value, name.child_by_field_name("name") or name.child_by_field_name("property")

    def collect(self, items: list[Node], prefix: str, in_class: bool) -> list[_Unit]:
        units: list[_Unit] = []
        glue_start, glue_end = -1, -2  # rows of the comment/attribute run just above
        prev_end = -1
        for item in items:
            first = item.start_point[0]
            if item.type in ts.PREFIX:
                if first > prev_end:  # a comment trailing code on its line belongs to that code
                    glue_start = glue_start if glue_end >= first - 1 else first
                    glue_end = ts.end_row(item)
                prev_end = ts.end_row(item)
                continue
            start = glue_start if glue_end >= first - 1 else first
            glue_end = -2
            prev_end = ts.end_row(item)
            found = self.resolve(item)
            if found is None:
                continue
            node, name_node = found
            if node.type in self.spec.transparent:
                label = "" if node.type.startswith("preproc") else _name_field(node)
                inner = f"{prefix}{label}." if label else prefix
                units.extend(self.collect(self.items(node), inner, in_class))
            else:
                unit = self.make_unit(item, node, name_node, start, prefix, in_class)
                if unit is not None:
                    units.append(unit)
        return units

    def make_unit(
        self,
        outer: Node,
        node: Node,
        name_node: Node | None,
        start: int,
        prefix: str,
        in_class: bool,
    ) -> _Unit | None:
        if name_node is not None:
            names = [ts.clean_name(ts.node_text(name_node))]
        else:
            names = ts.def_names(node, self.lang)
        names = [n for n in names if n]
        if not names:
            return None
        is_class = node.type in self.spec.classes or node.type == "class_expression"
        if is_class:
            kind = "class"
        elif in_class or "." in names[0]:  # Go receivers and C++ 'Foo::bar' qualify the name
            kind = "method"
        else:
            kind = "function"
        unit = _Unit(
            start=start,
            end=max(start, ts.end_row(outer)),
            kind=kind,
            symbol=prefix + names[0],
            names=[n.rsplit(".", 1)[-1] for n in names],
            outer=outer,
            sig=_signature_rows(node, name_node),
        )
        if is_class:
            unit.members = self.collect(self.items(node), unit.symbol + ".", True)
        return unit

    # -- turning units into pieces ---------------------------------------------------------

    def chunk(self, root: Node) -> list[_Piece]:
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
    ) -> list[_Piece]:
        """Pieces for rows lo..hi: each unit laid out on its own, the rows between units cut
        as `kind`/`symbol` code (a class header and fields, or module code). The first piece
        shows the enclosing signature itself, so only later ones carry `ctx`. Rows up to
        `head_end` (comments, decorators, signature) are not cut apart if avoidable."""
        pieces: list[_Piece] = []

        def gap(a: int, b: int) -> None:
            rank = self.ranks(node, a, b)
            for row in range(a + 1, min(b, head_end) + 1):
                rank.pop(row, None)
            for s, e in self.f.split(a, b, rank):
                pieces.append(_Piece(s, e, kind, symbol, ctx if pieces else first_ctx, []))

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

    def unit_pieces(self, unit: _Unit, start: int, end: int, parent: str | None) -> list[_Piece]:
        if self.f.size(start, end) <= self.f.max:
            return [_Piece(start, end, unit.kind, unit.symbol, parent, unit.all_names())]
        sig = self.f.signature(unit.sig)
        # Enclosing signatures first, unless that would bury the unit's own one.
        own = f"{parent}\n{sig}" if parent and len(parent) + len(sig) < 2 * CONTEXT_CHARS else sig
        pieces = self.layout(
            unit.members, start, end, unit.outer, unit.kind, unit.symbol, parent, own, unit.sig[1]
        )
        pieces[0].defines[:0] = unit.names
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
                block = child.type in ts.BLOCKS
                d = depth if block else depth + 1
                if last >= lo:
                    if not block and first >= lo and first != glued and rank.get(first, 99) > d:
                        rank[first] = d
                    if last > first and d < _MAX_DEPTH:
                        stack.append((self.children_from(child, lo), d))
                own_line = child.type in ts.PREFIX and first > prev_end
                prev_end = ts.end_row(child)
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


def _flat(node: Node) -> list[Node]:
    out: list[Node] = []
    for child in node.named_children:
        out.extend(_flat(child) if child.type in ts.FLATTEN else [child])
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
    while before is not None and before.type in ts.PREFIX:
        before = before.prev_sibling
    if before is not None and ts.end_row(before) < last:
        last = ts.end_row(before)
    return first, max(first, last)


def _merge(f: _File, pieces: list[_Piece]) -> list[_Piece]:
    """Fold small neighbours together while the result stays within max chars."""
    out: list[_Piece] = []
    for p in pieces:
        if out:
            q = out[-1]
            small = (
                f.size(q.start, q.end) < f.min
                or f.size(p.start, p.end) < f.min
                or f.blank(p.start, p.end)
                or f.blank(q.start, q.end)
            )
            if small and p.start == q.end + 1 and f.size(q.start, p.end) <= f.max:
                if f.size(p.start, p.end) > f.size(q.start, q.end):
                    q.kind, q.symbol, q.context = p.kind, p.symbol, p.context
                q.end = p.end
                q.defines.extend(p.defines)
                continue
        out.append(p)
    return out


# -- prose -------------------------------------------------------------------------------------

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_LIST_OR_QUOTE = re.compile(r"\s*([-*+>]|\d+[.)])(\s|$)")
_RST_ADORN = re.compile(r"""([=\-~^"'`#*+:])\1*[ \t]*$""")


def _markdown_headings(lines: list[str]) -> list[tuple[int, str]]:
    heads: list[tuple[int, str]] = []
    fence = ""
    begin = 0
    if lines and lines[0].strip() == "---":  # YAML front matter: its closing '---' is no heading
        ends = (j + 1 for j in range(1, len(lines)) if lines[j].strip() in ("---", "..."))
        begin = next(ends, 1)
    for i in range(begin, len(lines)):
        line = lines[i]
        m = _FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = ""
            continue
        if m:
            fence = m.group(1)
            continue
        m = _ATX.match(line)
        if m:
            heads.append((i, (m.group(2) or "").strip()))
            continue
        prev = lines[i - 1] if i else ""
        if (
            _SETEXT.match(line)
            and prev.strip()
            and not _ATX.match(prev)
            and not _FENCE.match(prev)
            and not _LIST_OR_QUOTE.match(prev)
            and not _SETEXT.match(prev)
            and (not heads or heads[-1][0] != i - 1)
        ):
            heads.append((i - 1, prev.strip()))
    return heads


def _rst_headings(lines: list[str]) -> list[tuple[int, str]]:
    """Rows of section titles: a title line under- (and maybe over-) lined with one repeated
    punctuation character, at least as long as the title."""
    heads: list[tuple[int, str]] = []
    taken = -1  # last row already used as an adornment
    for i in range(len(lines) - 1):
        title, under = lines[i], lines[i + 1]
        if i <= taken or not title.strip() or not _RST_ADORN.match(under):
            continue
        over = i - 1 > taken and lines[i - 1].rstrip() == under.rstrip()
        if (
            not _RST_ADORN.match(title)
            and len(under.rstrip()) >= len(title.rstrip())
            and (over or not title[0].isspace())
            and (over or i == 0 or not lines[i - 1].strip())
        ):
            heads.append((i - 1 if over else i, title.strip()))
            taken = i + 1
    return heads


def _sections(f: _File, heads: list[tuple[int, str]]) -> list[_Piece]:
    n = len(f.lines)
    bounds = [(0, None, None)] if not heads or heads[0][0] > 0 else []
    bounds += [(row, title or None, f.lines[row]) for row, title in heads]
    pieces: list[_Piece] = []
    for k, (start, title, head) in enumerate(bounds):
        end = bounds[k + 1][0] - 1 if k + 1 < len(bounds) else n - 1
        for s, e in f.windows(start, end) if f.size(start, end) > f.max else [(start, end)]:
            ctx = head[:CONTEXT_CHARS] if head is not None and s != start else None
            pieces.append(_Piece(s, e, "section", title, ctx, []))
    return pieces


# -- entry point -------------------------------------------------------------------------------


def chunk_file(text: str, path: str, max_chars: int = 1000, min_chars: int = 200) -> list[Chunk]:
    """Split one file's text into chunks."""
    if not text.strip():
        return []
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    f = _File(lines, max(1, max_chars), min_chars)
    lang = language_for_path(path) or "text"
    pieces: list[_Piece] | None = None
    if lang in ts.SPECS:
        pieces = _code_pieces(f, lang, text)
    elif lang == "markdown":
        pieces = _merge(f, _sections(f, _markdown_headings(lines)))
    elif lang == "rst":
        pieces = _merge(f, _sections(f, _rst_headings(lines)))
    if pieces is None:
        pieces = [_Piece(s, e, "window", None, None, []) for s, e in f.windows(0, len(lines) - 1)]
    return [
        Chunk(
            start_line=p.start + 1,
            end_line=p.end + 1,
            kind=p.kind,
            symbol=p.symbol,
            context=p.context,
            text="\n".join(lines[p.start : p.end + 1]),
            defines=tuple(dict.fromkeys(p.defines)),
        )
        for p in pieces
    ]


def _code_pieces(f: _File, lang: str, text: str) -> list[_Piece] | None:
    data = text.encode("utf-8", "replace")
    tree = ts.parse(lang, data)
    if tree is not None and tree.root_node.has_error and lang == "c":
        # '.h' is shared with C++; a C++ header only parses cleanly with the C++ grammar.
        retry = ts.parse("cpp", data)
        if retry is not None and not retry.root_node.has_error:
            tree, lang = retry, "cpp"
    if tree is None or not _parsed_enough(tree.root_node, len(f.lines)):
        return None
    return _merge(f, _CodeChunker(f, lang).chunk(tree.root_node))


def _parsed_enough(root: Node, n_lines: int) -> bool:
    """False when syntax errors swallow most of the file, where line windows serve better."""
    if root.type == "ERROR":
        return False
    if not root.has_error:
        return True
    broken = sum(ts.end_row(c) - c.start_point[0] + 1 for c in root.children if c.type == "ERROR")
    return broken * 2 <= n_lines
