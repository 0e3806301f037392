"""`serve --http`: the MCP server's Streamable HTTP app under uvicorn, with the limits a
server facing many agents needs (router/facade/http_connections.py, http_sessions.py) and a
lifespan that never leaves the app half-dead.

uvicorn keeps serving when an app's lifespan ends while it runs (it only logs it); the
SDK's app then answers every request with 500 ("Task group is not initialized") and a
traceback. LifespanGuard notices the lifespan ending before uvicorn asked it to, answers
what still arrives with 503, and stops the server, which exits with an error that says so.
"""

import logging
from collections.abc import Callable
from typing import Any

import uvicorn
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from router.errors import RouterError
from router.facade.http_checks import RefuseBadIds, security_for
from router.facade.http_connections import (
    KEEP_ALIVE_S,
    MAX_INCOMPLETE_HEAD_BYTES,
    MIN_CONNECTIONS,
    ConnectionLimits,
    bounded_protocol,
    descriptor_room,
)
from router.facade.http_sessions import sessions_app
from router.facade.log_guard import describe_failure

logger = logging.getLogger(__name__)

# How long a stopping server waits for open responses (an SSE stream) before closing them.
GRACEFUL_SHUTDOWN_S = 5


class LifespanGuard:
    """ASGI wrapper: `on_died(reason)` when the app's lifespan ends while the server runs."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app
        self.died: str | None = None
        self.on_died: Callable[[str], None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(scope, receive, send)
            return
        if self.died is not None:
            answer = {"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": self._stopping()}}
            await JSONResponse(answer, status_code=503)(scope, receive, send)
            return
        await self._app(scope, receive, send)

    async def _lifespan(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = asked_to_stop = False

        async def watched_receive() -> Message:
            nonlocal asked_to_stop
            message = await receive()
            asked_to_stop = asked_to_stop or message["type"] == "lifespan.shutdown"
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "lifespan.startup.complete"
            await send(message)

        reason = "it ended"
        try:
            await self._app(scope, watched_receive, watched_send)
        except BaseException as exc:
            reason = describe_failure(exc)
            raise
        finally:
            if started and not asked_to_stop:
                self._die(reason)

    def _die(self, reason: str) -> None:
        self.died = reason
        logger.error("%s", self._stopping())
        if self.on_died is not None:
            self.on_died(reason)

    def _stopping(self) -> str:
        return (
            f"context-router's HTTP server lost its lifespan (the database and backends it holds: "
            f"{self.died}); it is stopping: start it again"
        )


def connection_limits(settings: Any, backends: int) -> ConnectionLimits:
    """The configured limits, the connection bound never above what the open-file limit
    leaves room for."""
    room = descriptor_room(backends)
    if room.max_connections < MIN_CONNECTIONS:
        raise RouterError(
            f"--http: the open-file limit ({room.soft_limit}) leaves room for "
            f"{max(room.max_connections, 0)} connections; raise it (ulimit -n) to serve HTTP"
        )
    wanted = settings.max_connections
    if wanted is not None and wanted > room.max_connections:
        logger.warning(
            "[http] max_connections = %d is more than the open-file limit (%d) leaves room for: %d",
            wanted,
            room.soft_limit,
            room.max_connections,
        )
    return ConnectionLimits(
        max_connections=min(wanted or room.max_connections, room.max_connections),
        head_timeout_s=settings.request_head_timeout_s,
        body_timeout_s=settings.request_body_timeout_s,
        backlog=room.accept_batch,
    )


async def serve_http_app(app: ASGIApp, host: str, port: int, limits: ConnectionLimits) -> None:
    """Serve `app` until SIGTERM/SIGINT; RouterError if its lifespan died while serving."""
    guard = LifespanGuard(app)
    config = uvicorn.Config(
        guard,
        host=host,
        port=port,
        log_config=None,  # the router's own handler (rate-limited) writes uvicorn's lines too
        log_level="warning",
        access_log=False,
        lifespan="on",
        http=bounded_protocol(limits),
        ws="none",
        backlog=limits.backlog,
        timeout_keep_alive=KEEP_ALIVE_S,
        h11_max_incomplete_event_size=MAX_INCOMPLETE_HEAD_BYTES,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
    )
    server = uvicorn.Server(config)

    def stop(_reason: str) -> None:
        server.should_exit = True

    guard.on_died = stop
    await server.serve()
    if guard.died is not None:
        raise RouterError(guard._stopping())


def build_app(
    server: Any,
    host: str,
    settings: Any,
    on_refused: Callable[[int, str], None],
    on_session_closed: Callable[[str], None],
) -> ASGIApp:
    """The Streamable HTTP app with bounded sessions, behind the router's own checks."""
    security = security_for(host)
    app, _manager = sessions_app(
        server,
        security,
        max_sessions=settings.max_sessions,
        max_sessions_per_client=settings.max_sessions_per_client,
        session_idle_s=settings.session_idle_s,
        on_closed=on_session_closed,
    )
    return RefuseBadIds(app, security, on_refused)
