"""JSON Schemas in schema/: loading them and validating payloads with a one-line error."""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar, Self

from pix.errors import SHOWN_VALUE, UsageError, shown_value
from pix.paths import SCHEMA_DIR

if TYPE_CHECKING:
    import jsonschema


@cache
def load(name: str) -> dict:
    return json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))


@cache
def bundled(ref: str) -> dict:
    """The schema at `ref` ("file.json" or "file.json#/pointer") with every $ref inlined.

    MCP clients cannot fetch pix.dev URLs, so the server must send self-contained schemas; and
    validating against the same inlined schema means what a client is told and what the server
    enforces cannot drift apart. A $ref's sibling keywords override the referenced ones (that is
    how alias.v1.json makes `mode` required on top of the request schema)."""
    file = ref.partition("#")[0]
    out = _inline({"$ref": ref}, file)
    out.pop("$id", None)
    return {"$schema": load(file).get("$schema"), **out}


def _inline(node: object, doc: str) -> object:
    if isinstance(node, list):
        return [_inline(item, doc) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict = {}
    if "$ref" in node:
        file, _, pointer = node["$ref"].partition("#")
        target_doc = file or doc
        target: object = load(target_doc)
        for part in filter(None, pointer.split("/")):
            target = target[part]  # type: ignore[index]
        resolved = _inline(target, target_doc)
        assert isinstance(resolved, dict)
        out.update({k: v for k, v in resolved.items() if k not in ("$schema", "$defs", "title")})
    for key, value in node.items():
        if key not in ("$ref", "$defs", "$schema"):
            out[key] = _inline(value, doc)
    return out


@cache
def validator(ref: str) -> jsonschema.protocols.Validator:
    """A validator of the schema at `ref` (as `bundled` takes it), built once."""
    # Imported here: most commands validate nothing (a query from flags), and jsonschema's
    # import is about 50 ms of every process that loads it.
    import jsonschema.validators

    schema = bundled(ref)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


def text_problem(text: str) -> str | None:
    """Why `text` is not UTF-8 text, or None. A command line with bytes that are not UTF-8
    reaches Python as lone surrogates (\\udcff for the byte 0xff), and JSON may spell one
    (\\ud800): neither can be encoded for the tokenizer or SQLite."""
    try:
        text.encode("utf-8")
        return None
    except UnicodeEncodeError as exc:
        char = ord(text[exc.start])
        if 0xDC80 <= char <= 0xDCFF:
            return f"it is not valid UTF-8 (the byte 0x{char - 0xDC00:02x})"
        return f"it holds an unpaired surrogate (U+{char:04X}), which is no character"


def check_text(payload: object, where: str = "") -> None:
    """UsageError naming the first string of `payload` (at any depth) that is not UTF-8."""
    if isinstance(payload, str):
        if problem := text_problem(payload):
            raise UsageError(f"invalid request at {where or '(top level)'}: {problem}")
    elif isinstance(payload, dict):
        for key, value in payload.items():
            check_text(key, where)
            check_text(value, f"{where}/{key}" if where else str(key))
    elif isinstance(payload, list):
        for i, value in enumerate(payload):
            check_text(value, f"{where}/{i}" if where else str(i))


def validate(payload: object, name: str) -> None:
    """Raise UsageError naming the offending field (JSON path) and what is wrong with it."""
    check_text(payload)
    if problem := first_problem(validator(name), payload):
        raise UsageError(problem)


def first_problem(validator: jsonschema.protocols.Validator, payload: object) -> str | None:
    """The first problem of `payload`, as one line: "invalid request at <field>: <what>"."""
    errors = sorted(validator.iter_errors(payload), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    error = errors[0]
    where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
    return f"invalid request at {where}: {_said(error)}"


def _said(error: jsonschema.ValidationError) -> str:
    """jsonschema's message, the offending value quoted by shown_value (its messages open
    with the value's repr)."""
    told = repr(error.instance)
    message = error.message
    if message.startswith(told):
        return shown_value(error.instance) + message[len(told) :]
    return message if len(message) <= 2 * SHOWN_VALUE else message[: 2 * SHOWN_VALUE] + "…"


def json_name(name: str) -> str:
    """A field name as the JSON contracts spell it: only_paths -> onlyPaths."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _integral(value: object) -> object:
    """JSON Schema counts 1.0 as an integer (and a client's JSON may write one so), but a
    request's integer fields are used as Python ints (slices, ranges): 3.0 becomes 3. No request
    field takes a fractional number, so a float that passed validation is an integral one."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


class JsonRequest:
    """For request dataclasses: from/to their JSON form (camelCase names), validated against
    the class's SCHEMA so unknown fields and bad values are refused with one line."""

    SCHEMA: ClassVar[str]

    @classmethod
    def from_json(cls, payload: object) -> Self:
        validate(payload, cls.SCHEMA)
        assert isinstance(payload, dict)
        names = {json_name(f.name): f.name for f in fields(cls)}  # type: ignore[arg-type]
        return cls(**{names[key]: _integral(value) for key, value in payload.items()})

    def to_json(self) -> dict[str, Any]:
        return {json_name(k): v for k, v in asdict(self).items()}  # type: ignore[call-overload]
