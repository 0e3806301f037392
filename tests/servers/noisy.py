"""An MCP stdio server that is loud where a router must stay calm: it floods its stderr (one
long line, or a long run without a newline) while a call runs, and answers a call with a
JSON-RPC error whose message holds whatever the caller asked it to say (secrets, in the tests).

Run: python tests/servers/noisy.py

It speaks the few JSON-RPC lines a client needs (initialize, tools/list, tools/call, ping) by
hand, one request at a time: while `flood_stderr` holds, it reads nothing.
"""

import json
import sys
import time
from typing import Any

PROTOCOL_VERSION = "2025-11-25"

# What tools/list answers, exactly: the tests put these lines in the catalog.
TOOLS: list[dict[str, Any]] = [
    {
        "name": "flood_stderr",
        "description": "Write lines of a run of characters to stderr, then hold the call for a while "
        "(writing them again every every_s seconds, when given).",
        "inputSchema": {
            "type": "object",
            "properties": {
                "chars": {"type": "integer"},
                "newline": {"type": "boolean"},
                "lines": {"type": "integer"},
                "every_s": {"type": "number"},
                "hold_s": {"type": "number"},
            },
            "required": ["chars"],
        },
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "fail_loudly",
        "description": "Answer with a JSON-RPC error carrying the message, also written to stderr.",
        "inputSchema": {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        },
        "annotations": {"readOnlyHint": True},
    },
]


def _write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _flood(arguments: dict[str, Any]) -> dict[str, Any]:
    chars, lines = int(arguments["chars"]), int(arguments.get("lines", 1))
    line = "A" * chars + ("\n" if arguments.get("newline", True) else "")
    every, until = float(arguments.get("every_s", 0)), time.monotonic() + float(arguments.get("hold_s", 0))
    while True:
        for _ in range(lines):
            sys.stderr.write(line)
        sys.stderr.flush()
        if every <= 0 or time.monotonic() + every > until:
            break
        time.sleep(every)
    time.sleep(max(0.0, until - time.monotonic()))
    return {"content": [{"type": "text", "text": f"wrote {lines} x {chars} characters"}], "isError": False}


def _answer(message: dict[str, Any]) -> dict[str, Any]:
    method, params = message.get("method"), message.get("params") or {}
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
    if method == "initialize":
        reply["result"] = {
            "protocolVersion": params.get("protocolVersion", PROTOCOL_VERSION),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "noisy", "version": "1.0"},
        }
    elif method == "tools/list":
        reply["result"] = {"tools": TOOLS}
    elif method == "tools/call" and params.get("name") == "flood_stderr":
        reply["result"] = _flood(params.get("arguments") or {})
    elif method == "tools/call" and params.get("name") == "fail_loudly":
        text = str((params.get("arguments") or {}).get("message", ""))
        sys.stderr.write(f"failing: {text}\n")
        sys.stderr.flush()
        reply["error"] = {"code": -32603, "message": text}
    else:
        reply["result"] = {}  # ping
    return reply


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" in message:  # notifications need no answer
            _write(_answer(message))


if __name__ == "__main__":
    main()
