"""A page's call signatures through a real `context-router serve` (real stdio, real backends):
a tool is called straight from the page, without mcp_inspect_schema, and a call with
arguments the schema refuses still points at mcp_inspect_schema."""

import pytest

from bench.signatures import filled_call
from router.facade.definitions import meta_tool_definitions
from tests.facade_support import audit_rows, json_of, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_a_tool_is_called_from_its_signature_on_the_page_without_inspecting_it(facade):
    async with facade.router() as router:
        page = json_of(await router.call_tool("mcp_search_tools", {"query": "current time in a timezone"}))
        best = page["tools"][0]
        assert best["name"] == "get_current_time"
        assert best["signature"] == "get_current_time(timezone: str)"
        # what a model does with it: a value of the named type for each argument
        args = filled_call(best["signature"]) | {"timezone": "Asia/Tokyo"}
        called = await router.call_tool("mcp_call_tool", {"toolName": best["name"], "args": args})
        status_page = json_of(
            await router.call_tool("mcp_search_tools", {"query": "git working tree status"})
        )
        [status] = [tool for tool in status_page["tools"] if tool["name"] == "git_status"]
        # the router fills no argument in: repo_path is the caller's, the workspace it works in
        assert status["signature"] == "git_status(repo_path: str)"
        git = await router.call_tool(
            "mcp_call_tool", {"toolName": "git_status", "args": {"repo_path": str(facade.workspace)}}
        )
    assert not called.is_error, text_of(called)
    assert called.structured_content["timezone"] == "Asia/Tokyo"
    assert not git.is_error and "On branch main" in text_of(git), text_of(git)
    assert "mcp_inspect_schema" not in [row["meta_tool"] for row in audit_rows(facade.db)]


async def test_arguments_the_schema_refuses_still_point_at_inspect(facade):
    async with facade.router() as router:
        refused = await router.call_tool(
            "mcp_call_tool", {"toolName": "get_current_time", "args": {"timezone": 9}}
        )
    assert refused.is_error
    assert "mcp_inspect_schema" in text_of(refused) and "timezone" in text_of(refused)


def test_the_search_tools_definition_tells_of_the_signature_and_inspect_of_when_to_use_it():
    definitions = {tool["name"]: tool["description"] for tool in meta_tool_definitions()}
    assert "call signature" in definitions["mcp_search_tools"]
    assert "when unsure" in definitions["mcp_inspect_schema"]
