"""The MCP facade: three meta-tools over stdio or Streamable HTTP, as thin async wrappers.

`tools/list` is one frozen result built from router.facade.definitions at import time, so its bytes
cannot depend on role, profile, catalog or backend state. `tools/call` dispatches by name to
router.facade.handlers; every error comes back as an MCP tool error (isError: true) with a message a
model can act on. The database is opened once, in the lifespan; SQL runs synchronously
between awaits, so no transaction is ever held across one.
"""

import logging
import os
import signal
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

from router import __version__
from router.agents.roles import Role
from router.backends.availability import Availability, root_lines
from router.backends.servers import ServersConfig
from router.clock import unix_now, utc_now_iso
from router.errors import RouterError, echo
from router.facade import audit, backend_watch, call_handler, handlers
from router.facade.backends import BackendPool
from router.facade.client_workspace import ClientWorkspaces
from router.facade.database import FacadeDatabase
from router.facade.definitions import CALL_TOOL, INSPECT_SCHEMA, SEARCH_TOOLS, meta_tool_definitions
from router.facade.http_roles import ROLE_HEADER, role_for_request
from router.facade.placeholders import Placeholders, default_data_dir
from router.facade.search_page import compact_json
from router.facade.servers_reload import ServersSource
from router.facade.stdio_transport import event_loop_stdio_server
from router.facade.warmup import Warmup

if TYPE_CHECKING:  # uvicorn is imported only to serve HTTP
    from router.facade.http_connections import ConnectionLimits

logger = logging.getLogger(__name__)

SERVER_NAME = "context-router"
SESSION_HEADER = "mcp-session-id"
# The three definitions never change while a router runs: clients may cache the list.
TOOLS_LIST_TTL_MS = 24 * 60 * 60 * 1000

TOOLS_LIST_RESULT = types.ListToolsResult(
    tools=[types.Tool.model_validate(definition) for definition in meta_tool_definitions()],
    ttl_ms=TOOLS_LIST_TTL_MS,
    cache_scope="public",
)

INSTRUCTIONS = (
    "Backend tools are reached through three meta-tools: mcp_search_tools (each hit has a call "
    "signature), then mcp_call_tool; mcp_inspect_schema first when unsure of a tool's arguments."
)


@dataclass
class ServeOptions:
    db_path: Path
    servers: ServersConfig
    # stdio: the caller's role. HTTP: the highest role a request may have (its header may
    # only lower it); None: each request must name its role (router/facade/http_roles.py)
    role: Role | None
    workspace: Path
    session_id: str = field(default_factory=lambda: f"stdio-{uuid.uuid4().hex[:12]}")
    wake_on_search: bool = True
    # where the servers config is read again from when its files change (None: never)
    servers_source: ServersSource | None = None
    # this process is a child subreaper (router/facade/process_tree.py): backends' orphans
    # become its children, to be ended and reaped by the backend pool
    adopts_orphans: bool = False
    # unix seconds; a test may shift the breaker's clock (CONTEXT_ROUTER_CLOCK_OFFSET_S)
    now: Callable[[], float] = unix_now


@dataclass
class RouterState:
    """What the lifespan opens once per process and every request shares."""

    options: ServeOptions
    db: FacadeDatabase
    pool: BackendPool
    availability: Availability = field(default_factory=Availability)
    # what the first search needs, loaded in the background once serving (router/facade/warmup.py)
    warmup: Warmup = field(default_factory=Warmup)
    # each client's workspace (its MCP roots), falling back to the router's own
    workspaces: ClientWorkspaces = field(init=False)

    def __post_init__(self) -> None:
        self.workspaces = ClientWorkspaces(self.options.workspace, on_root=self.say_root)

    def say_root(self, root: Path) -> None:
        """A client's root, learned: serve's ready line said roots decide, this says how."""
        for line in root_lines(self.pool.config, root):
            print(line, file=sys.stderr, flush=True)

    def refresh_servers(self) -> None:
        """Apply a changed servers config (checked at most once a second)."""
        source = self.options.servers_source
        if source is None:
            return
        try:
            changed = source.changed()
            if changed is not None:
                self.pool.apply(changed)
        except RouterError as exc:  # a file that does not load, or a placeholder typo in it
            logger.warning("servers config changed but was not applied (the previous one stays): %s", exc)


def build_server(
    options: ServeOptions,
    on_stopped: Callable[[], None] | None = None,
    on_started: Callable[[RouterState], None] | None = None,
) -> Server[RouterState]:
    @asynccontextmanager
    async def lifespan(_server: Server[RouterState]) -> AsyncIterator[RouterState]:
        placeholders = Placeholders(options.workspace, default_data_dir(options.db_path))
        try:
            async with (
                FacadeDatabase(options.db_path) as db,
                BackendPool(options.servers, placeholders, adopts_orphans=options.adopts_orphans) as pool,
                anyio.create_task_group() as background,
            ):
                # each backend's tools are checked against the catalog when it starts
                pool.on_started = backend_watch.watcher(db, pool)
                pool.on_start_failed = backend_watch.start_failure_recorder(db, pool, options.now)
                state = RouterState(options, db, pool)
                state.warmup.start(
                    background,
                    db,
                    lambda conn: state.availability.unavailable(conn, pool.config, placeholders.workspace),
                )
                if on_started is not None:
                    on_started(state)
                try:
                    yield state
                finally:
                    background.cancel_scope.cancel()
        finally:
            if on_stopped is not None:
                on_stopped()

    async def list_tools(ctx: Any, _params: Any) -> types.ListToolsResult:
        ctx.lifespan_context.warmup.client_arrived()
        return TOOLS_LIST_RESULT

    async def call_tool(
        ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        state: RouterState = ctx.lifespan_context
        handler = _HANDLERS.get(params.name)
        if handler is None:
            return _error(
                f"unknown tool {echo(params.name)}; this server offers {SEARCH_TOOLS}, "
                f"{INSPECT_SCHEMA} and {CALL_TOOL}"
            )
        try:
            # every meta-tool writes an audit row: said, not answered ok, when it would be lost
            state.db.check_file()
            state.refresh_servers()
            state.warmup.client_arrived()
            if params.name == SEARCH_TOOLS:
                await state.warmup.ready()  # never a second load beside the warm-up's
            workspace = await _workspace(state, ctx, params)
            if isinstance(workspace, types.InputRequiredResult):
                return workspace  # 2026-07-28: the client retries with its roots
            facade = _facade_context(state, ctx.request, workspace)
            return await handler(facade, params.arguments)
        except RouterError as exc:
            return _error(str(exc))
        except Exception:  # a bug must reach the model as an error, never crash the router
            logger.exception("internal error in %s", params.name)
            return _error(f"internal error in context-router while running {params.name}; see its log")

    async def roots_changed(ctx: Any, _params: Any) -> None:
        state: RouterState = ctx.lifespan_context
        state.workspaces.forget(_session_id(state, ctx.request))

    server = Server(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    # (not the constructor's on_roots_list_changed, which warns that roots are deprecated in
    # 2026-07-28: they are, and a client on an older version still sends this)
    server.add_notification_handler(
        "notifications/roots/list_changed", types.NotificationParams, roots_changed
    )
    return server


# The meta-tools whose answer depends on the caller's workspace (what is callable there).
_NEED_WORKSPACE = frozenset({SEARCH_TOOLS, CALL_TOOL})


async def _workspace(
    state: RouterState, ctx: Any, params: types.CallToolRequestParams
) -> Path | types.InputRequiredResult | None:
    """The caller's workspace when it matters (a declared server names ${WORKSPACE}), else
    None: the router's own."""
    if params.name not in _NEED_WORKSPACE or not state.pool.workspace_matters:
        return None
    headers = getattr(ctx.request, "headers", None)
    # over HTTP only a session id tells clients apart (a 2026-07-28 request carries none)
    connection = state.options.session_id if headers is None else headers.get(SESSION_HEADER)
    return await state.workspaces.of(ctx, params, connection, fresh=params.name == CALL_TOOL)


def _session_id(state: RouterState, request: Any) -> str:
    """The connection's id: over HTTP its Mcp-Session-Id, over stdio the router's own."""
    headers = getattr(request, "headers", None)
    found = headers.get(SESSION_HEADER) if headers is not None else None
    return found or state.options.session_id


def _facade_context(
    state: RouterState, request: Any, workspace: Path | None = None
) -> handlers.FacadeContext:
    role, session_id = state.options.role, _session_id(state, request)
    headers = getattr(request, "headers", None)
    if headers is not None:  # HTTP: the header may only lower the start role
        role = role_for_request(role, headers.getlist(ROLE_HEADER))
    if role is None:
        raise RouterError("no role: start the router with --role")
    return handlers.FacadeContext(
        db=state.db,
        role=role,
        session_id=session_id,
        pool=state.pool,
        now=state.options.now,
        wake_on_search=state.options.wake_on_search,
        availability=state.availability,
        workspace=workspace,
    )


def _json_result(value: Any) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=compact_json(value))])


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


async def _search(ctx: handlers.FacadeContext, args: Any) -> types.CallToolResult:
    return _json_result(await handlers.search_tools(ctx, args))


async def _inspect(ctx: handlers.FacadeContext, args: Any) -> types.CallToolResult:
    return _json_result(await handlers.inspect_schema(ctx, args))


_HANDLERS: dict[str, Callable[[handlers.FacadeContext, Any], Awaitable[types.CallToolResult]]] = {
    SEARCH_TOOLS: _search,
    INSPECT_SCHEMA: _inspect,
    CALL_TOOL: call_handler.call_tool,
}


# --- transports ---------------------------------------------------------------------------


# How long a signalled router waits for its backends to stop before it exits anyway.
SIGNAL_SHUTDOWN_GRACE_S = 10.0


def _audit_unreadable(states: list[RouterState]) -> Callable[[int, str], None]:
    """An audit row for each request line (or HTTP request) the transport refused as unreadable."""

    def record(code: int, message: str) -> None:
        if not states:  # before the lifespan opened the database: logged only
            return
        state = states[0]
        try:
            state.db.write_soon(
                audit.record,
                session_id=state.options.session_id,
                role=state.options.role.name if state.options.role else "(none)",
                meta_tool=audit.UNREADABLE_REQUEST,
                target=None,
                arguments={"code": code},
                outcome=audit.INVALID_REQUEST,
                latency_ms=0.0,
                error=message,
                finished_at=utc_now_iso(),
            )
        except RouterError as exc:
            logger.warning("could not audit a refused request line: %s", exc)

    return record


async def serve_stdio(options: ServeOptions) -> None:
    """Serve until stdin closes, or until SIGTERM/SIGINT, which stop every backend first."""
    stopped = anyio.Event()
    states: list[RouterState] = []
    server = build_server(options, on_stopped=stopped.set, on_started=states.append)
    serving = anyio.CancelScope()
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async with anyio.create_task_group() as tg:

            async def serve() -> None:
                with serving:
                    async with event_loop_stdio_server(_audit_unreadable(states)) as (
                        read_stream,
                        write_stream,
                    ):
                        await server.run(read_stream, write_stream, server.create_initialization_options())
                tg.cancel_scope.cancel()

            tg.start_soon(serve)
            async for _ in signals:
                break
            serving.cancel()
            with anyio.move_on_after(SIGNAL_SHUTDOWN_GRACE_S):
                await stopped.wait()
            # When stdin is a regular file it is read in a worker thread that no
            # cancellation can interrupt (router/facade/stdio_transport.py); the lifespan has closed the database and stopped the
            # backends, so leave now.
            sys.stdout.flush()
            os._exit(0)


async def serve_http(options: ServeOptions, host: str, port: int, limits: "ConnectionLimits") -> None:
    """Serve Streamable HTTP until SIGTERM/SIGINT (router/facade/http_serve.py)."""
    from router.facade import http_serve
    from router.metrics.endpoint import with_metrics

    states: list[RouterState] = []
    server = build_server(options, on_started=states.append)

    def session_closed(session_id: str) -> None:
        for state in states:  # its roots are not asked for again: the id never comes back
            state.workspaces.forget(session_id)

    app = http_serve.build_app(server, host, options.servers.http, _audit_unreadable(states), session_closed)
    served = with_metrics(app, options.db_path, lambda: _configured_servers(states, options))
    await http_serve.serve_http_app(served, host, port, limits)


def _configured_servers(states: list[RouterState], options: ServeOptions) -> set[str]:
    """The backend servers the servers config declares now (a metric label's only values)."""
    config = states[0].pool.config if states else options.servers
    return set(config.servers)


def clock_with_offset() -> Callable[[], float]:
    """The breaker's clock, shifted by $CONTEXT_ROUTER_CLOCK_OFFSET_S seconds if set: lets a
    test (or an operator) move a running router past an open window without waiting."""
    offset = float(os.environ.get("CONTEXT_ROUTER_CLOCK_OFFSET_S", "0") or 0)
    if not offset:
        return unix_now
    return lambda: unix_now() + offset
