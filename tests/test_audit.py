"""Audit rows as a person reads them in v_recent_audit: a call still running is 'in_flight'
until its deadline, 'interrupted' after it; a finished call shows its outcome."""

import subprocess
from datetime import UTC, datetime, timedelta

from router.backends.servers import ServersConfig
from router.clock import utc_iso
from router.facade import audit
from router.facade.backends import call_allowance_s
from tests.db_rows import rows

STARTED_ROW = {
    "session_id": "s1",
    "role": "staff-backend",
    "meta_tool": "mcp_call_tool",
    "target": "slow_tool",
    "arguments": {"x": 1},
}


def start_call(conn, within_s: float = 60.0) -> int:
    return audit.start(conn, **STARTED_ROW, within_s=within_s)


def recent(db_path) -> list[tuple[str, str]]:
    return [(r["target"], r["outcome"]) for r in rows(db_path, "SELECT * FROM v_recent_audit")]


def move_deadline(conn, row_id: int, seconds_from_now: float | None) -> None:
    """What the passing of time (or a row from before deadlines) does to a row, without
    waiting for it."""
    deadline = None
    if seconds_from_now is not None:
        deadline = utc_iso(datetime.now(UTC) + timedelta(seconds=seconds_from_now))
    conn.execute("UPDATE audit SET deadline_at = :d WHERE id = :id", {"d": deadline, "id": row_id})


def test_a_call_still_running_reads_in_flight(conn, db_path):
    start_call(conn)
    assert recent(db_path) == [("slow_tool", "in_flight")]


def test_the_deadline_is_the_calls_time_allowance_plus_the_grace(conn, db_path):
    start_call(conn, within_s=50.0)
    row = rows(db_path, "SELECT started_at, deadline_at FROM audit")[0]
    started, deadline = (datetime.fromisoformat(row[k]) for k in ("started_at", "deadline_at"))
    assert deadline - started == timedelta(seconds=50.0 + audit.DEADLINE_GRACE_S)
    assert row["deadline_at"].endswith("Z") and len(row["deadline_at"]) == len(row["started_at"])


def test_a_started_row_past_its_deadline_reads_interrupted(conn, db_path):
    row_id = start_call(conn)
    move_deadline(conn, row_id, -1.0)
    assert recent(db_path) == [("slow_tool", "interrupted")]


def test_a_started_row_without_a_deadline_reads_interrupted(conn, db_path):
    """Rows written before schema version 2 have none: their process is long gone."""
    row_id = start_call(conn)
    move_deadline(conn, row_id, None)
    assert recent(db_path) == [("slow_tool", "interrupted")]


def test_finished_rows_read_their_outcome_before_and_after_the_deadline(conn, db_path):
    timed_out = start_call(conn)
    audit.finish(conn, timed_out, outcome=audit.TIMEOUT, latency_ms=12.5, error="too slow")
    late = start_call(conn)
    audit.finish(conn, late, outcome=audit.OK, latency_ms=3.0, error=None)
    move_deadline(conn, late, -1.0)
    audit.record(
        conn, **STARTED_ROW | {"target": "catalog_only"}, outcome=audit.OK, latency_ms=0.2, error=None
    )
    assert recent(db_path) == [("catalog_only", "ok"), ("slow_tool", "ok"), ("slow_tool", "timeout")]
    # a search or inspect row is written finished: it needs no deadline
    assert rows(db_path, "SELECT deadline_at FROM audit WHERE target = 'catalog_only'") == [
        {"deadline_at": None}
    ]


def test_the_system_sqlite3_shell_tells_in_flight_from_interrupted(conn, db_path):
    """The view compares with the shell's own clock (Debian 12's 3.40), not the router's."""
    start_call(conn)
    move_deadline(conn, start_call(conn), -1.0)
    result = subprocess.run(
        ["sqlite3", str(db_path), "SELECT outcome FROM v_recent_audit ORDER BY id"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.split() == ["in_flight", "interrupted"]


def test_a_calls_allowance_is_the_slowest_servers_cold_start_plus_call():
    config = ServersConfig.model_validate(
        {
            "defaults": {"startup_timeout_s": 20.0, "call_timeout_s": 30.0},
            "servers": {
                "quick": {
                    "name": "quick",
                    "profile": "core",
                    "command": "x",
                    "startup_timeout_s": 1.0,
                    "call_timeout_s": 2.0,
                },
                "slow_start": {
                    "name": "slow_start",
                    "profile": "core",
                    "command": "x",
                    "startup_timeout_s": 90.0,
                    "call_timeout_s": 5.0,
                },
                "defaulted": {"name": "defaulted", "profile": "core", "url": "http://localhost:1/mcp"},
            },
        }
    )
    assert config.longest_call_s() == 95.0
    assert ServersConfig(servers={}).longest_call_s() == 50.0
    # what the router may spend on one: the previous start's stop (6 s), the cold start, its
    # checks (a call's time, at least a stop's), the call, and 1 s to learn how it exited
    assert call_allowance_s(config) == 6 + 90 + 6 + 5 + 1
    assert call_allowance_s(ServersConfig(servers={})) == 6 + 20 + 30 + 30 + 1


def test_a_call_sent_again_moves_its_deadline_and_a_finished_row_keeps_its_own(conn, db_path):
    row_id = start_call(conn)
    move_deadline(conn, row_id, -1.0)
    assert recent(db_path) == [("slow_tool", "interrupted")]
    audit.extend_deadline(conn, row_id, within_s=30.0)
    assert recent(db_path) == [("slow_tool", "in_flight")]
    audit.finish(conn, row_id, outcome=audit.NOT_COMPLETED, latency_ms=5.0, error="exited")
    before = rows(db_path, "SELECT deadline_at FROM audit")
    audit.extend_deadline(conn, row_id, within_s=90.0)
    assert rows(db_path, "SELECT deadline_at FROM audit") == before
    assert recent(db_path) == [("slow_tool", "not_completed")]
