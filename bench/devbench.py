"""Retrieval quality on every development set, each on its own, in one run.

    python -m bench.devbench [--sets SETS] [--reuse] [--no-embed] [--mirrors DIR]
                             [--issueloc-embed requests,flask,...] [--failures N]
                             [--dump FILE] [--costs] [--build-only]

SETS (comma-separated, default `all`): a language set's name (bench/devsets/<name>/), `lang`
(every language set), `issueloc` (all eight repositories) or `issueloc:<name>` (`issueloc:flask`),
`cosqa` (natural language -> function), `exact` (the exact-string set), and the shared
commitloc sets `requests`, `click` (`shared` for both).

Every set prints one markdown table: pix default (file mode, top 10), each channel alone, pix
without path priors, and plain BM25 over code files (bench.baselines.BM25Files). Metrics:
nDCG@10, MRR@10, recall@5 (issueloc adds Acc@1/3/5/10 and recall@10; exact strings add the
share ranked first). Then a summary over the language sets: each system's mean, min, max and
spread. The semble peer is listed as not run: its wheel ships no model (it downloads
minishlab/potion-code-16M-v2 from the Hugging Face hub at run time) and no hub is reachable.

Databases are cached per corpus, embedding model and indexer (a hash of pix/ingest, the
migrations and the grammar wheels) in $PIX_BENCH_CACHE/devdbs/<model>-<indexer>/ with --reuse
(otherwise built in a temporary folder). --no-embed indexes keyword-only and runs only the
channels that need no vectors (bm25, ident, path, and their fusion, labelled
`keyword`): a cheap mode for quick iteration. Issueloc embeds only the repositories named by
--issueloc-embed (default requests,flask,seaborn,pytest) and runs keyword-only on the others.
--build-only (with --reuse) builds or brings up to date each named set's cached database (for
exact and the question sets, those of the repositories their queries name, pytest and
seaborn among them) and asks nothing: what bench.weights_bench and bench.issue_bench read, in
the time indexing takes (the 14 language sets and the shared two with the transformer: about
50 minutes on 2 cores).
Progress goes to stderr; stdout holds only the tables.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bench import baselines, corpora, devcorpora, devsets, metrics, quality
from pix.index import index_repository
from pix.query import QueryEngine
from pix.retrieve.define import CHANNEL as DEFINITION
from pix.retrieve.phrase import CHANNEL as PHRASE
from pix.retrieve.route import CHANNELS
from pix.static_tier import embed_static, forget_other_static_table
from pix.store import open_store
from pix.store.db import MIGRATION_APPLIED
from pix.store.sql import SNAPSHOT_COUNTS

SNAPSHOTS = "SELECT id FROM snapshot ORDER BY id"
# Every channel but the phrase step (pix.retrieve.phrase): what the phrase step adds; and
# likewise for the definition step (pix.retrieve.define).
NO_PHRASES = {"channels": [*CHANNELS, DEFINITION]}
NO_DEFINITIONS = {"channels": [*CHANNELS, PHRASE]}
FULL: dict[str, dict] = {
    "pix default": {},
    # The files an agent asking in chunk mode (the CLI's and MCP's default) sees, in the order
    # of their first chunk among the first CHUNK_DEPTH (bench.quality.rank_chunk_files).
    "pix, chunk mode": {"chunks": True},
    "dense alone": {"channels": ["dense"]},
    "bm25 alone": {"channels": ["bm25"]},
    "ident alone": {"channels": ["ident"]},
    "path alone": {"channels": ["path"]},
    "pix without priors": {"priors": False},
    "pix without phrases": NO_PHRASES,
    "pix without definitions": NO_DEFINITIONS,
}
# On a database indexed with --static-only: "pix static-only" is then what a fresh index
# answers with before the transformer has run (the dense channel has no vectors yet, but the
# question's best candidates are read by the transformer on the spot, pix/retrieve/refine.py).
STATIC: dict[str, dict] = {
    "pix static-only": {},
    # pix/retrieve/refine.py off: the static tier's own answer
    "pix static-only without refinement": {"refine": False},
    "pix static-only, chunk mode": {"chunks": True},
    "static alone": {"channels": ["static"]},
    "bm25 alone": {"channels": ["bm25"]},
    "pix static-only without priors": {"priors": False},
    "pix static-only without phrases": NO_PHRASES,
    "pix static-only without definitions": NO_DEFINITIONS,
}
KEYWORD: dict[str, dict] = {
    "pix keyword": {"channels": ["bm25", "ident", "path", PHRASE, DEFINITION]},
    "bm25 alone": {"channels": ["bm25"]},
    "ident alone": {"channels": ["ident"]},
    "path alone": {"channels": ["path"]},
    "pix keyword without priors": {
        "channels": ["bm25", "ident", "path", PHRASE, DEFINITION],
        "priors": False,
    },
    "pix keyword without phrases": {"channels": ["bm25", "ident", "path", DEFINITION]},
    "pix keyword without definitions": {"channels": ["bm25", "ident", "path", PHRASE]},
}
BASELINE = "BM25 baseline (bm25s, files)"
SEMBLE = "semble lexical (peer, no model)"
SEMBLE_NOTE = (
    "semble (peer): its wheel ships no model (it downloads minishlab/potion-code-16M-v2 from the"
    " Hugging Face hub at run time; no hub is reachable here), so only its lexical side runs:"
    " its chunker, BM25 and ranking stage with alpha=0 (bench.baselines.SembleLexical)"
)
COLUMNS = ["ndcg@10", "mrr@10", "recall@5"]
ISSUE_COLUMNS = ["acc@1", "acc@3", "acc@5", "acc@10", "recall@5", "recall@10", "mrr@10", "ndcg@10"]
EXACT_COLUMNS = ["first", "mrr@10", "ndcg@10", "recall@5"]
ISSUELOC_REPOS = {
    "requests": "psf/requests",
    "flask": "pallets/flask",
    "pytest": "pytest-dev/pytest",
    "sphinx": "sphinx-doc/sphinx",
    "pylint": "pylint-dev/pylint",
    "seaborn": "mwaskom/seaborn",
    "xarray": "pydata/xarray",
    "astropy": "astropy/astropy",
}
COSQA_REPO = "microsoft/CodeXGLUE"
COSQA_PATH = "Text-Code/NL-code-search-WebQuery/CoSQA/cosqa-dev.json"  # the dev split


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _cell(value: float | str) -> str:
    return str(value) if isinstance(value, (int, str)) else f"{value:.3f}"


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[tuple[str, dict[str, float]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    first: str = "system"

    def render(self) -> str:
        lines = [f"### {self.title}", ""]
        lines.append(f"| {self.first} | " + " | ".join(self.columns) + " |")
        lines.append("|---|" + "---:|" * len(self.columns))
        for label, m in self.rows:
            cells = [_cell(m[c]) if c in m else "" for c in self.columns]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.extend(f"\n{note}" for note in self.notes)
        return "\n".join(lines) + "\n"


@dataclass
class Run:
    """The options of one benchmark run."""

    folder: Path
    reuse: bool
    embed: bool
    issueloc_embed: set[str]
    failures: int
    static_only: bool = False  # embed is False then, and databases are cached apart

    @property
    def variant(self) -> str:
        return "-static" if self.static_only else ""


def build_db(name: str, root: Path, run: Run, embed: bool, commits: list[str] | None = None):
    """Index `root` (its work tree, or each of `commits` with --at) into the set's database."""
    db = run.folder / f"{name}.db" if not run.reuse else devcorpora.database(name, run.variant)
    t0 = time.perf_counter()
    chunks = 0
    done = indexed_commits(db)
    todo = [sha for sha in commits or [None] if sha is None or sha not in done]
    # `pix index --at` embeds the chunks of that commit's snapshot, not every snapshot's: a
    # commit whose snapshot still has chunks without a transformer vector is indexed again.
    waiting = embedded_short(db) if embed and commits else set()
    todo += [sha for sha in commits or [] if sha in waiting and sha not in todo]
    # A new cached database takes the vectors other indexers' databases of the corpus hold
    # for the same inputs before the transformer runs (devcorpora.seed_vectors).
    seed = embed and run.reuse and not db.exists()
    for sha in todo:
        report = index_repository(str(root), str(db), at=sha, embed=embed and not seed)
        chunks += report.chunks_added
    if seed and todo:
        seeded = devcorpora.seed_vectors(db, db.name)
        log(f"  {name}: {seeded} chunks took the vectors of cached databases for their inputs")
        for sha in todo:  # each commit's snapshot embeds its own chunks still waiting
            index_repository(str(root), str(db), at=sha, embed=True)
    if not todo:
        refresh_static_tier(db)
    tier = "embedded" if embed else "static tier, no transformer"
    log(
        f"  {name}: indexed {len(todo)} of {len(commits or [1])} snapshot(s), {chunks} new "
        f"chunks, {tier}, {time.perf_counter() - t0:.0f} s ({db})"
    )
    return db


def refresh_static_tier(db: Path) -> None:
    """A cached database whose static vectors came from another token table gets this one's
    (what `pix index` does on its next run), so a table change is measured without re-indexing:
    the indexer key leaves pix/ingest/static.py and embed.py out for that reason."""
    with open_store(db, create=False) as store:
        with store.write():
            changed = forget_other_static_table(store)
        if changed:
            made = sum(embed_static(store, s) for (s,) in store.conn.execute(SNAPSHOTS).fetchall())
            log(f"  {db.name}: {made} static vectors from the current token table")


def indexed_commits(db: Path) -> set[str]:
    """The commits a cached database already holds a counted snapshot of, with a log read by
    this pix's rule: with --reuse, indexing them again only re-walks their trees (sphinx's 41
    base commits: 9 minutes for no new chunk). A snapshot cached before migration 008, or whose
    log another rule read (or none, before 011 and 012), is indexed again once: `pix index`
    then writes its history counts (pix/ingest/history.py), which the prior weighs issue
    reports by, and reads its log (pix/ingest/commit_log.py)."""
    if not db.exists():
        return set()
    import apsw

    from pix.ingest import commit_log

    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        for migration in (COUNTS_MIGRATION, LOG_RULE_MIGRATION):
            if conn.execute(MIGRATION_APPLIED, (migration,)).fetchone() is None:
                return set()  # written before it: none of its snapshots has what it added
        rows = conn.execute(COUNTED_COMMITS, {"rule": commit_log.rule()}).fetchall()
    finally:
        conn.close()
    return {sha for (sha,) in rows}


def embedded_short(db: Path) -> set[str]:
    """The commits whose snapshot in a cached database has chunks without a transformer
    vector."""
    if not db.exists():
        return set()
    with open_store(db, create=False) as store:
        rows = store.conn.execute("SELECT id, commit_sha FROM snapshot WHERE kind = 'commit'")
        out = set()
        for snapshot_id, sha in rows.fetchall():
            chunks, embedded, _ = store.conn.execute(
                SNAPSHOT_COUNTS, {"snapshot": snapshot_id}
            ).fetchone()
            if embedded < chunks:
                out.add(sha)
    return out


COUNTS_MIGRATION = "008_recent_commits"
LOG_RULE_MIGRATION = "012_log_rule"
COUNTED_COMMITS = """
SELECT commit_sha FROM snapshot
WHERE kind = 'commit' AND log_rule IS :rule
  AND NOT EXISTS (
    SELECT 1 FROM snapshot_file AS f WHERE f.snapshot_id = snapshot.id AND f.recent_commits IS NULL
  )
"""


def rank_pix(engine: QueryEngine, query: str, at: str | None = None, **options) -> list[str]:
    """pix's file ranking, as bench.quality asks for it (file mode, top 10), at a commit.
    `refine=False`: without the transformer reading the best candidates on the spot;
    `chunks=True`: the files of a chunk-mode answer, in the order of their first chunk."""
    rank = quality.rank_chunk_files if options.pop("chunks", False) else quality.rank_files
    if options.pop("refine", True):
        return rank(engine, query, at=at, **options)
    engine.refine_top, top = 0, engine.refine_top
    try:
        return rank(engine, query, at=at, **options)
    finally:
        engine.refine_top = top


def systems(embed: bool, static_only: bool = False, issues: bool = False) -> dict[str, dict]:
    """The systems of a table. An issue report skips the phrase and definition steps by
    default (pix.retrieve.phrase.enabled, define.enabled), so its table asks what each adds
    when asked for by name instead of what leaving it out costs."""
    chosen = FULL if embed else STATIC if static_only else KEYWORD
    if not issues:
        return chosen
    out = {}
    for label, options in chosen.items():
        if options in (NO_PHRASES, NO_DEFINITIONS):
            step = PHRASE if options is NO_DEFINITIONS else DEFINITION
            label = label.split(" without ")[0] + f" with the {step} step"
        out[label] = options
    return out


# Every ranked list of the run, for --dump: {"id", "system", "gold", "ranked"} per query.
RANKINGS: list[dict] = []


def record(label: str, qs: list[dict], lists: list[list[str]]) -> None:
    RANKINGS.extend(
        {"id": q["id"], "system": label, "gold": q["gold_files"], "ranked": r[:10]}
        for q, r in zip(qs, lists, strict=True)
    )


def score_systems(
    qs: list[dict],
    rankers: dict[str, Callable[[dict], list[str]]],
    acc_ks: tuple[int, ...] = (),
) -> tuple[list[tuple[str, dict[str, float]]], dict[str, list[list[str]]]]:
    rows, ranked = [], {}
    for label, rank in rankers.items():
        lists = [rank(q) for q in qs]
        ranked[label] = lists
        record(label, qs, lists)
        m = metrics.evaluate(
            ((r, q["gold_files"]) for r, q in zip(lists, qs, strict=True)),
            ks=(1, 5, 10),
            acc_ks=acc_ks,
        )
        rows.append((label, m))
    return rows, ranked


def failures_note(qs: list[dict], lists: list[list[str]], limit: int, label: str) -> str:
    """The queries the default system missed (no gold file in its top 10), for reading."""
    missed = [
        (q, r) for q, r in zip(qs, lists, strict=True) if not set(q["gold_files"]) & set(r[:10])
    ]
    if not limit or not missed:
        return ""
    out = [f"{label} missed {len(missed)}/{len(qs)} (no gold file in the top 10); first {limit}:"]
    for q, r in missed[:limit]:
        text = " ".join(q["query"].split())[:110]
        out.append(f"- `{q['id']}` {text!r} -> gold {q['gold_files']}, got {r[:3]}")
    return "\n".join(out)


def pix_rankers(
    engine: QueryEngine, embed: bool, at_of=None, static_only: bool = False, issues: bool = False
) -> dict[str, Callable]:
    def make(options: dict) -> Callable[[dict], list[str]]:
        return lambda q: rank_pix(engine, q["query"], at=at_of(q) if at_of else None, **options)

    chosen = systems(embed, static_only, issues)
    return {label: make(options) for label, options in chosen.items()}


def commit_table(title: str, qs: list[dict], db: Path, root: Path, run: Run) -> Table:
    engine = QueryEngine(db=str(db), cwd=str(root))
    bm25 = baselines.BM25Files.from_git(root)
    semble = baselines.SembleLexical(root)
    rankers = {
        **pix_rankers(engine, run.embed, static_only=run.static_only),
        BASELINE: lambda q: bm25.rank(q["query"]),
        SEMBLE: lambda q: semble.rank(q["query"]),
    }
    rows, ranked = score_systems(qs, rankers)
    engine.close()
    table = Table(f"{title} ({len(qs)} queries)", COLUMNS, rows, [SEMBLE_NOTE])
    note = failures_note(qs, ranked[next(iter(rankers))], run.failures, next(iter(rankers)))
    if note:
        table.notes.append(note)
    return table


def language_set(name: str, run: Run) -> Table:
    meta, qs = devsets.load_set(name)
    root = devcorpora.snapshot(meta["repo"], meta["pinned_commit"])
    db = build_db(name, root, run, run.embed)
    title = f"{name}: {meta['language']}, {meta['repo']}@{meta['pinned_commit'][:12]}"
    return commit_table(title, qs, db, root, run)


def shared_set(name: str, run: Run) -> Table:
    root = corpora.corpus(name)
    db = build_db(f"shared-{name}", root, run, run.embed)
    spec = corpora.CORPORA[name]
    title = f"{name} (shared commitloc): Python, {spec.package}=={spec.version} sdist"
    return commit_table(title, corpora.queries(name), db, root, run)


def issueloc_queries() -> list[dict]:
    path = corpora.shared_dir() / "eval" / "issueloc" / "queries.jsonl"
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def issueloc_commits(root: Path, qs: list[dict]) -> dict[str, str]:
    """Base commit -> the commit indexed (the same, unless the mirror lacks some blobs)."""
    return {
        sha: devcorpora.complete_commit(root, sha)
        for sha in dict.fromkeys(q["base_commit"] for q in qs)
    }


def issueloc_set(short: str) -> tuple[Path, list[dict], dict[str, str]]:
    """One issueloc repository: its clone, its issues and the commits to ask them at."""
    repo = ISSUELOC_REPOS[short]
    qs = [q for q in issueloc_queries() if q["repo"] == repo]
    root = devcorpora.clone(repo)
    return root, qs, issueloc_commits(root, qs)


def issueloc(names: list[str], run: Run) -> Iterator[Table]:
    """One table per repository as soon as it is done, then the pooled table."""
    qs_all = issueloc_queries()
    pooled, pooled_qs = {}, []
    for short in names:
        repo = ISSUELOC_REPOS[short]
        qs = [q for q in qs_all if q["repo"] == repo]
        missing = [
            q["base_commit"] for q in qs if not devcorpora.has_commit(repo, q["base_commit"])
        ]
        if missing:
            raise RuntimeError(f"{repo}: base commits missing from the mirror: {missing[:3]}")
        root = devcorpora.clone(repo)
        indexed = issueloc_commits(root, qs)
        replaced = {a: b for a, b in indexed.items() if a != b}
        embed = run.embed and short in run.issueloc_embed
        db = build_db(f"issueloc-{short}", root, run, embed, list(indexed.values()))
        engine = QueryEngine(db=str(db), cwd=str(root))
        cache: dict = {}
        bm25_by_commit: dict[str, baselines.BM25Files] = {}

        def bm25_rank(q: dict, cache=cache, by=bm25_by_commit, root=root, at=indexed) -> list[str]:
            sha = at[q["base_commit"]]
            if sha not in by:
                by.clear()  # one commit's index at a time; the token cache is shared
                by[sha] = baselines.BM25Files.from_git(root, sha, cache=cache)
            return by[sha].rank(q["query"])

        qs = sorted(qs, key=lambda q: (q["base_commit"], q["id"]))
        rankers = {
            **pix_rankers(
                engine,
                embed,
                at_of=lambda q, at=indexed: at[q["base_commit"]],
                static_only=run.static_only,
                issues=True,
            ),
            BASELINE: bm25_rank,
        }
        rows, ranked = score_systems(qs, rankers, acc_ks=(1, 3, 5, 10))
        engine.close()
        mode = "embedded" if embed else "static tier" if run.static_only else "keyword only"
        table = Table(
            f"issueloc {short}: {repo}, {len(qs)} issues, {len(indexed)} base commits ({mode})",
            ISSUE_COLUMNS,
            rows,
        )
        if replaced:
            table.notes.append(
                f"{len(replaced)} base commit(s) indexed without blobs absent from the mirror"
                " (bench.devcorpora.complete_commit): "
                + ", ".join(f"{a[:10]} -> {b[:10]}" for a, b in replaced.items())
            )
        note = failures_note(qs, ranked[next(iter(rankers))], run.failures, next(iter(rankers)))
        if note:
            table.notes.append(note)
        yield table
        pooled_qs.extend(qs)
        for label, lists in ranked.items():
            pooled.setdefault(label, []).extend(lists)
    if len(names) > 1:
        # Overall: the systems that ran on every repository (the keyword channels and the
        # baseline always do; `pix default` and dense only if every repository was embedded).
        labels = [lab for lab in pooled if len(pooled[lab]) == len(pooled_qs)]
        rows = []
        for label in labels:
            m = metrics.evaluate(
                ((r, q["gold_files"]) for r, q in zip(pooled[label], pooled_qs, strict=True)),
                ks=(1, 5, 10),
                acc_ks=(1, 3, 5, 10),
            )
            rows.append((label, m))
        overall = Table(
            f"issueloc overall: {len(pooled_qs)} issues of {len(names)} repositories",
            ISSUE_COLUMNS,
            rows,
        )
        if not labels:
            overall.notes.append("no system ran the same way on every repository")
        keyword_only = [n for n in names if not (run.embed and n in run.issueloc_embed)]
        if keyword_only and run.embed:
            overall.notes.append(
                "keyword-only repositories: " + ", ".join(keyword_only) + "; pooled rows are"
                " the systems that ran on all of them"
            )
        yield overall


def cosqa_corpus() -> tuple[Path, list[dict]]:
    """The CoSQA dev split as a corpus: one file per distinct function, in a one-commit git
    repository in the cache; queries = the dev queries labelled as answered by their code."""
    git_dir = devcorpora.mirror(COSQA_REPO)
    raw = subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"HEAD:{COSQA_PATH}"],
        capture_output=True, check=True,
    ).stdout  # fmt: skip
    pairs = json.loads(raw)
    blob = hashlib.sha1(raw).hexdigest()[:12]
    names = {}
    for pair in pairs:
        code = pair["code"]
        names.setdefault(code, f"functions/{hashlib.sha1(code.encode()).hexdigest()[:12]}.py")
    target = corpora.cache_dir() / "cosqa" / f"cosqa-dev-{blob}"
    if not (target / ".git" / corpora.MARKER).exists():
        target.parent.mkdir(parents=True, exist_ok=True)  # a fresh machine has no cache yet
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            tree = Path(tmp) / "tree"
            (tree / "functions").mkdir(parents=True)
            for code, path in names.items():
                (tree / path).write_text(code + "\n", encoding="utf-8")
            corpora._git(tree, "init", "-q")
            corpora._git(tree, "add", "-A")
            corpora._git(
                tree, "-c", "user.name=bench", "-c", "user.email=bench@localhost",
                "-c", "commit.gpgsign=false", "commit", "-qm", "cosqa dev functions",
            )  # fmt: skip
            (tree / ".git" / corpora.MARKER).write_text(f"{COSQA_REPO}:{COSQA_PATH}\n")
            tree.rename(target)
    qs = [
        {"id": p["idx"], "query": p["doc"], "gold_files": [names[p["code"]]]}
        for p in pairs
        if p["label"] == 1
    ]
    return target, qs


def cosqa(run: Run) -> Table:
    root, qs = cosqa_corpus()
    db = build_db("cosqa-dev", root, run, run.embed)
    files = len(list((root / "functions").iterdir()))
    return commit_table(
        f"NL -> function: CoSQA dev split ({len(qs)} queries over {files} functions)",
        qs,
        db,
        root,
        run,
    )


def across_sets(qs: list[dict], run: Run) -> tuple[list[dict], dict[str, list[list[str]]]]:
    """Rank queries that each name their language set (`set`) on that set's corpus: the
    queries in set order, and every system's ranked files for them (recorded for --dump)."""
    rows_by: dict[str, list] = {}
    for name in dict.fromkeys(q["set"] for q in qs):
        set_meta, _ = devsets.load_set(name)
        root = devcorpora.snapshot(set_meta["repo"], set_meta["pinned_commit"])
        db = build_db(name, root, run, run.embed)
        engine = QueryEngine(db=str(db), cwd=str(root))
        bm25 = baselines.BM25Files.from_git(root)
        semble = baselines.SembleLexical(root)
        part = [q for q in qs if q["set"] == name]
        rankers = {
            **pix_rankers(engine, run.embed, static_only=run.static_only),
            BASELINE: lambda q, b=bm25: b.rank(q["query"]),
            SEMBLE: lambda q, s=semble: s.rank(q["query"]),
        }
        for label, rank in rankers.items():
            rows_by.setdefault(label, []).extend(rank(q) for q in part)
        engine.close()
    ordered = [q for name in dict.fromkeys(q["set"] for q in qs) for q in qs if q["set"] == name]
    for label, lists in rows_by.items():
        record(label, ordered, lists)
    return ordered, rows_by


def _scored(lists: list[list[str]], qs: list[dict]) -> dict[str, float]:
    return metrics.evaluate(
        ((r, q["gold_files"]) for r, q in zip(lists, qs, strict=True)), ks=(1, 5, 10)
    )


def exact(run: Run) -> Table:
    meta, qs = devsets.load_set("exact-strings")
    ordered, rows_by = across_sets(qs, run)
    rows = []
    for label, lists in rows_by.items():
        m = _scored(lists, ordered)
        m["first"] = m["recall@1"]
        rows.append((label, m))
    table = Table(
        f"exact strings ({len(qs)} literals from {len(set(q['set'] for q in qs))} language sets)",
        EXACT_COLUMNS,
        rows,
        ["first = share of queries whose holding file ranks first"],
    )
    note = failures_note(ordered, rows_by[next(iter(rows_by))], run.failures, next(iter(rows_by)))
    if note:
        table.notes.append(note)
    return table


QUESTION_KINDS = ("symbol", "concept", "architecture")


def questions(run: Run, name: str = "questions") -> list[Table]:
    """A set of developers' questions (bench/devsets/questions, questions-more): every system
    over all of them and by kind of question (nDCG@10 / MRR@10), then pix's first system per
    repository."""
    meta, qs = devsets.load_set(name)
    ordered, rows_by = across_sets(qs, run)
    columns = ["ndcg@10", "mrr@10", "recall@5"] + [
        f"{kind} {m}" for kind in QUESTION_KINDS for m in ("ndcg@10", "mrr@10")
    ]
    rows = []
    for label, lists in rows_by.items():
        m = _scored(lists, ordered)
        for kind in QUESTION_KINDS:
            keep = [i for i, q in enumerate(ordered) if q["kind"] == kind]
            part = _scored([lists[i] for i in keep], [ordered[i] for i in keep])
            m[f"{kind} ndcg@10"], m[f"{kind} mrr@10"] = part["ndcg@10"], part["mrr@10"]
        rows.append((label, m))
    sets = list(dict.fromkeys(q["set"] for q in ordered))
    table = Table(
        f"{name} ({len(qs)} developers' questions of {len(sets)} repositories, by kind)",
        columns,
        rows,
    )
    first = next(iter(rows_by))
    note = failures_note(ordered, rows_by[first], run.failures, first)
    if note:
        table.notes.append(note)
    per_set = Table(f"{name} per repository: nDCG@10 / MRR@10", sets, [])
    per_set.first = "system"
    for label, lists in rows_by.items():
        cells = {}
        for name in sets:
            keep = [i for i, q in enumerate(ordered) if q["set"] == name]
            part = _scored([lists[i] for i in keep], [ordered[i] for i in keep])
            cells[name] = f"{part['ndcg@10']:.3f} / {part['mrr@10']:.3f}"
        per_set.rows.append((label, cells))
    return [table, per_set]


def summary(tables: dict[str, Table]) -> Table:
    """Each system's mean over the language sets, with the spread between sets."""
    labels = list(dict.fromkeys(label for t in tables.values() for label, _ in t.rows))
    rows = []
    for label in labels:
        per_set = {n: dict(t.rows)[label] for n, t in tables.items() if label in dict(t.rows)}
        if len(per_set) != len(tables):
            continue
        nd = [m["ndcg@10"] for m in per_set.values()]
        mr = [m["mrr@10"] for m in per_set.values()]
        worst = min(per_set, key=lambda n: per_set[n]["ndcg@10"])
        rows.append(
            (
                label,
                {
                    "mean nDCG@10": statistics.fmean(nd),
                    "mean MRR@10": statistics.fmean(mr),
                    "mean recall@5": statistics.fmean(m["recall@5"] for m in per_set.values()),
                    "min nDCG@10": min(nd),
                    "max nDCG@10": max(nd),
                    "stdev nDCG@10": statistics.pstdev(nd),
                    "worst": worst,
                },
            )
        )
    cols = [
        "mean nDCG@10",
        "mean MRR@10",
        "mean recall@5",
        "min nDCG@10",
        "max nDCG@10",
        "stdev nDCG@10",
    ]
    table = Table(f"language sets: mean over {len(tables)} sets", cols, rows)
    table.notes.append(
        "worst set by nDCG@10: " + ", ".join(f"{label}: {m['worst']}" for label, m in rows)
    )
    default = next((label for label, _ in rows), None)
    if default:
        per = {n: dict(t.rows)[default]["ndcg@10"] for n, t in tables.items()}
        mean = statistics.fmean(per.values())
        table.notes.append(
            f"{default} nDCG@10 per set (mean {mean:.3f}): "
            + ", ".join(
                f"{n} {v:.3f}{' (<mean-0.05)' if v < mean - 0.05 else ''}" for n, v in per.items()
            )  # fmt: skip
        )
    return table


# Distinct model inputs (chunks with the same embedding text share one run of the model).
DISTINCT_INPUTS = "SELECT count(DISTINCT embed_key) FROM chunk"
EMBED_RATE = 60.0  # chunks/s of the int8 MiniLM on this 2-core machine (bench/ready_bench.py)


def costs(names: list[str], run: Run) -> Table:
    """What each set's corpus costs to index: snapshots, files, blobs, chunks, distinct model
    inputs, what is embedded already, and the embedding time left at EMBED_RATE. Databases
    missing from the cache are built keyword-only first."""
    import apsw

    from pix.status import status

    rows = []
    keyword = Run(run.folder, run.reuse, False, set(), 0)
    for name in needed(names):
        label, root, commits, _ = set_corpus(name, run)
        db = devcorpora.database(label) if run.reuse else run.folder / f"{label}.db"
        if not db.exists():
            build_db(label, root, keyword, False, commits)
        info = status(db=str(db), cwd=str(root))
        conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
        inputs = conn.execute(DISTINCT_INPUTS).fetchone()[0]
        conn.close()
        snaps = info["snapshots"]
        left = inputs - min(inputs, info["vectors"])
        rows.append(
            (
                label,
                {
                    "snapshots": len(snaps),
                    "files (max per snapshot)": max(s["files"] for s in snaps),
                    "chunks (max per snapshot)": max(s["chunks"] for s in snaps),
                    "blobs": info["blobs"],
                    "chunks": info["chunks"],
                    "distinct inputs": inputs,
                    "vectors": info["vectors"],
                    "embed min left": left / EMBED_RATE / 60,
                },
            )
        )
    cols = list(rows[0][1]) if rows else []
    table = Table("corpus costs (distinct over every snapshot of a database)", cols, rows)
    table.first = "database"
    table.notes.append(
        f"embed min left = (distinct inputs - vectors) / {EMBED_RATE:.0f} chunks/s; vectors"
        " counts chunk rows with a vector, so a partly embedded database is an estimate"
    )
    return table


def set_corpus(name: str, run: Run) -> tuple[str, Path, list[str] | None, bool]:
    """A set's database label, work tree, commits to index (None: the work tree) and whether
    its table embeds with the transformer (`exact` and `questions` have none: see needed)."""
    if name.startswith("issueloc:"):
        short = name.split(":", 1)[1]
        root, _, at = issueloc_set(short)
        embed = run.embed and short in run.issueloc_embed
        return f"issueloc-{short}", root, list(at.values()), embed
    if name in ("requests", "click"):
        return f"shared-{name}", corpora.corpus(name), None, run.embed
    if name == "cosqa":
        return "cosqa-dev", cosqa_corpus()[0], None, run.embed
    meta, _ = devsets.load_set(name)
    return name, devcorpora.snapshot(meta["repo"], meta["pinned_commit"]), None, run.embed


def build_only(names: list[str], run: Run) -> list[Path]:
    """Each named set's cached database, built or brought up to date as its table would
    build it, without asking it anything."""
    dbs = []
    for name in needed(names):
        log(f"set {name}")
        label, root, commits, embed = set_corpus(name, run)
        dbs.append(build_db(label, root, run, embed, commits))
    return dbs


def needed(names: list[str]) -> list[str]:
    """The sets whose databases `names` ask, each once: exact and the question sets have none
    of their own and ask those of the repositories their queries name (pytest and seaborn are
    the questions' own)."""
    out: list[str] = []
    question_sets = devsets.committed_sets("questions")
    for name in names:
        if name == "exact" or name in question_sets:
            queries = devsets.load_set("exact-strings" if name == "exact" else name)[1]
            out += [q["set"] for q in queries]
        else:
            out.append(name)
    return list(dict.fromkeys(out))


def commit_sets() -> tuple[set[str], set[str]]:
    """(the 14 language sets, in the summary table; the commit sets asked by name or as
    `pairs`, each in a table of its own, so that the summary stays comparable across
    sessions)."""
    by_name = ("commitloc-more", "commitloc-pair")
    return (
        set(devsets.committed_sets("commitloc")),
        {n for kind in by_name for n in devsets.committed_sets(kind)},
    )


def expand(sets: str) -> list[str]:
    names: list[str] = []
    for item in (s.strip() for s in sets.split(",")):
        if item == "all":
            names += ["lang", "shared", "issueloc", "cosqa", "exact", "questions", "questions-more"]
        elif item:
            names.append(item)
    out: list[str] = []
    for item in names:
        if item == "lang":
            out += devsets.committed_sets("commitloc")
        elif item == "pairs":
            out += devsets.committed_sets("commitloc-pair")
        elif item == "shared":
            out += ["requests", "click"]
        elif item == "issueloc":
            out += [f"issueloc:{n}" for n in ISSUELOC_REPOS]
        else:
            out.append(item)
    return list(dict.fromkeys(out))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default="all")
    parser.add_argument("--reuse", action="store_true", help="cache databases and reuse them")
    parser.add_argument("--no-embed", action="store_true", help="keyword channels only")
    parser.add_argument(
        "--static-only",
        action="store_true",
        help="index with pix index --static-only: what pix answers before the transformer ran",
    )
    parser.add_argument("--mirrors", help="folder of <owner>+<name>/repo bare git dirs")
    parser.add_argument("--issueloc-embed", default="requests,flask,seaborn,pytest")
    parser.add_argument("--failures", type=int, default=0, help="list N missed queries per set")
    parser.add_argument("--dump", help="write every ranked top 10 to this JSONL file")
    parser.add_argument(
        "--costs", action="store_true", help="print what each corpus costs to index; no queries"
    )
    parser.add_argument(
        "--build-only",
        action="store_true",
        help="build or update each set's cached database (needs --reuse); ask nothing",
    )
    args = parser.parse_args(argv)
    if args.build_only and not args.reuse:
        parser.error("--build-only needs --reuse: without it the databases go with the run")
    missing = [m for m in ("bm25s", "Stemmer", "semble") if importlib.util.find_spec(m) is None]
    if missing:  # the baselines come from the bench extra; say so before any work is done
        sys.exit(
            f"devbench needs the bench extra ({', '.join(missing)} missing): "
            "pip install -e '.[bench]'"
        )
    devcorpora.set_mirrors(args.mirrors)
    names = expand(args.sets)
    lang, more = commit_sets()
    question_sets = devsets.committed_sets("questions")
    with tempfile.TemporaryDirectory(prefix="pix-devbench-") as tmp:
        run = Run(
            Path(tmp),
            args.reuse,
            not (args.no_embed or args.static_only),
            {s for s in args.issueloc_embed.split(",") if s},
            args.failures,
            args.static_only,
        )
        if args.costs:
            print(costs(names, run).render())
            return
        if args.build_only:
            for db in build_only(names, run):
                print(db)
            return
        lang_tables: dict[str, Table] = {}
        issue_names = [n.split(":", 1)[1] for n in names if n.startswith("issueloc:")]
        for name in names:
            log(f"set {name}")
            if name in lang:
                table = language_set(name, run)
                lang_tables[name] = table
                print(table.render(), flush=True)
            elif name in more:
                print(language_set(name, run).render(), flush=True)
            elif name in ("requests", "click"):
                print(shared_set(name, run).render(), flush=True)
            elif name == "cosqa":
                print(cosqa(run).render(), flush=True)
            elif name == "exact":
                print(exact(run).render(), flush=True)
            elif name in question_sets:
                for table in questions(run, name):
                    print(table.render(), flush=True)
            elif name.startswith("issueloc:"):
                if name.split(":", 1)[1] == issue_names[0]:
                    for table in issueloc(issue_names, run):
                        print(table.render(), flush=True)
            else:
                parser.error(f"unknown set {name!r}")
        if len(lang_tables) > 1:
            print(summary(lang_tables).render(), flush=True)
        if args.dump:
            with open(args.dump, "w", encoding="utf-8") as fh:
                fh.writelines(json.dumps(row) + "\n" for row in RANKINGS)


if __name__ == "__main__":
    os.environ.setdefault("PIX_BENCH", "1")
    main()
