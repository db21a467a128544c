"""JSON Schemas in schema/: loading them and validating payloads with a one-line error."""

from __future__ import annotations

import json
from functools import cache

import jsonschema

from pix.errors import UsageError
from pix.paths import SCHEMA_DIR


@cache
def load(name: str) -> dict:
    return json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))


@cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    schema = load(name)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


def validate(payload: object, name: str) -> None:
    """Raise UsageError naming the offending field (JSON path) and what is wrong with it."""
    errors = sorted(_validator(name).iter_errors(payload), key=lambda e: list(e.absolute_path))
    if errors:
        error = errors[0]
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise UsageError(f"invalid request at {where}: {error.message}")
