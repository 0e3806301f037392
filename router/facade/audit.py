"""Audit rows: one per meta-tool call, written before a call is forwarded and finished after.

The arguments are never stored, only the b3 hash of their RFC 8785 bytes (they may hold
secrets); equal arguments still hash equal, so repeated calls can be found. A row left with
outcome 'started' and no finished_at is a call still running, or one whose process died
mid-way; its deadline_at (the latest the router would have finished it on its own) tells the
two apart, and v_recent_audit reads it as 'in_flight' before that moment, 'interrupted' after.
"""

import os
from typing import Any

import apsw

from router.clock import utc_now_and_after, utc_now_iso
from router.hashing import content_hash
from router.redaction.redactor import redacted

# Outcomes, as stored in audit.outcome.
STARTED = "started"
OK = "ok"
TOOL_ERROR = "tool_error"  # the backend answered with isError: true (returned unchanged)
INVALID_ARGUMENTS = "invalid_arguments"
UNKNOWN_TOOL = "unknown_tool"
DENIED = "denied"
BREAKER_OPEN = "breaker_open"
NOT_CONFIGURED = "not_configured"
# the tool's server cannot be called in this deployment (not installed, switched off, ...)
UNAVAILABLE = "unavailable"
# its backend now lists another definition than the catalog's (router/catalog/quarantine.py)
QUARANTINED = "quarantined"
MISSING_PROGRAM = "missing_program"
BACKEND_FAILED = "backend_failed"
TIMEOUT = "timeout"
INTERRUPTED = "interrupted"
# the backend exited cleanly (status 0) after the call was written to it, without answering
NOT_COMPLETED = "not_completed"
INTERNAL_ERROR = "internal_error"  # a bug in the router, not the caller's or backend's doing
DATABASE_BUSY = "database_busy"  # another process held the write lock past the call's wait
# the call's own row could not be written (a full disk, a file deleted under the router):
# refused unforwarded, and its row written once the file takes writes again
DATABASE_FULL = "database_full"
DATABASE_UNUSABLE = "database_unusable"
INVALID_REQUEST = "invalid_request"  # a request line that is not JSON-RPC (answered -32700/-32600)
# meta_tool of an invalid_request row: no meta-tool could be read from the line
UNREADABLE_REQUEST = "(unreadable request)"
MAX_ERROR_CHARS = 1000
# A tool name as the caller sent it: a model may put anything there, a token included.
MAX_TARGET_CHARS = 1000

# Added to a call's backend timeouts for its deadline: the router's own work around the
# backend (catalog and breaker rows, finishing this row) takes milliseconds, but a write may
# wait for another process's lock. Too short, and a slow but live call reads 'interrupted';
# such a row is still finished, with its real outcome, when the call ends.
DEADLINE_GRACE_S = 5.0

INSERT_STARTED = """
INSERT INTO audit(started_at, deadline_at, session_id, role, meta_tool, target, args_hash,
                  outcome, pid)
VALUES (:started_at, :deadline_at, :session_id, :role, :meta_tool, :target, :args_hash,
        'started', :pid)
"""

FINISH = """
UPDATE audit SET finished_at = :finished_at, outcome = :outcome, latency_ms = :latency_ms,
                 error = :error, read_only_source = :read_only_source
WHERE id = :id
"""

EXTEND_DEADLINE = """
UPDATE audit SET deadline_at = :deadline_at WHERE id = :id AND finished_at IS NULL
"""

INSERT_FINISHED = """
INSERT INTO audit(started_at, finished_at, session_id, role, meta_tool, target, args_hash,
                  outcome, latency_ms, error, pid, result_tokens, page_tools)
VALUES (:started_at, :finished_at, :session_id, :role, :meta_tool, :target, :args_hash,
        :outcome, :latency_ms, :error, :pid, :result_tokens, :page_tools)
"""


def args_hash(arguments: Any) -> str:
    """b3: hash of the canonical bytes; arguments RFC 8785 cannot encode hash their repr."""
    try:
        return content_hash(arguments)
    except Exception:  # rfc8785 refuses e.g. floats NaN, huge ints: still audit the call
        return content_hash(repr(arguments))


def _call_columns(
    session_id: str, role: str, meta_tool: str, target: str | None, arguments: Any
) -> dict[str, Any]:
    """Who called what: the columns every row has, started or finished."""
    return {
        "session_id": session_id,
        "role": role,
        "meta_tool": meta_tool,
        "target": redacted(target, MAX_TARGET_CHARS) if target else target,
        "args_hash": args_hash(arguments),
        "pid": os.getpid(),
    }


def _clipped(error: str | None) -> str | None:
    """The error as stored: redacted (it may quote a backend or a caller), then clipped."""
    return redacted(error)[:MAX_ERROR_CHARS] if error else None


def start(
    conn: apsw.Connection,
    *,
    session_id: str,
    role: str,
    meta_tool: str,
    target: str | None,
    arguments: Any,
    within_s: float,
) -> int:
    """Write the 'started' row (its own transaction) and return its id. `within_s` is the
    longest the router lets the call run (its backend timeouts); the row's deadline adds
    DEADLINE_GRACE_S to it."""
    started_at, deadline_at = utc_now_and_after(within_s + DEADLINE_GRACE_S)
    conn.execute(
        INSERT_STARTED,
        {
            "started_at": started_at,
            "deadline_at": deadline_at,
            **_call_columns(session_id, role, meta_tool, target, arguments),
        },
    )
    return conn.last_insert_rowid()


def extend_deadline(conn: apsw.Connection, row_id: int, *, within_s: float) -> None:
    """The call's router works on it longer (it sends it again): its deadline moves to
    `within_s` (plus the grace) from now, so the row keeps reading 'in_flight'."""
    _, deadline_at = utc_now_and_after(within_s + DEADLINE_GRACE_S)
    conn.execute(EXTEND_DEADLINE, {"id": row_id, "deadline_at": deadline_at})


def finish(
    conn: apsw.Connection,
    row_id: int,
    *,
    outcome: str,
    latency_ms: float,
    error: str | None,
    read_only_source: str | None = None,
    finished_at: str | None = None,
) -> None:
    """Finish a call's row; `read_only_source` says who decided whether its tool only reads
    (what the role rule went by), once the tool is known. Pass `finished_at` when the write
    may be queued (behind a lock, or a full disk); without it the row is stamped now."""
    conn.execute(
        FINISH,
        {
            "id": row_id,
            "finished_at": finished_at or utc_now_iso(),
            "outcome": outcome,
            "latency_ms": latency_ms,
            "error": _clipped(error),
            "read_only_source": read_only_source,
        },
    )


def record(
    conn: apsw.Connection,
    *,
    session_id: str,
    role: str,
    meta_tool: str,
    target: str | None,
    arguments: Any,
    outcome: str,
    latency_ms: float,
    error: str | None,
    started_at: str | None = None,
    finished_at: str | None = None,
    result_tokens: int | None = None,
    page_tools: int | None = None,
) -> None:
    """One finished row, for meta-tools that answer from the catalog (nothing to interrupt)
    and calls refused before their 'started' row could be written. Pass the times when the
    row may be queued behind another process's lock (it is written later); without them it
    is stamped now, and started_at defaults to finished_at. result_tokens: the tokens of the
    answer the model got (search, inspect); page_tools: a search page's callable tools."""
    finished_at = finished_at or utc_now_iso()
    conn.execute(
        INSERT_FINISHED,
        {
            "started_at": started_at or finished_at,
            "finished_at": finished_at,
            **_call_columns(session_id, role, meta_tool, target, arguments),
            "outcome": outcome,
            "latency_ms": latency_ms,
            "error": _clipped(error),
            "result_tokens": result_tokens,
            "page_tools": page_tools,
        },
    )
