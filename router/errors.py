"""Errors the router reports to people and models.

Every error says what was wrong and where, so the caller can act on it without a traceback.
"""


class RouterError(Exception):
    """Base class: a problem the user (or model) caused and can fix."""


class SchemaVersionError(RouterError):
    """The database was written by a newer router than this one."""


class SeedError(RouterError):
    """A seed or user catalog file is invalid; the message names file, line/tool and field."""


class QueryError(RouterError):
    """A search query or limit is unusable."""


class UnknownToolError(RouterError):
    """No tool of that name is in the catalog."""
