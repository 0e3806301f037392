"""Run `python -m router ARGS...` with the router's wall clock shifted by $CLOCK_SHIFT_S seconds:
the stand-in for libfaketime's `faketime -f +1h` on a machine without it (the router reads the
wall clock through router.clock only, so the shift is what every lease and row of it sees).

Run: CLOCK_SHIFT_S=3600 python tests/servers/shifted_clock.py break-glass --db ...
"""

import os
import runpy
import sys
from datetime import UTC, datetime, timedelta

from router import clock

SHIFT = timedelta(seconds=float(os.environ.get("CLOCK_SHIFT_S", "0")))
clock._source = lambda: datetime.now(UTC) + SHIFT

if __name__ == "__main__":
    sys.argv = ["router", *sys.argv[1:]]
    runpy.run_module("router", run_name="__main__", alter_sys=True)
