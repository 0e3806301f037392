"""Invocation rows, requests and the cost ledger: every call, refusal and cent.

Every write is its own BEGIN IMMEDIATE transaction: it takes the write lock up front (waiting
for it), so a reader's stale WAL snapshot can never turn into a busy error halfway through.
The caps are enforced by reserving the worst case *before* any provider call inside BEGIN
IMMEDIATE: the write lock is taken before the caps are read, so two processes can never both
see room for one more call. Settlement records the provider's cost as reported (never
clipped) and closes the reservation; what was reserved but not spent is released, and what
was spent above it is an overrun that stops the session. At most one call is in flight
(reserved, not settled) per database, so an overrun overshoots a cap by one call's charge at
most: a second call is refused at once, in the same transaction as the caps.

Every write first resolves the calls whose process died (leases.py), so a dead call's
reservation counts against its session only until the next write anywhere.
"""

import json
import os

import apsw

from router.breakglass import caps as capsmod
from router.breakglass import confirm_tokens, leases
from router.breakglass.settings import usd
from router.clock import utc_now_iso
from router.db import immediate, scalar

# Several break-glass processes may share one session and one file. Ledger transactions are a
# few statements long, so waiting for the lock is always better than failing a paid call;
# the connection default (apsw best practice, 100 ms) is too short under parallel callers.
BUSY_TIMEOUT_MS = 10_000

INSERT_INVOCATION = """
INSERT INTO breakglass_invocations (session_id, started_at, problem, problem_type, classification,
    complexity, status, panel, judge, context_tokens, estimate_micro_usd, worst_case_micro_usd, pid,
    host, lease_expires_at, output_cap_tokens, process_started, lease_seconds)
VALUES (:session_id, :at, :problem, :problem_type, :classification, :complexity, 'started',
    :panel, :judge, :context_tokens, :estimate, :worst_case, :pid, :host, :lease, :output_cap,
    :process_started, :lease_seconds)
RETURNING id
"""
FINISH_INVOCATION = """
UPDATE breakglass_invocations
SET status = :status, reason = :reason, finished_at = :at, lease_expires_at = NULL,
    mode = coalesce(:mode, mode), actual_micro_usd = coalesce(:actual, actual_micro_usd),
    diagnosis = coalesce(:diagnosis, diagnosis)
WHERE id = :id
"""
STATUS_OF = "SELECT status FROM breakglass_invocations WHERE id = :id"
INSERT_LEDGER = """
INSERT INTO cost_ledger (at, session_id, invocation_id, kind, micro_usd, detail)
VALUES (:at, :session_id, :invocation_id, :kind, :micro_usd, :detail)
"""
INSERT_REQUEST = """
INSERT INTO breakglass_requests (invocation_id, what, sent_at, worst_micro_usd)
VALUES (:invocation_id, :what, :at, :worst) RETURNING id
"""
ANSWER_REQUEST = """
UPDATE breakglass_requests SET generation_id = :generation_id, cost_micro_usd = :cost, finished_at = :at
WHERE id = :id
"""
SETTLED_AT = "SELECT micro_usd FROM cost_ledger WHERE invocation_id = :id AND kind = 'settlement'"
LEASE_LOST = "lease lost: resolved as interrupted by another process"
# what a settlement's amount is: the provider's figures, unless a request's cost is unknown
AS_REPORTED = "provider usage.cost, as reported"


def prepare_connection(conn: apsw.Connection) -> apsw.Connection:
    conn.set_busy_timeout(BUSY_TIMEOUT_MS)
    return conn


def _row(conn, session_id: str, invocation_id: int, kind: str, micro_usd: int = 0, detail: str = "") -> None:
    conn.execute(
        INSERT_LEDGER,
        {
            "at": utc_now_iso(),
            "session_id": session_id,
            "invocation_id": invocation_id,
            "kind": kind,
            "micro_usd": micro_usd,
            "detail": detail,
        },
    )


def _finish(conn, invocation_id: int, status: str, reason: str, **columns) -> None:
    conn.execute(
        FINISH_INVOCATION,
        {
            "status": status,
            "reason": reason,
            "at": utc_now_iso(),
            "mode": columns.get("mode"),
            "actual": columns.get("actual"),
            "diagnosis": columns.get("diagnosis"),
            "id": invocation_id,
        },
    )


def _settle_rows(
    conn,
    session_id: str,
    invocation_id: int,
    status: str,
    reserved: int,
    actual: int,
    reason: str,
    basis: str = AS_REPORTED,
    **columns,
) -> None:
    _row(conn, session_id, invocation_id, "settlement", actual, basis)
    if reserved > actual:
        _row(conn, session_id, invocation_id, "release", reserved - actual, "reserved but not spent")
    elif actual > reserved:
        _row(
            conn,
            session_id,
            invocation_id,
            "overrun",
            actual - reserved,
            f"charged ${actual / 1e6:.6f}, above the ${reserved / 1e6:.6f} reserved: session stopped",
        )
    _row(conn, session_id, invocation_id, "outcome", 0, f"{status}: {reason}"[:500])
    _finish(conn, invocation_id, status, reason, actual=actual, **columns)


def _resolve_dead(conn, looked_up: dict[str, int]) -> None:
    """Settle every dead call; the caller holds the write lock."""
    for call in leases.dead_calls(conn):
        who = f"process {call.pid} on {call.host or 'an unknown host'}"
        if call.reserved is None:
            reason = f"interrupted: {who} ended before anything was reserved ({call.why})"
            _row(conn, call.session_id, call.invocation_id, "outcome", 0, reason)
            _finish(conn, call.invocation_id, "interrupted", reason)
            continue
        sent = leases.sent_requests(conn, call.invocation_id)
        spent, counted = 0, {"reported": 0, "looked up": 0, "worst case": 0}
        for request in sent:
            if request.cost is not None:
                spent += request.cost
                counted["reported"] += 1
            elif request.generation_id in looked_up:
                cost = looked_up[request.generation_id]
                conn.execute(
                    ANSWER_REQUEST,
                    {
                        "generation_id": request.generation_id,
                        "cost": cost,
                        "at": utc_now_iso(),
                        "id": request.id,
                    },
                )
                spent += cost
                counted["looked up"] += 1
            else:
                spent += request.worst
                counted["worst case"] += 1
        how = ", ".join(f"{n} {kind}" for kind, n in counted.items() if n)
        if sent:
            reason = f"interrupted: {who} died mid-call ({call.why}); {len(sent)} requests sent, cost {how}"
            basis = f"interrupted call: {len(sent)} requests counted, {how}"
            if counted["worst case"]:
                basis += " (the worst case of a request whose cost nobody reported)"
        else:
            reason = f"interrupted: {who} died before anything was sent ({call.why}); reservation released"
            basis = "interrupted call: nothing was sent"
        _settle_rows(
            conn, call.session_id, call.invocation_id, "interrupted", call.reserved, spent, reason, basis
        )


def resolve_dead(conn: apsw.Connection, looked_up: dict[str, int] | None = None) -> None:
    """Settle the calls whose process died, with the generation costs looked up meanwhile."""
    with immediate(conn):
        _resolve_dead(conn, looked_up or {})


def open_invocation(
    conn: apsw.Connection,
    session_id: str,
    *,
    problem: str,
    problem_type: str | None,
    classification: str,
    complexity: str | None,
    panel: list[str],
    judge: str | None,
    context_tokens: int | None,
    estimate: int | None,
    worst_case: int | None,
    output_cap: int | None = None,
    lease_seconds: float = 30.0,
) -> int:
    """The invocation row (holding a lease) and, when there is one, its estimate row."""
    with immediate(conn):
        _resolve_dead(conn, {})
        invocation_id: int = scalar(
            conn,
            INSERT_INVOCATION,
            {
                "session_id": session_id,
                "at": utc_now_iso(),
                "problem": problem,
                "problem_type": problem_type,
                "classification": classification,
                "complexity": complexity,
                "panel": json.dumps(panel),
                "judge": judge,
                "context_tokens": context_tokens,
                "estimate": estimate,
                "worst_case": worst_case,
                "pid": os.getpid(),
                "host": leases.HOST,
                "lease": leases.lease_expiry(lease_seconds),
                "output_cap": output_cap,
                "process_started": leases.PROCESS_STARTED,
                "lease_seconds": lease_seconds,
            },
        )
        if estimate is not None:
            _row(
                conn,
                session_id,
                invocation_id,
                "estimate",
                estimate,
                f"worst case {worst_case} micro-USD over the reserved attempts",
            )
    return invocation_id


def refuse(
    conn: apsw.Connection, session_id: str, invocation_id: int, reason: str, status: str = "refused"
) -> None:
    with immediate(conn):
        _resolve_dead(conn, {})
        _row(conn, session_id, invocation_id, "refusal", 0, reason)
        _finish(conn, invocation_id, status, reason)


def record_confirmation(conn: apsw.Connection, session_id: str, invocation_id: int, detail: str) -> None:
    with immediate(conn):
        _row(conn, session_id, invocation_id, "confirmation", 0, detail)


def issue_token(
    conn: apsw.Connection,
    session_id: str,
    invocation_id: int,
    fingerprint: str,
    estimate: int,
    worst_case: int,
    minutes: float,
) -> str:
    """A one-time token for a person's confirmation; only its hash is stored."""
    reason = (
        f"worst case {usd(worst_case)} (expected {usd(estimate)}) needs a person's confirmation; token issued"
    )
    with immediate(conn):
        token, expires = confirm_tokens.insert(
            conn, invocation_id, fingerprint, estimate, worst_case, minutes
        )
        _row(conn, session_id, invocation_id, "confirmation", 0, f"token issued, expires {expires}")
        _finish(conn, invocation_id, "needs_confirmation", reason)
    return token


def reserve(
    conn: apsw.Connection,
    session_id: str,
    invocation_id: int,
    worst_case: int,
    caps: capsmod.Caps,
    *,
    token: str | None = None,
    fingerprint: str = "",
) -> str | None:
    """Reserve the worst case, or refuse. Returns None when reserved, else the refusal (recorded).

    Dead calls' resolution, the caps, the one call in flight, the token's one use and the
    reservation are one BEGIN IMMEDIATE transaction.
    """
    with immediate(conn):
        _resolve_dead(conn, {})
        refusal = None
        if token is not None:
            refusal = confirm_tokens.problem(conn, token, fingerprint, worst_case)
        use = capsmod.usage(conn, session_id)
        capsmod.record(conn, use, caps)
        # a stopped session or a spent call count first: waiting would not change them
        if refusal is None:
            refusal = capsmod.call_refusal(use, caps)
        if refusal is None and (flight := leases.in_flight(conn, invocation_id)) is not None:
            refusal = flight.refusal()
        if refusal is None:
            refusal = capsmod.cap_refusal(use, worst_case, caps)
        if refusal is not None:
            _row(conn, session_id, invocation_id, "refusal", 0, refusal)
            _finish(conn, invocation_id, "refused", refusal)
            return refusal
        if token is not None:
            confirm_tokens.use(conn, token, invocation_id)
            _row(conn, session_id, invocation_id, "confirmation", 0, "confirmed by one-time token")
        _row(conn, session_id, invocation_id, "reservation", worst_case, "worst case reserved")
    return None


def request_sent(conn: apsw.Connection, invocation_id: int, what: str, worst: int) -> int:
    """A request about to be sent (written first: a process that dies after this may have been
    billed for it). Its id names it to request_answered."""
    with immediate(conn):
        request_id: int = scalar(
            conn,
            INSERT_REQUEST,
            {"invocation_id": invocation_id, "what": what, "at": utc_now_iso(), "worst": worst},
        )
    return request_id


def request_answered(
    conn: apsw.Connection, request_id: int, generation_id: str | None, cost: int | None
) -> None:
    with immediate(conn):
        conn.execute(
            ANSWER_REQUEST,
            {"generation_id": generation_id, "cost": cost, "at": utc_now_iso(), "id": request_id},
        )


def renew_lease(conn: apsw.Connection, invocation_id: int, seconds: float) -> None:
    with immediate(conn):
        _resolve_dead(conn, {})
        leases.renew(conn, invocation_id, seconds)


def settle(
    conn: apsw.Connection,
    session_id: str,
    invocation_id: int,
    *,
    status: str,
    reserved: int,
    actual: int,
    reason: str = "",
    mode: str | None = None,
    diagnosis: str | None = None,
    overrun: str | None = None,
    basis: str | None = None,
) -> None:
    """Close the reservation with the actual cost; release the rest; record the outcome.

    `basis` says what the amount is when it is not every request's cost as the provider
    reported it (some counted at their worst case).

    `overrun` names a call charged above its own worst case: recorded as an overrun even when
    the run as a whole stayed within its reservation, since the prices no longer hold.
    """
    with immediate(conn):
        _resolve_dead(conn, {})
        if scalar(conn, STATUS_OF, {"id": invocation_id}) != "started":
            # another process resolved this call as interrupted while its lease had lapsed
            # (a suspended machine): what it settled stands, and any more is an overrun
            row = conn.execute(SETTLED_AT, {"id": invocation_id}).fetchone()
            settled = row[0] if row is not None else 0
            _row(
                conn,
                session_id,
                invocation_id,
                "outcome",
                0,
                f"late {status} after {LEASE_LOST}: {reason}"[:500],
            )
            if actual > settled:
                _row(
                    conn, session_id, invocation_id, "overrun", actual - settled, f"late answer: {LEASE_LOST}"
                )
            return
        _settle_rows(
            conn,
            session_id,
            invocation_id,
            status,
            reserved,
            actual,
            reason,
            basis or AS_REPORTED,
            mode=mode,
            diagnosis=diagnosis,
        )
        if overrun is not None and actual <= reserved:
            _row(conn, session_id, invocation_id, "overrun", 0, f"{overrun}: session stopped")
