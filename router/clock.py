"""Time, in one place, so tests can inject it."""

import time
from datetime import UTC, datetime, timedelta


def utc_now_iso() -> str:
    """ISO-8601 UTC with milliseconds, e.g. '2026-11-29T20:21:16.123Z'."""
    return utc_iso(datetime.now(UTC))


def utc_iso(moment: datetime) -> str:
    """A UTC moment in the one text format every timestamp column uses; it sorts as text, and
    SQL's strftime('%Y-%m-%dT%H:%M:%fZ', 'now') writes the same format."""
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def utc_now_and_after(seconds: float) -> tuple[str, str]:
    """Now and `seconds` later, both from one reading of the clock."""
    now = datetime.now(UTC)
    return utc_iso(now), utc_iso(now + timedelta(seconds=seconds))


def unix_now() -> float:
    return time.time()
