"""Backend lifecycle through a real router process: wake on first need, reuse, idle stop,
stop with the router, crash, hang past the timeout, and interrupted calls in the audit."""

import signal
import time
from datetime import datetime, timedelta

import anyio
import pytest

from router.backends.servers import load_servers
from router.db import connect, query_dicts
from router.facade import audit
from router.facade.backends import call_allowance_s
from tests.facade_support import (
    RawStdioClient,
    alive,
    audit_rows,
    call_log,
    text_of,
    wait_until,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def whoami(router) -> int:
    result = await router.call_tool("mcp_call_tool", {"toolName": "whoami", "args": {}})
    assert result.is_error is False, text_of(result)
    return int(text_of(result))


async def test_wake_on_first_call_reuse_then_idle_stop_and_wake_again(facade):
    facade.reconfigure(idle_stop_s=0.8)
    async with facade.router(extra_args=("--no-wake-on-search",)) as router:
        # nothing is started by listing or searching
        await router.call_tool("mcp_search_tools", {"query": "report process id"})
        assert call_log(facade.state_dir) == []
        first = await whoami(router)
        assert await whoami(router) == first  # reused, not restarted
        assert alive(first)
        assert await wait_until(lambda: not alive(first), timeout_s=10)  # idle stop
        second = await whoami(router)
        assert second != first and alive(second)
    # the router's exit stops its backends
    assert await wait_until(lambda: not alive(second), timeout_s=10)


async def test_search_wakes_the_best_hits_backend_in_the_background(facade):
    starts = facade.state_dir / "starts.log"
    async with facade.router() as router:
        await router.call_tool("mcp_search_tools", {"query": "report this backend process id whoami"})
        # started without any call reaching it
        assert await wait_until(starts.exists, timeout_s=10)
        assert call_log(facade.state_dir) == []
        pid = await whoami(router)
    assert starts.read_text(encoding="utf-8").split() == [str(pid)]


async def test_crash_hang_and_cancel_are_failures_or_interruptions_and_the_backend_recovers(facade):
    facade.reconfigure(call_timeout_s=1.0)
    async with facade.router() as router:
        # a crash mid-call: a failure, and the next call restarts the backend
        before = await whoami(router)
        crashed = await router.call_tool("mcp_call_tool", {"toolName": "crash_now", "args": {}})
        assert crashed.is_error is True
        assert "closed the connection" in text_of(crashed)
        assert "its stderr ended with: " in text_of(crashed)
        assert text_of(crashed).endswith("crash_now: exiting on purpose")
        hung_pid = await whoami(router)
        assert hung_pid != before and not alive(before)

        # a hang past call_timeout_s: a failure, and the hung process is stopped
        started = time.perf_counter()
        result = await router.call_tool("mcp_call_tool", {"toolName": "hang_forever", "args": {}})
        assert time.perf_counter() - started < 5
        assert result.is_error is True
        assert "did not answer 'hang_forever' within 1 s" in text_of(result)
        assert await wait_until(lambda: not alive(hung_pid), timeout_s=10)

        # a call the client gives up on is finished as interrupted; the router keeps serving
        with anyio.move_on_after(0.5):
            await router.call_tool("mcp_call_tool", {"toolName": "hang_forever", "args": {}})
        assert (
            text_of(await router.call_tool("mcp_call_tool", {"toolName": "shout", "args": {"text": "a"}}))
            == "A"
        )
    rows = [(r["target"], r["outcome"]) for r in audit_rows(facade.db)]
    assert rows == [
        ("whoami", "ok"),
        ("crash_now", "backend_failed"),
        ("whoami", "ok"),
        ("hang_forever", "timeout"),
        ("hang_forever", "interrupted"),
        ("shout", "ok"),
    ]
    assert all(r["finished_at"] is not None for r in audit_rows(facade.db))


async def test_backend_that_dies_at_start_is_a_clear_failure(facade):
    facade.reconfigure(
        extra="""
[servers.misbehaving_start]
profile = "custom"
command = "python"
args = ["-c", "import sys; sys.exit(7)"]
"""
    )
    # point one catalog tool at the broken server
    conn = connect(facade.db)
    conn.execute("INSERT INTO servers(name, profile) VALUES ('misbehaving_start', 'custom')")
    conn.execute("UPDATE tools SET server = 'misbehaving_start' WHERE name = 'shout'")
    conn.close()
    async with facade.router() as router:
        result = await router.call_tool("mcp_call_tool", {"toolName": "shout", "args": {"text": "x"}})
    assert result.is_error is True
    assert "backend 'misbehaving_start' failed to start" in text_of(result)
    assert audit_rows(facade.db)[-1]["outcome"] == "backend_failed"


async def test_a_backend_that_fails_at_start_says_why_in_its_own_words_without_secrets(facade):
    secret = "s3cr3t-value-from-servers-toml"
    script = (
        "import os, sys; nl = chr(10); sys.stderr.write('fatal: /w is not a valid Git repository' + nl"
        " + 'key ghp_abcdefghijklmnopqrstuvwxyz0123456789 and ' + os.environ['SERVICE_TOKEN'] + nl);"
        " sys.exit(7)"
    )
    facade.reconfigure(
        extra=f"""
[servers.not_a_repo]
profile = "custom"
command = "python"
args = ["-c", "{script}"]
env = {{ SERVICE_TOKEN = "{secret}" }}
"""
    )
    conn = connect(facade.db)
    conn.execute("INSERT INTO servers(name, profile) VALUES ('not_a_repo', 'custom')")
    conn.execute("UPDATE tools SET server = 'not_a_repo' WHERE name = 'shout'")
    conn.close()
    async with facade.router() as router:
        result = await router.call_tool("mcp_call_tool", {"toolName": "shout", "args": {"text": "x"}})
    message = text_of(result)
    assert result.is_error is True
    assert "failed to start" in message
    assert (
        "its stderr ended with: fatal: /w is not a valid Git repository | key [REDACTED] and [REDACTED]"
        in message
    )
    assert "ghp_" not in message and secret not in message
    row = audit_rows(facade.db)[-1]
    assert row["outcome"] == "backend_failed" and secret not in row["error"] and "ghp_" not in row["error"]
    assert "not a valid Git repository" in row["error"]


def test_router_killed_mid_call_reads_in_flight_until_its_deadline_then_interrupted(facade):
    client = RawStdioClient(facade.params())
    try:
        client.send(
            "tools/call", {"name": "mcp_call_tool", "arguments": {"toolName": "hang_forever", "args": {}}}
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and "hang_forever" not in call_log(facade.state_dir):
            time.sleep(0.05)
        assert "hang_forever" in call_log(facade.state_dir)
        client.process.send_signal(signal.SIGKILL)
        client.process.wait(timeout=10)
    finally:
        client.close()
    conn = connect(facade.db)
    try:
        # nothing can tell a killed router from a slow call before the router's own bounds
        # (a previous start's stop, a cold start and its checks, the call, for the slowest
        # declared server) and the grace are up
        raw = query_dicts(conn, "SELECT outcome, finished_at, started_at, deadline_at FROM audit")
        assert [(r["outcome"], r["finished_at"]) for r in raw] == [("started", None)]
        allowance = call_allowance_s(load_servers(facade.servers_file)) + audit.DEADLINE_GRACE_S
        assert allowance == 6 + 20 + 10 + 10 + 1 + 5
        started, deadline_at = (datetime.fromisoformat(raw[0][k]) for k in ("started_at", "deadline_at"))
        assert deadline_at - started == timedelta(seconds=allowance)
        assert query_dicts(conn, "SELECT target, outcome FROM v_recent_audit") == [
            {"target": "hang_forever", "outcome": "in_flight"}
        ]
        # once the deadline has passed (moved, rather than waited for), it reads interrupted
        conn.execute("UPDATE audit SET deadline_at = :past", {"past": raw[0]["started_at"]})
        assert query_dicts(conn, "SELECT target, outcome FROM v_recent_audit") == [
            {"target": "hang_forever", "outcome": "interrupted"}
        ]
    finally:
        conn.close()


def test_sigterm_stops_the_router_and_its_backends(facade):
    client = RawStdioClient(facade.params())
    try:
        result = client.request(
            "tools/call", {"name": "mcp_call_tool", "arguments": {"toolName": "whoami", "args": {}}}
        )
        pid = int(result["content"][0]["text"])
        assert alive(pid)
        client.process.send_signal(signal.SIGTERM)
        assert client.process.wait(timeout=15) is not None
        deadline = time.monotonic() + 10
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid)
    finally:
        client.close()


async def test_a_call_the_client_abandons_is_cancelled_at_the_backend_too(facade):
    async with facade.router() as router:
        await whoami(router)  # started: on a busy machine a cold start alone can take the second
        with anyio.move_on_after(1.0):
            await router.call_tool("mcp_call_tool", {"toolName": "hang_forever", "args": {}})
        # the router told the backend (notifications/cancelled), which stopped the tool's task
        assert await wait_until(lambda: "hang_forever:cancelled" in call_log(facade.state_dir), timeout_s=10)
        assert (
            text_of(await router.call_tool("mcp_call_tool", {"toolName": "shout", "args": {"text": "b"}}))
            == "B"
        )


async def test_a_backend_that_exits_while_idle_is_restarted_by_the_next_call_not_failed(facade):
    async with facade.router() as router:
        first = await whoami(router)
        bye = await router.call_tool("mcp_call_tool", {"toolName": "exit_after_answer", "args": {}})
        assert text_of(bye) == "bye"
        assert await wait_until(lambda: not alive(first), timeout_s=10)
        await anyio.sleep(0.2)  # let the router see the pipe close
        second = await whoami(router)
        assert second != first
    outcomes = [r["outcome"] for r in audit_rows(facade.db)]
    assert outcomes == ["ok", "ok", "ok"]


async def test_concurrent_calls_share_one_backend_and_each_gets_its_own_answer(facade):
    starts = facade.state_dir / "starts.log"
    answers: dict[str, str] = {}
    async with facade.router(extra_args=("--no-wake-on-search",)) as router:

        async def shout(word: str, times: int) -> None:
            result = await router.call_tool(
                "mcp_call_tool", {"toolName": "shout", "args": {"text": word, "times": times}}
            )
            answers[word] = text_of(result)

        async with anyio.create_task_group() as tg:
            for i in range(12):
                tg.start_soon(shout, f"w{i}", i % 3 + 1)
    assert answers == {f"w{i}": " ".join([f"W{i}"] * (i % 3 + 1)) for i in range(12)}
    # the first call woke the backend; the eleven that raced it waited for that start
    assert len(starts.read_text(encoding="utf-8").split()) == 1
    assert [r["outcome"] for r in audit_rows(facade.db)] == ["ok"] * 12


async def test_a_catalog_change_made_while_the_router_runs_is_seen_by_the_next_call(facade):
    async with facade.router(extra_args=("--role", "director")) as router:
        assert (
            text_of(await router.call_tool("mcp_call_tool", {"toolName": "shout", "args": {"text": "a"}}))
            == "A"
        )
        conn = connect(facade.db)  # another process reloading the catalog, in effect
        conn.execute("UPDATE tools SET mutating = 1 WHERE name = 'shout'")
        conn.close()
        denied = await router.call_tool("mcp_call_tool", {"toolName": "shout", "args": {"text": "a"}})
        assert denied.is_error is True and "may not call 'shout'" in text_of(denied)
        conn = connect(facade.db)
        conn.execute("DELETE FROM tools WHERE name = 'shout'")
        conn.close()
        gone = await router.call_tool("mcp_call_tool", {"toolName": "shout", "args": {"text": "a"}})
    assert gone.is_error is True and "no tool named 'shout'" in text_of(gone)
