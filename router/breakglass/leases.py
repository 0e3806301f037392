"""Leases: how a break-glass call shows it is still running, and how a dead one is found.

A call holds a lease from its first row: its process id, host and lease_expires_at, renewed
while it runs. It is dead when its lease ran out, or at once when it ran on this host and its
process is gone. Finding dead calls is read-only; ledger.resolve_dead settles them (released
if nothing was sent, else every request at its reported, looked-up or worst-case cost).

A call is in flight from its reservation until its settlement. At most one is, per database:
break-glass is a last resort, not a throughput path, and a provider that bills above the
reservation can then overshoot a cap by at most one call's charge (ledger.reserve refuses a
second call while one is in flight; a dead one is resolved first, so its lease bounds the wait).
"""

import os
import socket
from dataclasses import dataclass
from typing import Any

import apsw

from router.breakglass.settings import usd
from router.clock import utc_now_and_after, utc_now_iso
from router.process_start import process_running

HOST = socket.gethostname()

RUNNING = """
SELECT id, session_id, pid, host, lease_expires_at,
       (SELECT micro_usd FROM cost_ledger r WHERE r.invocation_id = i.id AND r.kind = 'reservation')
FROM breakglass_invocations i
WHERE status = 'started'
"""
RENEW = """
UPDATE breakglass_invocations SET lease_expires_at = :expires
WHERE id = :id AND status = 'started'
"""
# the live call holding the one flight: reserved, not yet settled (dead calls are resolved
# before this is read, inside the same BEGIN IMMEDIATE transaction)
IN_FLIGHT = """
SELECT i.id, i.session_id, i.pid, i.host, r.at, r.micro_usd, i.lease_expires_at
FROM breakglass_invocations i
JOIN cost_ledger r ON r.invocation_id = i.id AND r.kind = 'reservation'
WHERE i.status = 'started' AND i.id <> :invocation_id
  AND NOT EXISTS (SELECT 1 FROM cost_ledger s WHERE s.invocation_id = i.id AND s.kind = 'settlement')
ORDER BY r.id
LIMIT 1
"""
REQUESTS_OF = """
SELECT id, what, worst_micro_usd, generation_id, cost_micro_usd
FROM breakglass_requests WHERE invocation_id = :invocation_id ORDER BY id
"""


@dataclass(frozen=True)
class DeadCall:
    invocation_id: int
    session_id: str
    pid: int
    host: str
    # None when it died before reserving anything
    reserved: int | None
    why: str


@dataclass(frozen=True)
class SentRequest:
    id: int
    what: str
    worst: int
    generation_id: str | None
    cost: int | None


@dataclass(frozen=True)
class InFlight:
    invocation_id: int
    session_id: str
    pid: int
    host: str
    reserved_at: str
    reserved: int
    lease_expires_at: str | None

    def refusal(self) -> str:
        return (
            f"another break-glass call is in flight since {self.reserved_at}: invocation "
            f"#{self.invocation_id} (session {self.session_id}, process {self.pid} on "
            f"{self.host or 'an unknown host'}, {usd(self.reserved)} reserved). At most one runs at a "
            "time per database; retry after it settles"
        )


def in_flight(conn: apsw.Connection, invocation_id: int = 0) -> InFlight | None:
    """The call, other than this one, that is between its reservation and its settlement."""
    row = conn.execute(IN_FLIGHT, {"invocation_id": invocation_id}).fetchone()
    return None if row is None else InFlight(*row)


def lease_expiry(seconds: float) -> str:
    return utc_now_and_after(seconds)[1]


def renew(conn: apsw.Connection, invocation_id: int, seconds: float) -> None:
    conn.execute(RENEW, {"expires": lease_expiry(seconds), "id": invocation_id})


def dead_calls(conn: apsw.Connection) -> list[DeadCall]:
    """Calls still marked 'started' whose lease ran out or whose process on this host is gone.
    This process's own calls are alive while their lease is current (it settles them itself);
    one whose lease lapsed lost its renewer, and would otherwise hold the one flight for as
    long as this process lives."""
    now = utc_now_iso()
    dead = []
    rows: list[Any] = conn.execute(RUNNING).fetchall()
    for invocation_id, session_id, pid, host, expires, reserved in rows:
        mine = host == HOST and pid == os.getpid()
        if mine and expires is not None and expires > now:
            continue
        if expires is None or expires <= now:
            why = f"its lease ran out ({expires or 'never taken'})"
        elif host == HOST and not process_running(pid):
            why = f"its process {pid} is gone"
        else:
            continue
        dead.append(DeadCall(int(invocation_id), str(session_id), int(pid), str(host), reserved, why))
    return dead


def sent_requests(conn: apsw.Connection, invocation_id: int) -> list[SentRequest]:
    return [SentRequest(*row) for row in conn.execute(REQUESTS_OF, {"invocation_id": invocation_id})]


def generations_to_look_up(conn: apsw.Connection) -> list[str]:
    """Generation ids of dead calls' requests that answered without a cost."""
    return [
        r.generation_id
        for call in dead_calls(conn)
        for r in sent_requests(conn, call.invocation_id)
        if r.generation_id is not None and r.cost is None
    ]
