"""The three meta-tools over a real `context-router serve` subprocess (real stdio), calling
through to real backend MCP servers: mcp-server-time, mcp-server-git (PyPI) and
@modelcontextprotocol/server-filesystem (npm)."""

import json

import pytest
from mcp import Client, StdioServerParameters

from tests.facade_support import (
    VENV_BIN,
    audit_rows,
    call_log,
    json_of,
    text_of,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_search_inspect_call_flow_against_real_time_server(facade):
    async with facade.router() as router:
        hits = json_of(
            await router.call_tool("mcp_search_tools", {"query": "current time in a timezone", "limit": 3})
        )
        assert hits["tools"][0]["name"] == "get_current_time"
        assert set(hits["tools"][0]) >= {"name", "profile", "summary"}
        assert "inputSchema" not in json.dumps(hits)  # search never returns schemas

        schema = json_of(await router.call_tool("mcp_inspect_schema", {"toolName": "get_current_time"}))
        assert schema["inputSchema"]["required"] == ["timezone"]
        assert schema["mutating"] is False

        through_router = await router.call_tool(
            "mcp_call_tool", {"toolName": "get_current_time", "args": {"timezone": "Asia/Tokyo"}}
        )
        # the backend's own error result comes back unchanged too
        backend_error = await router.call_tool(
            "mcp_call_tool", {"toolName": "get_current_time", "args": {"timezone": "Mars/Olympus_Mons"}}
        )
    assert backend_error.is_error is True
    assert "Invalid timezone" in text_of(backend_error)
    assert audit_rows(facade.db)[-1]["outcome"] == "tool_error"
    # the same call made directly to the backend: the router returns its result unchanged
    async with Client(
        StdioServerParameters(command=str(VENV_BIN / "mcp-server-time"), args=["--local-timezone", "UTC"])
    ) as direct:
        direct_result = await direct.call_tool("get_current_time", {"timezone": "Asia/Tokyo"})
    assert through_router.is_error is False
    assert through_router.structured_content["timezone"] == "Asia/Tokyo"
    assert set(through_router.structured_content) == set(direct_result.structured_content)
    assert through_router.structured_content["datetime"].endswith("+09:00")
    assert [b.type for b in through_router.content] == [b.type for b in direct_result.content]


async def test_call_git_and_filesystem_backends(facade):
    (facade.workspace / "hello.txt").write_text("changed\n", encoding="utf-8")
    async with facade.router() as router:
        status = await router.call_tool(
            "mcp_call_tool", {"toolName": "git_status", "args": {"repo_path": str(facade.workspace)}}
        )
        assert status.is_error is False, text_of(status)
        assert "hello.txt" in text_of(status)

        content = await router.call_tool(
            "mcp_call_tool",
            {"toolName": "read_text_file", "args": {"path": str(facade.workspace / "hello.txt")}},
        )
        assert content.is_error is False, text_of(content)
        assert "changed" in text_of(content)

        written = await router.call_tool(
            "mcp_call_tool",
            {
                "toolName": "write_file",
                "args": {"path": str(facade.workspace / "new.txt"), "content": "made by the router"},
            },
        )
        assert written.is_error is False, text_of(written)
    assert (facade.workspace / "new.txt").read_text(encoding="utf-8") == "made by the router"


async def test_errors_are_tool_errors_a_model_can_act_on(facade):
    async with facade.router() as router:
        unknown_meta = await router.call_tool("get_current_time", {"timezone": "UTC"})
        unknown_tool = await router.call_tool("mcp_call_tool", {"toolName": "no_such_tool", "args": {}})
        unknown_inspect = await router.call_tool("mcp_inspect_schema", {"toolName": "no_such_tool"})
        bad_meta_args = await router.call_tool("mcp_call_tool", {"tool": "get_current_time"})
        bad_args = await router.call_tool("mcp_call_tool", {"toolName": "shout", "args": {"text": 5}})
        empty_query = await router.call_tool("mcp_search_tools", {"query": "   "})
        bad_limit = await router.call_tool("mcp_search_tools", {"query": "time", "limit": 500})
        missing = await router.call_tool("mcp_call_tool", {"toolName": "absent_lookup", "args": {"key": "k"}})
        orphan = await router.call_tool("mcp_call_tool", {"toolName": "orphan_ping", "args": {}})
        # the router is still healthy after all of that
        healthy = await router.call_tool("mcp_call_tool", {"toolName": "shout", "args": {"text": "ok"}})

    for result in (
        unknown_meta,
        unknown_tool,
        unknown_inspect,
        bad_meta_args,
        bad_args,
        empty_query,
        bad_limit,
        missing,
        orphan,
    ):
        assert result.is_error is True
    assert "mcp_search_tools" in text_of(unknown_meta)
    assert "no tool named 'no_such_tool'" in text_of(unknown_tool)
    assert "no tool named 'no_such_tool'" in text_of(unknown_inspect)
    assert "toolName" in text_of(bad_meta_args)
    assert "at text" in text_of(bad_args) and "mcp_inspect_schema" in text_of(bad_args)
    assert "empty" in text_of(empty_query)
    assert "limit" in text_of(bad_limit)
    assert "mcp-server-absent-for-tests" in text_of(missing)
    assert "npm install @example/absent-server" in text_of(missing)
    assert "not available in this deployment" in text_of(missing)
    assert "orphan" in text_of(orphan) and "no servers file declares" in text_of(orphan)
    assert text_of(healthy) == "OK"
    # bad arguments never reached the backend; only the healthy call did
    assert call_log(facade.state_dir) == ["shout"]


async def test_audit_rows_record_every_outcome_without_arguments_in_clear(facade):
    secret = "sk-live-THIS-MUST-NOT-BE-STORED"
    async with facade.router(role="staff-backend") as router:
        await router.call_tool("mcp_search_tools", {"query": "time"})
        await router.call_tool("mcp_inspect_schema", {"toolName": "shout"})
        await router.call_tool("mcp_call_tool", {"toolName": "shout", "args": {"text": secret}})
        await router.call_tool("mcp_call_tool", {"toolName": "refuse", "args": {"reason": secret}})
        await router.call_tool("mcp_call_tool", {"toolName": "shout", "args": {"text": 1, "times": secret}})
        await router.call_tool("mcp_call_tool", {"toolName": "nope", "args": {}})
        await router.call_tool("mcp_call_tool", {"toolName": "absent_lookup", "args": {}})
        await router.call_tool("mcp_call_tool", {"toolName": "orphan_ping", "args": {}})
        await router.call_tool("mcp_call_tool", {"toolName": "crash_now", "args": {}})
    async with facade.router(role="director") as router:
        await router.call_tool("mcp_call_tool", {"toolName": "append_note", "args": {"note": secret}})

    rows = audit_rows(facade.db)
    assert [(r["meta_tool"], r["target"], r["outcome"]) for r in rows] == [
        ("mcp_search_tools", None, "ok"),
        ("mcp_inspect_schema", "shout", "ok"),
        ("mcp_call_tool", "shout", "ok"),
        ("mcp_call_tool", "refuse", "tool_error"),
        ("mcp_call_tool", "shout", "invalid_arguments"),
        ("mcp_call_tool", "nope", "unknown_tool"),
        ("mcp_call_tool", "absent_lookup", "unavailable"),
        ("mcp_call_tool", "orphan_ping", "unavailable"),
        ("mcp_call_tool", "crash_now", "backend_failed"),
        ("mcp_call_tool", "append_note", "denied"),
    ]
    for row in rows:
        assert row["finished_at"] is not None and row["latency_ms"] >= 0
        assert row["args_hash"].startswith("b3:") and len(row["args_hash"]) == 3 + 64
        assert row["session_id"] and row["pid"] > 0
    assert [r["role"] for r in rows][-2:] == ["staff-backend", "director"]
    assert rows[0]["session_id"] != rows[-1]["session_id"]  # two router processes, two sessions
    dump = json.dumps(rows)
    assert secret not in dump
    # the same arguments hash the same (calls can be correlated without storing them)
    assert rows[2]["args_hash"] != rows[3]["args_hash"]
    assert all(r["error"] is None for r in rows if r["outcome"] == "ok")
    assert all(r["error"] for r in rows if r["outcome"] != "ok")
