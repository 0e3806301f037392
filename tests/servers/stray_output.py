"""An MCP server on the router's stdio transport whose tool writes to stdout three ways: print,
a raw write to fd 1, and a child process that inherits fd 1. None of it may reach the wire.

Run: python tests/servers/stray_output.py
"""

import os
import subprocess
import sys

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

from router.facade.stdio_transport import event_loop_stdio_server

STRAY_TOOL = types.Tool(name="stray", description="Write junk to stdout.", input_schema={"type": "object"})


async def list_tools(_ctx, _params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[STRAY_TOOL])


async def call_tool(_ctx, _params) -> types.CallToolResult:
    print("stray-print")
    sys.stdout.flush()
    os.write(1, b"stray-fd1\n")
    subprocess.run(["sh", "-c", "echo stray-child"], check=True)
    return types.CallToolResult(content=[types.TextContent(text="wrote junk")])


async def main() -> None:
    server = Server("stray-output", on_list_tools=list_tools, on_call_tool=call_tool)
    async with event_loop_stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
