"""Every searchable tool is callable or honestly unavailable; a backend that changes a tool's
definition behind the catalog's back is quarantined (a real router, real backends, stdio)."""

import json
import subprocess

import anyio.lowlevel
import pytest

from router.catalog.load import load_catalog
from router.db import connect
from router.paths import SHIPPED_SERVERS_FILE
from tests.db_rows import rows
from tests.facade_support import (
    CONTEXT_ROUTER,
    harvest,
    json_of,
    make_workspace,
    running_router,
    text_of,
    write_catalog_file,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_director_finds_ghidra_decompiler_marked_unavailable_and_a_call_says_so_first(
    seeded_db, tmp_path
):
    async with running_router(seeded_db, SHIPPED_SERVERS_FILE, tmp_path, role="director") as router:
        found = json_of(
            await router.call_tool("mcp_search_tools", {"query": "decompile a function in ghidra"})
        )
        # not among the callable tools: its server is one entry, with the reason and install line
        assert "ghidra_decompile_function" not in [tool["name"] for tool in found["tools"]]
        ghidra = next(entry for entry in found["unavailable"] if entry["server"] == "ghidra")
        assert "ghidra_decompile_function" in ghidra["tools"]
        assert "not installed" in ghidra["reason"] and "pipx install uv" in ghidra["reason"]
        assert json.dumps(found).count("pipx install uv") == 1
        # arguments that would fail validation: the answer is about availability, not them
        called = await router.call_tool(
            "mcp_call_tool", {"toolName": "ghidra_decompile_function", "args": {"name": 42, "bogus": True}}
        )
        assert called.is_error
        assert "not available in this deployment" in text_of(called)
        assert "inputSchema" not in text_of(called) and "Do not retry it" in text_of(called)
    [row] = rows(seeded_db, "SELECT outcome, read_only_source FROM audit WHERE meta_tool = 'mcp_call_tool'")
    assert row == {"outcome": "unavailable", "read_only_source": "router-review"}


async def test_director_sees_read_only_tools_of_every_profile(seeded_db, tmp_path):
    queries = {
        "appsec": "list the functions in the binary with radare2",
        "android": "list connected android devices",
        "game": "what godot version is installed",
        "research": "convert a web page to markdown",
    }
    async with running_router(seeded_db, SHIPPED_SERVERS_FILE, tmp_path, role="director") as router:
        for profile, query in queries.items():
            found = json_of(await router.call_tool("mcp_search_tools", {"query": query, "profile": profile}))
            # not installed here: each is named in its server's entry, not hidden by the role
            [entry, *_] = found["unavailable"]
            assert entry["profile"] == profile and entry["tools"], (profile, query)


def test_serve_says_it_is_ready_and_warns_of_an_empty_catalog(tmp_path, seeded_db):
    def serve_stderr(db, workspace=tmp_path):
        finished = subprocess.run(
            [str(CONTEXT_ROUTER), "serve", "--db", str(db), "--workspace", str(workspace)],
            input="",  # a client that goes at once (its pipe closes): the router reports, then stops
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        return finished.stderr

    empty = tmp_path / "empty.db"
    connect(empty).close()
    said = serve_stderr(empty)
    assert f"context-router serve: ready on stdio: {empty} (an empty catalog; 14 servers declared)" in said
    assert "WARNING: the catalog" in said and "is empty" in said
    said = serve_stderr(seeded_db, make_workspace(tmp_path / "repository"))
    assert (
        "(183 tools; 5 of 14 servers callable: fetch, filesystem, git, memory, time); role staff-backend"
        in said
    )
    assert "WARNING" not in said and "unavailable" not in said
    # outside a git repository git is said to depend on each client's root, before any call,
    # with what a client without roots gets and how to fix that
    said = serve_stderr(seeded_db)
    assert (
        "(183 tools; 4 of 14 servers callable: fetch, filesystem, memory, time; git per client root)" in said
    )
    assert (
        "context-router serve: git: each client's root decides: usable where the client's root is a "
        "git repository (clients that declare MCP roots, such as Claude Code and OpenCode, use the "
        f"project they open); a client without roots gets {tmp_path}, which is not inside a git "
        "repository: start the router in one or pass --workspace DIR"
    ) in said
    assert "unavailable" not in said


async def test_search_over_an_empty_catalog_says_so(tmp_path):
    db = tmp_path / "empty.db"
    connect(db).close()
    async with running_router(db, SHIPPED_SERVERS_FILE, tmp_path) as router:
        result = json_of(await router.call_tool("mcp_search_tools", {"query": "anything"}))
    assert result["tools"] == [] and "catalog is empty" in result["warning"]


async def test_a_backend_listing_a_changed_definition_is_quarantined_until_accepted(facade):
    # the catalog says get_current_time does something else than the live server says
    lines = await harvest(facade.servers_file, facade.workspace, facade.state_dir, ("time",))
    for line in lines:
        if line["name"] == "get_current_time":
            line["description"] = "Reviewed description that the server no longer lists."
    conn = connect(facade.db)
    load_catalog(conn, seed_dir=None, user_files=[write_catalog_file(facade.state_dir / "time.jsonl", lines)])
    conn.close()
    async with facade.router() as router:
        first = await router.call_tool(
            "mcp_call_tool", {"toolName": "get_current_time", "args": {"timezone": "UTC"}}
        )
        assert first.is_error and "quarantined" in text_of(first) and "description" in text_of(first)
        other = await router.call_tool(
            "mcp_call_tool",
            {
                "toolName": "convert_time",
                "args": {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
            },
        )
        assert not other.is_error, text_of(other)  # its unchanged neighbour stays callable
        found = json_of(await router.call_tool("mcp_search_tools", {"query": "get_current_time"}))
        assert "get_current_time" not in [tool["name"] for tool in found["tools"]]
        [entry] = found["unavailable"]
        assert entry["tools"] == ["get_current_time"] and "quarantined" in entry["reason"]
        assert found["tools"][0]["name"] == "convert_time"  # the callable neighbour keeps its slot
        shown = json_of(await router.call_tool("mcp_inspect_schema", {"toolName": "get_current_time"}))
        assert shown["quarantined"]["changed"] == "description" and shown["quarantined"]["callable"] is False
    audited = rows(facade.db, "SELECT meta_tool, target, outcome FROM audit WHERE outcome = 'quarantined'")
    assert {"meta_tool": "tools/list", "target": "get_current_time", "outcome": "quarantined"} in audited
    # accepting: the catalog takes the live definition; the quarantine goes with it
    live = await harvest(facade.servers_file, facade.workspace, facade.state_dir, ("time",))
    conn = connect(facade.db)
    load_catalog(conn, seed_dir=None, user_files=[write_catalog_file(facade.state_dir / "time.jsonl", live)])
    assert conn.execute("SELECT count(*) FROM tool_quarantine").fetchone() == (0,)
    conn.close()
    async with facade.router() as router:
        again = await router.call_tool(
            "mcp_call_tool", {"toolName": "get_current_time", "args": {"timezone": "UTC"}}
        )
        assert not again.is_error, text_of(again)
    assert json.loads(text_of(again))["timezone"] == "UTC"
    await anyio.lowlevel.checkpoint()
