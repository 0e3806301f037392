"""What the router does each time a backend starts: check its tools against the catalog
(router/catalog/quarantine.py), again whenever it says its list changed, and record that it
runs (backend_runs) so `context-router servers` in another process can tell; and each time a
start fails: count it, once, toward its server's breaker.

A failure here is logged and never fails the start: a backend whose tools/list cannot be
read keeps its catalog tools callable (their arguments are still checked against the
catalog's schemas), and the warning says so.
"""

import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import apsw
import mcp_types as types

from router.backends.servers import ServerConfig, ServersConfig
from router.catalog import quarantine
from router.clock import utc_now_iso
from router.errors import RouterError, first_error
from router.facade import breaker
from router.facade.backend import Backend, BackendSession
from router.facade.backend_errors import BackendError
from router.facade.backend_session import StdioBackendSession
from router.facade.backends import BackendPool
from router.facade.database import FacadeDatabase
from router.facade.placeholders import Placeholders
from router.process_start import process_start_time

logger = logging.getLogger(__name__)

RECORD_RUN_SQL = """
INSERT INTO backend_runs(server, router_pid, backend_pid, backend_start, started_at)
VALUES (:server, :router_pid, :backend_pid, :backend_start, :started_at)
ON CONFLICT(server, router_pid) DO UPDATE SET backend_pid = excluded.backend_pid,
    backend_start = excluded.backend_start, started_at = excluded.started_at
"""


async def list_tools(session: BackendSession) -> list[dict[str, Any]]:
    """The backend's own tools/list: raw lines from a stdio session, the SDK's pages over HTTP."""
    if isinstance(session, StdioBackendSession):
        return await session.list_tools()
    tools: list[dict[str, Any]] = []
    cursor = None
    while True:
        page: types.ListToolsResult = await session.list_tools(cursor=cursor)  # type: ignore[attr-defined]
        tools.extend(tool.model_dump(by_alias=True, exclude_none=True, mode="json") for tool in page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


async def fetch_tool_list(
    server: ServerConfig, servers: ServersConfig, placeholders: Placeholders
) -> list[dict[str, Any]]:
    """Start the server as the router would and read its tools/list (every page): what harvest,
    import and add record. A failure's message ends with what the server wrote to stderr
    (redacted)."""
    alone = ServersConfig(defaults=servers.defaults, servers={server.name: server})
    limit = alone.longest_call_s()
    try:
        async with BackendPool(alone, placeholders) as pool:
            with anyio.move_on_after(limit) as waited:
                session = await pool.session(server.name)
                return await list_tools(session)
    except BaseExceptionGroup as group:  # the pool's task group wraps what a start raised
        raise first_error(group, (RouterError,)) or group from None
    if waited.cancelled_caught:
        raise BackendError(f"backend {server.name!r} did not list its tools within {limit:g} s")
    raise BackendError(f"backend {server.name!r} did not list its tools")


def watcher(db: FacadeDatabase, pool: BackendPool) -> Callable[[Backend, BackendSession], Awaitable[None]]:
    """The pool's on_started hook for a router process on `db`."""
    session_id = quarantine.router_session_id()

    async def check(backend: Backend, session: BackendSession) -> None:
        try:
            live = await list_tools(session)
        except Exception as exc:  # the backend still serves calls; say the check did not run
            logger.warning("backend %s: tools/list failed, its tools were not checked: %s", backend.name, exc)
            return
        try:
            report = await db.write(quarantine.check_server, backend.name, live, session_id=session_id)
        except RouterError as exc:  # the database is busy or unusable: said, and retried next start
            logger.warning("backend %s: its tools were not checked: %s", backend.name, exc)
            return
        for tool, changed in sorted(report.quarantined.items()):
            logger.warning("backend %s: %s quarantined: %s", backend.name, tool, quarantine.reason(changed))

    async def on_started(backend: Backend, session: BackendSession) -> None:
        if backend.pid is not None:
            db.write_soon(_record_run, backend.name, backend.pid)
        await check(backend, session)
        if isinstance(session, StdioBackendSession):
            session.on_tools_list_changed = lambda: pool.start_soon(lambda: check(backend, session))

    return on_started


def start_failure_recorder(
    db: FacadeDatabase, pool: BackendPool, now: Callable[[], float]
) -> Callable[[Backend, BackendError], None]:
    """The pool's on_start_failed hook: a failed start is one failure of its server's process,
    however many calls (or a background wake) waited for it."""

    def record(backend: Backend, failure: BackendError) -> None:
        db.write_soon(
            breaker.record,
            backend.name,
            False,
            now(),
            pool.breaker_policy,
            str(failure),
            breaker.BACKEND_ROWS,
        )

    return record


def _record_run(conn: apsw.Connection, server: str, pid: int) -> None:
    conn.execute(
        RECORD_RUN_SQL,
        {
            "server": server,
            "router_pid": os.getpid(),
            "backend_pid": pid,
            "backend_start": process_start_time(pid) or "",
            "started_at": utc_now_iso(),
        },
    )
