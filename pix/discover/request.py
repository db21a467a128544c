"""The discover request: schema/discover-request.v1.json, validated, with its defaults applied."""

from __future__ import annotations

from dataclasses import dataclass, field

from pix.errors import SHOWN_VALUE, UsageError, shown_value
from pix.schemas import load, validate

REQUEST_SCHEMA = "discover-request.v1.json"


@dataclass(frozen=True)
class Hypothesis:
    id: str
    pattern: str
    mode: str  # 'literal' | 'regex'
    case_sensitive: bool = True

    def describe(self) -> dict:
        return {
            "id": self.id,
            "pattern": self.pattern,
            "mode": self.mode,
            "caseSensitive": self.case_sensitive,
        }


@dataclass(frozen=True)
class Request:
    queries: list[Hypothesis]
    roots: list[str] = field(default_factory=lambda: ["."])
    globs: list[str] = field(default_factory=list)
    max_candidates: int = 8
    max_matches_per_search: int = 500
    max_matches_per_file: int = 20
    snippet_length: int = 160
    output_mode: str = "compact"
    filter_mode: str = "recommended"
    time_budget_ms: int = 5000

    def describe(self) -> dict:
        """The request as answered: every default made explicit."""
        return {
            "queries": [q.describe() for q in self.queries],
            "roots": list(self.roots),
            "globs": list(self.globs),
            "maxCandidates": self.max_candidates,
            "maxMatchesPerSearch": self.max_matches_per_search,
            "maxMatchesPerFile": self.max_matches_per_file,
            "snippetLength": self.snippet_length,
            "outputMode": self.output_mode,
            "filterMode": self.filter_mode,
            "timeBudgetMs": self.time_budget_ms,
        }


def _default(name: str) -> object:
    return load(REQUEST_SCHEMA)["properties"][name]["default"]


def parse_request(payload: object) -> Request:
    """Validate against the schema (exit 2 on the first problem, naming the field), refuse
    duplicate ids, and fill in the defaults. A query without `mode` is a validation error:
    guessing literal or regex would make its absence evidence meaningless."""
    validate(payload, REQUEST_SCHEMA)
    assert isinstance(payload, dict)
    seen: set[str] = set()
    queries = []
    for i, q in enumerate(payload["queries"]):
        if q["id"] in seen:
            said = shown_value(q["id"])
            raise UsageError(f"invalid request at queries/{i}/id: {said} is used twice")
        seen.add(q["id"])
        queries.append(Hypothesis(q["id"], q["pattern"], q["mode"], q.get("caseSensitive", True)))

    def get(key: str) -> object:
        return payload.get(key, _default(key))

    return Request(
        queries=queries,
        roots=list(get("roots")),  # type: ignore[arg-type]
        globs=list(get("globs")),  # type: ignore[arg-type]
        max_candidates=int(get("maxCandidates")),  # type: ignore[arg-type]
        max_matches_per_search=int(get("maxMatchesPerSearch")),  # type: ignore[arg-type]
        max_matches_per_file=int(get("maxMatchesPerFile")),  # type: ignore[arg-type]
        snippet_length=int(get("snippetLength")),  # type: ignore[arg-type]
        output_mode=str(get("outputMode")),
        filter_mode=str(get("filterMode")),
        time_budget_ms=int(get("timeBudgetMs")),  # type: ignore[arg-type]
    )


def request_from_flags(
    literals: list[str],
    regexes: list[str],
    roots: list[str],
    globs: list[str],
    ignore_case: bool = False,
    native_only: bool = False,
    detailed: bool = False,
    max_candidates: int | None = None,
) -> dict:
    """The JSON request of `pix discover -l ID=TEXT -r ID=REGEX ...` (validated later, like
    any other)."""
    queries = []
    for mode, flag, values in (("literal", "-l", literals), ("regex", "-r", regexes)):
        for value in values:
            ident, sep, pattern = value.partition("=")
            if not sep or not ident or not pattern:
                example = f"{ident or 'name'}={pattern or 'TEXT'}" if sep else f"name={value}"
                if len(example) > SHOWN_VALUE or not example.isprintable():
                    example = "name=TEXT"
                raise UsageError(
                    f"{flag} takes ID=PATTERN, not {shown_value(value)}", hint=f"{flag} {example}"
                )
            queries.append(
                {"id": ident, "pattern": pattern, "mode": mode, "caseSensitive": not ignore_case}
            )
    if not queries:
        raise UsageError(
            "no hypothesis: give -l ID=TEXT or -r ID=REGEX (repeatable), or --input",
            hint="pix discover -l cfg=read_config -r cls='class \\w+Config'",
        )
    request: dict = {"queries": queries}
    if roots:
        request["roots"] = roots
    if globs:
        request["globs"] = globs
    if native_only:
        request["filterMode"] = "native-only"
    if detailed:
        request["outputMode"] = "detailed"
    if max_candidates is not None:
        bounds = load(REQUEST_SCHEMA)["properties"]["maxCandidates"]
        low, high = bounds["minimum"], bounds["maximum"]
        if not low <= max_candidates <= high:  # named as typed, not as the JSON field
            raise UsageError(f"--max-candidates must be {low}-{high}, not {max_candidates}")
        request["maxCandidates"] = max_candidates
    return request
