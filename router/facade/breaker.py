"""Circuit breakers per backend tool and per backend server: a pure state-transition
function plus its rows.

closed --3 consecutive failures--> open --60 s later, one trial call--> half_open
half_open --trial succeeds--> closed;  half_open --trial fails--> open (for another 60 s)

A tool's breaker counts every failure of a call to it; a server's (BACKEND_ROWS) counts only
failures of its process (it did not start, crashed, hung), and opens for all its tools.
The state lives in the `breaker` and `backend_breaker` tables, so every router process on the same SQLite file
sees and shares it. Read-modify-write happens inside BEGIN IMMEDIATE, so two processes
cannot both take the single half-open trial. Time is passed in (`now`, unix seconds), never
read here, so tests move the clock instead of sleeping.
"""

from dataclasses import dataclass, replace

import apsw

from router.clock import utc_now_iso
from router.db import immediate

FAILURE_THRESHOLD = 3
OPEN_SECONDS = 60.0
# last_error is for people reading v_breaker_state; keep a row small
MAX_ERROR_CHARS = 500

CLOSED, OPEN, HALF_OPEN = "closed", "open", "half_open"


@dataclass(frozen=True)
class BreakerPolicy:
    failure_threshold: int = FAILURE_THRESHOLD
    open_seconds: float = OPEN_SECONDS


@dataclass(frozen=True)
class BreakerState:
    state: str = CLOSED
    consecutive_failures: int = 0
    # open: when it opened; half_open: when the trial call was let through
    opened_at: float | None = None
    last_error: str | None = None


@dataclass(frozen=True)
class Admission:
    allowed: bool
    # seconds until a trial call will be let through (only when refused)
    retry_after_s: float = 0.0
    trial: bool = False


def admit(state: BreakerState, now: float, policy: BreakerPolicy) -> tuple[Admission, BreakerState]:
    """May a call go through now? Returns the decision and the state to store."""
    if state.state == CLOSED:
        return Admission(True), state
    started = state.opened_at if state.opened_at is not None else now
    elapsed = now - started
    if elapsed >= policy.open_seconds:
        # open long enough → let one trial through. A half-open trial older than the open
        # window belongs to a process that died mid-call: give the trial to this caller.
        return Admission(True, trial=True), replace(state, state=HALF_OPEN, opened_at=now)
    return Admission(False, retry_after_s=policy.open_seconds - elapsed), state


def after_call(
    state: BreakerState, succeeded: bool, now: float, policy: BreakerPolicy, error: str | None = None
) -> BreakerState:
    """The state after a call that was let through finished."""
    if succeeded:
        return BreakerState()
    failures = state.consecutive_failures + 1
    error = (error or "")[:MAX_ERROR_CHARS] or None
    if state.state == HALF_OPEN or failures >= policy.failure_threshold:
        return BreakerState(OPEN, failures, now, error)
    return BreakerState(CLOSED, failures, None, error)


# --- rows ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Rows:
    """Where one kind of breaker keeps its state: per tool, or per backend server."""

    select: str
    upsert: str


TOOL_ROWS = _Rows(
    select="SELECT state, consecutive_failures, opened_at, last_error FROM breaker WHERE tool = :key",
    upsert="""
INSERT INTO breaker(tool, state, consecutive_failures, opened_at, updated_at, last_error)
VALUES (:key, :state, :consecutive_failures, :opened_at, :updated_at, :last_error)
ON CONFLICT(tool) DO UPDATE SET
    state = excluded.state, consecutive_failures = excluded.consecutive_failures,
    opened_at = excluded.opened_at, updated_at = excluded.updated_at,
    last_error = excluded.last_error
""",
)

BACKEND_ROWS = _Rows(
    select="""
SELECT state, consecutive_failures, opened_at, last_error FROM backend_breaker WHERE server = :key
""",
    upsert="""
INSERT INTO backend_breaker(server, state, consecutive_failures, opened_at, updated_at, last_error)
VALUES (:key, :state, :consecutive_failures, :opened_at, :updated_at, :last_error)
ON CONFLICT(server) DO UPDATE SET
    state = excluded.state, consecutive_failures = excluded.consecutive_failures,
    opened_at = excluded.opened_at, updated_at = excluded.updated_at,
    last_error = excluded.last_error
""",
)


def read_state(conn: apsw.Connection, tool: str, rows: _Rows = TOOL_ROWS) -> BreakerState:
    row = conn.execute(rows.select, {"key": tool}).fetchone()
    return BreakerState(*row) if row else BreakerState()


def _write_state(conn: apsw.Connection, key: str, state: BreakerState, rows: _Rows) -> None:
    conn.execute(
        rows.upsert,
        {
            "key": key,
            "state": state.state,
            "consecutive_failures": state.consecutive_failures,
            "opened_at": state.opened_at,
            "updated_at": utc_now_iso(),
            "last_error": state.last_error,
        },
    )


def check(
    conn: apsw.Connection, tool: str, now: float, policy: BreakerPolicy, rows: _Rows = TOOL_ROWS
) -> Admission:
    """Admit or refuse a call to `tool` (or, with BACKEND_ROWS, to a backend server), storing
    a move to half-open atomically."""
    # Fast path: a closed breaker admits without taking the write lock.
    if read_state(conn, tool, rows).state == CLOSED:
        return Admission(True)
    with immediate(conn):
        current = read_state(conn, tool, rows)
        admission, new_state = admit(current, now, policy)
        if new_state != current:
            _write_state(conn, tool, new_state, rows)
    return admission


def record(
    conn: apsw.Connection,
    tool: str,
    succeeded: bool,
    now: float,
    policy: BreakerPolicy,
    error: str | None = None,
    rows: _Rows = TOOL_ROWS,
) -> BreakerState:
    """Store the outcome of an admitted call; a success on a clean breaker writes nothing."""
    if succeeded and read_state(conn, tool, rows) == BreakerState():
        return BreakerState()
    with immediate(conn):
        current = read_state(conn, tool, rows)
        new_state = after_call(current, succeeded, now, policy, error)
        if new_state != current:
            _write_state(conn, tool, new_state, rows)
    return new_state
