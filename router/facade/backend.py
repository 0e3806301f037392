"""One backend server: its start, its supervisor, its calls and its stop.

Each running backend is owned by one supervisor task, because its process (or the SDK's
HTTP client) must be entered and left in the same task; calls from any request borrow its
session: router/facade/backend_session.py (the process and a lean JSON-RPC session on its
pipes) for a command, the SDK's Client for a URL. A crash, a hang past the timeout, a
backend that cannot start and a missing program all raise BackendError, which the caller
counts as a failure for the circuit breaker.
"""

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any, Protocol

import anyio
import anyio.abc
import anyio.to_thread
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from router.facade import http_endpoint, process_tree
from router.facade.backend_errors import (
    BackendCrashedError,
    BackendError,
    BackendStartError,
    BackendTimeoutError,
    MissingProgramError,
    UnsetVariableError,
)
from router.facade.backend_session import (
    BackendProcess,
    StdioBackendSession,
    backend_process,
)
from router.facade.backend_stderr import BackendStderr
from router.facade.http_endpoint import HttpEndpoint
from router.facade.placeholders import Placeholders
from router.programs import program_search_dirs, resolve_command
from router.servers import Defaults, ServerConfig

logger = logging.getLogger(__name__)

# The SDK client's connection mode for backends: the handshake every server speaks.
BACKEND_CONNECT_MODE = "legacy"


class BackendSession(Protocol):
    """What a call borrows: the SDK's Client (HTTP) and StdioBackendSession (stdio) both are."""

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult: ...


class _Run:
    """One start of a backend: the supervisor task that owns its process (or HTTP client),
    and the session calls borrow while it lasts. Cancelling `scope` ends it, process group
    and all."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.scope = anyio.CancelScope()
        self.ready = anyio.Event()
        self.done = anyio.Event()
        self.session: BackendSession | None = None
        self.failure: BaseException | None = None
        self.process: BackendProcess | None = None


# After a backend's process exits, how long its stdout may still be read for answers it wrote
# just before; a descendant holding the pipe open must not turn a crash into a timeout.
DRAIN_AFTER_EXIT_S = 0.2


class Backend:
    """One declared backend server and, while it runs, its client session.

    At most one start of it is alive at a time: a new start first ends the one before, and
    only the current start's supervisor may clear what calls borrow."""

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
        self.last_used = clock()
        # names its process tree (process_tree.backend_tag): the pool gives each workspace's own
        self.tag_name = config.name
        self.in_flight = 0
        self.starts = 0
        self._start_lock = anyio.Lock()
        self._run: _Run | None = None
        self._runs_begun = 0
        # the stderr of the process started last (stdio backends only)
        self._stderr: BackendStderr | None = None
        # awaited after each successful start, with the new session (BackendPool.on_started)
        self.on_started: Callable[[Backend, BackendSession], Awaitable[None]] | None = None

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def client(self) -> BackendSession | None:
        run = self._run
        return run.session if run is not None else None

    @property
    def pid(self) -> int | None:
        """The running process's id (stdio backends)."""
        run = self._run
        return run.process.pid if run is not None and run.process is not None else None

    @property
    def _where(self) -> str:
        """Where a placeholder error points the user."""
        return f"servers.toml [servers.{self.name}]"

    def check_placeholders(self) -> None:
        """Expand every placeholder once, so a typo is reported when the router starts."""
        for text in self.config.templated_texts:
            with suppress(UnsetVariableError):  # said when the server is searched or called
                self.placeholders.expand(text, self._where)

    @property
    def running(self) -> bool:
        return self.client is not None

    @property
    def starting(self) -> bool:
        return self._start_lock.locked()

    def _target(self) -> StdioServerParameters | HttpEndpoint:
        where = self._where
        if self.config.url is not None:
            return HttpEndpoint.of(self.config, lambda text: self.placeholders.expand(text, where))
        program = resolve_command(self.config.command or "")
        if program is None:
            install = self.config.install or f"a program named {self.config.command!r}"
            raise MissingProgramError(
                f"backend {self.name!r} cannot start: program {self.config.command!r} was not "
                f"found in {', '.join(map(str, program_search_dirs()))} or PATH; install it: {install}"
            )
        # the process gets the SDK's default environment (PATH, HOME, ...) under these
        # (backend_session.backend_process)
        env = {k: self.placeholders.expand(v, where) for k, v in self.config.env.items()}
        return StdioServerParameters(
            command=program,
            args=[self.placeholders.expand(a, where) for a in self.config.args],
            env=env,
            cwd=str(self.placeholders.workspace),
        )

    async def ensure_started(self, task_group: anyio.abc.TaskGroup) -> BackendSession:
        client = self.client
        if client is not None:  # the usual case; taking the lock would cost a loop turn
            return client
        async with self._start_lock:
            client = self.client
            if client is not None:
                return client
            await self._end_previous_run()
            target = self._target()
            self.placeholders.data_dir.mkdir(parents=True, exist_ok=True)
            self._runs_begun += 1
            run = self._run = _Run(self._runs_begun)
            task_group.start_soon(self._supervise, target, run)
            with anyio.move_on_after(self.timeouts.startup_timeout_s) as waited:
                await run.ready.wait()
            if waited.cancelled_caught:
                run.scope.cancel()  # its supervisor ends the process group
                raise BackendTimeoutError(
                    f"backend {self.name!r} did not finish starting within "
                    f"{self.timeouts.startup_timeout_s:g} s; it was stopped"
                )
            if run.session is None:
                raise BackendStartError(
                    f"backend {self.name!r} failed to start: {describe_failure(run.failure)}"
                    f"{await self._last_words()}"
                ) from run.failure
            self.starts += 1
            if self.on_started is not None:
                await self.on_started(self, run.session)
            return run.session

    def follow(self, previous: "Backend") -> None:
        """Replace `previous` (its declaration changed): its run, still stopping, is waited
        for before this one first starts."""
        self._run = previous._run
        self._runs_begun = previous._runs_begun

    async def _end_previous_run(self) -> None:
        """A start still stopping (after a crash, a hang, an idle stop) is waited for, so one
        backend never has two processes; stopping is bounded (backend_session.stop_process)."""
        previous = self._run
        if previous is not None and not previous.done.is_set():
            previous.scope.cancel()
            await previous.done.wait()

    async def _last_words(self) -> str:
        """What the backend last wrote to stderr (redacted), for an error message."""
        tail = await self._stderr.tail() if self._stderr is not None else ""
        return f"; its stderr ended with: {tail}" if tail else ""

    async def _supervise(self, target: StdioServerParameters | HttpEndpoint, run: _Run) -> None:
        try:
            with run.scope:
                async with self._session(target, run) as session:
                    run.session = session
                    self.last_used = self.clock()
                    run.ready.set()
                    await anyio.sleep_forever()
        except Exception as exc:  # a backend that dies must never take the router with it
            run.failure = exc
            logger.warning("backend %s stopped: %s", self.name, describe_failure(exc))
        finally:
            run.session = None
            run.ready.set()
            run.done.set()

    @asynccontextmanager
    async def _session(
        self, target: StdioServerParameters | HttpEndpoint, run: _Run
    ) -> AsyncIterator[BackendSession]:
        """An initialized session. A stdio backend whose stdout closes or whose process exits
        ends its run, so the next call starts it again instead of failing on a dead pipe."""
        if isinstance(target, HttpEndpoint):
            # Streamable HTTP: the SDK's client, with the initialize handshake (2025-11-25)
            # every server speaks (its 2026 per-request envelope costs more per call).
            async with Client(http_endpoint.connect(target), mode=BACKEND_CONNECT_MODE) as client:
                yield client
            return
        # the backend's environment: its configured secrets are redacted from its stderr too
        stderr = self._stderr = BackendStderr(self.name, target.env or {})
        try:
            tag = process_tree.backend_tag(self.tag_name, run.number)
            async with backend_process(target, stderr.child_end(), tag) as process:
                run.process = process
                stderr.close_child_end()
                async with self._stdio_session(process, run) as session:
                    yield session
        finally:
            stderr.close_child_end()

    @asynccontextmanager
    async def _stdio_session(self, process: BackendProcess, run: _Run) -> AsyncIterator[StdioBackendSession]:
        stdout, stdin = process.process.stdout, process.process.stdin
        assert stdout is not None and stdin is not None
        async with anyio.create_task_group() as tg:
            session = StdioBackendSession(stdout, stdin, self.name)

            async def serve_until_closed() -> None:
                await session.serve()
                run.scope.cancel()

            async def end_when_the_process_exits() -> None:
                await process.exited.wait()
                with anyio.move_on_after(DRAIN_AFTER_EXIT_S):
                    await anyio.sleep_forever()  # serve() may still read answers written last
                session.close()
                run.scope.cancel()

            tg.start_soon(serve_until_closed)
            tg.start_soon(end_when_the_process_exits)
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
                        raise BackendCrashedError(
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
                        f"backend {self.name!r} gave an unusable answer to {tool!r}: {describe_failure(exc)}"
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
        """End the current start (its supervisor stops the process and all it started)."""
        run = self._run
        if run is not None:
            run.session = None
            run.scope.cancel()

    async def wait_stopped(self) -> None:
        run = self._run
        if run is not None:
            await run.done.wait()


def describe_failure(exc: BaseException | None) -> str:
    if exc is None:
        return "no reason given"
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe_failure(inner) for inner in exc.exceptions)
    if isinstance(exc, MCPError):
        return f"{exc.error.message} (MCP error {exc.error.code})"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
