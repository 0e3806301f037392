"""How many MCP sessions `serve --http` keeps, per client and in all, and for how long.

The SDK's session manager keeps up to 10,000 sessions, each until 30 minutes pass without a
request, and refuses a new client with 503 once full: one process that opens sessions and
never closes them (a client bug, or a loop) fills it in minutes, at about 41 KB a session,
and locks every other client out. BoundedSessionManager, the SDK's manager with:

- `max_sessions` in all and `max_sessions_per_client` per client: a new session over either
  bound closes the least recently used idle session (of that client, for its own bound)
  instead of refusing the new client; only when every such session has a request in flight
  is the new one refused (503). Its client's next request gets 404, and an MCP client then
  opens a new session (initialize again);
- a session with no request for `session_idle_s` is closed, also one that holds an open GET
  stream (the SDK's own idle timer counts that stream as a request in flight for ever).

A client is its network address and the name it gives in `initialize` (clientInfo.name):
agents on one machine share an address, and a gateway in front of the router too.
"""

import contextvars
import json
import logging
import time
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from router.facade.http_checks import MCP_PATH, replay

logger = logging.getLogger(__name__)

# A client's name as it gives it is cut to this many characters for the bookkeeping.
MAX_CLIENT_NAME_CHARS = 100
# How often idle sessions are looked for, at most (a quarter of the idle time, if shorter).
MAX_EXPIRY_INTERVAL_S = 30.0

Client = tuple[str, str]  # (address, clientInfo.name)

# The client opening a session, from the request that opens it to the SDK's admission.
_OPENING: contextvars.ContextVar["_Opening | None"] = contextvars.ContextVar("opening_session", default=None)


@dataclass
class _Opening:
    client: Client
    initialize: bool  # only an initialize may open a session, so only it makes room
    session_id: str | None = None


@dataclass
class _Session:
    client: Client
    last_used: float
    busy: int = 0  # requests in flight (an open GET stream is not one: it waits for the server)


class BoundedSessionManager(StreamableHTTPSessionManager):
    """The SDK's stateful session manager with per-client and total bounds that close the
    least recently used idle session, and an idle expiry that an open GET stream does not
    defeat. `on_closed(session_id)` is told each session that ends."""

    def __init__(
        self,
        *,
        max_sessions_per_client: int,
        session_idle_s: float,
        on_closed: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        **kwargs: Any,
    ) -> None:
        super().__init__(session_idle_timeout=session_idle_s, **kwargs)
        self.max_sessions_per_client = max_sessions_per_client
        self.session_idle_s = session_idle_s
        self.on_closed = on_closed
        self._clock = clock
        # least recently used first
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._per_client: Counter[Client] = Counter()

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        async with super().run():
            assert self._task_group is not None
            self._task_group.start_soon(self._expire_idle)
            yield

    @property
    def open_sessions(self) -> int:
        return len(self._server_instances)

    # --- requests: who opens a session, and when each was last used ----------------------

    async def _handle_stateful_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        session_id = _header(scope, MCP_SESSION_ID_HEADER)
        if session_id is None:
            read, opening = await _opening(scope, receive)
            token = _OPENING.set(opening)
            try:
                await super()._handle_stateful_request(scope, replay(read, receive), send)
            finally:
                _OPENING.reset(token)
                self._used(opening.session_id, ended=True)
            return
        counts = scope["method"] != "GET"
        if counts:
            self._used(session_id, started=True)
        try:
            await super()._handle_stateful_request(scope, receive, send)
        finally:
            if counts:
                self._used(session_id, ended=True)

    def _used(self, session_id: str | None, *, started: bool = False, ended: bool = False) -> None:
        session = self._sessions.get(session_id) if session_id is not None else None
        if session is None:
            return
        session.busy += started - ended
        session.last_used = self._clock()
        self._sessions.move_to_end(session_id)  # type: ignore[arg-type]

    # --- admission: room is made before the SDK's own bound is checked --------------------

    def _admit_session(self, requestor: Any) -> StreamableHTTPServerTransport | None:
        opening = _OPENING.get()
        client = opening.client if opening is not None else ("", "")
        if opening is not None and opening.initialize and not self._make_room(client):
            return None
        transport = super()._admit_session(requestor)
        if transport is not None and transport.mcp_session_id is not None:
            session_id = transport.mcp_session_id
            self._sessions[session_id] = _Session(client, last_used=self._clock(), busy=1)
            self._per_client[client] += 1
            if opening is not None:
                opening.session_id = session_id
        return transport

    def _make_room(self, client: Client) -> bool:
        if self._per_client[client] >= self.max_sessions_per_client:
            if not self._close_idle(client):
                logger.warning(
                    "refused a new session: its client (%s) has %d sessions, each with a request in flight",
                    _named(client),
                    self.max_sessions_per_client,
                )
                return False
            logger.warning(
                "closed the least recently used idle session of %s, which has %d (the bound per client)",
                _named(client),
                self.max_sessions_per_client,
            )
        if self.max_sessions is not None and len(self._server_instances) >= self.max_sessions:
            if not self._close_idle(None):
                return False  # the SDK refuses it, and says so
            logger.warning(
                "closed the least recently used idle session: %d sessions were open (the bound)",
                self.max_sessions,
            )
        return True

    def _close_idle(self, client: Client | None) -> bool:
        """Close the least recently used idle session (of `client`, if given)."""
        for session_id, session in self._sessions.items():
            if session.busy == 0 and (client is None or session.client == client):
                self._close(session_id)
                return True
        return False

    def _close(self, session_id: str) -> None:
        transport = self._server_instances.pop(session_id, None)
        self._session_owners.pop(session_id, None)
        self._forget(session_id)
        if transport is not None and not transport.is_terminated and self._task_group is not None:
            self._task_group.start_soon(_terminate, transport)

    async def _discard_session(self, session_id: str, transport: StreamableHTTPServerTransport) -> None:
        self._forget(session_id)
        await super()._discard_session(session_id, transport)

    def _forget(self, session_id: str) -> None:
        session = self._sessions.pop(session_id, None)
        if session is None:
            return
        self._per_client[session.client] -= 1
        if self._per_client[session.client] <= 0:
            del self._per_client[session.client]
        if self.on_closed is not None:
            self.on_closed(session_id)

    # --- expiry ---------------------------------------------------------------------------

    async def _expire_idle(self) -> None:
        interval = min(MAX_EXPIRY_INTERVAL_S, self.session_idle_s / 4)
        while True:
            await anyio.sleep(interval)
            oldest_allowed = self._clock() - self.session_idle_s
            expired = [
                session_id
                for session_id, session in self._sessions.items()
                if session.busy == 0 and session.last_used <= oldest_allowed
            ]
            for session_id in expired:
                logger.info("closed session %s: idle for %g s", session_id[:64], self.session_idle_s)
                self._close(session_id)


async def _terminate(transport: StreamableHTTPServerTransport) -> None:
    with anyio.CancelScope(shield=True):
        await transport.terminate()


def _header(scope: Scope, name: str) -> str | None:
    wanted = name.lower().encode("latin-1")
    for key, value in scope["headers"]:
        if key == wanted:
            return value.decode("latin-1")
    return None


async def _opening(scope: Scope, receive: Receive) -> tuple[list[Message], _Opening]:
    """The body of a request without a session (as received, to be replayed), and who
    sends it: the peer's address and the name its initialize gives."""
    read: list[Message] = []
    if scope["method"] == "POST":
        while True:
            message = await receive()
            read.append(message)
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
    address = (scope.get("client") or ("", 0))[0]
    name, initialize = _initialize_of(b"".join(m.get("body", b"") for m in read))
    return read, _Opening((address, name), initialize)


def _initialize_of(body: bytes) -> tuple[str, bool]:
    """The client's name, and whether the body is an initialize request."""
    try:
        message = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return "", False
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return "", False
    params = message.get("params")
    info = params.get("clientInfo") if isinstance(params, dict) else None
    name = info.get("name") if isinstance(info, dict) else None
    return (name[:MAX_CLIENT_NAME_CHARS] if isinstance(name, str) else ""), True


def _named(client: Client) -> str:
    address, name = client
    return f"{name or '(unnamed)'} at {address or '(unknown address)'}"


def sessions_app(
    server: Any,
    security: Any,
    *,
    max_sessions: int,
    max_sessions_per_client: int,
    session_idle_s: float,
    on_closed: Callable[[str], None] | None = None,
) -> tuple[ASGIApp, BoundedSessionManager]:
    """The Streamable HTTP app at MCP_PATH, as the SDK's `streamable_http_app` builds it,
    with the bounded session manager in place of its own."""
    manager = BoundedSessionManager(
        app=server,
        security_settings=security,
        max_sessions=max_sessions,
        max_sessions_per_client=max_sessions_per_client,
        session_idle_s=session_idle_s,
        on_closed=on_closed,
    )
    routes = [Route(MCP_PATH, endpoint=StreamableHTTPASGIApp(manager))]
    return Starlette(routes=routes, lifespan=lambda _app: manager.run()), manager
