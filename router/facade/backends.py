"""Backend MCP servers: when they run, and the sessions calls borrow.

A backend is started on first need ("wake"), kept for reuse, stopped after its idle time,
and stopped with the router. Each running backend is owned by one supervisor task, because
its process (or the SDK's HTTP client) must be entered and left in the same task; calls from
any request borrow its session: router/facade/backend_session.py (the process and a lean JSON-RPC
session on its pipes) for a command, the SDK's Client for a URL. A crash, a hang past the
timeout, a backend that cannot start and a missing program all raise BackendError, which
the caller counts as a failure for the circuit breaker.
"""

import asyncio
import logging
import os
import string
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import anyio
import anyio.abc
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from router.errors import RouterError
from router.facade import audit
from router.facade.backend_session import StdioBackendSession, backend_process
from router.facade.backend_stderr import BackendStderr
from router.programs import program_search_dirs, resolve_command
from router.servers import ConfigError, Defaults, ServerConfig, ServersConfig

logger = logging.getLogger(__name__)

# Upper bound on how often idle backends are looked for.
MAX_REAP_INTERVAL_S = 30.0
MIN_REAP_INTERVAL_S = 0.05
BACKEND_CONNECT_MODE = "legacy"
# How long the router waits for all backends to stop when it shuts down.
SHUTDOWN_GRACE_S = 5.0


class BackendSession(Protocol):
    """What a call borrows: the SDK's Client (HTTP) and StdioBackendSession (stdio) both are."""

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult: ...


class BackendError(RouterError):
    """A backend could not serve a call; counts as a failure for the circuit breaker."""

    outcome = audit.BACKEND_FAILED


class MissingProgramError(BackendError):
    outcome = audit.MISSING_PROGRAM


class BackendTimeoutError(BackendError):
    outcome = audit.TIMEOUT


@dataclass(frozen=True)
class Placeholders:
    """Values for ${WORKSPACE} and ${DATA_DIR} in servers.toml args, env and url."""

    workspace: Path
    data_dir: Path

    def expand(self, text: str, where: str) -> str:
        try:
            return string.Template(text).substitute(
                WORKSPACE=str(self.workspace), DATA_DIR=str(self.data_dir)
            )
        except (KeyError, ValueError) as exc:
            raise ConfigError(
                f"{where}: unknown placeholder {exc} in {text!r}; use ${{WORKSPACE}} or ${{DATA_DIR}}"
            ) from None


class Backend:
    """One declared backend server and, while it runs, its client session."""

    def __init__(
        self,
        config: ServerConfig,
        timeouts: Defaults,
        placeholders: Placeholders,
        clock: Callable[[], float],
    ) -> None:
        self.config = config
        self.timeouts = timeouts
        self.placeholders = placeholders
        self.clock = clock
        self.client: BackendSession | None = None
        self.last_used = clock()
        self.in_flight = 0
        self.starts = 0
        self._start_lock = anyio.Lock()
        self._stop: anyio.Event | None = None
        self._done: anyio.Event | None = None
        # the stderr of the process started last (stdio backends only)
        self._stderr: BackendStderr | None = None

    @property
    def name(self) -> str:
        return self.config.name

    def check_placeholders(self) -> None:
        """Expand every placeholder once, so a typo is reported when the router starts."""
        where = f"servers.toml [servers.{self.name}]"
        for text in [*self.config.args, *self.config.env.values(), self.config.url or ""]:
            self.placeholders.expand(text, where)

    @property
    def running(self) -> bool:
        return self.client is not None

    def _target(self) -> StdioServerParameters | str:
        where = f"servers.toml [servers.{self.name}]"
        if self.config.url is not None:
            return self.placeholders.expand(self.config.url, where)
        program = resolve_command(self.config.command or "")
        if program is None:
            install = self.config.install or f"a program named {self.config.command!r}"
            raise MissingProgramError(
                f"backend {self.name!r} cannot start: program {self.config.command!r} was not "
                f"found in {', '.join(map(str, program_search_dirs()))} or PATH; install it: {install}"
            )
        env = {k: self.placeholders.expand(v, where) for k, v in self.config.env.items()}
        base_env = {"PATH": os.environ.get("PATH", "")}
        return StdioServerParameters(
            command=program,
            args=[self.placeholders.expand(a, where) for a in self.config.args],
            env=base_env | env,
            cwd=str(self.placeholders.workspace),
        )

    async def ensure_started(self, task_group: anyio.abc.TaskGroup) -> BackendSession:
        if self.client is not None:  # the usual case; taking the lock would cost a loop turn
            return self.client
        async with self._start_lock:
            if self.client is not None:
                return self.client
            target = self._target()
            self.placeholders.data_dir.mkdir(parents=True, exist_ok=True)
            ready = anyio.Event()
            failure: list[BaseException] = []
            self._stop, self._done = anyio.Event(), anyio.Event()
            task_group.start_soon(self._supervise, target, ready, failure, self._stop, self._done)
            with anyio.move_on_after(self.timeouts.startup_timeout_s) as waited:
                await ready.wait()
            if waited.cancelled_caught:
                self.stop()
                raise BackendTimeoutError(
                    f"backend {self.name!r} did not finish starting within "
                    f"{self.timeouts.startup_timeout_s:g} s; it was stopped"
                )
            if self.client is None:
                cause = failure[0] if failure else None
                raise BackendError(
                    f"backend {self.name!r} failed to start: {_describe(cause)}{await self._last_words()}"
                ) from cause
            self.starts += 1
            return self.client

    async def _last_words(self) -> str:
        """What the backend last wrote to stderr (redacted), for an error message."""
        tail = await self._stderr.tail() if self._stderr is not None else ""
        return f"; its stderr ended with: {tail}" if tail else ""

    async def _supervise(
        self,
        target: StdioServerParameters | str,
        ready: anyio.Event,
        failure: list[BaseException],
        stop: anyio.Event,
        done: anyio.Event,
    ) -> None:
        try:
            async with self._session(target, stop) as session:
                self.client = session
                self.last_used = self.clock()
                ready.set()
                await stop.wait()
        except Exception as exc:  # a backend that dies must never take the router with it
            failure.append(exc)
            logger.warning("backend %s stopped: %s", self.name, _describe(exc))
        finally:
            self.client = None
            ready.set()
            done.set()

    @asynccontextmanager
    async def _session(
        self, target: StdioServerParameters | str, stop: anyio.Event
    ) -> AsyncIterator[BackendSession]:
        """An initialized session; a stdio backend that closes its stdout sets `stop`, so the
        next call starts it again instead of failing on a dead pipe."""
        if isinstance(target, str):
            # Streamable HTTP: the SDK's client, with the initialize handshake (2025-11-25)
            # every server speaks (its 2026 per-request envelope costs more per call).
            async with Client(target, mode=BACKEND_CONNECT_MODE) as client:
                yield client
            return
        # the backend's environment: its configured secrets are redacted from its stderr too
        stderr = self._stderr = BackendStderr(self.name, target.env or {})
        try:
            async with backend_process(target, stderr.child_end()) as process:
                stderr.close_child_end()
                async with self._stdio_session(process, stop) as session:
                    yield session
        finally:
            stderr.close_child_end()

    @asynccontextmanager
    async def _stdio_session(
        self, process: asyncio.subprocess.Process, stop: anyio.Event
    ) -> AsyncIterator[StdioBackendSession]:
        assert process.stdout is not None and process.stdin is not None
        async with anyio.create_task_group() as tg:
            session = StdioBackendSession(process.stdout, process.stdin, self.name)

            async def serve_until_closed() -> None:
                await session.serve()
                stop.set()

            tg.start_soon(serve_until_closed)
            await session.initialize()
            try:
                yield session
            finally:
                tg.cancel_scope.cancel()

    async def call(
        self, task_group: anyio.abc.TaskGroup, tool: str, arguments: dict[str, Any]
    ) -> types.CallToolResult:
        self.in_flight += 1
        try:
            client = await self.ensure_started(task_group)
            timeout = self.timeouts.call_timeout_s
            with anyio.move_on_after(timeout) as waited:
                try:
                    result = await client.call_tool(tool, arguments)
                except MCPError as exc:
                    if exc.error.code == CONNECTION_CLOSED:
                        self.stop()
                        raise BackendError(
                            f"backend {self.name!r} closed the connection during {tool!r} "
                            "(its process exited or crashed); the call may not have completed"
                            f"{await self._last_words()}"
                        ) from exc
                    raise BackendError(
                        f"backend {self.name!r} refused {tool!r}: {exc.error.message} "
                        f"(MCP error {exc.error.code})"
                    ) from exc
                except BackendError:
                    raise
                except Exception as exc:
                    raise BackendError(
                        f"backend {self.name!r} gave an unusable answer to {tool!r}: {_describe(exc)}"
                    ) from exc
            if waited.cancelled_caught:
                # A backend that hangs once is not trusted with the next call: restart it.
                self.stop()
                raise BackendTimeoutError(
                    f"backend {self.name!r} did not answer {tool!r} within {timeout:g} s; "
                    "it was stopped and will be restarted on the next call"
                )
            return result
        finally:
            self.in_flight -= 1
            self.last_used = self.clock()

    def stop(self) -> None:
        """Ask the supervisor to close the session (the SDK then ends the process)."""
        if self._stop is not None:
            self._stop.set()
        self.client = None

    async def wait_stopped(self) -> None:
        if self._done is not None:
            await self._done.wait()


def _describe(exc: BaseException | None) -> str:
    if exc is None:
        return "no reason given"
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(inner) for inner in exc.exceptions)
    if isinstance(exc, MCPError):
        return f"{exc.error.message} (MCP error {exc.error.code})"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class BackendPool:
    """All declared backends; an async context manager that stops them all on exit."""

    def __init__(
        self,
        servers: ServersConfig,
        placeholders: Placeholders,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = servers
        self.clock = clock
        # what a started audit row's deadline allows any call; the config never changes while
        # the router runs, so it is worked out once, not on every call
        self.longest_call_s = servers.longest_call_s()
        self.backends = {
            name: Backend(server, servers.timeouts(server), placeholders, clock)
            for name, server in servers.servers.items()
        }
        for backend in self.backends.values():
            backend.check_placeholders()
        self._task_group: anyio.abc.TaskGroup | None = None

    def get(self, server: str) -> Backend | None:
        return self.backends.get(server)

    async def __aenter__(self) -> "BackendPool":
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        if self.backends:
            self._task_group.start_soon(self._stop_idle_backends)
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        assert self._task_group is not None
        for backend in self.backends.values():
            backend.stop()
        with anyio.move_on_after(SHUTDOWN_GRACE_S, shield=True):
            for backend in self.backends.values():
                await backend.wait_stopped()
        self._task_group.cancel_scope.cancel()
        await self._task_group.__aexit__(*exc_info)

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        backend = self.backends[server]
        assert self._task_group is not None, "BackendPool used outside `async with`"
        return await backend.call(self._task_group, tool, arguments)

    def wake_in_background(self, server: str) -> None:
        """Start a sleeping backend without waiting, so a call soon after skips the cold start."""
        backend = self.backends.get(server)
        if backend is None or backend.running or self._task_group is None:
            return
        self._task_group.start_soon(self._wake_quietly, backend)

    async def _wake_quietly(self, backend: Backend) -> None:
        assert self._task_group is not None
        try:
            await backend.ensure_started(self._task_group)
        except BackendError as exc:
            # The call that follows (if any) reports and counts the failure itself.
            logger.info("background wake of %s failed: %s", backend.name, exc)

    def _reap_interval(self) -> float:
        shortest = min(b.timeouts.idle_stop_s for b in self.backends.values())
        return min(MAX_REAP_INTERVAL_S, max(MIN_REAP_INTERVAL_S, shortest / 4))

    async def _stop_idle_backends(self) -> None:
        interval = self._reap_interval()
        while True:
            await anyio.sleep(interval)
            now = self.clock()
            for backend in self.backends.values():
                idle_for = now - backend.last_used
                if backend.running and backend.in_flight == 0 and idle_for >= backend.timeouts.idle_stop_s:
                    logger.info("stopping idle backend %s after %.1f s", backend.name, idle_for)
                    backend.stop()


def default_data_dir(db_path: Path) -> Path:
    """${DATA_DIR}: a directory beside the database for backends' own state."""
    return db_path.resolve().parent / f"{db_path.stem}-data"


async def fetch_tool_list(
    config: ServerConfig, timeouts: Defaults, placeholders: Placeholders
) -> list[dict[str, Any]]:
    """A backend's own tools/list (every page), as MCP JSON objects: what harvest records."""
    target = Backend(config, timeouts, placeholders, time.monotonic)._target()
    placeholders.data_dir.mkdir(parents=True, exist_ok=True)
    tools: list[dict[str, Any]] = []
    limit = timeouts.startup_timeout_s + timeouts.call_timeout_s
    try:
        with anyio.fail_after(limit):
            async with Client(target, mode=BACKEND_CONNECT_MODE) as client:
                cursor = None
                while True:
                    page = await client.list_tools(cursor=cursor)
                    tools.extend(
                        tool.model_dump(by_alias=True, exclude_none=True, mode="json") for tool in page.tools
                    )
                    cursor = page.next_cursor
                    if not cursor:
                        return tools
    except TimeoutError:
        raise BackendTimeoutError(
            f"backend {config.name!r} did not list its tools within {limit:g} s"
        ) from None
    except Exception as exc:
        raise BackendError(f"backend {config.name!r} could not list its tools: {_describe(exc)}") from exc
