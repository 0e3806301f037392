"""One wall clock: every product module reads the time through router.clock, which the
date-reading tests pin (tests/clock_support.py) so none of them depends on the hour it runs at.
A module that called datetime.now() or time.time() itself would slip past the pin."""

import ast
from datetime import timedelta

from router import clock
from tests.project import PROJECT_ROOT

ROUTER = PROJECT_ROOT / "router"
# attribute calls that read the wall clock: (object, attribute)
WALL_CLOCK_READS = {("datetime", "now"), ("datetime", "utcnow"), ("date", "today"), ("time", "time")}


def wall_clock_reads(source: str) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(func := node.func, ast.Attribute):
            owner = func.value
            name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", None)
            if (name, func.attr) in WALL_CLOCK_READS:
                lines.append(node.lineno)
    return lines


def test_only_router_clock_reads_the_wall_clock():
    readers = {
        str(path.relative_to(PROJECT_ROOT)): lines
        for path in ROUTER.rglob("*.py")
        if path != ROUTER / "clock.py" and (lines := wall_clock_reads(path.read_text(encoding="utf-8")))
    }
    assert readers == {}


def test_the_guard_sees_each_way_of_reading_the_clock():
    source = (
        "import time, datetime\nt = time.time()\nd = datetime.datetime.now()\ne = datetime.date.today()\n"
    )
    assert wall_clock_reads(source) == [2, 3, 4]


def test_every_reading_follows_the_pinned_clock(pinned_clock):
    assert clock.now() == pinned_clock
    assert clock.unix_now() == pinned_clock.timestamp()
    stamp = clock.utc_now_iso()
    assert stamp.endswith("Z") and stamp[:19] == pinned_clock.strftime("%Y-%m-%dT%H:%M:%S")
    assert clock.utc_now_and_after(90) == (stamp, clock.utc_iso(pinned_clock + timedelta(seconds=90)))
