"""Invocation rows, confirmation tokens and the cost ledger: every call, refusal and cent.

Every write is its own BEGIN IMMEDIATE transaction: it takes the write lock up front (waiting
for it), so a reader's stale WAL snapshot can never turn into a busy error halfway through.
The session caps are enforced by reserving the worst case *before* any provider call inside
BEGIN IMMEDIATE: the write lock is taken before the caps are read, so two processes can never
both see room for one more call. Settlement records the provider's actual cost and closes the
reservation; what was reserved but not spent is released in the same transaction.
"""

import json
import os
import secrets
from dataclasses import dataclass

import apsw

from router.clock import utc_now_and_after, utc_now_iso
from router.db import immediate, one_row, scalar
from router.hashing import b3_hex

TOKEN_PREFIX = "bgc_"
# Several break-glass processes may share one session and one file. Ledger transactions are a
# few statements long, so waiting for the lock is always better than failing a paid call;
# the connection default (apsw best practice, 100 ms) is too short under parallel callers.
BUSY_TIMEOUT_MS = 10_000

INSERT_INVOCATION = """
INSERT INTO breakglass_invocations (session_id, started_at, problem, problem_type, classification,
    complexity, status, panel, judge, context_tokens, estimate_micro_usd, worst_case_micro_usd, pid)
VALUES (:session_id, :at, :problem, :problem_type, :classification, :complexity, 'started',
    :panel, :judge, :context_tokens, :estimate, :worst_case, :pid)
RETURNING id
"""
FINISH_INVOCATION = """
UPDATE breakglass_invocations
SET status = :status, reason = :reason, finished_at = :at,
    mode = coalesce(:mode, mode), actual_micro_usd = coalesce(:actual, actual_micro_usd),
    diagnosis = coalesce(:diagnosis, diagnosis)
WHERE id = :id
"""
MARK_INVOCATION = "UPDATE breakglass_invocations SET status = :status, reason = :reason WHERE id = :id"
INSERT_LEDGER = """
INSERT INTO cost_ledger (at, session_id, invocation_id, kind, micro_usd, detail)
VALUES (:at, :session_id, :invocation_id, :kind, :micro_usd, :detail)
"""
# calls: every reservation ever taken in the session (each may have cost money);
# committed: what was settled plus the worst cases still reserved by unsettled calls
SESSION_USAGE = """
SELECT
  (SELECT count(*) FROM cost_ledger WHERE session_id = :session_id AND kind = 'reservation'),
  (SELECT coalesce(sum(micro_usd), 0) FROM cost_ledger
    WHERE session_id = :session_id AND kind = 'settlement')
  + (SELECT coalesce(sum(r.micro_usd), 0) FROM cost_ledger r
      WHERE r.session_id = :session_id AND r.kind = 'reservation'
        AND NOT EXISTS (SELECT 1 FROM cost_ledger s
                        WHERE s.invocation_id = r.invocation_id AND s.kind = 'settlement'))
"""
INSERT_TOKEN = """
INSERT INTO breakglass_tokens (token_hash, issued_for, fingerprint, estimate_micro_usd, issued_at,
                               expires_at)
VALUES (:token_hash, :issued_for, :fingerprint, :estimate, :at, :expires_at)
"""
SELECT_TOKEN = """
SELECT fingerprint, estimate_micro_usd, expires_at, used_at, issued_for
FROM breakglass_tokens WHERE token_hash = :token_hash
"""
USE_TOKEN = "UPDATE breakglass_tokens SET used_at = :at, used_by = :used_by WHERE token_hash = :token_hash"


@dataclass(frozen=True)
class Caps:
    max_invocations: int
    max_micro_usd: int


@dataclass(frozen=True)
class SessionUsage:
    calls: int
    committed_micro: int


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


def session_usage(conn: apsw.Connection, session_id: str) -> SessionUsage:
    calls, committed = one_row(conn, SESSION_USAGE, {"session_id": session_id})
    return SessionUsage(calls, committed)


def cap_refusal(usage: SessionUsage, worst_case_micro: int, caps: Caps, session_id: str) -> str | None:
    if usage.calls >= caps.max_invocations:
        return (
            f"session cap reached: {usage.calls} of {caps.max_invocations} break-glass calls "
            f"already made in session {session_id}"
        )
    if usage.committed_micro + worst_case_micro > caps.max_micro_usd:
        return (
            f"session cap reached: ${usage.committed_micro / 1e6:.4f} spent or reserved in session "
            f"{session_id} + worst case ${worst_case_micro / 1e6:.4f} exceeds "
            f"${caps.max_micro_usd / 1e6:.2f}"
        )
    return None


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
) -> int:
    """The invocation row and, when there is one, its estimate row, in one transaction."""
    with immediate(conn):
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
        _row(conn, session_id, invocation_id, "refusal", 0, reason)
        conn.execute(
            FINISH_INVOCATION,
            {
                "status": status,
                "reason": reason,
                "at": utc_now_iso(),
                "mode": None,
                "actual": None,
                "diagnosis": None,
                "id": invocation_id,
            },
        )


def record_confirmation(conn: apsw.Connection, session_id: str, invocation_id: int, detail: str) -> None:
    with immediate(conn):
        _row(conn, session_id, invocation_id, "confirmation", 0, detail)


def issue_token(
    conn: apsw.Connection,
    session_id: str,
    invocation_id: int,
    fingerprint: str,
    estimate: int,
    minutes: float,
) -> str:
    """A one-time token for a person's confirmation; only its hash is stored."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(24)
    issued_at, expires = utc_now_and_after(minutes * 60)
    reason = f"estimate ${estimate / 1e6:.4f} needs a person's confirmation; token issued"
    with immediate(conn):
        conn.execute(
            INSERT_TOKEN,
            {
                "token_hash": b3_hex(token.encode()),
                "issued_for": invocation_id,
                "fingerprint": fingerprint,
                "estimate": estimate,
                "at": issued_at,
                "expires_at": expires,
            },
        )
        _row(conn, session_id, invocation_id, "confirmation", 0, f"token issued, expires {expires}")
        conn.execute(
            FINISH_INVOCATION,
            {
                "status": "needs_confirmation",
                "reason": reason,
                "at": utc_now_iso(),
                "mode": None,
                "actual": None,
                "diagnosis": None,
                "id": invocation_id,
            },
        )
    return token


def _token_problem(conn, token: str, fingerprint: str, estimate: int) -> str | None:
    row = conn.execute(SELECT_TOKEN, {"token_hash": b3_hex(token.encode())}).fetchone()
    if row is None:
        return "confirmation_token is not one this server issued"
    token_fingerprint, confirmed_estimate, expires_at, used_at, _ = row
    if used_at is not None:
        return f"confirmation_token was already used at {used_at}; each token works once"
    if expires_at < utc_now_iso():
        return f"confirmation_token expired at {expires_at}; call again without it for a new one"
    if token_fingerprint != fingerprint:
        return (
            "confirmation_token was issued for a different request (problem, type, files or budget changed)"
        )
    if estimate > confirmed_estimate:
        return (
            f"the estimate rose from ${confirmed_estimate / 1e6:.4f} (confirmed) to "
            f"${estimate / 1e6:.4f}; call again without the token to confirm the new estimate"
        )
    return None


def reserve(
    conn: apsw.Connection,
    session_id: str,
    invocation_id: int,
    worst_case: int,
    caps: Caps,
    *,
    token: str | None = None,
    fingerprint: str = "",
    estimate: int = 0,
) -> str | None:
    """Reserve the worst case, or refuse. Returns None when reserved, else the refusal (recorded).

    Caps, the token's one use and the reservation are one BEGIN IMMEDIATE transaction.
    """
    with immediate(conn):
        refusal = None
        if token is not None:
            refusal = _token_problem(conn, token, fingerprint, estimate)
        if refusal is None:
            refusal = cap_refusal(session_usage(conn, session_id), worst_case, caps, session_id)
        if refusal is not None:
            _row(conn, session_id, invocation_id, "refusal", 0, refusal)
            conn.execute(
                FINISH_INVOCATION,
                {
                    "status": "refused",
                    "reason": refusal,
                    "at": utc_now_iso(),
                    "mode": None,
                    "actual": None,
                    "diagnosis": None,
                    "id": invocation_id,
                },
            )
            return refusal
        if token is not None:
            conn.execute(
                USE_TOKEN,
                {"at": utc_now_iso(), "used_by": invocation_id, "token_hash": b3_hex(token.encode())},
            )
            _row(conn, session_id, invocation_id, "confirmation", 0, "confirmed by one-time token")
        _row(conn, session_id, invocation_id, "reservation", worst_case, "worst case reserved")
    return None


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
) -> None:
    """Close the reservation with the actual cost; release the rest; record the outcome."""
    with immediate(conn):
        _row(conn, session_id, invocation_id, "settlement", actual, "provider usage.cost")
        if reserved > actual:
            _row(conn, session_id, invocation_id, "release", reserved - actual, "reserved but not spent")
        _row(conn, session_id, invocation_id, "outcome", 0, f"{status}: {reason}"[:500])
        conn.execute(
            FINISH_INVOCATION,
            {
                "status": status,
                "reason": reason,
                "at": utc_now_iso(),
                "mode": mode,
                "actual": actual,
                "diagnosis": diagnosis,
                "id": invocation_id,
            },
        )
