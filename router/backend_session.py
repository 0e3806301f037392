"""The router's client side of a stdio backend: the few JSON-RPC exchanges a forwarder needs.

The SDK starts, frames and stops the backend process (`mcp.client.stdio.stdio_client`: its
own process group, the spec's stdin-close / SIGTERM / SIGKILL shutdown, typed messages);
this module speaks over those streams. It replaces the SDK's general client session on the
hot path because that session's dispatcher (per-request streams, tracing spans, result
adapters, several task hops) costs about 0.3 ms on every forwarded call, a third of the
router's whole overhead budget (bench/facade_bench.py measures both).

What a forwarder needs, and no more: the initialize handshake (2025-11-25, the version every
server speaks), `tools/call` with any number in flight (matched by id), cancellation of an
abandoned call (notifications/cancelled), answers to the requests a server may send back
(`ping`; everything else is refused, since the router declares no client capabilities), and
notifications, which are logged and dropped. Results are validated into the SDK's own
types. Errors surface as the SDK's MCPError, so callers treat both clients alike.
"""

import logging
from collections.abc import Awaitable
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types import CONNECTION_CLOSED, METHOD_NOT_FOUND
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from router import __version__

logger = logging.getLogger(__name__)

CLIENT_INFO = {"name": "context-router", "version": __version__}
# How long a courtesy notifications/cancelled may take before it is given up.
CANCEL_NOTICE_TIMEOUT_S = 1.0


class _Waiter:
    """One request in flight: set once, by the response or by the connection closing."""

    __slots__ = ("done", "response")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.response: types.JSONRPCResponse | types.JSONRPCError | None = None


class StdioBackendSession:
    """Requests out, responses matched back by id. `serve()` must run in a task while the
    session is used; it ends when the backend closes its stdout."""

    def __init__(self, read_stream: Any, write_stream: Any, backend: str) -> None:
        self._read = read_stream
        self._write = write_stream
        self._backend = backend
        self._next_id = 0
        self._in_flight: dict[int, _Waiter] = {}
        self._closed = False

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
        await self._send(types.JSONRPCNotification(jsonrpc="2.0", method="notifications/initialized"))
        return result

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        result = await self._request("tools/call", {"name": name, "arguments": arguments})
        return types.CallToolResult.model_validate(result, by_name=False)

    async def _request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if self._closed:
            raise MCPError(code=CONNECTION_CLOSED, message="Connection closed")
        self._next_id += 1
        request_id = self._next_id
        waiter = self._in_flight[request_id] = _Waiter()
        try:
            await self._send(types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params=params))
            await waiter.done.wait()
        except anyio.get_cancelled_exc_class():
            # The caller gave up (its timeout, or its own caller cancelled): tell the backend.
            self._in_flight.pop(request_id, None)
            with anyio.move_on_after(CANCEL_NOTICE_TIMEOUT_S, shield=True):
                await self._notify_cancelled(request_id)
            raise
        finally:
            self._in_flight.pop(request_id, None)
        response = waiter.response
        if isinstance(response, types.JSONRPCError):
            raise MCPError(code=response.error.code, message=response.error.message, data=response.error.data)
        if response is None:
            raise MCPError(code=CONNECTION_CLOSED, message="Connection closed")
        return response.result

    async def _notify_cancelled(self, request_id: int) -> None:
        if self._closed:
            return
        try:
            await self._send(
                types.JSONRPCNotification(
                    jsonrpc="2.0",
                    method="notifications/cancelled",
                    params={"requestId": request_id, "reason": "the router's caller gave up"},
                )
            )
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass

    async def _send(self, message: Any) -> None:
        try:
            await self._write.send(SessionMessage(message))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            raise MCPError(code=CONNECTION_CLOSED, message="Connection closed") from None

    # --- inbound ----------------------------------------------------------------------

    async def serve(self) -> None:
        """Route everything the backend writes until it closes its stdout."""
        try:
            async for item in self._read:
                if isinstance(item, Exception):
                    # a line that is not JSON-RPC (a stray print): the SDK parsed and refused it
                    logger.warning("backend %s wrote a line that is not JSON-RPC: %s", self._backend, item)
                    continue
                await self._dispatch(item.message)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        finally:
            self._closed = True
            for waiter in self._in_flight.values():
                waiter.done.set()  # response None: the connection closed under the call

    async def _dispatch(self, message: Any) -> None:
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            waiter = self._in_flight.get(_as_int(message.id))
            if waiter is None:
                logger.debug("backend %s answered unknown request id %r", self._backend, message.id)
                return
            waiter.response = message
            waiter.done.set()
        elif isinstance(message, types.JSONRPCRequest):
            await self._answer(message)
        else:  # notifications: log lines, progress, list_changed: nothing to forward to
            logger.debug("backend %s notified %s", self._backend, message.method)

    async def _answer(self, request: types.JSONRPCRequest) -> None:
        reply: Awaitable[None]
        if request.method == "ping":
            reply = self._send(types.JSONRPCResponse(jsonrpc="2.0", id=request.id, result={}))
        else:
            reply = self._send(
                types.JSONRPCError(
                    jsonrpc="2.0",
                    id=request.id,
                    error=types.ErrorData(
                        code=METHOD_NOT_FOUND,
                        message=f"context-router does not offer {request.method!r} to its backends",
                    ),
                )
            )
        try:
            await reply
        except MCPError:
            pass  # the connection is closing; serve() ends with it


def _as_int(request_id: Any) -> int | None:
    """Our ids are ints; a backend that echoes one as a string ("7") still matches."""
    if isinstance(request_id, int):
        return request_id
    if isinstance(request_id, str) and request_id.isdigit():
        return int(request_id)
    return None
