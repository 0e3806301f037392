"""An MCP server whose tools misbehave on purpose, so the router's failure handling can be
tested against a real process over real stdio.

Run: python tests/servers/misbehaving.py

With $HANG_AT_START set it starts a child, then never answers `initialize` (a backend that
hangs during start-up); $CHILD_LOG_FILE collects the pid of every child it starts.

`flaky_step` fails (a JSON-RPC error, the process stays up) while the file named by $FLAKY_FLAG_FILE
exists and succeeds otherwise, so a test can flip a backend from broken to healthy.
"""

import asyncio
import os
import subprocess
import sys
import time

if __name__ == "__main__" and os.environ.get("HANG_AT_START"):
    # before the SDK's slow imports: the start is logged well within a short start-up timeout
    with open(os.environ["START_LOG_FILE"], "a", encoding="utf-8") as started:
        started.write(f"{os.getpid()}\n")
    sleeper = subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    with open(os.environ["CHILD_LOG_FILE"], "a", encoding="utf-8") as children:
        children.write(f"{sleeper.pid}\n")
    time.sleep(3600)
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import ToolAnnotations
from mcp_types import INTERNAL_ERROR

READ_ONLY = ToolAnnotations(readOnlyHint=True)
app = MCPServer("misbehaving")


def _log_call(tool: str) -> None:
    """Append the tool's name to $CALL_LOG_FILE: tests prove a refused call never got here."""
    log = os.environ.get("CALL_LOG_FILE")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"{tool} {os.getpid()}\n")


@app.tool(annotations=READ_ONLY)
def whoami() -> str:
    """Report this backend process's id (tests use it to see wake, reuse and idle stop)."""
    _log_call("whoami")
    return str(os.getpid())


@app.tool(annotations=READ_ONLY)
def shout(text: str, times: int = 1) -> str:
    """Repeat the text in capitals."""
    _log_call("shout")
    return " ".join([text.upper()] * times)


@app.tool()
def append_note(note: str) -> str:
    """Append a note to the notes file (a mutating tool)."""
    _log_call("append_note")
    path = Path(os.environ.get("NOTES_FILE", "notes.txt"))
    with path.open("a", encoding="utf-8") as handle:
        handle.write(note + "\n")
    return "noted"


@app.tool(annotations=READ_ONLY)
def crash_now() -> str:
    """Exit the process in the middle of the call."""
    _log_call("crash_now")
    print("crash_now: exiting on purpose", file=sys.stderr, flush=True)
    os._exit(3)


@app.tool(annotations=READ_ONLY)
async def hang_forever() -> str:
    """Never answer (a cancellation from the client is logged as 'hang_forever:cancelled')."""
    _log_call("hang_forever")
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        _log_call("hang_forever:cancelled")
        raise
    return "unreachable"


@app.tool(annotations=READ_ONLY)
async def exit_after_answer() -> str:
    """Answer, then exit on its own a moment later (a backend that dies while idle)."""
    _log_call("exit_after_answer")
    asyncio.get_running_loop().call_later(0.2, os._exit, 0)
    return "bye"


def _start_sleeper(**popen: object) -> int:
    """A child that would outlive this backend unless the router ends it; its pid is logged."""
    child = subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL, **popen)  # type: ignore[call-overload]
    _log_child(child.pid)
    return child.pid


def _log_child(pid: int) -> None:
    log = os.environ.get("CHILD_LOG_FILE")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"{pid}\n")


@app.tool(annotations=READ_ONLY)
def spawn_child(leave_group: bool = False) -> str:
    """Start a long-lived child (in this process group, or in a session of its own)."""
    _log_call("spawn_child")
    return str(_start_sleeper(start_new_session=leave_group, stdout=subprocess.DEVNULL))


@app.tool(annotations=READ_ONLY)
def spawn_orphan() -> str:
    """Double fork: a grandchild in a session of its own whose parent has already exited."""
    _log_call("spawn_orphan")
    script = (
        "import subprocess; "
        "p = subprocess.Popen(['sleep', '600'], start_new_session=True, stdin=subprocess.DEVNULL, "
        "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    pid = int(done.stdout)
    _log_child(pid)
    return str(pid)


@app.tool(annotations=READ_ONLY)
def crash_leaving_child() -> str:
    """Exit mid-call while a child it started still holds this process's stdout open."""
    _log_call("crash_leaving_child")
    _start_sleeper()  # inherits stdout: the router sees no end of file when this process dies
    os._exit(3)


@app.tool(annotations=READ_ONLY)
def refuse(reason: str) -> str:
    """Fail as a tool (isError result), the process stays healthy."""
    _log_call("refuse")
    raise ToolError(f"refused: {reason}")


@app.tool(annotations=READ_ONLY)
def flaky_step() -> str:
    """Fail with a JSON-RPC error while $FLAKY_FLAG_FILE exists, succeed once it is gone."""
    _log_call("flaky_step")
    flag = os.environ.get("FLAKY_FLAG_FILE")
    if flag and Path(flag).exists():
        raise MCPError(code=INTERNAL_ERROR, message="flaky backend is broken right now")
    return "step ok"


if __name__ == "__main__":
    if os.environ.get("START_LOG_FILE"):
        with open(os.environ["START_LOG_FILE"], "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()}\n")
    app.run()
