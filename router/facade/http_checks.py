"""The HTTP transport's answer to a message whose id no peer may send (issue 22), or that is
a request and a response at once (issue 35).

The SDK's message types read `{"id": {"a": 1}, "method": "ping"}` as a notification (202
Accepted, nothing run, nothing said), a response with both `result` and `error` as an
error, and a request that also carries `error` as a response; over stdio the router
answers them with -32600 (router/facade/stdio_answering.py). Over HTTP this middleware does
the same before the SDK sees the body: 400 with a JSON-RPC error (the request's own id when
it has a valid one, else null), logged and audited through the same hook as stdio's
refused lines.

It runs after the SDK's own Host/Origin/Content-Type checks (the same settings the app
is built with), so a page rebinding a name to 127.0.0.1 learns nothing from it and writes
no audit row; a body it cannot read as JSON, or larger than the SDK would take, is left to
the SDK, which answers those itself.
"""

import json
import logging
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server.transport_security import (
    DEFAULT_MAX_REQUEST_BODY_SIZE,
    TransportSecurityMiddleware,
    TransportSecuritySettings,
)
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from router.facade.jsonrpc_lines import refusal_id, shape_problem

logger = logging.getLogger(__name__)

MCP_PATH = "/mcp"
# What the SDK's streamable_http_app protects on its own when it serves a loopback address:
# given to it explicitly, so this middleware checks requests by the very same rules.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
LOOPBACK_SECURITY = TransportSecuritySettings(
    enable_dns_rebinding_protection=True,
    allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
    allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
)


def security_for(host: str) -> TransportSecuritySettings | None:
    """Loopback: DNS-rebinding protection on; another address: off, as the SDK does."""
    return LOOPBACK_SECURITY if host in LOOPBACK_HOSTS else None


class RefuseBadIds:
    """ASGI middleware in front of the SDK's app; `on_refused(code, message)` audits."""

    def __init__(
        self,
        app: ASGIApp,
        security: TransportSecuritySettings | None,
        on_refused: Callable[[int, str], None],
        max_body_bytes: int = DEFAULT_MAX_REQUEST_BODY_SIZE,
    ) -> None:
        self._app = app
        self._security = TransportSecurityMiddleware(security)
        self._on_refused = on_refused
        self._max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"].rstrip("/") != MCP_PATH:
            await self._app(scope, receive, send)
            return
        refusal = await self._security.validate_request(Request(scope, receive), is_post=True)
        if refusal is not None:  # the SDK's own answer (and log line) for it
            await refusal(scope, receive, send)
            return
        read, whole = await self._read_body(receive)
        message = _decoded(b"".join(m.get("body", b"") for m in read)) if whole else None
        problem = shape_problem(message)
        if problem is None:
            await self._app(scope, replay(read, receive), send)
            return
        logger.warning("refused an HTTP request: %s", problem)
        self._on_refused(types.INVALID_REQUEST, problem)
        error = {"code": types.INVALID_REQUEST, "message": problem}
        answer = {"jsonrpc": "2.0", "id": refusal_id(message), "error": error}
        await JSONResponse(answer, status_code=400)(scope, receive, send)

    async def _read_body(self, receive: Receive) -> tuple[list[Message], bool]:
        """The body's messages as received, and whether they hold all of it within the limit."""
        read: list[Message] = []
        size = 0
        while True:
            message = await receive()
            read.append(message)
            if message["type"] != "http.request":
                return read, False
            size += len(message.get("body", b""))
            if size > self._max_body_bytes:
                return read, False
            if not message.get("more_body", False):
                return read, True


def _decoded(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None  # the SDK answers -32700


def replay(read: list[Message], receive: Receive) -> Receive:
    """`receive` for an app after the messages already read from it."""
    pending = list(read)

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return replay
