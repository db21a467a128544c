"""Saved queries ("aliases"): a name for a query request with an explicit mode, in the .pix.db.

The spec of an alias is a query request (schema/query-request.v1.json) in which `mode` is
required (schema/alias.v1.json); it is validated when written and again whenever it is read, so
a row that no longer fits (one written without a mode, or edited by hand) fails with the alias's
name and the command that fixes it. Nothing is migrated silently. Running an alias takes only
output options (OUTPUT_FIELDS): a file alias stays a file alias.

The CLI (`pix alias ...`, `pix run`) and the MCP server call these functions; running an alias
goes through QueryEngine.query, the one query path.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from pix.errors import UsageError, shown_value
from pix.ingest import scan
from pix.locate import locate, open_index
from pix.query import QueryEngine
from pix.request import MAX_QUERY_CHARS, TOP_MAX, TOP_MIN, QueryRequest, check_request
from pix.schemas import first_problem, validator
from pix.store.db import Store, now_iso

SPEC_SCHEMA = "alias.v1.json"
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# What `pix run` / alias_run may change: how the same results are shown, never which results
# are ranked or in which mode. Everything else is part of the saved query.
OUTPUT_FIELDS = ("view", "noContent", "maxCharacters")
MODE_REFUSED = (
    "an alias keeps the mode it was saved with; running it takes no --file or mode "
    "(re-add the alias with --force to change its mode)"
)

LIST = "SELECT name, spec, created_at FROM alias ORDER BY name"
GET = "SELECT name, spec, created_at FROM alias WHERE name = ?"
EXISTS = "SELECT 1 FROM alias WHERE name = ?"
UPSERT = """
INSERT INTO alias(name, spec, created_at) VALUES (?, ?, ?)
ON CONFLICT(name) DO UPDATE SET spec = excluded.spec, created_at = excluded.created_at
"""
DELETE = "DELETE FROM alias WHERE name = ?"
LIST_HINT = "pix alias list shows the saved ones"


# --- schemas -------------------------------------------------------------------------------


def schema_problem(payload: object, ref: str) -> str | None:
    """The first problem of `payload` against the schema at `ref`, in the words that
    pix.schemas.validate uses ("invalid request at <field>: <what>"), or None."""
    return first_problem(validator(ref), payload)


# --- names and specs -----------------------------------------------------------------------


def check_name(name: str) -> None:
    if not name:
        raise UsageError("an alias name cannot be empty")
    if any(c.isspace() for c in name):
        raise UsageError(f"alias name {shown_value(name)} contains whitespace")
    if not NAME_RE.fullmatch(name):
        raise UsageError(
            f"alias name {shown_value(name)} is not allowed: use 1-64 ASCII letters, digits, "
            "'.', '_' or '-', starting with a letter or digit"
        )


def spec_of(request: QueryRequest) -> dict:
    """The spec to store: query and mode always, every other field only where it differs from
    a plain request's default, so a saved alias reads like the command that made it."""
    defaults = QueryRequest(query=request.query).to_json()
    return {
        key: value
        for key, value in request.to_json().items()
        if key in ("query", "mode") or value != defaults[key]
    }


def check_spec(spec: object) -> dict:
    """A spec fit to store, normalised through QueryRequest; UsageError if it is not."""
    problem = schema_problem(spec, SPEC_SCHEMA)
    if problem:
        raise UsageError(f"alias spec: {problem}")
    request = QueryRequest.from_json(spec)
    if len(request.query) > MAX_QUERY_CHARS:
        # A run would read only the start (with a warning each time): save what is read.
        raise UsageError(
            f"alias spec: the query is {len(request.query):,} characters; an alias holds at "
            f"most {MAX_QUERY_CHARS:,}"
        )
    check_request(replace(request))  # refuse now what every run would refuse
    if request.at is not None:
        scan.check_ref(request.at)  # a branch name: every run would refuse it
    return spec_of(request)


def _detail(problem: str) -> str:
    return problem.removeprefix("invalid request at ").removeprefix("(top level): ")


class AliasExistsError(UsageError):
    """A name taken: the CLI's hint names --force, MCP's its `force` argument."""


@dataclass(frozen=True)
class Alias:
    name: str
    spec: dict
    created_at: str

    def to_json(self) -> dict:
        return {"name": self.name, "spec": self.spec, "createdAt": self.created_at}


def _read(name: str, raw: str, created_at: str) -> Alias:
    """A stored row, validated: an invalid one names the alias and the command that fixes it."""
    try:
        spec = json.loads(raw)
    except json.JSONDecodeError as exc:
        problem: str | None = f"its spec is not JSON ({exc.msg})"
        spec = None
    else:
        # The schema, and what it lets through and every run refuses (a blank glob, a branch
        # name in `at`, saved by an older pix): said here, with the fix.
        try:
            check_spec(spec)
            problem = None
        except UsageError as exc:
            problem = exc.message.removeprefix("alias spec: ")
    # quoted for the shell, and after `--` when it would read as an option (`-rf`)
    shell_name = ("-- " if name.startswith("-") else "") + shlex.quote(name)
    try:
        check_name(name)  # a row written by hand, or by a pix with other rules
    except UsageError as exc:
        raise UsageError(
            f"alias {shown_value(name)} is invalid: {exc.message}",
            hint=f"remove it (pix alias rm {shell_name}) and save its query under a valid name",
        ) from None
    if problem:
        query = spec.get("query") if isinstance(spec, dict) else None
        text = shlex.quote(query) if isinstance(query, str) and query else "QUERY"
        raise UsageError(
            f"alias {shown_value(name)} is invalid: {_detail(problem)}",
            hint=f"re-add it, with its mode (chunk, or file with --file): pix alias add "
            f"{shell_name} {text} [--file] [options] --force; or remove it: pix alias rm "
            f"{shell_name}",
        )
    return Alias(name, spec, created_at)


# --- the application functions -------------------------------------------------------------


@contextmanager
def opened(db: str | None = None, cwd: str | None = None, write: bool = False) -> Iterator[Store]:
    """The database of `cwd` (or `db`); aliases live in an existing index. To `write`, what
    a write would fail on or spread is refused before any migration (open_store)."""
    store = open_index(locate(cwd, db), check=write, write=write)
    try:
        yield store
    finally:
        store.close()


def add(store: Store, name: str, spec: object, force: bool = False) -> dict:
    """Save `spec` as `name` in one transaction. A clash is refused unless `force`."""
    check_name(name)
    clean = check_spec(spec)
    top = clean.get("top")
    if top is not None and not TOP_MIN <= top <= TOP_MAX:  # every run would clamp it and warn
        raise UsageError(
            f"alias spec: top {top} is outside {TOP_MIN}-{TOP_MAX}",
            hint=f"save it with a top from {TOP_MIN} to {TOP_MAX}",
        )
    created = now_iso()
    store.ready_to_write()
    with store.write() as conn:
        existed = conn.execute(EXISTS, (name,)).fetchone() is not None
        if existed and not force:
            raise AliasExistsError(
                f"alias {shown_value(name)} already exists",
                hint=f"pass --force to replace it, or see it with pix alias show {name}",
            )
        conn.execute(UPSERT, (name, json.dumps(clean, ensure_ascii=False), created))
    return {**Alias(name, clean, created).to_json(), "replaced": existed}


def get(store: Store, name: str) -> Alias:
    check_name(name)
    row = store.conn.execute(GET, (name,)).fetchone()
    if row is None:
        raise UsageError(f"no alias named {shown_value(name)}", hint=LIST_HINT)
    return _read(*row)


def list_all(store: Store) -> dict:
    """Every alias; an invalid one is listed with its problem instead of failing the list, so
    the list is where one finds what to fix."""
    aliases = []
    for name, raw, created in store.conn.execute(LIST).fetchall():
        try:
            aliases.append(_read(name, raw, created).to_json())
        except UsageError as exc:
            error = exc.message + (f" ({exc.hint})" if exc.hint else "")
            aliases.append({"name": name, "spec": None, "createdAt": created, "error": error})
    return {"aliases": aliases}


def remove(store: Store, name: str) -> dict:
    """Delete an alias, valid or not (removing is one way to fix an invalid one, a name
    that breaks the naming rules included)."""
    if not name:
        raise UsageError("an alias name cannot be empty")
    store.ready_to_write()
    with store.write() as conn:
        conn.execute(DELETE, (name,))
        if conn.changes() == 0:
            raise UsageError(f"no alias named {shown_value(name)}", hint=LIST_HINT)
    return {"removed": name}


def request_for(store: Store, name: str, overrides: dict | None = None) -> QueryRequest:
    """The request an alias runs: its spec, with output options (OUTPUT_FIELDS) overridden."""
    overrides = dict(overrides or {})
    if "mode" in overrides:
        raise UsageError(MODE_REFUSED)
    other = sorted(set(overrides) - set(OUTPUT_FIELDS))
    if other:
        raise UsageError(
            f"running an alias takes only output options ({', '.join(OUTPUT_FIELDS)}), "
            f"not {', '.join(other)}; re-add the alias with --force to change its query"
        )
    return QueryRequest.from_json({**get(store, name).spec, **overrides})


def run(
    name: str,
    overrides: dict | None = None,
    db: str | None = None,
    cwd: str | None = None,
    reveal: bool = False,
    default_max: int | None = None,
) -> dict:
    """`pix run NAME`: the alias's request through QueryEngine.query, as `pix query` runs it.
    `reveal` is the CLI's --show-secrets; an alias never stores it. `default_max` is the
    budget if neither the alias nor `overrides` set one (the CLI's budget for a terminal)."""
    engine = QueryEngine(db=db, cwd=cwd)
    try:
        request = request_for(engine.store, name, overrides)
        if request.max_characters is None and "maxCharacters" not in (overrides or {}):
            request.max_characters = default_max
        return engine.query(request, reveal)
    finally:
        engine.close()


def add_at(
    name: str, spec: object, force: bool = False, db: str | None = None, cwd: str | None = None
) -> dict:
    with opened(db, cwd, write=True) as store:
        saved = add(store, name, spec, force)
        # (`pix index --rebuild` meanwhile)
        store.check_not_moved(f"saving alias {shown_value(name)}")
        return saved


def show_at(name: str, db: str | None = None, cwd: str | None = None) -> dict:
    with opened(db, cwd) as store:
        return get(store, name).to_json()


def list_at(db: str | None = None, cwd: str | None = None) -> dict:
    with opened(db, cwd) as store:
        return list_all(store)


def remove_at(name: str, db: str | None = None, cwd: str | None = None) -> dict:
    with opened(db, cwd, write=True) as store:
        removed = remove(store, name)
        store.check_not_moved(f"removing alias {shown_value(name)}")
        return removed
