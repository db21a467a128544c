"""The discover response as text for people (the JSON is the response itself)."""

from __future__ import annotations

from pix.output.pathtext import shown_path


def _incomplete_line(hypothesis: dict) -> str:
    """One line per hypothesis; roots with the same status and reason share a clause."""
    groups: dict[tuple[str, str | None], list[str]] = {}
    for cell in hypothesis["cells"]:
        groups.setdefault((cell["status"], cell.get("reason")), []).append(shown_path(cell["root"]))
    clauses = [
        f"{status} in {', '.join(roots)}" + (f" ({reason})" if reason else "")
        for (status, reason), roots in groups.items()
    ]
    return f"incomplete: {hypothesis['id']}: " + "; ".join(clauses)


def render_text(response: dict, from_flags: bool = False) -> str:
    """The response for people. `from_flags`: the request came from the CLI's flags, so a hint
    names the flag (--max-candidates) rather than the JSON field (maxCandidates)."""
    out: list[str] = []
    cov = response["coverage"]
    snap = response["snapshot"]
    out.append(
        f"{len(response['request']['queries'])} hypotheses x {len(cov['roots'])} roots: "
        f"{cov['complete']}/{cov['cells']} cells complete, {response['totalCandidates']} "
        f"candidate file(s) (snapshot {snap['id']}, {response['elapsedMs']:.0f} ms)"
    )
    for c in response["candidates"]:
        stale = "  [stale]" if c["stale"] else ""
        out.append(
            f"{c['rank']:>3}. {shown_path(c['path'])}  [{', '.join(c['hypotheses'])}]  "
            f"roots: {', '.join(map(shown_path, c['roots']))}  matches: {c['matchCount']}{stale}"
        )
        for e in c["excerpts"]:
            out.append(f"       {shown_path(c['path'])}:{e['line']}  {e['text']}")
    shown = len(response["candidates"])
    if response["totalCandidates"] > shown:
        knob = "--max-candidates" if from_flags else "maxCandidates"
        out.append(f"     … {response['totalCandidates'] - shown} more (raise {knob})")
    nxt = response["nextRead"]
    if nxt:
        lines = f"lines {nxt['startLine']}-{nxt['endLine']}"
        out.append(f"next read: {shown_path(nxt['path'])} {lines}")
    else:
        out.append("next read: none (no candidate)")
    for h in response["incompleteHypotheses"]:
        out.append(_incomplete_line(h))
    if cov["absenceEvidence"]:
        pairs = ", ".join(
            f"{a['hypothesis']} in {shown_path(a['root'])}" for a in cov["absenceEvidence"]
        )
        out.append(f"absent (complete search, no match): {pairs}")
    for h in cov["hypotheses"]:
        n = h["narrowing"]
        if n["method"] == "scan":
            out.append(f"scan: {h['id']}: {n['reason']}")
    for r in cov["roots"]:
        out.append("root " + _root_line(r))
    if response["stale"]["count"]:
        files = ", ".join(map(shown_path, response["stale"]["files"]))
        more = " …" if response["stale"]["truncated"] else ""
        count = response["stale"]["count"]
        out.append(f"stale: {count} file(s) changed since indexing: {files}{more}")
    if "matrix" in response:
        out.append("status matrix:")
        for cell in response["matrix"]:
            mark = "complete" if cell["complete"] else "incomplete"
            out.append(
                f"  {cell['hypothesis']} x {shown_path(cell['root'])}: {cell['status']} ({mark}), "
                f"{cell['matchedFiles']} file(s), {cell['matchingLines']} line(s), "
                f"{cell['searchedFiles']}/{cell['candidateFiles']} verified"
            )
    return "\n".join(out) + "\n"


def _root_line(r: dict) -> str:
    root = shown_path(r["root"])
    if r["status"] != "searched":
        return f"{root}: {r['status']}: {r['diagnostic']['message']}"
    f = r["filter"]
    text = f"{root}: {r['files']} file(s) searched, filter {f['decision']}"
    if f["excluded"]:
        left = ", ".join(
            f"{cat} {n} ({', '.join(map(shown_path, f['excludedFolders'][cat]))})"
            for cat, n in f["excluded"].items()
        )
        text += f", left out: {left}"
    if r["globExcluded"]:
        text += f", {r['globExcluded']} outside the globs"
    if r["indexSkipped"]:
        text += ", not indexed: " + ", ".join(f"{k} {v}" for k, v in r["indexSkipped"].items())
    unsearched = r["unsearched"]
    if unsearched["count"]:
        names = ", ".join(f"{shown_path(f['path'])} ({f['reason']})" for f in unsearched["files"])
        more = " …" if unsearched["truncated"] else ""
        text += f"; never searched, so its cells are partial: {names}{more}"
    return text
