"""One backend server: its start, its supervisor, its calls and its stop.

Each running backend is owned by one supervisor task, because its process (or the SDK's
HTTP client) must be entered and left in the same task; calls from any request borrow its
session: router/facade/backend_session.py (the process and a lean JSON-RPC session on its
pipes) for a command, the SDK's Client for a URL. A crash, a hang past the timeout, a
backend that cannot start and a missing program all raise BackendError, which counts as a
failure for the circuit breaker; a process that exits cleanly (status 0) is no failure.

A start is one attempt, run in the pool's task group and shared by every call that needs the
backend while it is under way: they all hear its one outcome, which counts once toward the
server's breaker, and a caller that gives up does not end it for the others.
"""

import copy
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

from router.backends.node import launch_argv
from router.backends.programs import program_search_dirs, resolve_command
from router.backends.servers import Defaults, ServerConfig
from router.facade import http_endpoint, process_tree
from router.facade.backend_errors import (
    BackendCrashedError,
    BackendError,
    BackendExitedError,
    BackendStartError,
    BackendStoppedError,
    BackendTimeoutError,
    MissingProgramError,
    UnsetVariableError,
)
from router.facade.backend_session import (
    LONGEST_STOP_S,
    BackendProcess,
    StdioBackendSession,
    backend_process,
)
from router.facade.backend_stderr import BackendStderr
from router.facade.http_endpoint import HttpEndpoint
from router.facade.placeholders import Placeholders, uses_workspace_data_dir

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
        # its stdout closed or its process exited: it ends on its own, after reading the
        # answers written last and learning how the process exited; nothing need cancel it
        self.ending = False
        # the router ended it (idle, a hang, a changed declaration, shutdown)
        self.stopped = False

    def stop(self) -> None:
        """End this start (its supervisor stops the process and all it started)."""
        self.session = None
        self.stopped = True
        self.scope.cancel()


class _Start:
    """One start attempt: every call that needs the backend while it is under way waits for
    it and hears its outcome."""

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.run: _Run | None = None
        self.session: BackendSession | None = None
        self.failure: BackendError | None = None


# After a backend's process exits, how long its stdout may still be read for answers it wrote
# just before; a descendant holding the pipe open must not turn a crash into a timeout.
DRAIN_AFTER_EXIT_S = 0.2
# After a backend's stdout closes, how long its process has to exit on its own before it is
# stopped: its exit status tells a clean exit from a crash (asyncio learns of an exit a moment
# after the pipe closes).
EXIT_AFTER_EOF_S = 1.0


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
        self._start: _Start | None = None
        self._run: _Run | None = None
        self._runs_begun = 0
        # the Backend this one replaced (its declaration changed): its start and run end first
        self._predecessor: Backend | None = None
        # the stderr of the process started last (stdio backends only)
        self._stderr: BackendStderr | None = None
        # awaited after each successful start, with the new session (BackendPool.on_started)
        self.on_started: Callable[[Backend, BackendSession], Awaitable[None]] | None = None
        # told once per failed start attempt, however many calls waited for it
        self.on_start_failed: Callable[[Backend, BackendError], None] | None = None

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
        return self._start is not None

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
        # an npm backend the router installed runs under the router's own node
        command, *launcher_args = launch_argv(program)
        return StdioServerParameters(
            command=command,
            args=[*launcher_args, *(self.placeholders.expand(a, where) for a in self.config.args)],
            env=env,
            cwd=str(self.placeholders.workspace),
        )

    async def ensure_started(self, task_group: anyio.abc.TaskGroup) -> BackendSession:
        return (await self._ensure_run(task_group))[1]

    async def _ensure_run(self, task_group: anyio.abc.TaskGroup) -> tuple[_Run, BackendSession]:
        """The running start and its session; else the start under way, or a new one, waited
        for. A missing program or an unset variable is said to the call, nothing started."""
        run = self._run
        if run is not None and run.session is not None:  # the usual case
            return run, run.session
        start = self._start
        if start is None:
            target = self._target()
            start = self._start = _Start()
            task_group.start_soon(self._attempt, target, start, task_group)
        await start.done.wait()
        if start.run is None or start.session is None:
            # each waiter raises its own copy: one exception object raised in many tasks
            # would gather all their tracebacks
            raise copy.copy(start.failure or BackendStoppedError(f"backend {self.name!r} did not start"))
        return start.run, start.session

    async def _attempt(
        self, target: StdioServerParameters | HttpEndpoint, start: _Start, task_group: anyio.abc.TaskGroup
    ) -> None:
        """One start attempt, in the pool's task group: however many calls wait for it, it
        starts one process and its failure counts once toward the server's breaker."""
        failure: BackendError | None = None
        try:
            start.run = await self._start_run(target, task_group)
            start.session = start.run.session
        except BackendError as exc:
            failure = exc
        except Exception as exc:  # a bug in starting must reach the calls, never end the router
            logger.exception("starting backend %s failed", self.name)
            failure = BackendStartError(f"backend {self.name!r} failed to start: {describe_failure(exc)}")
        finally:
            self._start = None
            if failure is not None:
                failure.counted_by_call = False
                start.failure = failure
                if failure.process_failure and self.on_start_failed is not None:
                    self.on_start_failed(self, failure)
            start.done.set()

    async def _start_run(
        self, target: StdioServerParameters | HttpEndpoint, task_group: anyio.abc.TaskGroup
    ) -> _Run:
        await self._end_previous_run()
        self.placeholders.data_dir.mkdir(parents=True, exist_ok=True)
        if uses_workspace_data_dir(self.config):
            self.placeholders.workspace_data_dir.mkdir(parents=True, exist_ok=True)
        self._runs_begun += 1
        run = self._run = _Run(self._runs_begun)
        task_group.start_soon(self._supervise, target, run)
        with anyio.move_on_after(self.timeouts.startup_timeout_s) as waited:
            await run.ready.wait()
        if waited.cancelled_caught:
            run.stop()
            # "it was stopped" is said once it is true; a stdio stop is bounded by itself, an
            # HTTP client's end is not waited for past a stop's time
            with anyio.move_on_after(LONGEST_STOP_S):
                await run.done.wait()
            raise BackendTimeoutError(
                f"backend {self.name!r} did not finish starting within "
                f"{self.timeouts.startup_timeout_s:g} s; "
                + ("it was stopped" if run.done.is_set() else "it is being stopped")
            )
        if run.session is None:
            if run.stopped:
                raise BackendStoppedError(
                    f"backend {self.name!r} was stopped before it finished starting (its "
                    "declaration changed, or the router is stopping); call it again"
                )
            raise BackendStartError(
                f"backend {self.name!r} failed to start: {describe_failure(run.failure)}"
                f"{await self._last_words()}"
            ) from run.failure
        self.starts += 1
        if self.on_started is not None:
            # the start's checks (its tools/list) are bounded like a call: a backend that
            # never answers them must not hold every call waiting for this start
            with anyio.move_on_after(self.timeouts.call_timeout_s) as checked:
                await self.on_started(self, run.session)
            if checked.cancelled_caught:
                logger.warning(
                    "backend %s: its start-up checks (tools/list) did not finish within %g s; "
                    "its tools were not checked",
                    self.name,
                    self.timeouts.call_timeout_s,
                )
        return run

    def follow(self, previous: "Backend") -> None:
        """Replace `previous` (its declaration changed): its start under way and its run, still
        stopping, are waited for before this one first starts."""
        self._predecessor = previous
        self._run = previous._run
        self._runs_begun = previous._runs_begun

    async def _end_previous_run(self) -> None:
        """A start still stopping (after a crash, a hang, an idle stop) is waited for, so one
        backend never has two processes; stopping is bounded (backend_session.stop_process)."""
        predecessor, self._predecessor = self._predecessor, None
        if predecessor is not None:
            if predecessor._start is not None:
                await predecessor._start.done.wait()
            predecessor.stop()
            self._run = predecessor._run
            self._runs_begun = max(self._runs_begun, predecessor._runs_begun)
        previous = self._run
        if previous is not None and not previous.done.is_set():
            if not previous.ending:  # one ending on its own is let finish reading its answers
                previous.stop()
            await previous.done.wait()

    async def _last_words(self) -> str:
        """What the backend last wrote to stderr (redacted), for an error message."""
        tail = await self._stderr.tail() if self._stderr is not None else ""
        return f"; its stderr ended with: {tail}" if tail else ""

    async def _supervise(self, target: StdioServerParameters | HttpEndpoint, run: _Run) -> None:
        try:
            with run.scope:
                async with self._session(target, run) as session:
                    if not run.ending:  # it may have exited right after initialize
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

            def ending() -> None:
                run.ending = True
                run.session = None  # no new call is written to a process that is going away

            async def serve_until_closed() -> None:
                await session.serve()
                ending()
                with anyio.move_on_after(EXIT_AFTER_EOF_S):
                    await process.exited.wait()  # exiting on its own: its status is learned
                run.scope.cancel()

            async def end_when_the_process_exits() -> None:
                await process.exited.wait()
                ending()
                with anyio.move_on_after(DRAIN_AFTER_EXIT_S):
                    await anyio.sleep_forever()  # serve() may still read answers written last
                session.close()
                run.scope.cancel()

            tg.start_soon(serve_until_closed)
            tg.start_soon(end_when_the_process_exits)
            await session.initialize()
            process.initialized = True
            try:
                yield session
            finally:
                tg.cancel_scope.cancel()

    async def call(
        self, task_group: anyio.abc.TaskGroup, tool: str, arguments: dict[str, Any]
    ) -> types.CallToolResult:
        self.in_flight += 1
        try:
            run, client = await self._ensure_run(task_group)
            timeout = self.timeouts.call_timeout_s
            connection_lost = False
            with anyio.move_on_after(timeout):
                try:
                    return await client.call_tool(tool, arguments)
                except MCPError as exc:
                    if exc.error.code != CONNECTION_CLOSED:
                        raise BackendError(
                            f"backend {self.name!r} refused {tool!r}: {exc.error.message} "
                            f"(MCP error {exc.error.code})"
                        ) from exc
                    connection_lost = True
                except BackendError:
                    raise
                except Exception as exc:
                    raise BackendError(
                        f"backend {self.name!r} gave an unusable answer to {tool!r}: {describe_failure(exc)}"
                    ) from exc
            if connection_lost:  # outside the call's timeout: how it exited is waited for
                raise await self._connection_lost(run, tool)
            # A backend that hangs once is not trusted with the next call: restart it.
            run.stop()
            raise BackendTimeoutError(
                f"backend {self.name!r} did not answer {tool!r} within {timeout:g} s; "
                "it is being stopped and will be restarted on the next call"
            )
        finally:
            self.in_flight -= 1
            self.last_used = self.clock()

    async def _connection_lost(self, run: _Run, tool: str) -> BackendError:
        """The connection closed with `tool` unanswered: a clean exit (status 0, on its own)
        or a crash. Only the run the call went to is stopped (another call may have started
        the next one already), and not one ending on its own: other calls' answers written
        just before the exit are still read."""
        process = run.process
        if process is not None:
            with anyio.move_on_after(EXIT_AFTER_EOF_S):
                await process.exited.wait()
        if not run.ending:
            run.stop()
        if process is not None and process.exited_cleanly():
            return BackendExitedError(
                f"backend {self.name!r} exited cleanly (status 0) without answering {tool!r}: "
                "the call was not completed"
            )
        return BackendCrashedError(
            f"backend {self.name!r} closed the connection during {tool!r} "
            "(its process exited or crashed); the call may not have completed"
            f"{await self._last_words()}"
        )

    def stop(self) -> None:
        """End the current start (its supervisor stops the process and all it started)."""
        if self._run is not None:
            self._run.stop()

    async def wait_stopped(self) -> None:
        run = self._run
        if run is not None:
            await run.done.wait()


def longest_call_s(timeouts: Defaults) -> float:
    """The longest the router can work on one forwarded call to a backend: the stop of its
    previous start, a cold start, then either the start's checks (bounded like a call) or the
    stop of a start that timed out, the call itself, and learning how the process exited."""
    return (
        LONGEST_STOP_S
        + timeouts.startup_timeout_s
        + max(timeouts.call_timeout_s, LONGEST_STOP_S)
        + timeouts.call_timeout_s
        + EXIT_AFTER_EOF_S
    )


def describe_failure(exc: BaseException | None) -> str:
    if exc is None:
        return "no reason given"
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe_failure(inner) for inner in exc.exceptions)
    if isinstance(exc, MCPError):
        return f"{exc.error.message} (MCP error {exc.error.code})"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
