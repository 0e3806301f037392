"""The framework floor: a minimal MCP server on the same SDK (low-level Server, stdio) with one
echo tool. Round trips to it are what any MCP server costs before doing any work.

With --event-loop-stdio it uses the router's own stdio pump (router/facade/stdio_transport.py), so
the router is compared with a floor on the same transport; without it, the SDK's default
threaded transport (what a plain SDK server costs)."""

import sys

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from router.facade.stdio_transport import event_loop_stdio_server

ECHO_TOOL = types.Tool(
    name="echo",
    description="Echo the text back.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)
EVENT_LOOP_FLAG = "--event-loop-stdio"


async def list_tools(_ctx, _params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ECHO_TOOL])


async def call_tool(_ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    text = (params.arguments or {}).get("text", "")
    return types.CallToolResult(content=[types.TextContent(text=text)])


async def main(event_loop_stdio: bool) -> None:
    server = Server("echo-floor", on_list_tools=list_tools, on_call_tool=call_tool)
    transport = event_loop_stdio_server() if event_loop_stdio else stdio_server()
    async with transport as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main, EVENT_LOOP_FLAG in sys.argv[1:])
