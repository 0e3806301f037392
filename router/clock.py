"""Wall-clock time, in one place: every reading of the wall clock in the product goes through
`now()`, so a test can pin it to a chosen instant (midnight, noon, a day boundary) and no test
depends on the hour it happens to run at.

Durations and timeouts use time.monotonic() where they are measured; this module is for the
moments that are written down or compared with written ones (audit rows, the day a cost
counts against, a price's age, a breaker's open window).
"""

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta


def _system_now() -> datetime:
    return datetime.now(UTC)


# What now() reads. Only tests replace it (tests/clock_support.py); the product never does.
_source: Callable[[], datetime] = _system_now


def now() -> datetime:
    """The current UTC moment (timezone-aware)."""
    return _source()


def utc_now_iso() -> str:
    """ISO-8601 UTC with milliseconds, e.g. '2026-11-29T20:21:16.123Z'."""
    return utc_iso(now())


def utc_iso(moment: datetime) -> str:
    """A UTC moment in the one text format every timestamp column uses; it sorts as text, and
    SQL's strftime('%Y-%m-%dT%H:%M:%fZ', 'now') writes the same format."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def utc_now_and_after(seconds: float) -> tuple[str, str]:
    """Now and `seconds` later, both from one reading of the clock."""
    moment = now()
    return utc_iso(moment), utc_iso(moment + timedelta(seconds=seconds))


def unix_now() -> float:
    """Now as Unix seconds (the breaker's open window is kept in these)."""
    if _source is _system_now:
        return time.time()  # the common case, without building a datetime
    return now().timestamp()
