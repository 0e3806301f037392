"""Errors the router reports to people and models.

Every error says what was wrong and where, so the caller can act on it without a traceback.
"""


class RouterError(Exception):
    """Base class: a problem the user (or model) caused and can fix."""


class SchemaVersionError(RouterError):
    """The database was written by a newer router than this one."""


class MissingDatabaseError(RouterError):
    """A command that reads the catalog was pointed at a file that does not exist."""


class SeedError(RouterError):
    """A seed or user catalog file is invalid; the message names file, line/tool and field."""


class QueryError(RouterError):
    """A search query or limit is unusable."""


class UnknownToolError(RouterError):
    """No tool of that name is in the catalog."""


# An input quoted back in an error is cut to this many characters: a 1 MB tool name must not
# come back whole (it would fill the model's context and every log line).
MAX_ECHO_CHARS = 120


def echo(value: object, limit: int = MAX_ECHO_CHARS) -> str:
    """repr(value) for an error message, clipped, saying how long the original was."""
    text = repr(value)
    if len(text) <= limit:
        return text
    size = f"{len(value)} characters" if isinstance(value, str) else f"{len(text)} characters as text"
    return f"{text[:limit]}… ({size})"


def first_error(exc: BaseException, kinds: tuple[type[BaseException], ...]) -> BaseException | None:
    """`exc` if it is one of `kinds`, else the first such error inside the exception groups a
    task group wrapped it in (depth first); None when there is none."""
    if isinstance(exc, kinds):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = first_error(inner, kinds)
            if found is not None:
                return found
    return None
