"""The caps a call must fit, beyond its own budget: per session and per UTC day over the whole
database. Usage counts every reservation taken (each may have cost money) and commits, for
each, what it settled at or, while it is open, its whole worst case (fail-closed).

Read here, enforced by ledger.reserve under BEGIN IMMEDIATE; prepare reads them early only to
fit a call's max_tokens and to ask nobody to confirm a call the caps would refuse.
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import apsw

from router import clock
from router.breakglass.settings import usd
from router.clock import utc_iso
from router.db import one_row

# One reservation per call; what it commits is its settlement once there is one.
COMMITTED = """
coalesce((SELECT s.micro_usd FROM cost_ledger s
          WHERE s.invocation_id = r.invocation_id AND s.kind = 'settlement'), r.micro_usd)
"""
SESSION_USAGE = f"""
SELECT count(*), coalesce(sum({COMMITTED}), 0),
       (SELECT min(o.invocation_id) FROM cost_ledger o
        WHERE o.session_id = :session_id AND o.kind = 'overrun')
FROM cost_ledger r
WHERE r.session_id = :session_id AND r.kind = 'reservation'
"""
# what stopped a session, in figures: the call's settlement, its reservation, each overrun row
OVERRUN_FIGURES = """
SELECT (SELECT micro_usd FROM cost_ledger WHERE invocation_id = :id AND kind = 'settlement'),
       (SELECT micro_usd FROM cost_ledger WHERE invocation_id = :id AND kind = 'reservation'),
       (SELECT group_concat(detail, '; ') FROM cost_ledger WHERE invocation_id = :id AND kind = 'overrun')
"""
DAY_USAGE = f"""
SELECT count(*), coalesce(sum({COMMITTED}), 0)
FROM cost_ledger r
WHERE r.kind = 'reservation' AND r.at >= :day_start AND r.at < :day_end
"""

# The caps a call is checked against, kept per day beside the money (v_spend_per_day): the
# config file they come from may change, and the dashboard reads the database alone.
RECORD_CAPS = """
INSERT INTO breakglass_caps(day, day_max_micro_usd, day_max_invocations, session_max_micro_usd,
                            session_max_invocations, recorded_at)
VALUES (:day, :day_max_micro, :day_max_invocations, :session_max_micro, :session_max_invocations,
        :recorded_at)
ON CONFLICT(day) DO UPDATE SET
    day_max_micro_usd = excluded.day_max_micro_usd,
    day_max_invocations = excluded.day_max_invocations,
    session_max_micro_usd = excluded.session_max_micro_usd,
    session_max_invocations = excluded.session_max_invocations,
    recorded_at = excluded.recorded_at
WHERE (day_max_micro_usd, day_max_invocations, session_max_micro_usd, session_max_invocations)
   IS NOT (excluded.day_max_micro_usd, excluded.day_max_invocations,
           excluded.session_max_micro_usd, excluded.session_max_invocations)
"""


@dataclass(frozen=True)
class Caps:
    session_max_invocations: int
    session_max_micro: int
    day_max_invocations: int
    day_max_micro: int


@dataclass(frozen=True)
class Usage:
    session_id: str
    session_calls: int
    session_committed: int
    # the first invocation the provider charged above its reservation: the session stops
    overrun_invocation: int | None
    day: str
    day_calls: int
    day_committed: int
    # the overrun's figures in words, when the session is stopped
    overrun_figures: str = ""


def _day_bounds(now: datetime) -> tuple[str, str, str]:
    start = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return start.date().isoformat(), utc_iso(start), utc_iso(start + timedelta(days=1))


def usage(conn: apsw.Connection, session_id: str, now: datetime | None = None) -> Usage:
    day, start, end = _day_bounds(now or clock.now())
    calls, committed, overrun = one_row(conn, SESSION_USAGE, {"session_id": session_id})
    day_calls, day_committed = one_row(conn, DAY_USAGE, {"day_start": start, "day_end": end})
    figures = "" if overrun is None else _overrun_figures(conn, overrun)
    return Usage(session_id, calls, committed, overrun, day, day_calls, day_committed, figures)


def record(conn: apsw.Connection, use: Usage, caps: Caps) -> None:
    """Keep the caps `use`'s day was checked against (a row per day, rewritten only when they
    change); inside the reservation's transaction."""
    conn.execute(
        RECORD_CAPS,
        {
            "day": use.day,
            "day_max_micro": caps.day_max_micro,
            "day_max_invocations": caps.day_max_invocations,
            "session_max_micro": caps.session_max_micro,
            "session_max_invocations": caps.session_max_invocations,
            "recorded_at": clock.utc_now_iso(),
        },
    )


def _overrun_figures(conn: apsw.Connection, invocation_id: int) -> str:
    settled, reserved, details = one_row(conn, OVERRUN_FIGURES, {"id": invocation_id})
    return f"{usd(settled or 0)} settled against {usd(reserved or 0)} reserved: {details}"


def room_micro(use: Usage, caps: Caps) -> int:
    """The most a new call's worst case may be under both money caps."""
    return min(caps.session_max_micro - use.session_committed, caps.day_max_micro - use.day_committed)


def binding_cap(use: Usage, caps: Caps) -> str:
    """Which money cap leaves less room, in words (for messages)."""
    session_left = caps.session_max_micro - use.session_committed
    day_left = caps.day_max_micro - use.day_committed
    if session_left <= day_left:
        return (
            f"session {use.session_id} has {usd(max(session_left, 0))} left of its "
            f"${caps.session_max_micro / 1e6:.2f} cap"
        )
    return f"today (UTC {use.day}) has {usd(max(day_left, 0))} left of the ${caps.day_max_micro / 1e6:.2f} day cap"


def call_refusal(use: Usage, caps: Caps) -> str | None:
    """Refusals that no lower max_tokens can fix: a stopped session, the call counts."""
    if use.overrun_invocation is not None:
        return (
            f"session {use.session_id} is stopped: invocation #{use.overrun_invocation} was charged "
            f"more than its reservation ({use.overrun_figures}); the session has committed "
            f"{usd(use.session_committed)} of its ${caps.session_max_micro / 1e6:.2f} cap (see "
            "cost_ledger kind 'overrun'); start a new session after checking the prices"
        )
    if use.session_calls >= caps.session_max_invocations:
        return (
            f"session cap reached: {use.session_calls} of {caps.session_max_invocations} break-glass "
            f"calls already made in session {use.session_id}"
        )
    if use.day_calls >= caps.day_max_invocations:
        return (
            f"day cap reached: {use.day_calls} of {caps.day_max_invocations} break-glass calls already "
            f"made today (UTC {use.day}) across every session"
        )
    return None


def cap_refusal(use: Usage, worst_case_micro: int, caps: Caps) -> str | None:
    """None when a call with this worst case fits every cap; else why not, with the numbers."""
    if (refusal := call_refusal(use, caps)) is not None:
        return refusal
    room = room_micro(use, caps)
    if worst_case_micro > room:
        return (
            f"cap reached: the worst case {usd(worst_case_micro)} does not fit: {binding_cap(use, caps)} "
            f"(short by {usd(worst_case_micro - max(room, 0))})"
        )
    return None
