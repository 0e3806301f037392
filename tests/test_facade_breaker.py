"""Circuit breaker: the pure transition function with an injected clock, its rows under
BEGIN IMMEDIATE, and open → half-open → closed/reopened across TWO router processes that
share one SQLite file."""

import json
import time

import anyio
import pytest

from router.db import connect
from router.facade import breaker
from router.facade.breaker import BreakerPolicy, BreakerState
from tests.db_rows import rows
from tests.facade_support import (
    add_hanging_backend,
    audit_rows,
    breaker_row,
    call_log,
    logged_pids,
    text_of,
    wait_until,
)

POLICY = BreakerPolicy(failure_threshold=3, open_seconds=60.0)
T0 = 1_800_000_000.0


# --- the pure function ---------------------------------------------------------------------


def test_three_consecutive_failures_open_it_and_a_success_resets_the_count():
    state = BreakerState()
    state = breaker.after_call(state, False, T0, POLICY, "boom")
    state = breaker.after_call(state, False, T0 + 1, POLICY, "boom")
    assert state.state == "closed" and state.consecutive_failures == 2
    assert breaker.after_call(state, True, T0 + 2, POLICY) == BreakerState()
    state = breaker.after_call(state, False, T0 + 2, POLICY, "boom")
    assert (state.state, state.consecutive_failures, state.opened_at, state.last_error) == (
        "open",
        3,
        T0 + 2,
        "boom",
    )


def test_open_refuses_for_the_window_then_lets_exactly_one_trial_through():
    opened = BreakerState("open", 3, T0, "boom")
    admission, same = breaker.admit(opened, T0 + 59.9, POLICY)
    assert not admission.allowed and same == opened
    assert admission.retry_after_s == pytest.approx(0.1)

    admission, trial_state = breaker.admit(opened, T0 + 60, POLICY)
    assert admission.allowed and admission.trial
    assert trial_state.state == "half_open" and trial_state.opened_at == T0 + 60
    # while the trial runs, everyone else is refused
    second, _ = breaker.admit(trial_state, T0 + 61, POLICY)
    assert not second.allowed


def test_half_open_trial_success_closes_and_failure_reopens():
    trial = BreakerState("half_open", 3, T0 + 60, "boom")
    assert breaker.after_call(trial, True, T0 + 61, POLICY) == BreakerState()
    reopened = breaker.after_call(trial, False, T0 + 61, POLICY, "again")
    assert (reopened.state, reopened.opened_at, reopened.consecutive_failures) == ("open", T0 + 61, 4)


def test_a_trial_abandoned_by_a_dead_process_is_given_to_the_next_caller():
    stale = BreakerState("half_open", 3, T0, "boom")
    admission, state = breaker.admit(stale, T0 + 60, POLICY)
    assert admission.allowed and state.opened_at == T0 + 60


def test_rows_are_shared_by_two_connections_and_only_one_takes_the_trial(db_path):
    first, second = connect(db_path), connect(db_path)
    try:
        for i in range(3):
            breaker.record(first, "some_tool", False, T0 + i, POLICY, "boom")
        assert not breaker.check(second, "some_tool", T0 + 10, POLICY).allowed
        # after the window, the two connections race: exactly one gets the trial
        results = [breaker.check(c, "some_tool", T0 + 70, POLICY).allowed for c in (second, first)]
        assert results == [True, False]
        assert breaker.read_state(first, "some_tool").state == "half_open"
        breaker.record(second, "some_tool", True, T0 + 71, POLICY)
        assert breaker.read_state(first, "some_tool") == BreakerState()
    finally:
        first.close()
        second.close()


def test_a_success_on_a_clean_breaker_writes_no_row(conn):
    breaker.record(conn, "quiet_tool", True, T0, POLICY)
    assert conn.execute("SELECT count(*) FROM breaker").fetchone()[0] == 0


# --- two real router processes on one file -------------------------------------------------


@pytest.mark.anyio
@pytest.mark.slow
async def test_breaker_open_half_open_closed_across_two_router_processes(facade):
    flag = facade.state_dir / "flaky.flag"
    flag.write_text("broken", encoding="utf-8")
    call = {"toolName": "flaky_step", "args": {}}
    # B runs 61 s ahead (time injected through the environment): for B the window has passed
    ahead = {"CONTEXT_ROUTER_CLOCK_OFFSET_S": "61"}
    async with facade.router() as router_a, facade.router(env=ahead) as router_b:
        for _ in range(3):
            failed = await router_a.call_tool("mcp_call_tool", call)
            assert failed.is_error and "flaky backend is broken" in text_of(failed)
        assert breaker_row(facade.db, "flaky_step")["state"] == "open"
        reached = len(call_log(facade.state_dir))

        # A refuses without reaching the backend, and says when to retry
        refused = await router_a.call_tool("mcp_call_tool", call)
        assert refused.is_error and "circuit open" in text_of(refused) and "Retry in" in text_of(refused)
        assert len(call_log(facade.state_dir)) == reached

        # B is past the window: one trial goes through; the backend still fails → reopened
        trial = await router_b.call_tool("mcp_call_tool", call)
        assert trial.is_error and "flaky backend is broken" in text_of(trial)
        row = breaker_row(facade.db, "flaky_step")
        assert (row["state"], row["consecutive_failures"]) == ("open", 4)
        assert len(call_log(facade.state_dir)) == reached + 1

        # reopened for A (A's clock is behind the new opening)
        assert "circuit open" in text_of(await router_a.call_tool("mcp_call_tool", call))

        # the backend heals; B (ahead of the reopening only if it was 61 s ago) must wait...
        flag.unlink()
        assert "circuit open" in text_of(await router_b.call_tool("mcp_call_tool", call))

    # ...so a third router, 130 s ahead, takes the next trial: success closes the breaker
    async with facade.router(env={"CONTEXT_ROUTER_CLOCK_OFFSET_S": "130"}) as router_c:
        healed = await router_c.call_tool("mcp_call_tool", call)
        assert not healed.is_error and text_of(healed) == "step ok"
    assert breaker_row(facade.db, "flaky_step")["state"] == "closed"
    async with facade.router() as router_a:
        assert text_of(await router_a.call_tool("mcp_call_tool", call)) == "step ok"

    outcomes = [r["outcome"] for r in audit_rows(facade.db)]
    assert outcomes == ["backend_failed"] * 3 + [
        "breaker_open",
        "backend_failed",
        "breaker_open",
        "breaker_open",
        "ok",
        "ok",
    ]


@pytest.mark.anyio
@pytest.mark.slow
async def test_search_shows_an_open_breakers_tool_as_unavailable(facade):
    conn = connect(facade.db)
    for _ in range(3):
        breaker.record(conn, "whoami", False, time.time(), POLICY, "boom")
    conn.close()
    async with facade.router(extra_args=("--no-wake-on-search",)) as router:
        result = await router.call_tool(
            "mcp_search_tools", {"query": "report this backend process id whoami", "limit": 3}
        )
    page = json.loads(text_of(result))
    # it takes no slot among the callable tools: its server is named once, with the reason
    assert "whoami" not in [hit["name"] for hit in page["tools"]]
    [entry] = page["unavailable"]
    assert entry["tools"] == ["whoami"] and "circuit breaker open" in entry["reason"]


# --- the breaker of a whole backend server (its process failing) ----------------------------


def test_process_failures_open_the_servers_breaker_and_a_tool_error_does_not_count(conn):
    now = 1_000.0
    for _ in range(2):
        breaker.record(conn, "misbehaving", False, now, POLICY, "crashed", breaker.BACKEND_ROWS)
    # an answer from the process (even a JSON-RPC error) shows it works: the count restarts
    breaker.record(conn, "misbehaving", True, now, POLICY, None, breaker.BACKEND_ROWS)
    for _ in range(3):
        breaker.record(conn, "misbehaving", False, now, POLICY, "hung", breaker.BACKEND_ROWS)
    assert not breaker.check(conn, "misbehaving", now + 1, POLICY, breaker.BACKEND_ROWS).allowed
    # per-tool rows are apart: the tool breaker of a same-named tool is untouched
    assert breaker.check(conn, "misbehaving", now + 1, POLICY).allowed
    row = conn.execute("SELECT server, state, consecutive_failures FROM v_backend_breaker_state").fetchall()
    assert row == [("misbehaving", "open", 3)]


@pytest.mark.anyio
@pytest.mark.slow
async def test_a_server_whose_process_fails_three_times_is_refused_for_all_its_tools(
    facade, harvested_catalog
):
    add_hanging_backend(facade, harvested_catalog)
    starts = facade.state_dir / "hang-starts.log"
    async with facade.router(extra_args=("--no-wake-on-search",)) as router:
        for _ in range(3):
            timed_out = await router.call_tool("mcp_call_tool", {"toolName": "hangs_whoami", "args": {}})
            assert "did not finish starting" in text_of(timed_out)
        refused = await router.call_tool("mcp_call_tool", {"toolName": "hangs_whoami", "args": {}})
        assert refused.is_error
        assert "backend server 'hangs' failed to start, crashed or hung 3 times in a row" in text_of(refused)
        assert len(logged_pids(starts)) == 3  # refused without starting a fourth process
        found = await router.call_tool("mcp_search_tools", {"query": "hangs whoami never finishes starting"})
    page = json.loads(text_of(found))
    assert "hangs_whoami" not in [hit["name"] for hit in page["tools"]]
    [entry] = page["unavailable"]
    assert entry["server"] == "hangs" and "circuit breaker open" in entry["reason"]
    row = rows(facade.db, "SELECT * FROM v_backend_breaker_state")
    assert [(r["server"], r["state"], r["consecutive_failures"]) for r in row] == [("hangs", "open", 3)]


@pytest.mark.anyio
@pytest.mark.slow
async def test_search_does_not_respawn_a_backend_that_failed_to_start(facade, harvested_catalog):
    add_hanging_backend(facade, harvested_catalog)
    starts = facade.state_dir / "hang-starts.log"
    async with facade.router() as router:  # wake on search: on
        for _ in range(10):
            found = await router.call_tool(
                "mcp_search_tools", {"query": "hangs whoami never finishes starting"}
            )
            assert json.loads(text_of(found))["tools"][0]["name"] == "hangs_whoami"
            await anyio.sleep(0.3)
        assert await wait_until(lambda: len(logged_pids(starts)) >= 1, timeout_s=5)
        await anyio.sleep(1.5)
        # one background start, which failed; no search starts it again
        assert len(logged_pids(starts)) == 1
    row = rows(facade.db, "SELECT server, consecutive_failures FROM v_backend_breaker_state")
    assert row == [{"server": "hangs", "consecutive_failures": 1}]
