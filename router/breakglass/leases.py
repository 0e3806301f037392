"""Leases: how a break-glass call shows it is still running, and how a dead one is found.

A call holds a lease from its first row: its process (pid, start time, host) and a renewal
every lease_seconds / 3, counted in lease_beats (lease_expires_at is written too). Another
process's wall clock is never enough to call it dead: clocks step (NTP, a suspend, a clock an
hour off), and a process whose clock ran an hour ahead declared live calls dead and started a
second one. A call is dead when
- it ran on this host and its process is gone (pid and start time: a recycled pid is not it);
- or its renewals stopped: lease_beats has not moved for lease_seconds, timed by this
  process's own steady clock (time.monotonic) since it first saw that count;
- or it ran on another host, whose process cannot be looked at, and its lease ran out by this
  host's clock (hosts sharing one file must keep their clocks in step).
Finding dead calls is read-only; ledger.resolve_dead settles them (released if nothing was
sent, else every request at its reported, looked-up or worst-case cost).

A call is in flight from its reservation until its settlement. At most one is, per database:
break-glass is a last resort, not a throughput path, and a provider that bills above the
reservation can then overshoot a cap by at most one call's charge (ledger.reserve refuses a
second call while one is in flight; a dead one is resolved first, so its lease bounds the wait).
"""

import os
import socket
import time
from dataclasses import dataclass
from typing import Any

import apsw

from router.breakglass.settings import usd
from router.clock import utc_now_and_after, utc_now_iso
from router.process_start import process_start_time, still_running

HOST = socket.gethostname()
# this process's start time, written with each call it runs (None without /proc)
PROCESS_STARTED = process_start_time(os.getpid())
# the lease of a row that does not say (written before schema version 14): the config's default
DEFAULT_LEASE_SECONDS = 30.0

RUNNING = """
SELECT id, session_id, pid, host, lease_expires_at, process_started, lease_beats, lease_seconds,
       (SELECT micro_usd FROM cost_ledger r WHERE r.invocation_id = i.id AND r.kind = 'reservation')
FROM breakglass_invocations i
WHERE status = 'started'
"""
RENEW = """
UPDATE breakglass_invocations SET lease_expires_at = :expires, lease_beats = lease_beats + 1
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


class _Renewals:
    """What this process has seen of each running call's renewal count, and when (its steady
    clock): a count that stays put for a whole lease means nobody renews it any more. This
    process's own calls too: one that ended without settling would hold the flight for good."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, int], tuple[int, float]] = {}

    def quiet_for(self, database: str, running: dict[int, int], now: float) -> dict[int, float]:
        """Each running call (id → its count) with the seconds its count has stayed put."""
        seen = {key: value for key, value in self._seen.items() if key[0] != database}
        quiet = {}
        for invocation_id, beats in running.items():
            last = self._seen.get((database, invocation_id))
            if last is None or last[0] != beats:
                last = (beats, now)
            seen[(database, invocation_id)] = last
            quiet[invocation_id] = now - last[1]
        self._seen = seen
        return quiet


_renewals = _Renewals()


def dead_calls(conn: apsw.Connection) -> list[DeadCall]:
    """Calls still marked 'started' whose process on this host is gone, whose renewals stopped,
    or (on another host) whose lease ran out."""
    rows: list[Any] = conn.execute(RUNNING).fetchall()
    quiet = _renewals.quiet_for(conn.filename, {row[0]: row[6] for row in rows}, time.monotonic())
    now = utc_now_iso()
    dead = []
    for invocation_id, session_id, pid, host, expires, started, _, seconds, reserved in rows:
        lease = seconds or DEFAULT_LEASE_SECONDS
        if host == HOST and not still_running(pid, started or ""):
            why = f"its process {pid} is gone"
        elif quiet[invocation_id] > lease:
            why = f"its lease was not renewed for {quiet[invocation_id]:.0f} s (a {lease:g} s lease)"
        elif host != HOST and (expires is None or expires <= now):
            why = f"its lease ran out ({expires or 'never taken'}) by this host's clock"
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
