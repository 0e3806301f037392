"""Which JSON Schema draft a tool's schema is written in, and the validator for it.

MCP puts no draft on a tool's `inputSchema`; real servers publish schemas written for the one
their library speaks: `"$schema": ".../draft-07/schema#"`, or draft-04's boolean
`"exclusiveMinimum": true` with no `$schema` at all. A schema is checked under the draft it
declares (jsonschema's `validator_for`); one that declares none under 2020-12 (MCP's
default), then under draft-04 when 2020-12 refuses it (the draft-04 style). A call's args are
later validated with the same draft, named here by a short stable key stored in the catalog.
"""

from typing import Any

from jsonschema import (
    Draft4Validator,
    Draft6Validator,
    Draft7Validator,
    Draft201909Validator,
    Draft202012Validator,
    validators,
)
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator

from router.catalog.draft_keys import DEFAULT_DRAFT, UNCHECKED

VALIDATORS: dict[str, type[Validator]] = {
    "draft4": Draft4Validator,
    "draft6": Draft6Validator,
    "draft7": Draft7Validator,
    "draft2019-09": Draft201909Validator,
    DEFAULT_DRAFT: Draft202012Validator,
}
_KEY_OF = {cls: key for key, cls in VALIDATORS.items()}


def _problem(cls: type[Validator], schema: dict[str, Any]) -> str | None:
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.path) or "(root)"
        return f"not a valid JSON Schema at {where}: {exc.message}"
    return None


def check(schema: dict[str, Any]) -> tuple[str, str | None]:
    """(draft key, None) for a schema some draft accepts, else (UNCHECKED, why not)."""
    declared = schema.get("$schema")
    if declared is not None:
        cls = validators.validator_for(schema, default=None) if isinstance(declared, str) else None
        if cls is None or cls not in _KEY_OF:
            return UNCHECKED, f"declares $schema {declared!r}, a JSON Schema draft this router does not know"
        problem = _problem(cls, schema)
        return (_KEY_OF[cls], None) if problem is None else (UNCHECKED, problem)
    problem = _problem(Draft202012Validator, schema)
    if problem is None:
        return DEFAULT_DRAFT, None
    if _problem(Draft4Validator, schema) is None:
        return "draft4", None
    return UNCHECKED, problem


def validator(draft: str, schema: dict[str, Any]) -> Validator | None:
    """The validator a call's args are checked with; None for UNCHECKED."""
    cls = VALIDATORS.get(draft)
    return None if cls is None else cls(schema)
