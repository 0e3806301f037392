"""How long the CLI takes to start: the whole process, as a user at a terminal waits for it.

`context-router --version`, `search`, `inspect` and `paths` on the seeded catalog, each
started RUNS times after one warm-up run (the warm-up fills the page cache; what is measured
is the start-up a second command pays). Wall time is the figure the bar is on; each run's
CPU time (user + system, the child's own accounting) is shown beside it, since a busy
machine inflates the wall time of a start-up that is mostly imports but not its CPU time.

Run alone: `python -m bench.startup`.
"""

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.report import Options, Section, markdown_table
from router.commands.catalog import load_default_catalog

RUNS = 5
# The bar: each command's median start-to-exit time, in seconds.
BAR_S = 0.5
CONTEXT_ROUTER = Path(sys.executable).parent / "context-router"
COMMANDS = {
    "--version": ["--version"],
    "search": ["search", "--db", "{db}", "read a file"],
    "inspect": ["inspect", "--db", "{db}", "read_file"],
    "paths": ["paths", "--db", "{db}"],
}
# The commands the bar is on (issue 20); the others are shown for comparison.
BARRED = ("--version", "search")


def _child_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_command(argv: list[str], runs: int = RUNS) -> tuple[list[float], list[float]]:
    """(wall seconds, CPU seconds) of each run after a warm-up; every run must succeed."""
    walls, cpus = [], []
    for attempt in range(runs + 1):
        cpu_before = _child_cpu_s()
        started = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True, stdin=subprocess.DEVNULL, timeout=120)
        wall = time.perf_counter() - started
        if attempt:  # the first run is the warm-up
            walls.append(wall)
            cpus.append(_child_cpu_s() - cpu_before)
    return walls, cpus


def run(options: Options) -> Section:
    with tempfile.TemporaryDirectory() as scratch:
        db = Path(scratch) / "router.db"
        load_default_catalog(db)
        load_before = os.getloadavg()[0]
        figures = {}
        for name, args in COMMANDS.items():
            walls, cpus = time_command([str(CONTEXT_ROUTER), *(a.format(db=db) for a in args)])
            figures[name] = {
                "wall_median_s": statistics.median(walls),
                "wall_max_s": max(walls),
                "cpu_median_s": statistics.median(cpus),
                "runs": len(walls),
            }
        load_after = os.getloadavg()[0]
    rows = [
        [
            f"`context-router {name}`",
            f"{f['wall_median_s']:.3f}",
            f"{f['wall_max_s']:.3f}",
            f"{f['cpu_median_s']:.3f}",
        ]
        for name, f in figures.items()
    ]
    verdicts = [
        f"- `{name}` median: {figures[name]['wall_median_s']:.3f} s "
        f"(bar < {BAR_S} s) {'PASS' if figures[name]['wall_median_s'] < BAR_S else 'FAIL'}"
        for name in BARRED
    ]
    markdown = (
        f"Whole process, start to exit, {RUNS} runs each after one warm-up, on the seeded catalog "
        f"(183 tools). Load average {load_before:.1f} before and {load_after:.1f} after, on "
        f"{os.cpu_count()} CPUs.\n\n"
        + markdown_table(["command", "median s", "slowest s", "CPU median s"], rows)
        + "\n\n"
        + "\n".join(verdicts)
    )
    data = {"figures": figures, "load_average": [load_before, load_after], "bar_s": BAR_S}
    return Section("CLI start-up", markdown, data)


if __name__ == "__main__":
    print(run(Options(sizes=(), write=False)).markdown)
