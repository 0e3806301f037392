"""The views the dashboard and /metrics read, over rows the router's own code writes to a real
file: breaker openings recorded by the triggers, failing_since, nearest-rank latency
percentiles, the caps kept per day, and every view read by the system sqlite3 shell (3.40)."""

import subprocess
from datetime import UTC, datetime, timedelta

import pytest

from router.breakglass import caps
from router.clock import utc_iso
from router.db import connect, query_dicts
from router.facade import audit, breaker
from router.facade.breaker import BreakerPolicy
from tests.db_rows import rows

POLICY = BreakerPolicy(failure_threshold=3, open_seconds=60.0)
T0 = 1_800_000_000.0


@pytest.fixture
def conn(seeded_db):
    connection = connect(seeded_db)
    yield connection
    connection.close()


def call(conn, tool: str, outcome: str, latency_ms: float, started_at: str) -> None:
    audit.record(
        conn,
        session_id="s",
        role="staff-backend",
        meta_tool="mcp_call_tool",
        target=tool,
        arguments={},
        outcome=outcome,
        latency_ms=latency_ms,
        error=None if outcome == "ok" else f"{outcome} error",
        started_at=started_at,
        finished_at=started_at,
    )


def test_every_opening_of_a_breaker_is_a_row(conn):
    for i in range(3):
        breaker.record(conn, "git_status", False, T0 + i, POLICY, "boom")
    assert breaker.check(conn, "git_status", T0 + 62, POLICY).trial  # half-open: no new opening
    breaker.record(conn, "git_status", False, T0 + 63, POLICY, "again")  # the trial fails: reopens
    breaker.record(conn, "git_status", True, T0 + 200, POLICY)
    for i in range(3):
        breaker.record(conn, "git", False, T0 + i, POLICY, "crashed", breaker.BACKEND_ROWS)
    openings = query_dicts(
        conn, "SELECT kind, name, server, consecutive_failures, last_error FROM v_breaker_openings"
    )
    assert openings == [
        {
            "kind": "server",
            "name": "git",
            "server": "git",
            "consecutive_failures": 3,
            "last_error": "crashed",
        },
        {
            "kind": "tool",
            "name": "git_status",
            "server": "git",
            "consecutive_failures": 4,
            "last_error": "again",
        },
        {
            "kind": "tool",
            "name": "git_status",
            "server": "git",
            "consecutive_failures": 3,
            "last_error": "boom",
        },
    ]


def test_failing_since_is_the_first_failure_after_the_last_success(conn):
    call(conn, "git_status", "backend_failed", 5.0, "2026-01-01T10:00:00.000Z")
    call(conn, "git_status", "ok", 5.0, "2026-01-01T11:00:00.000Z")
    call(conn, "git_log", "timeout", 30_000.0, "2026-01-01T12:00:00.000Z")
    call(conn, "git_status", "tool_error", 5.0, "2026-01-01T13:00:00.000Z")
    call(conn, "git_status", "denied", 0.1, "2026-01-01T14:00:00.000Z")  # a refusal is no failure
    call(conn, "get_current_time", "ok", 2.0, "2026-01-01T12:30:00.000Z")
    found = {row["server"]: row for row in query_dicts(conn, "SELECT * FROM v_backend_failures")}
    git = found["git"]
    assert (git["calls"], git["failures"], git["failing_since"], git["last_ok_at"]) == (
        5,
        3,
        "2026-01-01T12:00:00.000Z",
        "2026-01-01T11:00:00.000Z",
    )
    assert git["last_error"] == "tool_error error"
    assert found["time"]["failing_since"] is None and found["time"]["failures"] == 0
    call(conn, "git_log", "ok", 5.0, "2026-01-01T15:00:00.000Z")
    assert query_dicts(conn, "SELECT failing_since FROM v_backend_failures WHERE server = 'git'") == [
        {"failing_since": None}
    ]


def minutes_ago(minutes: float) -> str:
    return utc_iso(datetime.now(UTC) - timedelta(minutes=minutes))


def test_latency_percentiles_are_nearest_rank_over_forwarded_calls_of_the_last_week(conn):
    for ms in range(1, 101):  # 1..100 ms
        call(conn, "get_current_time", "ok", float(ms), minutes_ago(ms))
    call(conn, "get_current_time", "denied", 9_999.0, minutes_ago(1))  # never forwarded
    call(conn, "get_current_time", "ok", 5_000.0, minutes_ago(8 * 24 * 60))  # older than the window
    assert query_dicts(conn, "SELECT * FROM v_call_latency") == [
        {"server": "time", "calls": 100, "p50_ms": 50.0, "p95_ms": 95.0, "p99_ms": 99.0, "max_ms": 100.0}
    ]
    slowest = query_dicts(conn, "SELECT tool, latency_ms FROM v_slow_calls LIMIT 3")
    assert [row["latency_ms"] for row in slowest] == [9999.0, 5000.0, 100.0]


def test_caps_are_kept_per_day_and_rewritten_only_when_they_change(conn):
    use = caps.Usage("s", 0, 0, None, "2026-01-02", 0, 0)
    first = caps.Caps(3, 5_000_000, 20, 15_000_000)
    caps.record(conn, use, first)
    (kept,) = query_dicts(conn, "SELECT * FROM breakglass_caps")
    caps.record(conn, use, first)
    assert query_dicts(conn, "SELECT * FROM breakglass_caps") == [kept]
    caps.record(conn, use, caps.Caps(3, 5_000_000, 20, 9_000_000))
    assert query_dicts(conn, "SELECT day, day_max_micro_usd FROM breakglass_caps") == [
        {"day": "2026-01-02", "day_max_micro_usd": 9_000_000}
    ]


def test_the_system_sqlite3_shell_reads_every_view(seeded_db, conn):
    call(conn, "git_status", "ok", 5.0, "2026-01-01T10:00:00.000Z")
    views = [row["name"] for row in rows(seeded_db, "SELECT name FROM sqlite_master WHERE type = 'view'")]
    assert {"v_backend_failures", "v_tokens_per_session", "v_spend_today", "v_call_latency"} <= set(views)
    for view in views:
        shell = subprocess.run(
            ["sqlite3", str(seeded_db), f"SELECT * FROM {view} LIMIT 1;"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert shell.returncode == 0 and shell.stderr == "", (view, shell.stderr)
