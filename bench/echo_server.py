"""The framework floor: a minimal MCP server on the same SDK (low-level Server, stdio) with one
echo tool. Round trips to it are what any MCP server costs before doing any work."""

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

ECHO_TOOL = types.Tool(
    name="echo",
    description="Echo the text back.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)


async def list_tools(_ctx, _params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ECHO_TOOL])


async def call_tool(_ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    text = (params.arguments or {}).get("text", "")
    return types.CallToolResult(content=[types.TextContent(text=text)])


async def main() -> None:
    server = Server("echo-floor", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
