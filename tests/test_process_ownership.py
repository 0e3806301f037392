"""The router owns every process it starts and everything those start (issue 16): a start-up
that times out ends its process group, one backend never has two processes, a crash is
seen when the process exits even while a child holds its stdout, and when the router exits
no backend, child, detached child or orphaned grandchild is left. Real router, real
backends (tests/servers/misbehaving.py), real process trees."""

import json
import time

import pytest

from router.facade.jsonrpc_lines import encode, request
from tests.facade_support import (
    RawStdioClient,
    add_hanging_backend,
    alive,
    audit_rows,
    logged_pids,
    text_of,
    wait_until,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_a_backend_hanging_at_start_called_three_times_leaves_at_most_one_process(
    facade, harvested_catalog
):
    add_hanging_backend(facade, harvested_catalog)
    starts, children = facade.state_dir / "hang-starts.log", facade.state_dir / "hang-children.log"
    async with facade.router(extra_args=("--no-wake-on-search",)) as router:
        for _ in range(3):
            result = await router.call_tool("mcp_call_tool", {"toolName": "hangs_whoami", "args": {}})
            assert result.is_error
            assert "did not finish starting within 1 s; it was stopped" in text_of(result)
        started = logged_pids(starts)
        assert len(started) == 3
        # the earlier two were ended with their children before the next start
        assert sum(alive(pid) for pid in started + logged_pids(children)) <= 2
        assert await wait_until(lambda: not any(map(alive, started + logged_pids(children))), timeout_s=15)
        # the router itself still serves
        assert not (await router.call_tool("mcp_search_tools", {"query": "time"})).is_error
    assert [row["outcome"] for row in audit_rows(facade.db) if row["target"] == "hangs_whoami"] == [
        "timeout"
    ] * 3


async def test_after_the_router_exits_no_backend_child_detached_child_or_orphan_remains(facade):
    async with facade.router() as router:

        async def call(tool: str, **args) -> int:
            result = await router.call_tool("mcp_call_tool", {"toolName": tool, "args": args})
            assert not result.is_error, text_of(result)
            return int(text_of(result))

        backend = await call("whoami")
        in_group = await call("spawn_child")
        own_session = await call("spawn_child", leave_group=True)
        orphan = await call("spawn_orphan")  # its parent exited: adopted by the router
        everyone = [backend, in_group, own_session, orphan]
        assert all(alive(pid) for pid in everyone), everyone
    # the client disconnected: the router stopped its backend and all it started
    assert await wait_until(lambda: not any(map(alive, everyone)), timeout_s=15), [
        pid for pid in everyone if alive(pid)
    ]


async def test_a_stopped_backends_children_go_with_it_while_the_router_keeps_running(facade):
    facade.reconfigure(idle_stop_s=0.8)
    async with facade.router(extra_args=("--no-wake-on-search",)) as router:
        first = int(text_of(await router.call_tool("mcp_call_tool", {"toolName": "whoami", "args": {}})))
        child = int(
            text_of(await router.call_tool("mcp_call_tool", {"toolName": "spawn_orphan", "args": {}}))
        )
        assert alive(first) and alive(child)
        # idle stop ends the backend, and the orphan it left, the router still running
        assert await wait_until(lambda: not alive(first) and not alive(child), timeout_s=15)
        second = int(text_of(await router.call_tool("mcp_call_tool", {"toolName": "whoami", "args": {}})))
        assert second != first


async def test_a_crash_is_reported_as_a_crash_even_while_a_child_holds_stdout(facade):
    facade.reconfigure(call_timeout_s=20.0)
    async with facade.router() as router:
        started = time.monotonic()
        result = await router.call_tool("mcp_call_tool", {"toolName": "crash_leaving_child", "args": {}})
        took = time.monotonic() - started
        assert result.is_error
        assert "closed the connection during 'crash_leaving_child'" in text_of(result)
        assert took < 10, took  # seen when the process exited, not at the 20 s call timeout
        children = logged_pids(facade.state_dir / "children.log")
        assert len(children) == 1
        assert await wait_until(lambda: not alive(children[0]), timeout_s=10)
        # the next call starts a fresh backend
        assert (
            text_of(await router.call_tool("mcp_call_tool", {"toolName": "shout", "args": {"text": "ok"}}))
            == "OK"
        )
    outcomes = [row["outcome"] for row in audit_rows(facade.db)]
    assert outcomes == ["backend_failed", "ok"]


def test_concurrent_crashes_and_restarts_never_leave_two_processes_of_one_backend(facade):
    """Calls that crash the backend and calls that restart it, sent together: afterwards one
    process of that backend is alive, the one serving calls."""
    facade.reconfigure(breaker_failures=100)  # six crashes: the breakers must not stop the test
    client = RawStdioClient(facade.params())
    try:
        next_id = 1000
        for _ in range(3):
            batch = set()
            for tool in ["crash_now", "whoami", "crash_now", "whoami", "whoami"]:
                next_id += 1
                batch.add(next_id)
                call = {"name": "mcp_call_tool", "arguments": {"toolName": tool, "args": {}}}
                client.write_raw(encode(request(next_id, "tools/call", call)))
            answered: set[int] = set()
            while answered != batch:
                answered.add(json.loads(client.read_line(timeout_s=60))["id"])
        shout = client.call_tool("mcp_call_tool", {"toolName": "shout", "args": {"text": "still here"}})
        assert shout["content"][0]["text"] == "STILL HERE"
        started = logged_pids(facade.state_dir / "starts.log")
        assert len(started) >= 3
        deadline = time.monotonic() + 15
        while sum(map(alive, started)) != 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sum(map(alive, started)) == 1, [p for p in started if alive(p)]
    finally:
        client.close()
