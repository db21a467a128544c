"""A final comparison on the best hybrid peer's own public benchmark, never development data.

    python -m bench.peer_bench --semble DIR [--mirrors DIR] [--repos a,b] [--static-only]
                               [--jobs 2] [--dump FILE] [--published FILE]

semble (MinishLab/semble) publishes the benchmark issue 11's first figures come from: pinned
repositories (`benchmarks/repos.json`: name, language, url, revision, and the folder of it that
is indexed, `benchmark_root`) and, per repository, hand-written questions
(`benchmarks/annotations/<name>.json`: query, category symbol / semantic / architecture, the
`relevant` and `secondary` files, paths from the repository's top). DIR is a clone of
MinishLab/semble or its `benchmarks/` folder; nothing of it is committed here. Issue 11 keeps
public benchmarks out of development data: this bench is for side-by-side figures only, and a
ranking change is judged on bench/devsets, never on what this prints.

Each repository's folder at its pinned revision, at its place in the tree, becomes a one-commit
repository of its own (bench.devcorpora.snapshot), indexed by pix (cached as `peer-<name>`
beside devbench's databases; `--static-only`: keyword phase and static vectors, what pix answers
seconds after `pix index` starts) and asked of pix and of the peers run here: plain BM25 over
files (bench.baselines.BM25Files) and semble's own chunker, BM25 and ranking stage without its
model (bench.baselines.SembleLexical; its wheel downloads the model from a hub this machine
cannot reach, so semble's hybrid is not run). Two scorings. At file level, each system's first
10 files, nDCG@10 (binary gains) and MRR@10 over the questions with a gold file that pix indexed
(a file pix skips is dropped for every system, which can only favour pix). And as semble's own
runner scores: a system's first 10 chunks (pix in chunk mode, semble's lexical side as it
searches), each target at the place of the first chunk of its file that overlaps its lines if it
names lines, every question counted (one with no target in the index scores 0), the mean of each
repository, then of repositories; beside the figures semble publishes for its hybrid
(`--published`: one of its `benchmarks/results/semble-hybrid-*.json`; measured by semble on its
machine, perhaps over other versions of some annotation files). Prints each repository, the
published comparison, and each system by language and by category (each question once). A
repository whose pinned revision or folder the mirror lacks is left out and named.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import NamedTuple

from bench import baselines, devcorpora, metrics
from bench.devbench import BASELINE, SEMBLE, Run, Table, build_db, rank_pix
from pix.query import QueryEngine
from pix.request import QueryRequest

PIX = "pix"
PIX_STATIC = "pix static-only"
CHUNKS = ", chunk mode"  # the files of a chunk-mode answer (the CLI's and MCP's default)
# semble's own runner scores a system's first 10 chunks: a target file counts at the place of
# its first chunk there (another file's chunks before it push it down), nDCG@10 over the
# targets its index holds. These systems are scored so, beside semble's published figures.
AS_SEMBLE = " (semble's scoring)"
DEPTH = 10
PUBLISHED = "semble hybrid, published nDCG@10"


def published_figures(path: str | None) -> dict[str, dict]:
    """Each repository's row in one of semble's published result files
    (`benchmarks/results/semble-hybrid-*.json`: {"repos": [{"repo", "ndcg10", "by_category"}]})."""
    if not path:
        return {}
    rows = json.loads(Path(path).read_text(encoding="utf-8"))["repos"]
    return {row["repo"]: row for row in rows}


# The files pix indexed in the snapshot: a gold file pix skips counts for no system.
INDEXED = "SELECT f.path FROM snapshot_file f JOIN snapshot s ON s.id = f.snapshot_id"
METRICS = ("ndcg@10", "mrr@10")


class Spec(NamedTuple):
    """One repository of the benchmark (repos.json)."""

    name: str
    language: str
    repo: str  # owner/name
    revision: str
    folder: str | None


def pinned(spec: Spec) -> bool:
    """Whether the mirror holds the spec's revision and its folder there; says why not."""
    why = None
    if not devcorpora.has_commit(spec.repo, spec.revision):
        why = f"no commit {spec.revision[:12]}"
    elif spec.folder:
        git = ["git", "--git-dir", str(devcorpora.mirror(spec.repo)), "cat-file", "-e"]
        there = subprocess.run([*git, f"{spec.revision}:{spec.folder}"], capture_output=True)
        why = None if there.returncode == 0 else f"no {spec.folder} at its pin"
    if why:
        print(f"  {spec.name}: {spec.repo} has {why} in its mirror; left out",
              file=sys.stderr, flush=True)  # fmt: skip
    return why is None


def benchmark_dir(path: str) -> Path:
    """The folder holding repos.json and annotations/: DIR itself or DIR/benchmarks."""
    root = Path(path).expanduser()
    for candidate in (root, root / "benchmarks"):
        if (candidate / "repos.json").is_file() and (candidate / "annotations").is_dir():
            return candidate
    raise SystemExit(f"peer_bench: no repos.json and annotations/ in {root} or {root}/benchmarks")


def load_specs(folder: Path) -> dict[str, Spec]:
    """The repositories that have both a repos.json entry and an annotation file."""
    specs = {}
    for item in json.loads((folder / "repos.json").read_text(encoding="utf-8")):
        if not (folder / "annotations" / f"{item['name']}.json").is_file():
            continue
        url = item["url"].removesuffix(".git").rstrip("/")
        repo = "/".join(url.split("/")[-2:])
        specs[item["name"]] = Spec(
            item["name"], item["language"], repo, item["revision"], item.get("benchmark_root")
        )
    return specs


def load_questions(folder: Path, name: str) -> list[dict]:
    """One repository's questions: query, category, targets (relevant then secondary, each
    [path, first line, last line], the lines None for a whole file)."""
    out = []
    for item in json.loads((folder / "annotations" / f"{name}.json").read_text(encoding="utf-8")):
        targets = [target(t) for t in (*item.get("relevant", []), *item.get("secondary", []))]
        category = item.get("category") or infer_category(item["query"])
        out.append({"query": item["query"], "category": category, "targets": unique(targets)})
    return out


def target(raw: str | dict) -> list:
    """[path, start_line, end_line] of an annotation's target (a path, or a mapping with one)."""
    if isinstance(raw, str):
        return [raw.replace("\\", "/").removeprefix("./"), None, None]
    path = str(raw["path"]).replace("\\", "/").removeprefix("./")
    lines = [raw.get("start_line"), raw.get("end_line")]
    return [path, *(int(n) if n is not None else None for n in lines)]


def infer_category(query: str) -> str:
    """semble's rule for a question without a category: one word asks for a symbol, a
    question opening with "how" about the architecture, the rest about semantics."""
    if " " not in query.strip():
        return "symbol"
    return "architecture" if query.lower().startswith("how ") else "semantic"


def unique(targets: list[list]) -> list[list]:
    seen: dict[tuple, list] = {}
    for t in targets:
        seen.setdefault(tuple(t), t)
    return list(seen.values())


class Asked(NamedTuple):
    """One repository asked: each system's (ranking, gold) per question; `questions` (query,
    category) are those with a gold file pix indexed, which the file-level systems are asked,
    `every` all of them, which the systems scored as semble scores are asked (a question with
    no target in the index scores 0 there, as in semble's runner); index and ask seconds."""

    runs: dict[str, list[tuple[list, list]]]
    questions: list[dict]
    every: list[dict]
    index_s: float
    ask_s: float

    @property
    def left_out(self) -> int:
        return len(self.every) - len(self.questions)

    def questions_of(self, system: str) -> list[dict]:
        """The questions `system`'s runs answer, in their order."""
        return self.every if system.endswith(AS_SEMBLE) else self.questions


def ask_repo(
    spec: Spec, folder: str, mirrors: str | None, static_only: bool, key: str | None = None
) -> Asked:
    """Index one repository's folder (cached) and ask its questions of every system. `key`:
    the parent's indexer key, so a worker files its databases under the code it runs."""
    devcorpora.set_mirrors(mirrors)
    devcorpora.use_indexer_key(key)
    root = devcorpora.snapshot(spec.repo, spec.revision, spec.folder)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pix-peer-") as tmp:
        run = Run(Path(tmp), True, not static_only, set(), 0, static_only)
        db = build_db(f"peer-{spec.name}", root, run, run.embed)
    index_s = time.perf_counter() - started
    started = time.perf_counter()
    engine = QueryEngine(db=str(db), cwd=str(root))
    try:
        with engine.store.read():
            indexed = {p for (p,) in engine.store.conn.execute(INDEXED)}
        every = []  # (question, its targets in files pix indexed)
        for q in load_questions(Path(folder), spec.name):
            held = [t for t in q["targets"] if t[0] in indexed]
            every.append(({"query": q["query"], "category": q["category"]}, held))
        kept = [(q, list(dict.fromkeys(t[0] for t in held))) for q, held in every if held]
        label = PIX_STATIC if static_only else PIX
        files = {
            label: lambda q: rank_pix(engine, q),
            label + CHUNKS: lambda q: rank_pix(engine, q, chunks=True),
        }
        spans = {}
        if kept:  # a folder of nothing pix indexes (RxSwift's: symlinks) is not asked
            files[BASELINE] = baselines.BM25Files.from_git(root).rank
            semble = baselines.SembleLexical(root)
            files[SEMBLE] = semble.rank
            spans[label + AS_SEMBLE] = lambda q: pix_spans(engine, q)
            spans[SEMBLE + AS_SEMBLE] = lambda q: semble.spans(q, DEPTH)
        runs = {
            system: [(rank(q["query"]), gold) for q, gold in kept] for system, rank in files.items()
        }
        for system, rank in spans.items():
            runs[system] = [(rank(q["query"]), held) for q, held in every]
    finally:
        engine.close()
    seconds = time.perf_counter() - started
    return Asked(runs, [q for q, _ in kept], [q for q, _ in every], index_s, seconds)


def pix_spans(engine: QueryEngine, query: str) -> list[list]:
    """[path, first line, last line] of each of pix's first DEPTH chunks (chunk mode)."""
    request = QueryRequest(query=query, top=DEPTH, no_content=True)
    return [[r["path"], r["startLine"], r["endLine"]] for r in engine.query(request)["results"]]


def as_semble(spans: list[list], targets: list[list]) -> dict[str, float]:
    """semble's runner's nDCG@10 (and MRR@10) of one question over a system's first DEPTH
    chunks: each target at the place of the first chunk of its file (overlapping its lines,
    if it names lines) there; the ideal over the targets the index holds; a question with none
    scores 0. Two targets first met at one place count once, as in semble's runner."""
    if not targets:
        return {"ndcg@10": 0.0, "mrr@10": 0.0}
    places = set()
    for path, start, end in targets:
        for place, (p, first, last) in enumerate(spans[:DEPTH], start=1):
            if p == path and (start is None or not (last < start or first > end)):
                places.add(place)
                break
    dcg = sum(1 / math.log2(place + 1) for place in places)
    ideal = sum(1 / math.log2(place + 1) for place in range(1, min(len(targets), DEPTH) + 1))
    return {"ndcg@10": dcg / ideal, "mrr@10": 1 / min(places) if places else 0.0}


def evaluate(system: str, runs: list[tuple[list, list]]) -> dict[str, float]:
    if system.endswith(AS_SEMBLE):
        return metrics.mean(as_semble(ranked, gold) for ranked, gold in runs)
    return metrics.evaluate(runs)


def grouped(
    done: dict[str, tuple[Spec, Asked]], key: Callable[[Spec, dict], str]
) -> dict[str, dict[str, list[tuple[list, list]]]]:
    """Every question's runs, per group (`key(spec, question)`) and system."""
    out: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for spec, asked in done.values():
        for system, runs in asked.runs.items():
            for q, run in zip(asked.questions_of(system), runs, strict=True):
                out[key(spec, q)][system].append(run)
    return out


def table(title: str, groups: dict[str, dict[str, list]], first: str, plural: str) -> Table:
    """One row a group: each system's nDCG@10 / MRR@10 over its questions; the overall mean
    over every question last."""
    systems = list(next(iter(groups.values())))
    everything: dict[str, list] = defaultdict(list)
    rows = []
    for name in sorted(groups):
        cells: dict[str, str | int] = {}
        for system in systems:
            runs = groups[name][system]
            everything[system].extend(runs)
            cells[system] = _pair(evaluate(system, runs))
        cells["questions"] = len(groups[name][systems[0]])
        rows.append((name, cells))
    total = {system: _pair(evaluate(system, runs)) for system, runs in everything.items()}
    total["questions"] = len(everything[systems[0]])
    rows.append((f"**all {len(groups)} {plural}, each question once**", total))
    return Table(title, [*systems, "questions"], rows, first=first)


def repo_table(done: dict[str, tuple[Spec, Asked]], published: dict[str, dict]) -> Table:
    """One row a repository: pix's nDCG@10 / MRR@10 beside the peers', semble's published
    nDCG@10 if given, what was left out, the seconds to index (nothing if cached) and to ask;
    the mean of the repositories last (semble's summary figure is such a mean)."""
    systems = list(next(iter(done.values()))[1].runs)
    rows, per_repo = [], defaultdict(list)
    for name, (spec, asked) in sorted(done.items()):
        cells: dict[str, str | int] = {"language": spec.language}
        for system in systems:
            scores = evaluate(system, asked.runs[system])
            per_repo[system].append(scores)
            cells[system] = _pair(scores)
        if published:
            row = published.get(name)
            cells[PUBLISHED] = f"{row['ndcg10']:.3f}" if row else "-"
        cells.update({"questions": len(asked.questions), "left out": asked.left_out})
        cells.update({"index s": round(asked.index_s), "ask s": round(asked.ask_s)})
        rows.append((name, cells))
    mean = {s: {k: statistics.mean(r[k] for r in per_repo[s]) for k in METRICS} for s in systems}
    last = {s: _pair(mean[s]) for s in systems}
    if published:
        known = [published[name]["ndcg10"] for name in done if name in published]
        last[PUBLISHED] = f"{statistics.mean(known):.3f} ({len(known)})" if known else "-"
    rows.append((f"**mean of {len(done)} repositories**", last))
    columns = ["language", *systems, *([PUBLISHED] if published else [])]
    columns += ["questions", "left out", "index s", "ask s"]
    return Table("each repository, nDCG@10 / MRR@10 (file level)", columns, rows, first="repo")


def published_table(done: dict[str, tuple[Spec, Asked]], published: dict[str, dict]) -> Table:
    """The systems scored as semble scores beside its published hybrid, on the repositories
    both hold, each figure a mean of repositories as semble's summary is: nDCG@10 over all
    questions and by category (over the repositories where every row has that category), and
    on how many repositories a system is at or above the published figure."""
    names = sorted(name for name in done if name in published)
    theirs = {
        n: {"all": published[n]["ndcg10"], **published[n].get("by_category", {})} for n in names
    }
    systems = [s for s in next(iter(done.values()))[1].runs if s.endswith(AS_SEMBLE)]
    columns = ["all", "architecture", "semantic", "symbol"]
    scores = {system: {n: by_category(system, *done[n]) for n in names} for system in systems}
    scores[PUBLISHED] = theirs
    # each column over the repositories every row has it for, so that the rows compare
    common = {c: [n for n in names if all(c in row[n] for row in scores.values())] for c in columns}
    rows = []
    for system, ours in scores.items():
        cells: dict[str, str | int] = {}
        for column in columns:
            values = [ours[n][column] for n in common[column]]
            cells[column] = f"{statistics.mean(values):.3f} ({len(values)})" if values else "-"
        if system != PUBLISHED:
            cells["at or above published"] = sum(ours[n]["all"] >= theirs[n]["all"] for n in names)
        rows.append((system, cells))
    title = (f"as semble scores, beside its published hybrid ({len(names)} repositories),"
             " nDCG@10, mean of repositories (how many)")  # fmt: skip
    return Table(title, [*columns, "at or above published"], rows)


def by_category(system: str, spec: Spec, asked: Asked) -> dict[str, float]:
    """One repository's nDCG@10 for a system over all its questions and each category's."""
    pairs = list(zip(asked.questions_of(system), asked.runs[system], strict=True))
    out = {"all": evaluate(system, [run for _, run in pairs])["ndcg@10"]}
    for category in sorted({q["category"] for q, _ in pairs}):
        out[category] = evaluate(system, [r for q, r in pairs if q["category"] == category])[
            "ndcg@10"
        ]
    return out


def _pair(e: dict[str, float]) -> str:
    return f"{e['ndcg@10']:.3f} / {e['mrr@10']:.3f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--semble", required=True, help="a clone of MinishLab/semble")
    parser.add_argument("--mirrors", help="folder of <owner>+<name>/repo bare git dirs")
    parser.add_argument("--repos", help="comma-separated names (default: every annotated one)")
    parser.add_argument("--static-only", action="store_true", help="pix index --static-only")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--dump", help="write every ranking here (JSON lines)")
    parser.add_argument("--published", help="a semble results file, printed beside (its nDCG@10)")
    args = parser.parse_args(argv)
    published = published_figures(args.published)
    folder = benchmark_dir(args.semble)
    specs = load_specs(folder)
    names = args.repos.split(",") if args.repos else sorted(specs)
    unknown = [n for n in names if n not in specs]
    if unknown:
        parser.error(f"not in the benchmark: {', '.join(unknown)}")
    devcorpora.set_mirrors(args.mirrors)
    absent = [n for n in names if not pinned(specs[n])]
    names = [n for n in names if n not in absent]
    done: dict[str, tuple[Spec, Asked]] = {}
    unasked: list[str] = []
    key = devcorpora.indexer_key()  # the workers' too, however they start
    with (
        open(args.dump, "w") if args.dump else contextlib.nullcontext() as dump,
        ProcessPoolExecutor(max_workers=args.jobs) as pool,
    ):
        chosen = [specs[n] for n in names]
        n = len(chosen)
        jobs = pool.map(
            ask_repo, chosen, [str(folder)] * n, [args.mirrors] * n, [args.static_only] * n,
            [key] * n,
        )  # fmt: skip
        for spec, asked in zip(chosen, jobs, strict=True):
            print(f"  {spec.name}: {len(asked.questions)} asked, {asked.left_out} left out, "
                  f"index {asked.index_s:.0f} s, ask {asked.ask_s:.0f} s",
                  file=sys.stderr, flush=True)  # fmt: skip
            if asked.questions:
                done[spec.name] = (spec, asked)
            else:
                unasked.append(spec.name)
            for system, runs in asked.runs.items() if dump else ():
                for q, (ranked, gold) in zip(asked.questions_of(system), runs, strict=True):
                    row = {"repo": spec.name, **q, "system": system, "gold": gold}
                    dump.write(json.dumps({**row, "ranked": ranked}) + "\n")
    repos = repo_table(done, published)
    if absent:
        repos.notes.append(f"Left out, not in the mirror at its pin: {', '.join(absent)}")
    if unasked:
        repos.notes.append(
            f"Not asked, no gold file of theirs indexed by pix: {', '.join(unasked)} (a folder"
            " of symlinks, which pix does not follow, is one such)"
        )
    print(repos.render())
    if published and any(name in published for name in done):
        print(published_table(done, published).render())
    by_language = grouped(done, lambda spec, q: spec.language)
    print(table("by language, nDCG@10 / MRR@10", by_language, "language", "languages").render())
    by_category = grouped(done, lambda spec, q: q["category"])
    print(table("by category, nDCG@10 / MRR@10", by_category, "category", "categories").render())


if __name__ == "__main__":
    main()
