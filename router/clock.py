"""Time, in one place, so tests can inject it."""

import time
from datetime import datetime, timezone


def utc_now_iso() -> str:
    """ISO-8601 UTC with milliseconds, e.g. '2026-11-29T20:21:16.123Z'."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def unix_now() -> float:
    return time.time()
