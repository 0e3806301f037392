"""Search while another process holds the database's write lock (issue 16's bar: while a
writer holds it for 20 s, searches each answer within 100 ms).

One router over real stdio on the seeded catalog; the same searches are timed in turns with
no other writer and while the system `sqlite3` shell sits inside BEGIN IMMEDIATE, so both
series see the same machine load. Run: python -m bench.busy_bench [--hold-s 20]
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

from bench.facade_bench import StdioPeer, summarize
from bench.write_lock import sqlite3_shell_holding_the_write_lock, write_lock_held
from router.catalog.load import load_catalog
from router.db import connect
from router.paths import SEEDS_DIR

VENV_BIN = Path(sys.executable).parent
QUERIES = ["what time is it in Tokyo", "read a file", "git diff of staged changes", "fetch a web page"]
BOUND_MS = 100.0


def _searches(peer: StdioPeer, seconds: float, pause_s: float) -> list[float]:
    timings = []
    until = time.monotonic() + seconds
    index = 0
    while time.monotonic() < until:
        started = time.perf_counter()
        peer.call("mcp_search_tools", {"query": QUERIES[index % len(QUERIES)]})
        timings.append((time.perf_counter() - started) * 1000)
        index += 1
        time.sleep(pause_s)
    return timings


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.busy_bench")
    parser.add_argument("--hold-s", type=float, default=20.0, help="how long the writer holds the lock")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        db = Path(scratch) / "busy.db"
        conn = connect(db)
        load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
        conn.close()
        peer = StdioPeer([str(VENV_BIN / "context-router"), "serve", "--db", str(db), "--no-wake-on-search"])
        try:
            _searches(peer, 1.0, 0.0)  # warm-up
            free = _searches(peer, args.hold_s, 0.02)
            with sqlite3_shell_holding_the_write_lock(db):
                held = _searches(peer, args.hold_s, 0.02)
                still_held = write_lock_held(db)
        finally:
            peer.close()
    print(
        f"mcp_search_tools over stdio, seeded catalog; writer held the lock {args.hold_s:g} s: {still_held}"
    )
    print("| series | searches | median ms | p99 ms | max ms |")
    print("| --- | --- | --- | --- | --- |")
    for name, timings in (("no other writer", free), ("sqlite3 shell holds the write lock", held)):
        summary = summarize(timings)
        print(
            f"| {name} | {len(timings)} | {summary['median_ms']:.3f} | {summary['p99_ms']:.3f} | "
            f"{max(timings):.3f} |"
        )
    worst = max(held)
    over = sum(t >= BOUND_MS for t in held)
    print(
        f"- searches over {BOUND_MS:g} ms while the lock was held: {over} of {len(held)} "
        f"(without another writer: {sum(t >= BOUND_MS for t in free)} of {len(free)}); max {worst:.3f} ms"
    )
    return 0 if worst < BOUND_MS and still_held else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
