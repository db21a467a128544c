"""Run the fused retrieval statement and return the ranked chunk list."""

from __future__ import annotations

import json

import numpy as np

from pix.ingest.terms import code_terms, hyphenated_names, query_terms
from pix.retrieve import commit_log, component, evidence, exports, members, named
from pix.retrieve.hits import Hit, hits_of_rows
from pix.retrieve.priors import ROLE_FACTORS, path_role
from pix.retrieve.route import SQL_CHANNELS, Route
from pix.store import search_sql, texts
from pix.store.db import Store
from pix.store.fts import fts_string

DEPTH = 200  # candidates per channel
PATH_DEPTH = 20  # files the path channel may name
RRF_K = 60


def register_functions(store: Store) -> None:
    store.conn.create_scalar_function("pix_path_role", path_role, 1, deterministic=True)


def _int8(vector: np.ndarray | None, dims: int) -> bytes:
    """A query vector as vec0 reads it; for a channel that is off, any valid unit vector."""
    if vector is None:
        vector = np.zeros(dims, dtype=np.int8)
        vector[0] = 127
    return vector.astype(np.int8).tobytes()


def fts_query(terms: list[str]) -> str:
    """An FTS5 OR-query of quoted terms; quotes keep FTS5 syntax out of user text."""
    return " OR ".join(map(fts_string, terms))


STATEMENTS = {
    ("scoped", "rrf"): search_sql.SEARCH_RRF,
    ("scoped", "dbsf"): search_sql.SEARCH_DBSF,
    ("whole", "rrf"): search_sql.SEARCH_RRF_WHOLE,
    ("whole", "dbsf"): search_sql.SEARCH_DBSF_WHOLE,
    ("given", "rrf"): search_sql.SEARCH_RRF_GIVEN,
    ("given", "dbsf"): search_sql.SEARCH_DBSF_GIVEN,
    ("given_scoped", "rrf"): search_sql.SEARCH_RRF_GIVEN_SCOPED,
    ("given_scoped", "dbsf"): search_sql.SEARCH_DBSF_GIVEN_SCOPED,
}


def _snapshot_paths(store: Store, snapshot_id: int) -> list[str]:
    return [row[0] for row in store.conn.execute(search_sql.SNAPSHOT_PATHS, (snapshot_id,))]


def _python_files(store: Store, snapshot_id: int, every: list[str] | None) -> exports.Files:
    """The snapshot's files as a package's imports read them (`every`: its paths, if listed
    already; else listed when a report names a package)."""

    def blob(path: str) -> tuple[str, int] | None:
        row = store.conn.execute(search_sql.SNAPSHOT_FILE_BLOB, (snapshot_id, path)).fetchone()
        return (row[0], row[1]) if row else None

    def text(sha: str) -> str:
        return texts.text_of(store.conn, sha)

    listing = (
        (lambda: every) if every is not None else (lambda: _snapshot_paths(store, snapshot_id))
    )
    return exports.Files(listing, blob, text)


def search(
    store: Store,
    snapshot_id: int,
    query: str,
    route: Route,
    query_vector: np.ndarray | None,
    paths: list[str] | None = None,
    fusion: str = "rrf",
    priors: bool = True,
    static_vector: np.ndarray | None = None,
    whole: bool = False,
    depth: int = DEPTH,
    near: dict[str, str] | None = None,
) -> list[Hit]:
    """Every candidate of every channel, fused and ordered (score, then path, then line). A
    channel whose query vector is None is off. `whole`: the scope is the whole database (no
    path filter, the snapshot holds every chunk and vector), so the statement need not
    restrict it; the answer is the same. `depth`: candidates per channel. `near`: the
    meaning channels' candidates in the scope, as a warm engine found them in memory (channel
    -> JSON array of [chunk id, distance], pix/retrieve/knn.py; the answer is the same again)
    or a refined pass chose them (pix/retrieve/refine.py)."""
    terms = query_terms(query) or [w.lower() for w in query.split() if w.strip()]
    ident, code, path_terms = terms + hyphenated_names(query), code_terms(query), terms
    weights = dict(route.weights)
    issue = evidence.extract(query) if route.shape == "issue" else None
    if issue is not None:
        if "terms" in evidence.STEPS:
            terms = evidence.select_terms(store.conn, query, issue.title) or terms
            ident = terms
            path_terms = list(dict.fromkeys(terms + evidence.path_words(issue)))
        if "ident" in evidence.STEPS:
            ident, code = evidence.ident_terms(store.conn, issue)
    if not terms:
        weights.update(bm25=0.0, ident=0.0, path=0.0)
    if query_vector is None:
        weights["dense"] = 0.0
    if static_vector is None:
        weights["static"] = 0.0
    params = {
        "snapshot": snapshot_id,
        "paths": json.dumps(paths) if paths is not None else None,
        "qvec": _int8(query_vector, 384),
        "svec": _int8(static_vector, 256),
        "fts": fts_query(terms) if terms else '"pix-no-terms"',
        "ident_terms": json.dumps(ident),
        "path_terms": json.dumps(path_terms),
        "code_terms": json.dumps(code),
        "depth": depth,
        "path_depth": PATH_DEPTH,
        "rrf_k": RRF_K,
        **{f"w_{name}": float(weights[name]) for name in SQL_CHANNELS},
        "priors": int(priors),
        **{f"p_{role}": factor for role, factor in ROLE_FACTORS.items() if role != "source"},
    }
    whole = whole and paths is None
    if near is not None:
        scope = "given" if whole else "given_scoped"
        params.update(dense_near=near["dense"], static_near=near["static"])
    else:
        scope = "whole" if whole else "scoped"
    statement = STATEMENTS[(scope, "dbsf" if fusion == "dbsf" else "rrf")]
    hits = hits_of_rows(store.conn.execute(statement, params).fetchall())
    if issue is not None and "files" in evidence.STEPS and weights.get("evidence", 0.0) > 0:
        every = _snapshot_paths(store, snapshot_id) if paths is None else None
        python = _python_files(store, snapshot_id, every)
        cited = (
            commit_log.cited_changes(store.conn, snapshot_id, issue.cited, paths)
            if "cited" in evidence.STEPS
            else []
        )
        by_cited = evidence.cited_files(cited)
        defining = (
            members.member_files(store.conn, snapshot_id, issue.expanded)
            if "members" in evidence.STEPS
            else {}
        )
        found = evidence.evidence_files(
            issue, paths if every is None else every, python, by_cited, defining
        )
        # A file a cited commit changed says which, as the log channel's files do.
        files = [
            named.NamedFile(p, s, line, explained=commit_log.explained(by_cited.get(p, [])))
            for p, s, line in found
        ]
        hits = named.fuse(
            store.conn, snapshot_id, hits, files, "evidence", weights["evidence"], RRF_K, priors
        )
    if weights.get(component.CHANNEL, 0.0) > 0:
        files = component.component_files(store.conn, snapshot_id, query, paths)
        hits = named.fuse(
            store.conn, snapshot_id, hits, files, component.CHANNEL, weights[component.CHANNEL],
            RRF_K, priors,
        )  # fmt: skip
    if weights.get(commit_log.CHANNEL, 0.0) > 0 and terms:
        files = commit_log.log_files(store.conn, snapshot_id, params["fts"], paths)
        hits = named.fuse(
            store.conn, snapshot_id, hits, files, commit_log.CHANNEL,
            weights[commit_log.CHANNEL], RRF_K, priors,
        )  # fmt: skip
    if issue is not None and "kinds" in evidence.STEPS and priors:
        hits = evidence.demote_noncode(hits)
    return hits
