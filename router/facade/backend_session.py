"""The router's client side of a stdio backend: its process, and the few JSON-RPC exchanges a
forwarder needs, read and written straight on the process's pipes.

The SDK's client (session, dispatcher and stdio transport) hands every message through
memory streams between several tasks, with a pydantic pass per line each way: about 0.5 ms
per forwarded call, half the router's whole overhead budget (bench/facade_bench.py). This
session writes a request line, and the one task reading the backend's stdout resolves the
caller's future; results are still validated into the SDK's own types, and errors surface as
the SDK's MCPError, so callers treat it and the SDK's Client (used for HTTP backends) alike.

What a forwarder needs, and no more: the initialize handshake (2025-11-25, the version every
server speaks), `tools/call` with any number in flight (matched by id), cancellation of an
abandoned call (notifications/cancelled), answers to the requests a server may send back
(`ping`; everything else is refused, since the router declares no client capabilities), and
notifications, which are logged and dropped.

The process is started as the SDK starts one (its own session, so its whole group can be
signalled; the SDK's safe default environment plus the configured one) and stopped as the
spec says: stdin closed, then SIGTERM to its group, then SIGKILL; then whatever it started
and left behind is killed too (router/facade/process_tree.py).
"""

import asyncio
import json
import logging
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import IO, Any

import anyio
import anyio.to_thread
import mcp_types as types
import psutil
from mcp import StdioServerParameters
from mcp.client.stdio import get_default_environment
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, METHOD_NOT_FOUND
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from router import __version__
from router.facade import jsonrpc_lines, process_tree

logger = logging.getLogger(__name__)

CLIENT_INFO = {"name": "context-router", "version": __version__}
# One JSON-RPC message per line; a backend may return a whole file in one result.
MAX_LINE_BYTES = 64 * 1024 * 1024
# Stopping a backend (the spec's shutdown): time to exit after stdin closes, after SIGTERM,
# and for the kernel to reap it after SIGKILL.
EXIT_AFTER_STDIN_CLOSE_S = 2.0
EXIT_AFTER_SIGTERM_S = 2.0
REAP_AFTER_SIGKILL_S = 2.0
# The longest stopping a backend can take (the orphan sweep after it is a /proc scan).
LONGEST_STOP_S = EXIT_AFTER_STDIN_CLOSE_S + EXIT_AFTER_SIGTERM_S + REAP_AFTER_SIGKILL_S


def _closed() -> MCPError:
    return MCPError(code=CONNECTION_CLOSED, message="Connection closed")


class StdioBackendSession:
    """Requests out, responses matched back by id. `serve()` must run in a task while the
    session is used; it ends when the backend closes its stdout."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, backend: str) -> None:
        self._reader = reader
        self._writer = writer
        self._backend = backend
        self._next_id = 0
        self._in_flight: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._closed = False
        # called when the backend sends notifications/tools/list_changed (rug-pull check)
        self.on_tools_list_changed: Callable[[], None] | None = None

    # --- outbound ---------------------------------------------------------------------

    async def initialize(self) -> types.InitializeResult:
        result = types.InitializeResult.model_validate(
            await self._request(
                "initialize",
                {"protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO},
            ),
            by_name=False,
        )
        if result.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            raise MCPError(
                code=types.UNSUPPORTED_PROTOCOL_VERSION,
                message=f"backend answered with protocol version {result.protocol_version!r}, "
                f"which this router does not speak ({', '.join(HANDSHAKE_PROTOCOL_VERSIONS)})",
            )
        await self._send(jsonrpc_lines.notification("notifications/initialized"))
        return result

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every page of tools/list, as the backend wrote each tool (JSON objects)."""
        tools: list[dict[str, Any]] = []
        params: dict[str, Any] = {}
        while True:
            page = await self._request("tools/list", params)
            listed = page.get("tools")
            if isinstance(listed, list):
                tools.extend(tool for tool in listed if isinstance(tool, dict))
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                return tools
            params = {"cursor": cursor}

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        result = await self._request("tools/call", {"name": name, "arguments": arguments})
        return types.CallToolResult.model_validate(result, by_name=False)

    async def _request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if self._closed:
            raise _closed()
        self._next_id += 1
        request_id = self._next_id
        answer = self._in_flight[request_id] = asyncio.get_running_loop().create_future()
        try:
            await self._send(jsonrpc_lines.request(request_id, method, params))
            return await answer
        except anyio.get_cancelled_exc_class():
            # The caller gave up (its timeout, or its own caller cancelled): tell the backend.
            self._notify_cancelled(request_id)
            raise
        finally:
            self._in_flight.pop(request_id, None)

    def _notify_cancelled(self, request_id: int) -> None:
        if self._closed or self._writer.is_closing():
            return
        with suppress(OSError, RuntimeError):
            self._writer.write(
                jsonrpc_lines.encode(
                    jsonrpc_lines.notification(
                        "notifications/cancelled",
                        {"requestId": request_id, "reason": "the router's caller gave up"},
                    )
                )
            )

    async def _send(self, message: dict[str, Any]) -> None:
        try:
            self._writer.write(jsonrpc_lines.encode(message))
            await self._writer.drain()  # returns at once unless the pipe is full
        except (OSError, RuntimeError):  # broken pipe, or a transport already closed
            raise _closed() from None

    # --- inbound ----------------------------------------------------------------------

    async def serve(self) -> None:
        """Route everything the backend writes until it closes its stdout."""
        try:
            while True:
                try:
                    line = await self._reader.readline()
                except ValueError:  # longer than MAX_LINE_BYTES: dropped, the call times out
                    logger.warning(
                        "backend %s wrote a line over %d bytes; dropped", self._backend, MAX_LINE_BYTES
                    )
                    continue
                if not line:
                    break
                await self._dispatch(line)
        except OSError:
            pass
        finally:
            self.close()

    def close(self) -> None:
        """No more answers will come (stdout closed, or the process exited while something it
        started still holds stdout open): every call in flight fails as closed."""
        self._closed = True
        for answer in self._in_flight.values():
            if not answer.done():
                answer.set_exception(_closed())

    async def _dispatch(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):  # nested past Python's limit: not JSON-RPC either
            message = None
        if not isinstance(message, dict):
            if line.strip():  # a stray print on the backend's stdout
                logger.warning("backend %s wrote a line that is not JSON-RPC: %.200r", self._backend, line)
            return
        if "method" not in message:  # a response
            request_id = _as_int(message.get("id"))
            answer = None if request_id is None else self._in_flight.get(request_id)
            if answer is None or answer.done():
                logger.debug("backend %s answered unknown request id %r", self._backend, message.get("id"))
            elif isinstance(message.get("error"), dict):
                error = message["error"]
                answer.set_exception(
                    MCPError(
                        code=error.get("code", types.INTERNAL_ERROR),
                        message=str(error.get("message", "")),
                        data=error.get("data"),
                    )
                )
            elif isinstance(message.get("result"), dict):
                answer.set_result(message["result"])
            else:
                answer.set_exception(
                    MCPError(code=types.INVALID_REQUEST, message="response without a result")
                )
        elif "id" in message:
            await self._answer(message["id"], message["method"])
        else:  # notifications: log lines and progress have nowhere to go
            logger.debug("backend %s notified %s", self._backend, message["method"])
            if message["method"] == "notifications/tools/list_changed" and self.on_tools_list_changed:
                self.on_tools_list_changed()

    async def _answer(self, request_id: Any, method: str) -> None:
        if method == "ping":
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "result": {}}
        else:
            reply = {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {
                    "code": METHOD_NOT_FOUND,
                    "message": f"context-router does not offer {method!r} to its backends",
                },
            }
        with suppress(MCPError):  # the connection is closing; serve() ends with it
            await self._send(reply)


def _as_int(request_id: Any) -> int | None:
    """Our ids are ints; a backend that echoes one as a string ("7") still matches."""
    if isinstance(request_id, int) and not isinstance(request_id, bool):
        return request_id
    if isinstance(request_id, str) and request_id.isdigit():
        return int(request_id)
    return None


# --- the process --------------------------------------------------------------------------

# Backend processes started and not yet seen to exit: asyncio's child watcher reaps them, so
# nothing else may wait for them (router/facade/process_tree.py reaps only adopted orphans).
LIVE_BACKEND_PIDS: set[int] = set()


class _ExitWatchingProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's own protocol for a subprocess, plus an event set the moment the process
    exits: Process.wait() also waits for its pipes to close, and a descendant still holding
    the backend's stdout would keep that from happening for as long as it lives."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited = asyncio.Event()

    def process_exited(self) -> None:
        super().process_exited()
        self.exited.set()


@dataclass
class BackendProcess:
    """A running backend: the process, when it exited, and the tag its descendants inherit."""

    process: asyncio.subprocess.Process
    exited: asyncio.Event
    tag: str
    # it answered initialize: stopping it starts with the spec's gentle step (stdin closed);
    # a start that never got that far has no session to wind down and is signalled at once
    initialized: bool = False
    # the router began stopping it while it still ran: an exit after that is the router's doing
    stopped_by_router: bool = False

    @property
    def pid(self) -> int:
        return self.process.pid

    def exited_cleanly(self) -> bool:
        """It exited on its own, before the router stopped it, with status 0."""
        return self.exited.is_set() and not self.stopped_by_router and self.process.returncode == 0


@asynccontextmanager
async def backend_process(
    params: StdioServerParameters, stderr: IO[bytes], tag: str = ""
) -> AsyncIterator[BackendProcess]:
    """The backend's process for as long as the context lasts, then stopped with everything it
    started (shielded: a cancelled caller still ends it)."""
    loop = asyncio.get_running_loop()
    env = get_default_environment() | (params.env or {})
    if tag:
        env[process_tree.BACKEND_TAG_ENV] = tag
    transport, protocol = await loop.subprocess_exec(
        lambda: _ExitWatchingProtocol(MAX_LINE_BYTES, loop),
        params.command,
        *params.args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        env=env,
        cwd=params.cwd,
        start_new_session=True,  # its own session and group: one signal reaches its children
    )
    process = asyncio.subprocess.Process(transport, protocol, loop)
    running = BackendProcess(process, protocol.exited, tag)
    if not protocol.exited.is_set():
        LIVE_BACKEND_PIDS.add(process.pid)
    try:
        yield running
    finally:
        with anyio.CancelScope(shield=True):
            try:
                await stop_process(running)
            finally:
                LIVE_BACKEND_PIDS.discard(process.pid)
                transport.close()


async def stop_process(running: BackendProcess) -> None:
    """The spec's shutdown (stdin closed, then SIGTERM, then SIGKILL, to the whole group;
    SIGTERM at once for a process that never answered initialize),
    then SIGKILL to whatever the backend started and left behind: in its group, elsewhere in
    its tree (found before it exited), or adopted by the router (tagged)."""
    process = running.process
    if not running.exited.is_set():
        running.stopped_by_router = True
    members = await _tree(process.pid)
    if process.stdin is not None:
        with suppress(OSError, RuntimeError):
            process.stdin.close()
    gentle_s = EXIT_AFTER_STDIN_CLOSE_S if running.initialized else 0.0
    if not await _exited_within(running, gentle_s):
        members = _union(members, await _tree(process.pid))
        process_tree.signal_group(process.pid, signal.SIGTERM)
        process_tree.signal_all(members[1:], signal.SIGTERM)
        if not await _exited_within(running, EXIT_AFTER_SIGTERM_S):
            process_tree.signal_group(process.pid, signal.SIGKILL)
            if not await _exited_within(running, REAP_AFTER_SIGKILL_S):
                logger.warning("backend process %d is still alive after SIGKILL; abandoning it", process.pid)
    # The leader is gone (it had its chance to end its children): the rest is killed now.
    process_tree.signal_group(process.pid, signal.SIGKILL)
    process_tree.signal_all(members[1:], signal.SIGKILL)
    if running.tag:
        await anyio.to_thread.run_sync(kill_orphans, running.tag)


def kill_orphans(tag: str | None) -> None:
    """Kill and reap the orphans tagged with one backend start (None: with any), sparing the
    backends still running."""
    exclude = set(LIVE_BACKEND_PIDS)
    process_tree.kill_and_reap(process_tree.tagged_orphans(tag, exclude), exclude)


async def _tree(pid: int) -> list[psutil.Process]:
    return await anyio.to_thread.run_sync(process_tree.tree, pid)


def _union(first: list[psutil.Process], second: list[psutil.Process]) -> list[psutil.Process]:
    seen = {p.pid for p in first}
    return first + [p for p in second if p.pid not in seen]


async def _exited_within(running: BackendProcess, seconds: float) -> bool:
    with anyio.move_on_after(seconds):
        await running.exited.wait()
        return True
    return False
