"""Metric labels: only values from closed sets, and each one checked by the redactor.

A label is stored by every Prometheus that scrapes the router, so it must never carry a secret
or free text: outcomes come from the audit module's own names, servers from the servers config
(anything else is OTHER), and a value the router's redaction would change, however it got
there (a server named after a token), is replaced by REDACTED_LABEL.
"""

from collections.abc import Collection
from functools import lru_cache

from router.facade import audit
from router.redaction.redactor import Redactor

# A value outside the closed set a label takes its values from.
OTHER = "other"
# A call whose target is no catalog tool (an unknown name, an unreadable request).
NO_SERVER = "none"
REDACTED_LABEL = "redacted"

# Every outcome the router writes to audit.outcome, and the two v_audit_outcomes reads a
# 'started' row as.
OUTCOMES = frozenset(
    {
        audit.OK,
        audit.TOOL_ERROR,
        audit.INVALID_ARGUMENTS,
        audit.UNKNOWN_TOOL,
        audit.DENIED,
        audit.BREAKER_OPEN,
        audit.NOT_CONFIGURED,
        audit.UNAVAILABLE,
        audit.QUARANTINED,
        audit.MISSING_PROGRAM,
        audit.BACKEND_FAILED,
        audit.TIMEOUT,
        audit.INTERRUPTED,
        audit.NOT_COMPLETED,
        audit.INTERNAL_ERROR,
        audit.DATABASE_BUSY,
        audit.INVALID_REQUEST,
    }
)
# breakglass_invocations.status (its CHECK constraint) and breaker_openings.kind
BREAKGLASS_STATUSES = frozenset(
    {"started", "refused", "needs_confirmation", "declined", "ok", "failed", "cancelled", "interrupted"}
)
BREAKER_KINDS = frozenset({"tool", "server"})


@lru_cache(maxsize=4096)
def guarded(value: str) -> str:
    """The value, unless the router's redaction would remove any of it."""
    return value if Redactor().text(value) == value else REDACTED_LABEL


def closed(value: object, allowed: Collection[str]) -> str:
    """A label from a closed set: the value if the set has it, else OTHER; guarded either way."""
    return guarded(value) if isinstance(value, str) and value in allowed else OTHER


def server(value: object, configured: Collection[str]) -> str:
    """A backend server's label: its name when the servers config declares it."""
    return NO_SERVER if value is None else closed(value, configured)
