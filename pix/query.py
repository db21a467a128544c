"""`pix query`: the application function that the CLI, aliases and MCP all call.

request -> snapshot -> fused chunks (SQL) -> path filter (inside SQL) -> [file aggregation]
-> top -> hydration -> character budget -> response dict (schema/query-response.v2.json)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import apsw
import numpy as np

from pix.errors import (
    REBUILD_HINT,
    DatabaseError,
    NotIndexedError,
    PixError,
)
from pix.index import index_repository
from pix.ingest import redact
from pix.ingest.embed import check_identity, model_identity, quantize
from pix.locate import locate, open_index
from pix.output.budget import apply_budget
from pix.output.pathtext import path_sample
from pix.output.result import hydrate, project, shown_lines
from pix.output.shown import Redactions, ShownFile
from pix.request import QueryRequest, check_request, filter_paths, unmatched_warnings
from pix.retrieve import (
    define,
    foreign,
    history,
    imported,
    knn,
    outline,
    phrase,
    refine,
    tested,
    titled,
)
from pix.retrieve.hits import Hit
from pix.retrieve.knn import WarmVectors
from pix.retrieve.rank import arrange, carried, rescore
from pix.retrieve.route import Route, reading, route
from pix.retrieve.search import DEPTH, RRF_K, register_functions, search
from pix.retrieve.windows import embed_query, embed_static
from pix.snapshot import (
    Originals,
    Snapshot,
    changed_files,
    judged_snapshot,
    reindex_command,
    select_snapshot,
    stale_elsewhere,
)
from pix.snapshot import other_tree as snapshot_other_tree
from pix.store import content, sql, texts
from pix.store.db import Store

SCHEMA_VERSION = 2  # 2: file results name their `file` (seed 000), omitted.budgetFiles
CHANGED_PATHS_SHOWN = 20  # in `refreshed`, after an automatic refresh
SHOWN_CHARS_KEPT = 16 << 20  # the file texts a warm engine keeps


T = TypeVar("T")


class QueryEngine:
    """An open database plus, once needed, the model: what a long-lived server keeps warm."""

    def __init__(
        self,
        db: str | None = None,
        cwd: str | None = None,
        embedder=None,
        static=None,
        tree_here: bool = True,
    ) -> None:
        """`embedder`, `static`: models to share with other engines (a workspace's shards
        embed one query once, pix.shards); by default each engine loads its own on first use.
        `tree_here`: False for a workspace's bare `db` entry (Target.tree_here)."""
        self.target = replace(locate(cwd, db), tree_here=tree_here)
        self.store: Store = open_index(self.target)
        try:
            check_identity({key: self.store.meta(key) for key in model_identity()})
        except Exception:
            self.store.close()
            raise
        register_functions(self.store)
        self._embedder = embedder
        self._static = static
        self._shown: dict[str, ShownFile] = {}
        self._originals = Originals(self.store, self.target)
        self._shown_chars = 0
        # What _per_version keeps: name -> ((snapshot id, data_version), value).
        self._kept: dict[str, tuple[tuple[int, int], Any]] = {}
        # Candidates per channel: what `pix query` ranks; a workspace may ask fewer of each
        # shard (pix.shards.ShardSet depth).
        self.depth = DEPTH
        # The vector tables in memory once the engine answers again (pix/retrieve/knn.py).
        self.warm = WarmVectors()
        # Best candidates a question may have the transformer read while chunks lack their
        # vectors (pix/retrieve/refine.py; 0: never), and the vectors it made.
        self.refine_top = refine.REFINE_TOP
        self.refined = refine.RefinedVectors()

    def _per_version(self, name: str, snapshot_id: int, make: Callable[[], T]) -> T:
        """What `make` says of a snapshot, kept under `name` until the file changes (PRAGMA
        data_version moves when another connection commits). Call it inside a read."""
        key = (snapshot_id, self.store.conn.execute("PRAGMA data_version").fetchone()[0])
        kept = self._kept.get(name)
        if kept is None or kept[0] != key:
            kept = self._kept[name] = (key, make())
        return kept[1]

    def _counts(self, snapshot_id: int) -> tuple[tuple[int, int, int], bool]:
        """(chunks, embedded, static) of a snapshot, and whether they are the database's:
        counting costs 10-40 ms a query on a 10,000-chunk database, as much as a channel."""

        def count() -> tuple[tuple[int, int, int], bool]:
            row = self.store.conn.execute(sql.SNAPSHOT_COUNTS, {"snapshot": snapshot_id})
            counts = tuple(row.fetchone())
            totals = tuple(self.store.conn.execute(sql.CHUNK_TOTALS).fetchone())
            return counts, counts == totals  # type: ignore[return-value]

        return self._per_version("counts", snapshot_id, count)

    def snapshot_counts(self, snapshot_id: int) -> tuple[int, int, int]:
        """(chunks, embedded, static) of a snapshot, kept until the file changes. Call it
        inside a read."""
        return self._counts(snapshot_id)[0]

    def foreign_folders(self, snapshot_id: int) -> tuple[str, ...]:
        """The snapshot's folders of someone else's code (pix/retrieve/foreign.py), kept until
        the file changes. Call it inside a read."""
        return self._per_version(
            "foreign", snapshot_id, lambda: foreign.folders(self.store.conn, snapshot_id)
        )

    def whole_scope(self, snapshot_id: int) -> bool:
        """Whether the snapshot holds every chunk and every vector of the database (one
        snapshot, or all alike): then its scope needs no restricting (search_sql's WHOLE
        statements). Kept with snapshot_counts. Call it inside a read."""
        return self._counts(snapshot_id)[1]

    def reopen(self) -> None:
        """Open the database again (after an index run wrote to it, or when the file at the
        path was replaced: then it may come from another model). Kept files are dropped: an
        index run may have masked a stored text again."""
        self.store.close()
        self.store = open_index(self.target)
        try:
            check_identity({key: self.store.meta(key) for key in model_identity()})
        except Exception:
            self.store.close()
            raise
        register_functions(self.store)
        self._shown.clear()
        self._originals = Originals(self.store, self.target)
        self._shown_chars = 0
        self._kept.clear()  # a new connection's data_version starts again
        self.warm.drop()

    def shown(self, blob: str, path: str, reveal: bool = False) -> ShownFile:
        """File `blob` as answers show it, with the originals too when `reveal` (read from the
        work tree or git at `path`; never kept). The newest files, up to SHOWN_CHARS_KEPT
        characters, are kept for the next answer (an MCP server asks about the same files
        again and again)."""
        if reveal:
            return self._load(blob, path)
        shown = self._shown.pop(blob, None)
        if shown is None:
            shown = self._load(blob)
            self._shown_chars += shown.chars
        self._shown[blob] = shown  # newest last
        while self._shown_chars > SHOWN_CHARS_KEPT and len(self._shown) > 1:
            oldest = next(iter(self._shown))
            self._shown_chars -= self._shown.pop(oldest).chars
        return shown

    def _load(self, blob: str, reveal_at: str | None = None) -> ShownFile:
        """`reveal_at`: the path to read the original from, for --show-secrets; only a file
        with a masked secret has one to read (each folder tried costs a git process)."""
        conn = self.store.conn
        text = texts.text_of(conn, blob)
        secrets = conn.execute(sql.SECRETS_OF_BLOB, (blob,)).fetchall()
        revealed = self._originals.read(reveal_at, blob) if reveal_at and secrets else None
        return ShownFile(text, secrets, revealed)

    def answer(self, run: Callable[[], dict]) -> dict:
        """Run one answer; a damaged file surfaces as odd SQL errors, so check it then, and a
        damaged page read is said with the file's path (a workspace has several)."""
        try:
            return run()
        except apsw.SQLError as exc:
            self.store.check_integrity()
            raise exc
        except (apsw.CorruptError, apsw.NotADBError) as exc:
            raise DatabaseError(
                f"the database {self.target.db} is damaged ({exc})", hint=REBUILD_HINT
            ) from None

    def close(self) -> None:
        self.store.close()

    def embedder(self):
        if self._embedder is None:
            from pix.ingest.embed import Embedder

            self._embedder = Embedder()
        return self._embedder

    def static_embedder(self):
        if self._static is None:
            from pix.ingest.static import StaticEmbedder

            self._static = StaticEmbedder()
        return self._static

    def static_current(self) -> bool:
        """Whether the database's static vectors come from this pix's token table (another
        table's are dropped and made again by the next `pix index`)."""
        from pix.ingest.static import static_identity

        return all(self.store.meta(k) == v for k, v in static_identity().items())

    def near(
        self, queries: dict[str, np.ndarray | None], k: int, snapshot_id: int,
        paths: list[str] | None = None,
    ) -> dict[str, str] | None:  # fmt: skip
        """Each channel's k nearest [chunk id, distance] in the snapshot, at `paths` (None:
        every path), from the warm matrices (a JSON array; pix/retrieve/knn.py), or None while
        the engine is not warm. Call it inside a read."""
        conn = self.store.conn
        # data_version moves for other connections' commits, total_changes for this one's.
        data_version = conn.execute("PRAGMA data_version").fetchone()[0]
        version = (id(self.store), data_version, conn.total_changes())
        scope = knn.Scope(snapshot_id, self.whole_scope(snapshot_id), paths)
        return self.warm.candidates(conn, version, queries, k, scope)

    def query(
        self, request: QueryRequest, reveal: bool = False, auto_refresh: bool = False
    ) -> dict:
        return self.answer(lambda: run_query(self, replace(request), reveal, auto_refresh))


@dataclass
class Retrieval:
    """The fused chunk list for a request, with the snapshot it came from."""

    snapshot: Snapshot
    hits: list[Hit]
    route: Route
    phrases: list[dict] = field(default_factory=list)  # what each phrase of the query found
    names: list[dict] = field(default_factory=list)  # what each name of the query found
    history: bool = False  # the history prior weighed the hits (pix/retrieve/history.py)
    unmatched: list[str] = field(default_factory=list)  # only-path globs matching no file


def refresh_first(
    engine: QueryEngine, request: QueryRequest, warnings: list[str], auto: bool = False
) -> tuple[dict | None, list[str] | None]:
    """Re-index changed files before reading: when the request asks to, or, with `auto` (a
    long-lived server), when files changed since the work tree's snapshot was indexed.
    Returns what to report as `refreshed`, and the work tree's changes when this already
    looked (none after a re-index), so that `retrieve` need not look again."""
    if request.at is not None:
        if request.refresh:
            warnings.append("refresh has no effect with at: a commit's snapshot never changes")
        return None, None
    changed: list[str] = []
    if auto and not request.refresh:
        with engine.store.read():
            snapshot = select_snapshot(engine.store, engine.target, None)
            changed = changed_files(engine.store, engine.target, snapshot)
        if not changed:
            return None, []
    elif not request.refresh:
        return None, None
    elif (other := other_tree(engine)) is not None:
        # `--db` names another repository's database (its tree is on this machine): indexing
        # this folder into it would add a snapshot that answers every later query instead.
        warnings.append(
            f"refresh skipped: {engine.target.db} indexes {other}, not {engine.target.root}; "
            f"run `{reindex_command(other, engine.target.db)}` in {other} to refresh it"
        )
        return None, None
    elif not engine.target.tree_here and judged(engine) is None:
        # A workspace's bare `db` entry runs in the database's folder, no tree of it.
        warnings.append(
            f"refresh skipped: {engine.target.db} is a workspace's bare db entry, with no work "
            "tree here; run `pix index` in its repository to refresh it"
        )
        return None, None
    if engine.store.read_only:
        warnings.append(
            f"refresh skipped: pix cannot write {engine.target.db} or its folder (read-only); "
            "this answer is the index as it stands"
        )
        return None, changed or None
    target = engine.target
    embed = fully_embedded(engine)
    engine.store.close()
    # No quick_check on every refresh: the engine checks when SQL fails (answer).
    report = index_repository(
        str(target.root),
        str(target.db),
        embed=embed,
        embedder=engine.embedder() if embed else None,
        check=False,
    )
    engine.reopen()
    refreshed: dict = {"files": report.files, "newBlobs": report.new_blobs}
    if changed:
        refreshed.update(changed=len(changed), changedPaths=changed[:CHANGED_PATHS_SHOWN])
    return refreshed, []


def fully_embedded(engine: QueryEngine) -> bool:
    """Whether every chunk of the work tree's snapshot has its transformer vector. A refresh
    keeps such an index whole (it embeds the changed files' chunks: a second or so); on one
    whose transformer work is unfinished (`--static-only`, interrupted) it gives the changed
    files their static vectors only. Embedding the rest is `pix index`'s work, which had taken
    a refresh 90 s on tmux, an MCP server's first query 39 s on just (audit)."""
    with engine.store.read():
        try:
            snapshot = select_snapshot(engine.store, engine.target, None)
        except NotIndexedError:  # no work-tree snapshot yet: the refresh makes the first one
            return False
        chunks, embedded, _ = engine.snapshot_counts(snapshot.id)
    return embedded >= chunks


def judged(engine: QueryEngine) -> Snapshot | None:
    """pix.snapshot.judged_snapshot, in a read of its own."""
    with engine.store.read():
        return judged_snapshot(engine.store, engine.target)


def other_tree(engine: QueryEngine) -> str | None:
    """The folder this database indexes when it is another folder's on this machine
    (pix.snapshot.other_tree): never refreshed from here."""
    with engine.store.read():
        return snapshot_other_tree(engine.store, engine.target)


def retrieve(
    engine: QueryEngine,
    request: QueryRequest,
    warnings: list[str],
    changed: list[str] | None = None,
) -> Retrieval:
    """Select the snapshot, embed the query and run the fused SQL: what `pix query` and
    `pix pack` share. Call it inside `engine.store.read()` and hydrate in the same one.
    `changed`: the work tree's changes if the caller just looked (refresh_first)."""
    store, target = engine.store, engine.target
    snapshot = select_snapshot(store, target, request.at)
    if request.at is None:
        if changed is None:
            changed = changed_files(store, target, snapshot)
        if changed:
            warnings.append(
                f"{len(changed)} file(s) changed since this snapshot was indexed "
                f"({path_sample(changed)}); "
                # (said to `pix run` and MCP clients too, which take no --refresh: audit)
                "`pix index` includes them (so does --refresh on `pix query` and `pix pack`)"
            )
        elif not request.refresh:  # (a refresh skipped for this reason said so already)
            warnings.extend(stale_elsewhere(store, target, snapshot))
    if store.meta(content.REDACT_VERSION_KEY) != str(redact.VERSION):
        warnings.append(
            "this database was masked by another version of the secret detector; "
            "run `pix index` to mask it again"
        )
    chunks, embedded, static = engine.snapshot_counts(snapshot.id)
    r = route(request.query, request.channels)
    vector, static_vector = query_vectors(engine, request.query, r, embedded, static)
    paths, unmatched = filter_paths(store, snapshot.id, request.only_paths, request.ignore_paths)
    whole = paths is None and engine.whole_scope(snapshot.id)
    near = None
    if vector is not None or static_vector is not None:
        near = engine.near(
            {"dense": vector, "static": static_vector}, engine.depth, snapshot.id, paths
        )
    hits = search(
        store, snapshot.id, request.query, r, vector, paths, request.fusion, request.priors,
        static_vector, whole, engine.depth, near,
    )  # fmt: skip
    refined = 0
    # The first pass embedded the query if anything is embedded; a vector of zeros then (no
    # known token) has no direction to read the candidates by.
    readable = vector is not None or not embedded
    wanted = r.weights["dense"] > 0 and embedded < chunks and hits
    if engine.refine_top and readable and wanted:
        second = reading(r)
        hits, refined = refine.second_pass(
            engine, request, second, snapshot.id, hits, vector, static_vector, paths, whole,
            warnings,
        )  # fmt: skip
        if refined:  # the hits are the second pass's: the lifts and --explain weigh as it did
            r = second
    if r.weights["dense"] > 0:
        static_searched = static if static_vector is not None else 0
        # Searchable, yet no vector: the static tier knows none of the question's words.
        unknown = static_vector is None and static_searchable(engine, r, static)
        warnings.extend(
            refine.coverage_warning(chunks, embedded, static_searched, refined, unknown)
        )
    hits = rescore(hits, request.fusion)
    reports: list[dict] = []
    names: list[dict] = []
    # The history prior weighs the final list (below); the lifts must allow for it.
    weighs = request.priors and history.applies(request.query, r.shape)
    if define.enabled(request.channels, r.shape):
        hits, names, weight = define.rank_definitions(
            store, snapshot.id, request.query, r, hits, paths, request.fusion, request.priors,
            weighs,
        )  # fmt: skip
        if weight:  # the phrase step must outrank this channel too
            r = Route(r.shape, {**r.weights, define.CHANNEL: weight})
    if phrase.enabled(request.channels, r.shape):
        hits, reports = phrase.rank_phrases(
            store, snapshot.id, request.query, r, hits, paths, request.fusion, request.priors,
            weighs,
        )  # fmt: skip
    elif phrase.quoted_enabled(request.channels, r.shape):
        hits, reports, weight = phrase.rank_quoted(
            store, snapshot.id, request.query, hits, paths, request.fusion, request.priors
        )
        if weight:  # --explain's weights show the vote, as the definition step's
            r = Route(r.shape, {**r.weights, phrase.CHANNEL: weight})
    # After the lifts, so that a copy's chunk they found is weighed as one too.
    hits = foreign.weigh(hits, engine.foreign_folders(snapshot.id), request.priors)
    # Last, so that it weighs every chunk once, lifted ones too.
    weighed = False
    if weighs:
        hits, weighed = history.weigh(store.conn, snapshot.id, hits, r.shape)
    return Retrieval(snapshot, hits, r, reports, names, weighed, unmatched)


def ranked_list(engine: QueryEngine, request: QueryRequest, found: Retrieval) -> list[Hit]:
    """The ranked list the request's mode shows: files, or chunks with each file's strongest
    chunk scored as its file (rank.carried), each content once. Inside the read that
    retrieved `found`."""
    if request.mode == "file":
        return ranked_files(engine, request, found)
    return arrange(chunk_order(engine, request, found), False)


def chunk_order(engine: QueryEngine, request: QueryRequest, found: Retrieval) -> list[Hit]:
    """Every chunk at every path, each file's strongest chunk scored as its file in file
    mode's list (rank.carried): chunk mode's order before copies fold, as `pix pack` reads it
    (its packet names a repeated text itself)."""
    return carried(found.hits, ranked_files(engine, request, found))


def ranked_files(engine: QueryEngine, request: QueryRequest, found: Retrieval) -> list[Hit]:
    """File mode's list: each file by its chunks' evidence (rank.by_file), then the outline,
    tested-file, titled-file and imported-file steps (pix/retrieve/outline.py, tested.py,
    titled.py, imported.py)."""
    files = arrange(found.hits, True)
    if outline.enabled(request.channels, found.route.shape):
        files = _outlined(engine, request.query, found.route.shape, files)
    if tested.enabled(request.priors):
        files = tested.lend(files)
    if titled.enabled(request.channels, found.route.shape):
        files = titled.lift_titled(request.query, files)
    if imported.enabled(request.channels, found.route.shape):
        files = imported.lift_imported(engine.store.conn, files)
    return files


def _outlined(engine: QueryEngine, query: str, shape: str, files: list[Hit]) -> list[Hit]:
    """The outline step over `files`, or `files` as they are when the static table cannot be
    read (the static channel says so)."""
    try:
        static = engine.static_embedder()
    except PixError:
        return files
    return outline.lift_outlines(engine.store.conn, static, query, shape, files)


def query_vectors(
    engine: QueryEngine, query: str, r: Route, embedded: int, static: int
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The query's transformer and static-tier vectors (int8), each None when its channel is
    off: weight 0, nothing in the snapshot to search, or no known token in the query (an emoji
    has no direction: vec0 would hand out k arbitrary chunks at a NULL distance)."""
    vector = static_vector = None
    if r.weights["dense"] > 0 and embedded:
        vector = quantize(embed_query(engine.embedder(), query, r.shape))[0]
    if static_searchable(engine, r, static):
        static_vector = quantize(embed_static(engine.static_embedder(), query, r.shape))[0]
    vector = vector if vector is not None and vector.any() else None
    static_vector = static_vector if static_vector is not None and static_vector.any() else None
    return vector, static_vector


def static_searchable(engine: QueryEngine, r: Route, static: int) -> bool:
    """Whether the static tier searches this route: weighed, with vectors in the snapshot, of
    the table the engine's static model makes."""
    return r.weights["static"] > 0 and static > 0 and engine.static_current()


def run_query(
    engine: QueryEngine, request: QueryRequest, reveal: bool = False, auto_refresh: bool = False
) -> dict:
    """The answer to one request. `reveal` shows secrets unmasked: the CLI's owner-only
    --show-secrets; nothing else passes it. `auto_refresh` (the MCP server) re-indexes
    first if files changed since the snapshot was indexed."""
    warnings = check_request(request)
    refreshed, changed = refresh_first(engine, request, warnings, auto_refresh)
    with engine.store.read():
        found = retrieve(engine, request, warnings, changed)
        warnings.extend(unmatched_warnings(found.unmatched))
        ranked = ranked_list(engine, request, found)
        selected = ranked[: request.top]
        if request.mode == "chunk" and request.view != "minimal":  # the views that show them
            selected = define.placed(selected, engine)
        files = {
            (hit.blob_sha, hit.path): engine.shown(hit.blob_sha, hit.path, reveal)
            for hit in ([] if request.no_content else selected)
        }
        hydrated = hydrate(files, selected, request, ranked[0].score if ranked else 0.0, reveal)
        results, budget_cut = apply_budget(hydrated, request.max_characters)
        if hydrated and not results:  # a JSON reader has no footer line to tell it
            warnings.append(
                f"the character budget ({request.max_characters:,}) cut every result; "
                "raise it (0: no limit) to see them"
            )
        redactions = Redactions(reveal)
        for res in results:
            lines = shown_lines(res)
            if lines:
                shown = files[(res.blob, res.path)]
                redactions.add(res.blob, shown.secrets_in(*lines), shown, res.path)
        warnings.extend(redactions.warnings())
    snapshot = found.snapshot
    response = {
        "schemaVersion": SCHEMA_VERSION,
        "mode": request.mode,
        "query": request.query,
        "snapshot": snapshot.describe(),
        "results": [project(res, request, snapshot) for res in results],
        "omitted": {"top": len(ranked) - len(selected), "budget": budget_cut},
        "warnings": warnings,
        "redactionSummary": redactions.summary(),
    }
    if request.mode == "file":  # what did not fit is still named, so it can be asked for
        cut = hydrated[len(hydrated) - budget_cut :] if budget_cut else []
        response["omitted"]["budgetFiles"] = [p for res in cut for p in (res.path, *res.copies)]
    if refreshed:
        response["refreshed"] = refreshed
    if request.explain:
        response["explain"] = {
            "shape": found.route.shape,
            "fusion": request.fusion,
            "rrfK": RRF_K if request.fusion == "rrf" else None,
            "weights": found.route.weights,
            "priors": request.priors,
            "history": found.history,
            "candidates": len(found.hits),
            "phrases": found.phrases,
            "definitions": found.names,
        }
    return response


def query(
    request: QueryRequest, db: str | None = None, cwd: str | None = None, reveal: bool = False
) -> dict:
    """One query against the database of `cwd` (or `db`): open, answer, close."""
    engine = QueryEngine(db=db, cwd=cwd)
    try:
        return engine.query(request, reveal)
    finally:
        engine.close()
