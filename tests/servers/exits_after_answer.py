"""An MCP stdio server that exits cleanly (status 0) after each tools/call it answers: a
backend that serves one call per process, so the router's handling of a clean exit can be
tested on a real process over real pipes.

Run: python tests/servers/exits_after_answer.py

$EXIT_MODE picks when it exits after answering a call:
- `on_next_line` (default): at the next line the router writes, which it reads and leaves
  unanswered (logged to $DROP_LOG_FILE as "<method> <pid>"): every call sent the moment the
  previous one was answered is written to a process that is exiting, deterministically;
- `at_once`: right after writing the answer (the race as it happens with real servers).

With $START_DELAY_S it reads nothing for that long after it starts (a slow start-up).

It speaks the few JSON-RPC lines a client needs (initialize, tools/list, tools/call, ping)
by hand, so nothing between its answer and its exit is up to an SDK's scheduling. Every start
is logged to $START_LOG_FILE ("<pid>"), every call it runs to $CALL_LOG_FILE ("<tool> <pid>").
"""

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

PROTOCOL_VERSION = "2025-11-25"

# What tools/list answers, exactly: the tests put these lines in the catalog.
TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo_once",
        "description": "Echo the text back, from a process that then exits.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "add_line",
        "description": "Append a line to the lines file (changes state), from a process that then exits.",
        "inputSchema": {"type": "object", "properties": {"line": {"type": "string"}}, "required": ["line"]},
        "annotations": {"readOnlyHint": False},
    },
]


def _log(variable: str, *words: str) -> None:
    path = os.environ.get(variable)
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(" ".join([*words, str(os.getpid())]) + "\n")


def _write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _run_tool(params: dict[str, Any]) -> dict[str, Any]:
    name, arguments = params.get("name"), params.get("arguments") or {}
    _log("CALL_LOG_FILE", str(name))
    if name == "echo_once":
        text = str(arguments.get("text", ""))
    elif name == "add_line":
        with Path(os.environ["LINES_FILE"]).open("a", encoding="utf-8") as handle:
            handle.write(f"{arguments.get('line', '')}\n")
        text = "added"
    else:
        return {"content": [{"type": "text", "text": f"no tool {name!r}"}], "isError": True}
    return {"content": [{"type": "text", "text": text}], "isError": False}


def _answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", PROTOCOL_VERSION),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "exits-after-answer", "version": "1.0"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return _run_tool(params)
    return {}  # ping


def main() -> None:
    _log("START_LOG_FILE")
    time.sleep(float(os.environ.get("START_DELAY_S", "0")))  # a slow start, if asked for
    exit_mode = os.environ.get("EXIT_MODE", "on_next_line")
    answered_a_call = False
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if answered_a_call:  # this process is exiting: what arrives now is never answered
            _log("DROP_LOG_FILE", str(method))
            sys.exit(0)
        if "id" not in message:  # notifications/initialized, notifications/cancelled
            continue
        _write(
            {"jsonrpc": "2.0", "id": message["id"], "result": _answer(method, message.get("params") or {})}
        )
        if method == "tools/call":
            if exit_mode == "at_once":
                sys.exit(0)
            answered_a_call = True
    sys.exit(0)


if __name__ == "__main__":
    main()
