"""Human text for query results: a header line per result, then its text.

The same plain rendering is what the character budget measures and what `--copy` puts on the
clipboard; colour (headers, and syntax highlighting when pygments knows the language) is added
only for a terminal and never counted.
"""

from __future__ import annotations

from pix.output.pathtext import shown_path
from pix.output.result import Result

RESET = "\033[0m"
HEADER = "\033[1;36m"
DIM = "\033[2m"


def header(result: Result) -> str:
    if result.mode == "file":
        where = shown_path(result.path)
    else:
        where = f"{shown_path(result.path)}:{result.start_line}-{result.end_line}"
    if result.repo:  # a workspace answer: which repository the path is relative to
        where = f"{result.repo}: {where}"
    label = f" {result.kind} {result.symbol}" if result.mode == "chunk" and result.symbol else ""
    label += _defines(result)
    marker = " [truncated]" if result.truncated else ""
    return f"── {where}  score {result.score:.4f}{label}{marker}{_copies(result.copies)}"


def _defines(result: Result) -> str:
    """Where the query's names are defined in the chunk, as path:line an editor opens."""
    if not result.defines:
        return ""
    path = shown_path(result.path)
    return " (defines " + ", ".join(f"{n} at {path}:{line}" for n, line in result.defines) + ")"


# A header names this many copies at most: a vendored tree copied ten times must not make the
# header (which the budget counts) longer than the result.
HEADER_COPIES = 3


def _copies(paths: tuple[str, ...]) -> str:
    if not paths:
        return ""
    more = len(paths) - HEADER_COPIES
    shown = ", ".join(map(shown_path, paths[:HEADER_COPIES]))
    shown += f" and {more} more" if more > 0 else ""
    return f" (same text at {shown})"


def body(result: Result) -> str:
    """Context before, text, context after, as one excerpt; '' without content."""
    if result.text is None:
        return ""
    parts = [result.context_before or "", result.text, result.context_after or ""]
    text = "".join(p if p.endswith("\n") or not p else p + "\n" for p in parts if p)
    return text


def render_result(result: Result) -> str:
    """One result as plain text, ending in a newline."""
    return header(result) + "\n" + body(result)


def render_results(results: list[Result]) -> str:
    """All results, separated by a blank line."""
    return "\n".join(render_result(r) for r in results)


def colorize(results: list[Result]) -> str:
    """The terminal form of `render_results`: coloured headers, highlighted code."""
    blocks = []
    for r in results:
        text = body(r)
        if text:
            text = _highlight(text, r.language)
        blocks.append(f"{HEADER}{header(r)}{RESET}\n{text}")
    return "\n".join(blocks)


def _highlight(text: str, language: str | None) -> str:
    try:
        from pygments import highlight
        from pygments.formatters import TerminalFormatter
        from pygments.lexers import get_lexer_by_name
        from pygments.util import ClassNotFound
    except ImportError:
        return text
    try:
        lexer = get_lexer_by_name(language or "text", stripnl=False, ensurenl=False)
    except ClassNotFound:
        return text
    return highlight(text, lexer, TerminalFormatter())


def from_response(response: dict) -> list[Result]:
    """Results of a query response (any view) back in the shape the renderer reads."""
    out = []
    for item in response["results"]:
        context = item.get("context") or {}
        out.append(
            Result(
                mode=response["mode"],
                path=item["file"] if response["mode"] == "file" else item["path"],
                blob="",
                score=item["score"],
                rel=item.get("rel", 0.0),
                role=item.get("role", ""),
                start_line=item.get("startLine"),
                end_line=item.get("endLine"),
                kind=item.get("kind"),
                symbol=item.get("symbol"),
                text=item.get("text"),
                context_before=context.get("before"),
                context_after=context.get("after"),
                truncated=item.get("truncated", False),
                language=None,
                repo=item.get("repo"),
                copies=tuple(item.get("copies", ())),
                defines=tuple((d["name"], d["line"]) for d in item.get("definitions", ())),
            )
        )
    return out


SUBJECT_CHARS = 72  # of a commit's subject on an explanation's line (the JSON has it whole)


def _commit_said(commit: dict) -> str:
    subject = commit["subject"]
    if len(subject) > SUBJECT_CHARS:
        subject = subject[: SUBJECT_CHARS - 3] + "..."
    return f" ({commit['sha'][:8]} {subject!r})"


def explain_line(item: dict) -> str:
    """`--explain` for people: the prior, then each channel's rank, raw score, weight and
    contribution to the fused score, on one line under the result's header."""
    ex = item["explain"]
    rank = ex.get("rank", {})
    recent = ""
    if "history" in rank:  # the history prior: commits in the year before the snapshot
        recent = f", {rank['commits']} commit(s) in the past year: x{rank['history']:.3g}"
    parts = [f"fused {ex['fused']:.4f} x prior {ex['prior']:g} ({ex['role']}{recent})"]
    for name, ch in ex["channels"].items():
        # the log channel: the past commit that best matched, as `git show` takes it
        said = _commit_said(ch["commits"][0]) if ch.get("commits") else ""
        parts.append(
            f"{name} #{ch['rank']} score {ch['score']:.3f} weight {ch['weight']:g} "
            f"+{ch['contribution']:.4f}{said}"
        )
    # The ranking stage's parts (pix/retrieve/rank.py), so that the line adds up: a clear
    # lead inside the fused score, and on a file (in chunk mode, its strongest chunk) the
    # file's other chunks and the file steps after the prior.
    if rank.get("standout"):
        parts.append(f"standing out +{rank['standout']:.4f}")
    if rank.get("evidence"):
        parts.append(f"file evidence +{rank['evidence']:.4f} ({rank['chunks']} chunks)")
    if rank.get("outline"):  # pix/retrieve/outline.py: an issue report's file as a whole
        parts.append(f"outline +{rank['outline']:.4f}")
    if rank.get("tested"):  # pix/retrieve/tested.py: a test of this file matched
        parts.append(f"its test {shown_path(rank['testedBy'])} +{rank['tested']:.4f}")
    if rank.get("titled"):  # pix/retrieve/titled.py: an issue report's title names this file
        parts.append(f"named in the title +{rank['titled']:.4f}")
    if rank.get("imported"):  # pix/retrieve/imported.py: the first file imports this one
        parts.append(f"imported by the first file +{rank['imported']:.4f}")
    return "   explain: " + "; ".join(parts) + "\n"


def _with_explain(blocks: list[str], response: dict) -> list[str]:
    return [
        block.replace("\n", "\n" + explain_line(item), 1) if "explain" in item else block
        for block, item in zip(blocks, response["results"], strict=True)
    ]


def render_response(response: dict) -> str:
    blocks = _with_explain([render_result(r) for r in from_response(response)], response)
    text = "\n".join(blocks)
    if "explain" in response:
        ex = response["explain"]
        weights = ", ".join(f"{k} {v:g}" for k, v in ex["weights"].items())
        text += (
            f"(query shape {ex['shape']}, {ex['fusion']} fusion, weights {weights}, "
            f"priors {'on' if ex['priors'] else 'off'}"
            f"{', history prior' if ex.get('history') else ''}, {ex['candidates']} candidates)\n"
        )
    return text + omitted_line(response) if response["results"] else no_results(response)


RAISE_BUDGET = "raise --max-characters (0: no limit) to see"


def _cut_files(omitted: dict) -> str:
    """': a.py, b.py', the files the budget cut (file mode), or ''."""
    files = omitted.get("budgetFiles")
    return ": " + ", ".join(map(shown_path, files)) if files else ""


def no_results(response: dict) -> str:
    """'no results', and when the budget cut every one of them, what it cut and how to lift
    it (a small --max-characters must not read as nothing found)."""
    omitted = response["omitted"]
    if not omitted["budget"]:
        return "no results\n"
    more = f" ({omitted['top']} more below top)" if omitted["top"] else ""
    return (
        f"no results shown: all {omitted['budget']} cut by the budget{_cut_files(omitted)}"
        f"{more}; {RAISE_BUDGET} them\n"
    )


def omitted_line(response: dict) -> str:
    """What top and the budget left out (naming the files a budget cut) and, if the budget
    cut anything, how to lift it; '' when nothing was left out."""
    omitted = response["omitted"]
    cut = omitted["budget"] or any(r.get("truncated") for r in response["results"])
    if not (omitted["top"] or cut):
        return ""
    lift = f"; {RAISE_BUDGET} all" if cut else ""
    return (
        f"({omitted['top']} more below top, {omitted['budget']} cut by the budget"
        f"{_cut_files(omitted)}{lift})\n"
    )


def colorize_response(response: dict) -> str:
    if not response["results"]:
        return no_results(response)
    if any("explain" in item for item in response["results"]):
        return render_response(response)  # explanations read best without highlighting
    return colorize(from_response(response)) + omitted_line(response)


def index_summary(report: dict) -> str:
    """`pix index`'s line on stderr, from its JSON report (and a second one naming the
    repositories inside the tree that it leaves to their own index)."""
    line = (
        f"indexed {report['files']} files ({report['newBlobs']} new, "
        f"{sum(report['skipped'].values())} skipped), {report['chunksAdded']} chunks added, "
        f"{report['staticVectors']} static, {report['embedded']} embedded, "
        f"{report['embedPending']} pending -> {report['db']}"
    )
    if subs := report["skipped"].get("submodule"):
        what = (
            f"{subs} submodules or nested repositories are"
            if subs > 1
            else "1 submodule or nested repository is"
        )
        line += (
            f"\n{what} not indexed: index each on its own, and ask them together with a "
            "workspace (pix.toml)"
        )
    return line


def render_status(report: dict) -> str:
    lines = [f"database  {report['db']}  ({report['databaseBytes'] / 1e6:.1f} MB)"]
    model = report["model"]
    lines.append(
        f"model     {model.get('name')} ({model.get('dims')} dims, {model.get('pooling')})"
    )
    lines.append(
        f"content   {report['blobs']} blobs, {report['sourceBytes'] / 1e6:.1f} MB source, "
        f"{report['chunks']} chunks, {report['vectors']} vectors"
    )
    for snap in report["snapshots"]:
        where = snap["commit"][:12] if snap["commit"] else "-"
        branch = f" on {snap['branch']}" if snap["branch"] else ""
        dirty = " (dirty)" if snap["dirty"] else ""
        skipped = ", ".join(f"{k} {v}" for k, v in snap["skipped"].items()) or "none"
        lines.append(
            f"snapshot  #{snap['id']} {snap['kind']} {where}{branch}{dirty} "
            f"at {snap['indexedAt']}: "
            f"{snap['files']} files, {snap['chunks']} chunks, "
            f"{snap['embeddedShare'] * 100:.0f}% embedded"
            + (f" ({snap['staticOnly']} static only)" if snap["staticOnly"] else "")
            + f"; skipped: {skipped}"
        )
    tree = report["workTree"]
    if tree["indexed"]:
        state = (
            f"{tree['changed']} file(s) changed since indexed"
            if tree["changed"]
            else "unchanged since indexed"
        )
        lines.append(f"work tree {state}")
    else:
        lines.append("work tree not indexed")
    return "\n".join(lines) + "\n"


def pack_summary(response: dict) -> str:
    """One line for stderr under a packet: what it holds, what was left out, what was masked."""
    spans = response["spans"]
    budget, omitted = response["budget"], response["omitted"]
    files = len({s["path"] for s in spans})
    cut = " (the last cut to fit)" if any(s["cut"] for s in spans) else ""
    line = (
        f"pix pack: {len(spans)} span(s) from {files} file(s){cut}, "
        f"{budget['used']:,} of {budget['limit']:,} {budget['unit']}; left out "
        f"{omitted['budget']} for budget, {omitted['duplicate']} duplicate, "
        f"{omitted['lowScore']} low score"
    )
    redacted = response["redactionSummary"]
    total, revealed = redacted["total"], redacted["revealed"]
    if revealed == total and total:
        line += f"; {total} secret(s) SHOWN UNMASKED"
    elif revealed:
        line += f"; {revealed} secret(s) SHOWN UNMASKED, {total - revealed} masked"
    elif total:
        line += f"; {total} secret(s) masked"
    return line
