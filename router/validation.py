"""A pydantic ValidationError in words a person can act on: "field a.b: what is wrong"."""

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError


def field_error(error: Any, loc: Sequence[Any] | None = None, whole: str = "(whole object)") -> str:
    """One of exc.errors(): 'field tools.3.name: String should match pattern ...'.

    loc overrides the error's own location (a caller that names part of it its own way)."""
    parts = error["loc"] if loc is None else loc
    field = dotted_location(parts) or whole
    message = error["msg"].removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        message = "unknown field (typo?)"
    return f"field {field}: {message}"


def dotted_location(parts: Sequence[Any]) -> str:
    """['tools', 3, 'name'] → 'tools[3].name'."""
    text = ""
    for part in parts:
        if isinstance(part, int) or (isinstance(part, str) and part.isdigit() and text):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def first_field_error(exc: ValidationError, whole: str = "(whole object)") -> str:
    """The first problem only: a file's first error is where a person starts fixing it."""
    return field_error(exc.errors()[0], whole=whole)


def all_field_errors(exc: ValidationError, whole: str = "(whole object)", limit: int | None = None) -> str:
    """Every problem, '; '-separated (at most `limit`, then how many more)."""
    errors = exc.errors()
    shown = errors if limit is None else errors[:limit]
    text = "; ".join(field_error(error, whole=whole) for error in shown)
    if len(errors) > len(shown):
        text += f"; and {len(errors) - len(shown)} more"
    return text
