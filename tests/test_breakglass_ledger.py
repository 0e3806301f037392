"""The ledger on its own, on a real SQLite file: session and day caps, one-time tokens bound to
the worst case, overruns that stop a session, dead calls resolved by the next write, and the
views as the system sqlite3 shell reads them."""

import json
import subprocess
import time
from datetime import timedelta

from router.breakglass import caps as capsmod
from router.breakglass import ledger
from router.clock import utc_iso
from router.db import query_dicts
from router.process_start import process_start_time
from tests.ledger_support import ROOMY, invocation


def caps(**override) -> capsmod.Caps:
    return capsmod.Caps(**{**ROOMY.__dict__, **override})


def kinds(conn, invocation_id):
    return [
        r["kind"]
        for r in query_dicts(
            conn, "SELECT kind FROM cost_ledger WHERE invocation_id = ? ORDER BY id", (invocation_id,)
        )
    ]


def status(conn, invocation_id):
    return conn.execute(
        "SELECT status FROM breakglass_invocations WHERE id = ?", (invocation_id,)
    ).fetchone()[0]


def test_session_caps_count_calls_and_commit_open_worst_cases(conn):
    two_calls = caps(session_max_invocations=2)
    a, b, c = invocation(conn), invocation(conn), invocation(conn)
    assert ledger.reserve(conn, "s1", a, 1_000, two_calls) is None
    ledger.settle(conn, "s1", a, status="ok", reserved=1_000, actual=300)
    assert ledger.reserve(conn, "s1", b, 1_000, two_calls) is None
    assert "2 of 2 break-glass calls already made in session s1" in ledger.reserve(
        conn, "s1", c, 1_000, two_calls
    )
    use = capsmod.usage(conn, "s1")
    assert (use.session_calls, use.session_committed) == (2, 1_300)  # 300 settled + 1,000 still open
    ledger.settle(conn, "s1", b, status="ok", reserved=1_000, actual=1_000)
    money = caps(session_max_micro=2_500)
    refusal = ledger.reserve(conn, "s1", invocation(conn), 1_300, money)
    assert "the worst case $0.0013 does not fit: session s1 has $0.0012 left" in refusal
    assert "short by $0.0001" in refusal
    assert ledger.reserve(conn, "s1", invocation(conn), 1_200, money) is None
    assert kinds(conn, a) == ["estimate", "reservation", "settlement", "release", "outcome"]


def test_day_caps_span_every_session_and_only_today(conn, pinned_clock):
    day = caps(day_max_invocations=3, day_max_micro=3_500)
    for session in ("morning", "noon", "evening"):
        call = invocation(conn, session)
        assert ledger.reserve(conn, session, call, 1_000, day) is None
        ledger.settle(conn, session, call, status="ok", reserved=1_000, actual=1_000)
    refusal = ledger.reserve(conn, "night", invocation(conn, "night"), 1_000, day)
    assert "day cap reached: 3 of 3 break-glass calls already made today" in refusal
    assert "across every session" in refusal
    money = caps(day_max_micro=3_500)
    refusal = ledger.reserve(conn, "night", invocation(conn, "night"), 600, money)
    assert f"today (UTC {pinned_clock.date().isoformat()})" in refusal
    assert "has $0.0005 left of the $0.00 day cap" in refusal
    # yesterday's calls do not count against today
    yesterday = utc_iso(pinned_clock - timedelta(days=1))
    conn.execute("UPDATE cost_ledger SET at = ? WHERE kind = 'reservation'", (yesterday,))
    assert ledger.reserve(conn, "night", invocation(conn, "night"), 1_000, day) is None
    tomorrow = capsmod.usage(conn, "x", pinned_clock + timedelta(days=1))
    assert (tomorrow.day_calls, tomorrow.day_committed) == (0, 0)


def test_overrun_is_recorded_as_reported_and_stops_the_session(conn):
    a = invocation(conn)
    assert ledger.reserve(conn, "s1", a, 1_000, ROOMY) is None
    ledger.settle(conn, "s1", a, status="ok", reserved=1_000, actual=4_000_000)
    settled = query_dicts(
        conn,
        "SELECT kind, micro_usd FROM cost_ledger WHERE invocation_id = ? AND kind IN ('settlement', 'overrun') ORDER BY id",
        (a,),
    )
    # never clipped: the whole charge is the settlement, the excess an overrun
    assert settled == [
        {"kind": "settlement", "micro_usd": 4_000_000},
        {"kind": "overrun", "micro_usd": 3_999_000},
    ]
    refusal = ledger.reserve(conn, "s1", invocation(conn), 1, ROOMY)
    assert f"session s1 is stopped: invocation #{a} was charged more than its reservation" in refusal
    # with the figures: what it settled at, what was reserved, the session's total
    assert "($4.0000 settled against $0.0010 reserved: charged $4.000000, above the $0.001000" in refusal
    assert "the session has committed $4.0000 of its $1000.00 cap" in refusal
    # another session is not stopped, but the money counts against the day
    s2 = invocation(conn, "s2")
    assert ledger.reserve(conn, "s2", s2, 1, ROOMY) is None
    assert capsmod.usage(conn, "s2").day_committed == 4_000_001
    ledger.settle(conn, "s2", s2, status="ok", reserved=1, actual=1)
    # a single call charged above its own worst case stops the session even inside the reservation
    b = invocation(conn, "s3")
    ledger.reserve(conn, "s3", b, 1_000, ROOMY)
    ledger.settle(conn, "s3", b, status="ok", reserved=1_000, actual=900, overrun="judge charged above worst")
    assert "session s3 is stopped" in ledger.reserve(conn, "s3", invocation(conn, "s3"), 1, ROOMY)


def test_confirmation_token_is_one_time_and_bound_to_the_worst_case(conn):
    first = invocation(conn)
    token = ledger.issue_token(conn, "s1", first, "b3:fp", 1_000_000, 2_500_000, 30)
    stored = conn.execute("SELECT token_hash, worst_case_micro_usd FROM breakglass_tokens").fetchone()
    assert token not in stored[0] and stored[0].startswith("b3:") and stored[1] == 2_500_000
    assert status(conn, first) == "needs_confirmation"

    def use(worst, fingerprint="b3:fp", tok=token):
        return ledger.reserve(conn, "s1", invocation(conn), worst, ROOMY, token=tok, fingerprint=fingerprint)

    assert "different request" in use(2_500_000, "b3:x")
    assert "the worst case rose from $2.5000 (confirmed) to $2.6000" in use(2_600_000)
    assert use(2_500_000) is None
    assert "already used" in use(2_500_000)
    assert "not one this server issued" in use(1, tok="bgc_forged")


def test_a_dead_call_is_resolved_by_the_next_write(conn):
    """Process ids that cannot be alive: a dead call on this host is resolved at once."""
    nothing_sent, mid_call, unreserved = invocation(conn), invocation(conn), invocation(conn)
    ledger.reserve(conn, "s1", nothing_sent, 1_000, ROOMY)
    conn.execute("UPDATE breakglass_invocations SET pid = 2147483000 WHERE id = ?", (nothing_sent,))
    # the call in flight died: the next reservation resolves it, then takes the one flight
    assert ledger.reserve(conn, "s1", mid_call, 1_000, ROOMY) is None
    assert status(conn, nothing_sent) == "interrupted"
    answered = ledger.request_sent(conn, mid_call, "panel a", 300)
    ledger.request_answered(conn, answered, "gen-a", 120)
    looked_up = ledger.request_sent(conn, mid_call, "panel b", 300)
    ledger.request_answered(conn, looked_up, "gen-b", None)
    ledger.request_sent(conn, mid_call, "judge attempt 1", 400)  # in flight when it died
    conn.execute("UPDATE breakglass_invocations SET pid = 2147483000")
    assert [r["status"] for r in query_dicts(conn, "SELECT status FROM v_breakglass_recent")] == [
        "started",
        "started",
        "interrupted",
    ]

    ledger.resolve_dead(conn, {"gen-b": 77})
    assert [status(conn, i) for i in (nothing_sent, mid_call, unreserved)] == ["interrupted"] * 3
    assert kinds(conn, nothing_sent)[-3:] == ["settlement", "release", "outcome"]
    spent = query_dicts(
        conn,
        "SELECT invocation_id, micro_usd FROM cost_ledger WHERE kind = 'settlement' ORDER BY invocation_id",
    )
    assert spent == [
        {"invocation_id": nothing_sent, "micro_usd": 0},
        {"invocation_id": mid_call, "micro_usd": 120 + 77 + 400},
    ]
    reason = conn.execute("SELECT reason FROM breakglass_invocations WHERE id = ?", (mid_call,)).fetchone()[0]
    assert "3 requests sent, cost 1 reported, 1 looked up, 1 worst case" in reason
    assert capsmod.usage(conn, "s1").session_committed == 597
    # this process's own running calls are never taken for dead
    mine = invocation(conn)
    ledger.reserve(conn, "s1", mine, 1_000, ROOMY)
    ledger.resolve_dead(conn)
    assert status(conn, mine) == "started"
    # nor is another live process's call (pid 1, its start time), whatever its lease's expiry
    # says by this process's wall clock (a clock an hour ahead would read every lease as run out)
    conn.execute(
        "UPDATE breakglass_invocations SET pid = 1, process_started = ?, lease_seconds = 0.3 WHERE id = ?",
        (process_start_time(1), mine),
    )
    ledger.resolve_dead(conn)
    conn.execute(
        "UPDATE breakglass_invocations SET lease_expires_at = '2000-01-01T00:00:00.000Z' WHERE id = ?",
        (mine,),
    )
    ledger.resolve_dead(conn)
    assert status(conn, mine) == "started"
    # its renewals stopped: once a whole lease passed without one (this process's steady clock)
    time.sleep(0.4)
    ledger.renew_lease(conn, invocation(conn), 60)  # any write resolves it
    assert status(conn, mine) == "interrupted"
    assert (
        "its lease was not renewed for"
        in conn.execute("SELECT reason FROM breakglass_invocations WHERE id = ?", (mine,)).fetchone()[0]
    )


def test_a_late_answer_after_being_resolved_is_an_overrun_not_a_second_settlement(conn):
    a = invocation(conn)
    ledger.reserve(conn, "s1", a, 1_000, ROOMY)
    ledger.request_sent(conn, a, "fusion attempt 1", 500)
    conn.execute("UPDATE breakglass_invocations SET pid = 1, lease_expires_at = '2000-01-01T00:00:00.000Z'")
    ledger.resolve_dead(conn)
    ledger.settle(conn, "s1", a, status="ok", reserved=1_000, actual=650)
    rows = query_dicts(
        conn,
        "SELECT kind, micro_usd FROM cost_ledger WHERE invocation_id = ? AND kind IN ('settlement', 'overrun') ORDER BY id",
        (a,),
    )
    assert rows == [{"kind": "settlement", "micro_usd": 500}, {"kind": "overrun", "micro_usd": 150}]


BREAKGLASS_VIEWS = ("v_cost_per_session", "v_cost_per_day", "v_breakglass_recent")


def sqlite3_shell(db_path, sql):
    done = subprocess.run(["sqlite3", "-json", str(db_path), sql], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout or "[]")


def test_views_read_by_the_system_sqlite3_shell(conn, db_path):
    settled, refused, running = invocation(conn, "s9"), invocation(conn, "s9"), invocation(conn, "s9")
    ledger.reserve(conn, "s9", settled, 1_000, ROOMY)
    ledger.settle(conn, "s9", settled, status="ok", reserved=1_000, actual=420, mode="fusion", diagnosis="d")
    ledger.refuse(conn, "s9", refused, "estimate above budget")
    ledger.reserve(conn, "s9", running, 1_000, ROOMY)
    session = sqlite3_shell(db_path, "SELECT * FROM v_cost_per_session")
    assert session == [
        {
            **session[0],
            "session_id": "s9",
            "invocations": 3,
            "calls": 2,
            "refusals": 1,
            "estimated_micro_usd": 300,
            "open_reserved_micro_usd": 1_000,
            "spent_micro_usd": 420,
            "spent_usd": "0.0004",
            "overruns": 0,
        }
    ]
    day = sqlite3_shell(db_path, "SELECT * FROM v_cost_per_day")
    assert day[0]["calls"] == 2 and day[0]["spent_micro_usd"] == 420
    recent = sqlite3_shell(
        db_path,
        "SELECT id, status, mode, actual_usd, over_worst_case, output_cap_tokens, reason FROM v_breakglass_recent",
    )
    assert recent == [
        {
            "id": running,
            "status": "started",
            "mode": None,
            "actual_usd": None,
            "over_worst_case": 0,
            "output_cap_tokens": 4000,
            "reason": "",
        },
        {
            "id": refused,
            "status": "refused",
            "mode": None,
            "actual_usd": None,
            "over_worst_case": 0,
            "output_cap_tokens": 4000,
            "reason": "estimate above budget",
        },
        {
            "id": settled,
            "status": "ok",
            "mode": "fusion",
            "actual_usd": "0.0004",
            "over_worst_case": 0,
            "output_cap_tokens": 4000,
            "reason": "",
        },
    ]
    # a call whose lease ran out reads interrupted before anyone settles it
    conn.execute(
        "UPDATE breakglass_invocations SET lease_expires_at = '2000-01-01T00:00:00.000Z' WHERE id = ?",
        (running,),
    )
    assert sqlite3_shell(db_path, f"SELECT status FROM v_breakglass_recent WHERE id = {running}") == [
        {"status": "interrupted"}
    ]
