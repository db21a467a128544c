"""One question across the databases of a workspace (issue 13): the shards' engines, and the
cross-shard query that `pix query --workspace/--db A --db B`, aliases and MCP all call.

Each shard answers on its own, exactly as `pix query` answers for that repository alone
(its snapshot, route, channels ranked and fused in its own SQL, ranking stage, phrase step,
file aggregation), so a large repository never crowds a small one out of a channel. The
shards' lists are then merged by one cross-shard score that keeps every shard's own order:

    merged = score in its shard x exp(SHARD_BETA x (shard's best meaning cosine - the best
             of any shard) + SHARD_GAMMA x (shard's coverage - the best coverage)
             + SHARD_LAMBDA x (shard's likelihood - the best likelihood))

Within a shard the order is unchanged, so a repository's own answers keep their quality;
what decides how shards interleave is a signal that is comparable between them: the cosine
of the query's nearest chunk in each shard, in the one meaning space every shard shares (the
transformer's when every answering shard has its vectors, else the static tier's). Plain RRF
across shards would tie every shard's first hit; BM25 scores depend on each shard's own term
statistics, so they are not compared. A shard whose nearest chunk is clearly farther from
the query than another shard's gets its whole list scaled down. The second signal is
comparable too: chunk counts. A shard's coverage is the share of the query's terms that its
best chunk holds together, each weighted by its idf over the whole workspace, so a word that
names one repository's subject ("pane", "DataArray", "lint") pulls that repository up, and so
does one chunk saying most of the question. The third signal, from the same counts, says how
often: a shard's likelihood is the mean log-probability
of the query's terms under its vocabulary (the share of its chunks holding each term, smoothed
toward the workspace's share: query-likelihood resource selection), so "window" weighs for a
repository where every tenth chunk says it over one that says it in three. The factors are
computed in pix/shard_factors.py; SHARD_BETA, SHARD_GAMMA and SHARD_LAMBDA were chosen on the
20 development repositories (bench/shards_bench.py).

In a workspace of at least 8 shards only the 6 of largest factor are ranked (and any shard
where a name the query spells is defined, or its phrase is held verbatim): a probe reads each
shard's factor without ranking it (pix/shard_probe.py). They are ranked two at a time, largest
factor first, and a shard whose factor times the most any of its files can score (its
ceiling) is below the merged top so far is left out: the results are the same, and on the 20
development repositories 3.3 shards are ranked a question on average instead of 6.1. The
query is embedded once for every shard (one model, shared; the vector is kept per text), and
the shards are searched concurrently (SQLite and onnxruntime release the GIL). A shard that
is missing, damaged, not a pix database or built with another model is named in `warnings`
and the others answer; when none can, the first shard's error is raised.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import apsw

from pix.errors import PixError, as_pix_error
from pix.output.budget import apply_budget
from pix.output.result import Result, hydrate, project, shown_lines
from pix.output.shown import Redactions
from pix.query import (
    SCHEMA_VERSION,
    QueryEngine,
    chunk_order,
    ranked_list,
    refresh_first,
    retrieve,
)
from pix.request import QueryRequest, check_request, unmatched_warnings
from pix.retrieve import define
from pix.retrieve.hits import Hit
from pix.retrieve.search import RRF_K
from pix.shard_embedder import OnceEmbedder, load_embedder, load_static
from pix.shard_factors import (
    MEANING,
    SHARD_BETA,
    SHARD_GAMMA,
    SHARD_LAMBDA,
    ShardFactor,
    shard_factors,
)
from pix.shard_probe import (
    BREADTH,
    PROBE_FACTOR,
    STAGE,
    ShardProbe,
    TermCounts,
    ceiling,
    probe,
    probes_apply,
    term_counts,
    to_rank,
)
from pix.snapshot import Snapshot, changed_files, select_snapshot
from pix.workspace import Shard, Workspace

THREADS = max(1, min(4, os.cpu_count() or 1))
# What one shard may fail with while the others answer: pix's own errors, and SQLite's raised
# from a statement (busy past the lock wait, a page found corrupt), each reported through
# as_pix_error as a front end would.
SHARD_FAILURES = (PixError, apsw.Error)
# A ceiling and a score are summed in other orders (Python, SQL): a shard is left out only when
# its ceiling is below the floor by more than rounding.
CEILING_SLACK = 1 + 1e-9


class ShardSet:
    """The engines of a workspace's shards, opened once (what a server keeps warm). A shard
    that cannot be opened is kept in `problems` with the reason, and asked again on the next
    `reopen_failed` (a missing database may be indexed meanwhile)."""

    def __init__(
        self,
        workspace: Workspace,
        threads: int = THREADS,
        fresh_for: float = 0.0,
        depth: int | None = None,
        breadth: int | None = BREADTH,
        ceilings: bool = True,
    ) -> None:
        """`fresh_for`: seconds a shard's work-tree check (which files changed since its
        snapshot: a `git ls-files` and a stat per file, 5-15 ms a repository) is trusted
        before it is made again. 0 (a one-shot command): every answer checks every shard.
        `depth`: candidates per channel in each shard; None ranks as `pix query` does on the
        repository alone (pix.retrieve.search.DEPTH). Fewer is faster and changes each
        shard's ranking (bench/shards_bench.py measures both). `ceilings`: leave out chosen
        shards whose ceiling cannot reach the merged top (False ranks every one of them, the
        same answer slower: the bench compares)."""
        self.workspace = workspace
        self.threads = threads
        self.fresh_for = fresh_for
        self.depth = depth
        self.breadth = breadth
        self.ceilings = ceilings
        self._checked: dict[str, tuple[float, list[str]]] = {}
        self.embedder = OnceEmbedder(load_embedder)
        self.static = OnceEmbedder(load_static)
        self.engines: dict[str, QueryEngine] = {}
        self.problems: dict[str, PixError] = {}
        # Concurrently: each opening runs git (its top level) and reads the file's schema, and
        # a shard locked by another process would hold the others up for its whole wait.
        self._each(workspace.shards, self._open)

    def _open(self, shard: Shard) -> None:
        try:
            self.engines[shard.name] = QueryEngine(
                **shard.where(), embedder=self.embedder, static=self.static,
            )  # fmt: skip
            if self.depth is not None:
                self.engines[shard.name].depth = self.depth
            # No shard has the transformer read its candidates on the spot: 40 chunks in each
            # of 20 shards would take seconds a question (pix/retrieve/refine.py).
            self.engines[shard.name].refine_top = 0
            self.problems.pop(shard.name, None)
        except SHARD_FAILURES as exc:
            self.problems[shard.name] = as_pix_error(exc)

    def reopen_failed(self) -> None:
        self._each([s for s in self.workspace.shards if s.name in self.problems], self._open)

    def _each(self, shards: list[Shard], work: Callable[[Shard], object]) -> list:
        """`work` on each shard, in the set's threads (in this one when one would do), its
        values in the shards' order."""
        if self.threads <= 1 or len(shards) <= 1:
            return [work(shard) for shard in shards]
        with ThreadPoolExecutor(max_workers=min(self.threads, len(shards))) as pool:
            return list(pool.map(work, shards))

    def follow_files(self) -> None:
        """A long-lived set (`pix mcp --workspace`): a shard's file deleted or replaced since
        it was opened (`pix index --rebuild`, a copy) is opened again, or, if that fails,
        becomes a problem named in warnings, as a one-shot command would say; answering from
        the unlinked file would be silent and stale. One stat a shard."""
        for shard in self.workspace.shards:
            engine = self.engines.get(shard.name)
            if engine is None or not engine.store.moved():
                continue
            try:
                engine.reopen()
                self.forget(shard.name)
            except SHARD_FAILURES as exc:
                engine.close()
                del self.engines[shard.name]
                self.problems[shard.name] = as_pix_error(exc)

    def select(self, names: list[str] | None) -> list[Shard]:
        """The shards named (all for None or []), in the workspace's order."""
        return list(self.workspace.select(names).shards)

    def changes(self, engine: QueryEngine, request: QueryRequest) -> list[str] | None:
        """The shard's work-tree changes if checked less than `fresh_for` seconds ago, else
        checked now (and kept); None when the request reads a commit or re-indexes first."""
        if request.at is not None or request.refresh or self.fresh_for <= 0:
            return None
        key = str(engine.target.db)
        now = time.monotonic()
        kept = self._checked.get(key)
        if kept is not None and now - kept[0] < self.fresh_for:
            return kept[1]
        with engine.store.read():
            snapshot = select_snapshot(engine.store, engine.target, None)
            changed = changed_files(engine.store, engine.target, snapshot)
        self._checked[key] = (now, changed)
        return changed

    def forget(self, name: str) -> None:
        """Check this shard's work tree again next time (it was just re-indexed)."""
        if name in self.engines:
            self._checked.pop(str(self.engines[name].target.db), None)

    def close(self) -> None:
        for engine in self.engines.values():
            engine.close()
        self.engines.clear()

    def choose(
        self, selected: list[Shard], request: QueryRequest, auto_refresh: bool
    ) -> tuple[list[Shard], dict[str, ShardProbe] | None, dict[str, ShardFactor] | None]:
        """The shards to rank, every selected shard's probe and the factors read from them:
        the `breadth` of largest factor when a probe can stand for each one's ranking
        (pix/shard_probe.py), else all of them and no probes. A shard a server would re-index
        first is not probed."""
        # A probe costs about a ninth of a ranking (20 probes 42 ms, 8 rankings 148 ms): from
        # 8 shards, leaving 2 out pays (bench/shards_bench.py: 8 shards 134 against 181 ms).
        if self.breadth is None or len(selected) < PROBE_FACTOR * self.breadth:
            return selected, None, None
        if not probes_apply(request):
            return selected, None, None

        def one(engine: QueryEngine) -> ShardProbe | None:
            # Only a server that re-indexes needs every shard's work tree before the probe;
            # otherwise just the ranked shards are checked (their answers warn of changes).
            if auto_refresh:
                known = self.changes(engine, request)
                if known is None or known:
                    return None
            return probe(engine, request)

        probes = self.map(selected, one)
        if any(not isinstance(p, ShardProbe) for p in probes.values()):
            return selected, None, None
        factors = shard_factors(probes)
        largest = {name: f.factor for name, f in factors.items()}
        keep = to_rank(probes, largest, [s.name for s in selected], self.breadth)
        return [s for s in selected if s.name in keep], probes, factors

    def rank(
        self,
        selected: list[Shard],
        request: QueryRequest,
        auto_refresh: bool,
        warnings: list[str],
        packing: bool = False,
        probes: dict[str, ShardProbe] | None = None,
        factors: dict[str, ShardFactor] | None = None,
    ) -> tuple[dict[str, ShardAnswer], set[str]]:
        """Each selected shard's own ranking (what `pix query` ranks on that repository
        alone), concurrently: name -> its answer, and the names of the shards asked. A shard
        that cannot answer is named in `warnings`; if none can, the first one's error is
        raised. A shard re-indexed on the way has its work tree checked again next time.
        `probes`: their term counts are kept. `packing`: chunks as `pix pack` reads them.
        With `factors` (the probes' too), the shards are ranked STAGE at a time, largest
        factor first, and a shard that cannot reach the merged top of those before it is
        left out (not asked): the merged results are the same (`omitted`, the candidates and
        the warnings then count the shards ranked, as for those the probe left out)."""
        counted = {
            self.engines[n]: TermCounts(p.df, p.held)
            for n, p in (probes or {}).items()
            if n in self.engines
        }

        def ranking(engine: QueryEngine) -> ShardAnswer:
            known = self.changes(engine, request)
            counts = counted.get(engine)
            return shard_ranking(engine, request, auto_refresh, packing, known, counts)

        if probes is None or factors is None:
            raw = self.map(selected, ranking)
        else:
            raw = self._staged(selected, request, ranking, probes, factors)
        asked = [s for s in selected if s.name in raw]
        raise_if_none(raw, asked)
        answers: dict[str, ShardAnswer] = {}
        for shard in asked:
            value = raw[shard.name]
            if isinstance(value, PixError):
                warnings.append(problem_warning(shard.name, value))
                continue
            answers[shard.name] = value
            warnings.extend(f"{shard.name}: {w}" for w in value.warnings)
            if value.refreshed:
                self.forget(shard.name)
        return answers, {s.name for s in asked}

    def _staged(
        self,
        selected: list[Shard],
        request: QueryRequest,
        ranking: Callable[[QueryEngine], ShardAnswer],
        probes: dict[str, ShardProbe],
        factors: dict[str, ShardFactor],
    ) -> dict:
        """The selected shards' rankings (or errors), STAGE at a time: those where a chunk is
        lifted above all scores first, then by factor. A merged score is a shard's own score
        times its factor, and no score of a shard exceeds its ceiling (its probe's channels
        at rank 1, pix/shard_probe.py), so a shard whose factor x ceiling is below the
        `top`-th merged score so far cannot place a result in the merged top: it is skipped.
        Which shards are skipped depends only on the answers of those ranked before it."""
        order = [s.name for s in selected]
        queue = sorted(
            selected,
            key=lambda s: (not probes[s.name].lifts, -factors[s.name].factor, order.index(s.name)),
        )

        # The most any of a shard's results can score in the merge.
        reach = {
            s.name: factors[s.name].factor * ceiling(probes[s.name], request) * CEILING_SLACK
            for s in queue
        }
        raw: dict = {}
        while queue:
            raw.update(self.map(queue[:STAGE], ranking))
            queue = queue[STAGE:]
            answered = {n: a for n, a in raw.items() if isinstance(a, ShardAnswer)}
            merged = merge(answered, order, request.top, factors)
            floor = merged[-1][1].score if len(merged) == request.top else 0.0
            queue = [s for s in queue if probes[s.name].lifts or reach[s.name] >= floor]
        return raw

    def map(self, shards: list[Shard], work: Callable[[QueryEngine], object]) -> dict:
        """`work` on each shard's engine, concurrently: name -> its value, or the PixError it
        raised (an unopened shard's error). Engines are used by one thread at a time."""

        def one(shard: Shard) -> object:
            if shard.name in self.problems:
                return self.problems[shard.name]
            try:
                return work(self.engines[shard.name])
            except SHARD_FAILURES as exc:
                return as_pix_error(exc)

        return dict(zip([s.name for s in shards], self._each(shards, one), strict=True))


def problem_warning(name: str, error: PixError) -> str:
    hint = f" ({error.hint})" if error.hint else ""
    return f"repository {name} did not answer: {error.message}{hint}"


def unmatched_anywhere(request: QueryRequest, answers: dict[str, ShardAnswer]) -> list[str]:
    """Warnings for the only-path globs that match no file in any answering repository (one
    that matches in some is how a workspace is narrowed, not a typo)."""
    missing = [g for g in request.only_paths if all(g in a.unmatched for a in answers.values())]
    return unmatched_warnings(missing if answers else [], "in the repositories that answered")


def raise_if_none(answers: dict, shards: list[Shard]) -> None:
    """Every shard failed: the first one's error is the answer (its exit code too)."""
    if answers and all(isinstance(a, PixError) for a in answers.values()):
        raise answers[shards[0].name]


@dataclass
class ShardAnswer:
    """One shard's ranked list for a request, before hydration."""

    snapshot: Snapshot
    ranked: list[Hit]
    meaning: dict[str, float]  # meaning channel -> its best raw cosine in this shard
    candidates: int
    warnings: list[str] = field(default_factory=list)
    refreshed: dict | None = None
    route: object = None
    phrases: list[dict] = field(default_factory=list)
    chunks: int = 0  # in its snapshot
    df: dict[str, int] = field(default_factory=dict)  # query term -> chunks holding it
    names: list[dict] = field(default_factory=list)  # what each name of the query found
    held: tuple[tuple[str, ...], ...] = ()  # the sets of query terms one chunk holds together
    history: bool = False  # the history prior weighed its hits
    unmatched: list[str] = field(default_factory=list)  # only-path globs matching no file here


def shard_ranking(
    engine: QueryEngine,
    request: QueryRequest,
    auto_refresh: bool = False,
    packing: bool = False,
    known: list[str] | None = None,
    counts: TermCounts | None = None,
) -> ShardAnswer:
    """What `pix query` ranks for this shard alone (chunks, or files), with its best
    meaning cosines for the cross-shard merge. `packing`: every chunk at every path, in
    chunk mode's order, as `pix pack` reads them (the packet names a repeated text itself,
    pix/output/packet.py), whatever the request's mode. `known`: its work-tree changes, if
    the caller knows them (ShardSet.changes)."""
    warnings: list[str] = []
    request = replace(request)
    # A server (auto_refresh) re-indexes a shard whose files changed; one known unchanged
    # is not looked at again.
    auto = auto_refresh and (known is None or bool(known))
    refreshed, changed = refresh_first(engine, request, warnings, auto)
    if changed is None:
        changed = known
    with engine.store.read():
        found = engine.answer(lambda: retrieve(engine, request, warnings, changed))
        chunks = engine.snapshot_counts(found.snapshot.id)[0]
        if counts is None:  # a probe of the same state counted them (pix/shard_probe.py)
            counts = term_counts(engine, request.query)
        ranked = (chunk_order if packing else ranked_list)(engine, request, found)
    meaning: dict[str, float] = {}
    for hit in found.hits:
        for name in MEANING:
            channel = hit.channels.get(name)
            if channel is not None and channel["score"] > meaning.get(name, -math.inf):
                meaning[name] = channel["score"]
    return ShardAnswer(
        found.snapshot, ranked, meaning, len(found.hits), warnings, refreshed, found.route,
        found.phrases, chunks, counts.df, found.names, counts.held, found.history,
        found.unmatched,
    )  # fmt: skip


def merge(
    answers: dict[str, ShardAnswer],
    order: list[str],
    top: int,
    factors: dict[str, ShardFactor] | None = None,
) -> list[tuple[str, Hit, float]]:
    """The best `top` of all shards' lists by merged score (then workspace order, then each
    shard's own order): (shard, hit, factor). `factors`: shard_factors of the answers by
    default; a caller passes its own when only some shards were ranked (the factors of all
    the shards probed) or to merge with other weights."""
    factors = factors or shard_factors(answers)
    place = {name: i for i, name in enumerate(order)}
    pooled = [
        (hit.score * factors[name].factor, place[name], i, name, hit)
        for name, answer in answers.items()
        for i, hit in enumerate(answer.ranked[:top])
    ]
    pooled.sort(key=lambda row: (-row[0], row[1], row[2]))
    return [
        (name, replace(hit, score=score), factors[name].factor)
        for score, _, _, name, hit in pooled[:top]
    ]


def query_shards(
    shards: ShardSet,
    request: QueryRequest,
    repos: list[str] | None = None,
    reveal: bool = False,
    auto_refresh: bool = False,
) -> dict:
    """The answer to one request across the workspace's shards (`repos`: only these): the
    query response of schema/query-response.v2.json with `repo` on every result and
    `repos`, what each shard answered from."""
    request = replace(request)
    warnings = check_request(request, workspace=True)
    selected = shards.select(repos if repos is not None else request.repos)
    ranked, probes, factors = shards.choose(selected, request, auto_refresh)
    staged = factors if shards.ceilings else None
    answers, asked = shards.rank(
        ranked, request, auto_refresh, warnings, probes=probes, factors=staged
    )
    warnings.extend(unmatched_anywhere(request, answers))
    # Without probes every shard was ranked: its answer holds the same signals.
    factors = factors or shard_factors(answers)
    chosen = merge(answers, [s.name for s in selected], request.top, factors)
    top_score = chosen[0][1].score if chosen else 0.0
    results: list[Result] = []
    files: dict[tuple[str, str, str], object] = {}
    if request.mode == "chunk" and request.view != "minimal":
        chosen = define.placed_each(chosen, shards.engines)
    for name, hit, _ in chosen:
        engine = shards.engines[name]
        if not request.no_content:
            files[(name, hit.blob_sha, hit.path)] = engine.shown(hit.blob_sha, hit.path, reveal)
        one = {(hit.blob_sha, hit.path): files.get((name, hit.blob_sha, hit.path))}
        (res,) = hydrate(one, [hit], request, top_score, reveal)
        res.repo = name
        results.append(res)
    results, budget_cut = apply_budget(results, request.max_characters)
    redactions = Redactions(reveal)
    for res in results:
        lines = shown_lines(res)
        if lines:
            shown = files[(res.repo, res.blob, res.path)]
            found = shown.secrets_in(*lines)
            redactions.add(f"{res.repo}/{res.blob}", found, shown, f"{res.repo}: {res.path}")
    warnings.extend(redactions.warnings())
    projected = []
    for res, (name, _, factor) in zip(results, chosen, strict=False):
        out = {"repo": name, **project(res, request, answers[name].snapshot, factor)}
        if request.explain:
            f = factors[name]
            out["explain"]["shard"] = {
                "factor": round(factor, 6),
                "channel": f.channel,
                "cosine": round(f.cosine, 6) if f.cosine is not None else None,
                "coverage": round(f.coverage, 6),
                "likelihood": round(f.likelihood, 6),
            }
        projected.append(out)
    lead = chosen[0][0] if chosen else next(iter(answers))
    total = sum(min(len(a.ranked), request.top) for a in answers.values())
    response = {
        "schemaVersion": SCHEMA_VERSION,
        "mode": request.mode,
        "query": request.query,
        "snapshot": answers[lead].snapshot.describe(),
        "results": projected,
        "omitted": {"top": total - len(chosen), "budget": budget_cut},
        "warnings": warnings,
        "redactionSummary": redactions.summary(),
        "repos": repos_listing(selected, answers, probes, factors, chosen[: len(results)], asked),
    }
    if request.mode == "file":
        cut = chosen[len(results) :]
        named = [(name, p) for name, hit, _ in cut for p in (hit.path, *hit.copies)]
        response["omitted"]["budgetFiles"] = [p for _, p in named]
        response["omitted"]["budgetRepos"] = [name for name, _ in named]
    refreshed = {n: a.refreshed for n, a in answers.items() if a.refreshed}
    if refreshed:
        response["refreshed"] = refreshed
    if request.explain:
        first = answers[lead]
        response["explain"] = {
            "shape": first.route.shape,
            "fusion": request.fusion,
            "rrfK": RRF_K if request.fusion == "rrf" else None,
            "weights": first.route.weights,
            "priors": request.priors,
            "history": any(a.history for a in answers.values()),
            "candidates": sum(a.candidates for a in answers.values()),
            "phrases": first.phrases,
            "definitions": first.names,
            "shardBeta": SHARD_BETA,
            "shardGamma": SHARD_GAMMA,
            "shardLambda": SHARD_LAMBDA,
        }
    return response


def repos_listing(
    selected: list[Shard],
    answers: dict[str, ShardAnswer],
    probes: dict[str, ShardProbe] | None,
    factors: dict[str, ShardFactor],
    shown: list[tuple[str, Hit, float]],
    asked: set[str],
) -> list[dict]:
    """What each shard answered from, in the workspace's order: the ranked ones, and those
    whose probe kept them from the ranking, by their factor or their ceiling (`ranked:
    false`, no candidates). `asked`: the shards ranked (one that failed is named in warnings
    instead)."""
    out = []
    for shard in selected:
        name = shard.name
        if name in answers:
            snapshot, candidates = answers[name].snapshot, answers[name].candidates
        elif probes is not None and name in probes and name not in asked:
            snapshot, candidates = probes[name].snapshot, 0
        else:
            continue  # it did not answer: named in warnings
        out.append(
            {
                "name": name,
                "snapshot": snapshot.describe(),
                "candidates": candidates,
                "results": sum(1 for n, _, _ in shown if n == name),
                "factor": round(factors[name].factor, 6),
                "ranked": name in answers,
            }
        )
    return out


def query_workspace(
    workspace: Workspace,
    request: QueryRequest,
    repos: list[str] | None = None,
    reveal: bool = False,
) -> dict:
    """One query across a workspace: open its shards, answer, close."""
    shards = ShardSet(workspace)
    try:
        return query_shards(shards, request, repos, reveal)
    finally:
        shards.close()
