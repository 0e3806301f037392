"""What a model may send the meta-tools (issue 16), through the real server in-process:
integers are strict (`limit: true` and `"5"` are refused, not coerced), and an input echoed
in an error is clipped (a 1 MB tool name does not come back whole)."""

from pathlib import Path

import pytest
from mcp import Client

from router.agents.roles import get_role
from router.backends.servers import ServersConfig
from router.facade.server import ServeOptions, build_server

pytestmark = pytest.mark.anyio

HUGE = "x" * (1024 * 1024)


@pytest.fixture
def router_options(conn, db_path: Path, tmp_path: Path) -> ServeOptions:
    return ServeOptions(
        db_path=db_path,
        servers=ServersConfig(servers={}),
        role=get_role("staff-backend"),
        workspace=tmp_path,
        wake_on_search=False,
    )


def text_of(result) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


@pytest.mark.parametrize("limit", [True, "5", 5.5])
async def test_a_limit_that_is_not_a_json_integer_is_refused(router_options, limit):
    async with Client(build_server(router_options)) as client:
        refused = await client.call_tool("mcp_search_tools", {"query": "time", "limit": limit})
        accepted = await client.call_tool("mcp_search_tools", {"query": "time", "limit": 5})
    assert refused.is_error
    assert "bad arguments to mcp_search_tools: field limit: Input should be a valid integer" in text_of(
        refused
    )
    assert not accepted.is_error


async def test_a_tool_name_that_is_not_a_string_is_refused(router_options):
    async with Client(build_server(router_options)) as client:
        refused = await client.call_tool("mcp_inspect_schema", {"toolName": 12})
    assert refused.is_error and "field toolName: Input should be a valid string" in text_of(refused)


@pytest.mark.parametrize(
    ("meta_tool", "arguments"),
    [
        ("mcp_call_tool", {"toolName": HUGE, "args": {}}),
        ("mcp_inspect_schema", {"toolName": HUGE}),
        (HUGE, {}),
    ],
    ids=["call", "inspect", "unknown meta-tool"],
)
async def test_a_1_mb_name_is_not_echoed_whole(router_options, meta_tool, arguments):
    async with Client(build_server(router_options)) as client:
        result = await client.call_tool(meta_tool, arguments)
    text = text_of(result)
    assert result.is_error
    assert len(text) < 600, len(text)
    assert "'xxxxxxxx" in text and f"({len(HUGE)} characters)" in text
