"""What the dashboard and /metrics cost on a long history: an audit of N rows (calls over a few
backends, searches, inspects; some failures, a few breaker openings), then

- a /metrics scrape: the first one (a restarted router reads the whole history), one after
  1,000 new rows, and one with nothing new;
- every canned query and chart query of the dashboard, as Datasette runs it (Python's sqlite3,
  mode=ro), against Datasette's time limit.

    .venv/bin/python -m bench --only operation --no-write
"""

import random
import sqlite3
import tempfile
import time
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest

from bench.report import Options, Section, markdown_table
from router.catalog.load import load_catalog
from router.dashboard.app import DATABASE_NAME, SETTINGS, load_metadata, read_only_uri
from router.db import connect
from router.facade import audit
from router.metrics.collector import RouterCollector
from router.paths import SEEDS_DIR

AUDIT_SIZES = (100_000, 1_000_000)
NEW_ROWS = 1_000
SEED = 38
# the outcomes of calls, roughly as a working router writes them
CALL_OUTCOMES = ["ok"] * 90 + ["tool_error"] * 4 + ["backend_failed", "timeout", "breaker_open", "denied"] * 1
# one row every ROW_SPACING_S seconds, the last one now: the windows the views and charts use
# (the last 24 hours, 48 hours, 7 days) hold what they would on a busy router
ROW_SPACING_S = 2.0


def iso(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int(seconds * 1000) % 1000:03d}Z"


def audit_rows(count: int, tools: list[str], rng: random.Random, start: float) -> list[dict]:
    out = []
    for i in range(count):
        at = iso(start + i * ROW_SPACING_S)
        kind = rng.random()
        meta_tool = (
            "mcp_call_tool" if kind < 0.5 else "mcp_search_tools" if kind < 0.9 else "mcp_inspect_schema"
        )
        call = meta_tool == "mcp_call_tool"
        out.append(
            {
                "started_at": at,
                "finished_at": at,
                "session_id": f"stdio-{i // 200:06d}",
                "role": "staff-backend",
                "meta_tool": meta_tool,
                "target": rng.choice(tools) if meta_tool != "mcp_search_tools" else None,
                "args_hash": f"b3:{i:064x}",
                "outcome": rng.choice(CALL_OUTCOMES) if call else "ok",
                "latency_ms": rng.lognormvariate(3.0, 1.2) if call else rng.uniform(0.5, 5.0),
                "error": None,
                "pid": 1,
                "result_tokens": None if call else rng.randint(4, 400),
                "page_tools": rng.randint(0, 8) if meta_tool == "mcp_search_tools" else None,
            }
        )
    return out


def build(db: Path, size: int) -> None:
    conn = connect(db)
    try:
        load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
        tools = [name for (name,) in conn.execute("SELECT name FROM tools")]
        rng = random.Random(SEED)
        first = time.time() - (size + NEW_ROWS) * ROW_SPACING_S
        with conn:
            for start in range(0, size, 50_000):
                rows = audit_rows(min(50_000, size - start), tools, rng, first + start * ROW_SPACING_S)
                conn.executemany(audit.INSERT_FINISHED, rows)
    finally:
        conn.close()


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def scrape_times(db: Path) -> dict[str, float]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(RouterCollector(db, lambda: {"git", "time", "filesystem", "memory", "fetch"}))
    first = timed(lambda: generate_latest(registry))
    conn = connect(db)
    try:
        tools = [name for (name,) in conn.execute("SELECT name FROM tools")]
        last = time.time() - NEW_ROWS * ROW_SPACING_S
        with conn:
            conn.executemany(audit.INSERT_FINISHED, audit_rows(NEW_ROWS, tools, random.Random(1), last))
    finally:
        conn.close()
    after_new = timed(lambda: generate_latest(registry))
    steady = timed(lambda: generate_latest(registry))
    return {"first_ms": first, "after_new_rows_ms": after_new, "nothing_new_ms": steady}


def query_times(db: Path) -> dict[str, float]:
    metadata = load_metadata()
    queries = {
        f"query {name}": q["sql"] for name, q in metadata["databases"][DATABASE_NAME]["queries"].items()
    }
    charts = metadata["plugins"]["datasette-dashboards"][DATABASE_NAME]["charts"]
    queries |= {f"chart {name}": chart["query"] for name, chart in charts.items()}
    conn = sqlite3.connect(read_only_uri(db), uri=True)
    try:
        # what Datasette runs for a page: the query, at most max_returned_rows + 1 rows of it
        return {
            name: timed(lambda sql=sql: conn.execute(sql).fetchmany(1001)) for name, sql in queries.items()
        }
    finally:
        conn.close()


def run(options: Options) -> Section:
    data: dict[str, dict] = {}
    for size in AUDIT_SIZES:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "router.db"
            build(db, size)
            data[str(size)] = {"scrape": scrape_times(db), "queries": query_times(db)}
    limit = SETTINGS["sql_time_limit_ms"]
    scrape_rows = [
        [
            f"{int(size):,}",
            *(
                f"{data[size]['scrape'][key]:.0f}"
                for key in ("first_ms", "after_new_rows_ms", "nothing_new_ms")
            ),
        ]
        for size in data
    ]
    names = list(data[str(AUDIT_SIZES[0])]["queries"])
    query_rows = [[name, *(f"{data[size]['queries'][name]:.0f}" for size in data)] for name in names]
    markdown = (
        "A /metrics scrape (ms) over an audit of N rows: the first after a start reads the whole "
        f"history; then {NEW_ROWS:,} new rows; then nothing new.\n\n"
        + markdown_table(["audit rows", "first", f"after {NEW_ROWS:,} new", "nothing new"], scrape_rows)
        + f"\n\nEach dashboard query (ms, Python's sqlite3 read-only, as Datasette runs it; its limit is {limit} ms):\n\n"
        + markdown_table(["query", *(f"{int(size):,} rows" for size in data)], query_rows)
    )
    return Section("Dashboard and /metrics over a long audit", markdown, data)
