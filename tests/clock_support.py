"""The wall clock pinned to chosen instants, so a test that reads dates (a price's age, the UTC
day a cost counts against, an expiry) runs at midnight, noon and the end of a year alike, and
passes or fails the same whatever hour it happens to run at.

A test takes the `pinned_clock` fixture and is run once per instant; router.clock.now() then
returns that instant for the whole test. Views that compare with SQLite's own 'now' are not
pinned this way; tests of those set their rows relative to the real clock.
"""

import os
from datetime import UTC, datetime

import pytest

from router import clock

INSTANTS = {
    "00:00:01": datetime(2026, 12, 1, 0, 0, 1, tzinfo=UTC),
    "12:00": datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC),
    "23:59:59": datetime(2026, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC),
    # the boundary itself: the first instant of a day (and of a month and a year)
    "day-boundary": datetime(2027, 1, 1, 0, 0, 0, tzinfo=UTC),
}


@pytest.fixture(params=list(INSTANTS.values()), ids=list(INSTANTS))
def pinned_clock(request, monkeypatch) -> datetime:
    instant: datetime = request.param
    monkeypatch.setattr(clock, "_source", lambda: instant)
    return instant


def faked_clock_environment() -> dict[str, str]:
    """The variables of a clock faked from outside (libfaketime: `faketime -f '@2026-12-01
    13:00:00' make test`), for a process started with a scrubbed environment (the SDK's stdio
    client passes only HOME, PATH and a few more): without them a router the test starts would
    read the real clock while the test reads the faked one."""
    return {
        name: value
        for name, value in os.environ.items()
        if name in ("LD_PRELOAD", "TZ") or name.startswith("FAKETIME")
    }
