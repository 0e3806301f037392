"""Backend MCP servers: when they run, and the sessions calls borrow.

A backend is started on first need ("wake"), kept for reuse, stopped after its idle time,
and stopped with the router. Each running backend is owned by one supervisor task, because
its process (or the SDK's HTTP client) must be entered and left in the same task; calls from
any request borrow its session: router/facade/backend_session.py (the process and a lean JSON-RPC
session on its pipes) for a command, the SDK's Client for a URL. A crash, a hang past the
timeout, a backend that cannot start and a missing program all raise BackendError, which
the caller counts as a failure for the circuit breaker.
"""

import logging
import os
import string
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import anyio
import anyio.abc
import anyio.to_thread
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from router import env_references
from router.errors import RouterError
from router.facade import audit, http_endpoint, process_tree
from router.facade.backend_session import (
    LIVE_BACKEND_PIDS,
    BackendProcess,
    StdioBackendSession,
    backend_process,
)
from router.facade.backend_stderr import BackendStderr
from router.facade.breaker import BreakerPolicy
from router.facade.http_endpoint import HttpEndpoint
from router.programs import program_search_dirs, resolve_command
from router.servers import ConfigError, Defaults, ServerConfig, ServersConfig

logger = logging.getLogger(__name__)

# Upper bound on how often idle backends are looked for.
MAX_REAP_INTERVAL_S = 30.0
MIN_REAP_INTERVAL_S = 0.05
BACKEND_CONNECT_MODE = "legacy"
# How often adopted orphans that exited are reaped (a /proc scan).
ORPHAN_REAP_INTERVAL_S = 5.0
# How long the router waits for all backends to stop when it shuts down.
SHUTDOWN_GRACE_S = 5.0


class BackendSession(Protocol):
    """What a call borrows: the SDK's Client (HTTP) and StdioBackendSession (stdio) both are."""

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult: ...


class BackendError(RouterError):
    """A backend could not serve a call; counts as a failure for the circuit breaker.

    `process_failure`: the backend's process itself failed (it did not start, crashed or
    hung), which counts against the whole backend, not only the tool called."""

    outcome = audit.BACKEND_FAILED
    process_failure = False


class MissingProgramError(BackendError):
    outcome = audit.MISSING_PROGRAM
    process_failure = True


class BackendStartError(BackendError):
    process_failure = True


class BackendTimeoutError(BackendError):
    """A start or a call that took too long; the backend's process is ended."""

    outcome = audit.TIMEOUT
    process_failure = True


class BackendCrashedError(BackendError):
    """The process exited (or closed its stdout) while a call was in flight."""

    process_failure = True


class UnsetVariableError(BackendError):
    """A ${env:NAME} a server needs is not set in the router's environment."""

    outcome = audit.NOT_CONFIGURED


@dataclass(frozen=True)
class Placeholders:
    """Values for ${WORKSPACE}, ${DATA_DIR} and ${env:NAME} in servers.toml args, env, url
    and headers. ${env:NAME} is how a secret stays a reference in the servers file (import
    writes them): its value is read from the router's environment when the backend starts."""

    workspace: Path
    data_dir: Path

    def expand(self, text: str, where: str) -> str:
        # the literal parts around ${env:...} are templates; an expanded value never is
        parts = env_references.ENV_REFERENCE.split(text)
        out = []
        for index, part in enumerate(parts):
            if index % 2:
                value = os.environ.get(part)
                if value is None:
                    raise UnsetVariableError(
                        f"{where}: ${{env:{part}}} is not set in the router's environment; export it"
                    )
                out.append(value)
                continue
            try:
                out.append(
                    string.Template(part).substitute(
                        WORKSPACE=str(self.workspace), DATA_DIR=str(self.data_dir)
                    )
                )
            except (KeyError, ValueError) as exc:
                raise ConfigError(
                    f"{where}: unknown placeholder {exc} in {text!r}; use ${{WORKSPACE}}, "
                    "${DATA_DIR} or ${env:NAME}"
                ) from None
        return "".join(out)


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

    def check_placeholders(self) -> None:
        """Expand every placeholder once, so a typo is reported when the router starts."""
        where = f"servers.toml [servers.{self.name}]"
        config = self.config
        for text in [*config.args, *config.env.values(), config.url or "", *config.headers.values()]:
            with suppress(UnsetVariableError):  # said when the server is searched or called
                self.placeholders.expand(text, where)

    @property
    def running(self) -> bool:
        return self.client is not None

    @property
    def starting(self) -> bool:
        return self._start_lock.locked()

    def _target(self) -> StdioServerParameters | str:
        where = f"servers.toml [servers.{self.name}]"
        if self.config.url is not None:
            return HttpEndpoint.of(self.config, lambda text: self.placeholders.expand(text, where))
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
                    f"backend {self.name!r} failed to start: {_describe(run.failure)}"
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

    async def _supervise(self, target: StdioServerParameters | str, run: _Run) -> None:
        try:
            with run.scope:
                async with self._session(target, run) as session:
                    run.session = session
                    self.last_used = self.clock()
                    run.ready.set()
                    await anyio.sleep_forever()
        except Exception as exc:  # a backend that dies must never take the router with it
            run.failure = exc
            logger.warning("backend %s stopped: %s", self.name, _describe(exc))
        finally:
            run.session = None
            run.ready.set()
            run.done.set()

    @asynccontextmanager
    async def _session(self, target: StdioServerParameters | str, run: _Run) -> AsyncIterator[BackendSession]:
        """An initialized session. A stdio backend whose stdout closes or whose process exits
        ends its run, so the next call starts it again instead of failing on a dead pipe."""
        if isinstance(target, str):
            # Streamable HTTP: the SDK's client, with the initialize handshake (2025-11-25)
            # every server speaks (its 2026 per-request envelope costs more per call).
            async with Client(http_endpoint.connect(target), mode=BACKEND_CONNECT_MODE) as client:
                yield client
            return
        # the backend's environment: its configured secrets are redacted from its stderr too
        stderr = self._stderr = BackendStderr(self.name, target.env or {})
        try:
            tag = process_tree.backend_tag(self.name, run.number)
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
        """End the current start (its supervisor stops the process and all it started)."""
        run = self._run
        if run is not None:
            run.session = None
            run.scope.cancel()

    async def wait_stopped(self) -> None:
        run = self._run
        if run is not None:
            await run.done.wait()


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
        *,
        adopts_orphans: bool = False,
    ) -> None:
        self.config = servers
        self.placeholders = placeholders
        self.clock = clock
        # `serve` made this process a child subreaper: orphans of backends become its children,
        # and the exited ones are reaped here (never in a process with other children)
        self.adopts_orphans = adopts_orphans
        # what a started audit row's deadline allows any call; the config never changes while
        # the router runs, so it is worked out once, not on every call
        self.longest_call_s = servers.longest_call_s()
        self.backends = {
            name: Backend(server, servers.timeouts(server), placeholders, clock)
            for name, server in servers.servers.items()
        }
        for backend in self.backends.values():
            backend.check_placeholders()
            backend.on_started = self._started
        self._task_group: anyio.abc.TaskGroup | None = None
        # called after any backend starts (the rug-pull check: router/facade/backend_watch.py)
        self.on_started: Callable[[Backend, BackendSession], Awaitable[None]] | None = None
        # servers a background wake was started for and has not finished
        self._waking: set[str] = set()

    def get(self, server: str) -> Backend | None:
        return self.backends.get(server)

    async def _started(self, backend: Backend, session: BackendSession) -> None:
        if self.on_started is not None:
            await self.on_started(backend, session)

    def start_soon(self, task: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run a task of the pool's (a recheck on tools/list_changed) until the pool closes."""
        if self._task_group is not None:
            self._task_group.start_soon(task)

    async def session(self, server: str) -> BackendSession:
        """The backend's session, started if it sleeps (import and add list its tools)."""
        assert self._task_group is not None, "BackendPool used outside `async with`"
        return await self.backends[server].ensure_started(self._task_group)

    @property
    def breaker_policy(self) -> BreakerPolicy:
        defaults = self.config.defaults
        return BreakerPolicy(
            failure_threshold=defaults.breaker_failures, open_seconds=defaults.breaker_open_s
        )

    def apply(self, servers: ServersConfig) -> None:
        """Take a changed servers config while running: new servers are callable at once,
        removed ones are stopped, changed ones are stopped and start again, as declared now,
        on their next call (never two processes at once: the new start waits for the old)."""
        updated = {}
        for name, server in servers.servers.items():
            backend = Backend(server, servers.timeouts(server), self.placeholders, self.clock)
            backend.check_placeholders()  # a typo refuses the whole change, before anything stops
            backend.on_started = self._started
            updated[name] = backend
        for name, old in self.backends.items():
            new = updated.get(name)
            if new is not None and new.config == old.config and new.timeouts == old.timeouts:
                updated[name] = old  # unchanged: keeps running
                continue
            logger.info("backend %s %s: stopping it", name, "changed" if new else "was removed")
            old.stop()
            if new is not None:
                new.follow(old)
        self.config, self.backends = servers, updated
        self.longest_call_s = servers.longest_call_s()

    async def __aenter__(self) -> "BackendPool":
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self._task_group.start_soon(self._stop_idle_backends)
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        assert self._task_group is not None
        for backend in self.backends.values():
            backend.stop()
        with anyio.move_on_after(SHUTDOWN_GRACE_S, shield=True):
            for backend in self.backends.values():
                await backend.wait_stopped()
            # orphans of this router's backends, adopted as subreaper, go with it
            await anyio.to_thread.run_sync(_kill_adopted_orphans)
        self._task_group.cancel_scope.cancel()
        await self._task_group.__aexit__(*exc_info)

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        backend = self.backends[server]
        assert self._task_group is not None, "BackendPool used outside `async with`"
        return await backend.call(self._task_group, tool, arguments)

    def wake_in_background(
        self, server: str, on_failure: Callable[[BackendError], None] | None = None
    ) -> None:
        """Start a sleeping backend without waiting, so a call soon after skips the cold start.
        `on_failure` is told when it cannot start (its server's breaker counts that)."""
        backend = self.backends.get(server)
        # a start under way is not queued behind: if it fails, only a call starts it again
        if backend is None or backend.running or backend.starting or self._task_group is None:
            return
        if server in self._waking:
            return
        self._waking.add(server)
        self._task_group.start_soon(self._wake_quietly, backend, on_failure)

    async def _wake_quietly(
        self, backend: Backend, on_failure: Callable[[BackendError], None] | None
    ) -> None:
        assert self._task_group is not None
        try:
            await backend.ensure_started(self._task_group)
        except BackendError as exc:
            logger.info("background wake of %s failed: %s", backend.name, exc)
            if on_failure is not None and exc.process_failure:
                on_failure(exc)
        finally:
            self._waking.discard(backend.name)

    def _reap_interval(self) -> float:
        shortest = min(
            (b.timeouts.idle_stop_s for b in self.backends.values()), default=MAX_REAP_INTERVAL_S * 4
        )
        return min(MAX_REAP_INTERVAL_S, max(MIN_REAP_INTERVAL_S, shortest / 4))

    async def _stop_idle_backends(self) -> None:
        reaped_at = self.clock()
        while True:
            await anyio.sleep(self._reap_interval())  # the servers config may change meanwhile
            now = self.clock()
            if self.adopts_orphans and now - reaped_at >= ORPHAN_REAP_INTERVAL_S:
                reaped_at = now
                await anyio.to_thread.run_sync(process_tree.reap_adopted_zombies, set(LIVE_BACKEND_PIDS))
            for backend in self.backends.values():
                idle_for = now - backend.last_used
                if backend.running and backend.in_flight == 0 and idle_for >= backend.timeouts.idle_stop_s:
                    logger.info("stopping idle backend %s after %.1f s", backend.name, idle_for)
                    backend.stop()


def _kill_adopted_orphans() -> None:
    exclude = set(LIVE_BACKEND_PIDS)
    process_tree.kill_and_reap(process_tree.tagged_orphans(None, exclude), exclude)


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
            client_target = http_endpoint.connect(target) if isinstance(target, str) else target
            async with Client(client_target, mode=BACKEND_CONNECT_MODE) as client:
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
