"""One-time confirmation tokens for clients that cannot be asked (no elicitation, no input
requests). Only a hash is stored; a token is bound to the exact request (fingerprint) and to
the estimate and worst case a person saw, and works once."""

import secrets

import apsw

from router.breakglass.settings import usd
from router.clock import utc_now_and_after, utc_now_iso
from router.hashing import b3_hex

TOKEN_PREFIX = "bgc_"

INSERT_TOKEN = """
INSERT INTO breakglass_tokens (token_hash, issued_for, fingerprint, estimate_micro_usd,
                               worst_case_micro_usd, issued_at, expires_at)
VALUES (:token_hash, :issued_for, :fingerprint, :estimate, :worst_case, :at, :expires_at)
"""
SELECT_TOKEN = """
SELECT fingerprint, estimate_micro_usd, worst_case_micro_usd, expires_at, used_at
FROM breakglass_tokens WHERE token_hash = :token_hash
"""
USE_TOKEN = "UPDATE breakglass_tokens SET used_at = :at, used_by = :used_by WHERE token_hash = :token_hash"


def token_hash(token: str) -> str:
    return b3_hex(token.encode())


def insert(
    conn: apsw.Connection,
    invocation_id: int,
    fingerprint: str,
    estimate: int,
    worst_case: int,
    minutes: float,
) -> tuple[str, str]:
    """(token, expires_at); the caller holds the transaction."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(24)
    issued_at, expires = utc_now_and_after(minutes * 60)
    conn.execute(
        INSERT_TOKEN,
        {
            "token_hash": token_hash(token),
            "issued_for": invocation_id,
            "fingerprint": fingerprint,
            "estimate": estimate,
            "worst_case": worst_case,
            "at": issued_at,
            "expires_at": expires,
        },
    )
    return token, expires


def problem(conn: apsw.Connection, token: str, fingerprint: str, worst_case: int) -> str | None:
    """Why the token cannot confirm this request, or None."""
    row = conn.execute(SELECT_TOKEN, {"token_hash": token_hash(token)}).fetchone()
    if row is None:
        return "confirmation_token is not one this server issued"
    token_fingerprint, confirmed_estimate, confirmed_worst, expires_at, used_at = row
    if used_at is not None:
        return f"confirmation_token was already used at {used_at}; each token works once"
    if expires_at < utc_now_iso():
        return f"confirmation_token expired at {expires_at}; call again without it for a new one"
    if token_fingerprint != fingerprint:
        return (
            "confirmation_token was issued for a different request (problem, type, files or budget changed)"
        )
    # a pre-version-5 token was shown only the estimate: it confirms no worst case above it
    confirmed = confirmed_worst if confirmed_worst is not None else confirmed_estimate
    if worst_case > confirmed:
        return (
            f"the worst case rose from {usd(confirmed)} (confirmed) to {usd(worst_case)}; "
            "call again without the token to confirm the new amount"
        )
    return None


def use(conn: apsw.Connection, token: str, invocation_id: int) -> None:
    conn.execute(USE_TOKEN, {"at": utc_now_iso(), "used_by": invocation_id, "token_hash": token_hash(token)})
