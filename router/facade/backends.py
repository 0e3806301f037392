"""The pool of backend MCP servers: which run, when they start and stop.

A backend (router/facade/backend.py) is started on first need ("wake"), kept for reuse,
stopped after its idle time, and stopped with the router; a changed servers config is
applied server by server. The pool also reaps orphans its backends left behind.

A server whose declaration names ${WORKSPACE} runs in the workspace of the client that calls
it (router/facade/client_workspace.py): one process per (server, workspace), so one HTTP
router serving two projects never lets one reach the other's files. The others run once.
"""

import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
import mcp_types as types

from router.backends.servers import ServersConfig
from router.facade import process_tree
from router.facade.backend import Backend, BackendSession, longest_call_s
from router.facade.backend_errors import BackendError
from router.facade.backend_session import LIVE_BACKEND_PIDS, kill_orphans
from router.facade.breaker import BreakerPolicy
from router.facade.log_guard import describe_failure
from router.facade.placeholders import Placeholders, uses_workspace

logger = logging.getLogger(__name__)

# Upper bound on how often idle backends are looked for.
MAX_REAP_INTERVAL_S = 30.0
MIN_REAP_INTERVAL_S = 0.05
# How often adopted orphans that exited are reaped (a /proc scan).
ORPHAN_REAP_INTERVAL_S = 5.0
# How long the router waits for all backends to stop when it shuts down.
SHUTDOWN_GRACE_S = 5.0


def call_allowance_s(servers: ServersConfig) -> float:
    """The longest the router can work on a forwarded call to any declared server (a call's
    audit deadline, before the tool and so its server is known)."""
    limits = [servers.timeouts(server) for server in servers.servers.values()] or [servers.defaults]
    return max(longest_call_s(timeouts) for timeouts in limits)


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
        # what a started audit row's deadline allows any call: worked out when the config is
        # taken (here and in apply), not on every call
        self.longest_call_s = call_allowance_s(servers)
        self.backends = self._build(servers)
        # servers that name ${WORKSPACE}, started in another workspace than the router's own
        self._elsewhere: dict[tuple[str, Path], Backend] = {}
        self._made_elsewhere = 0
        self._workspace_matters: bool | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        # called after any backend starts (the rug-pull check: router/facade/backend_watch.py)
        self.on_started: Callable[[Backend, BackendSession], Awaitable[None]] | None = None
        # told once per failed start attempt (its server's breaker counts it)
        self.on_start_failed: Callable[[Backend, BackendError], None] | None = None
        # backends a background wake was started for and has not finished
        self._waking: set[Backend] = set()

    def _build(self, servers: ServersConfig) -> dict[str, Backend]:
        """A Backend per declared server, its placeholders checked (a typo is said now)."""
        backends = {}
        for name, server in servers.servers.items():
            backend = Backend(server, servers.timeouts(server), self.placeholders, self.clock)
            backend.check_placeholders()
            backend.on_started = self._started
            backend.on_start_failed = self._start_failed
            backends[name] = backend
        return backends

    def get(self, server: str, workspace: Path | None = None) -> Backend | None:
        """The backend serving `server` in `workspace` (None: the router's own workspace)."""
        backend = self.backends.get(server)
        if backend is None or workspace is None or workspace == self.placeholders.workspace:
            return backend
        if not uses_workspace(backend.config):
            return backend
        other = self._elsewhere.get((server, workspace))
        if other is None:
            other = self._elsewhere[(server, workspace)] = self._in_workspace(backend, workspace)
        return other

    def _in_workspace(self, backend: Backend, workspace: Path) -> Backend:
        """The same declared server, in another workspace."""
        other = Backend(
            backend.config, backend.timeouts, self.placeholders.in_workspace(workspace), self.clock
        )
        other.on_started = self._started
        other.on_start_failed = self._start_failed
        # its process tree is told apart from the same server's in other workspaces
        self._made_elsewhere += 1
        other.tag_name = f"{backend.name}@{self._made_elsewhere}"
        return other

    @property
    def workspace_matters(self) -> bool:
        """Whether any declared server runs in its caller's workspace (names ${WORKSPACE})."""
        if self._workspace_matters is None:
            self._workspace_matters = any(uses_workspace(server) for server in self.config.servers.values())
        return self._workspace_matters

    def _all(self) -> list[Backend]:
        return [*self.backends.values(), *self._elsewhere.values()]

    async def _started(self, backend: Backend, session: BackendSession) -> None:
        if self.on_started is not None:
            await self.on_started(backend, session)

    def _start_failed(self, backend: Backend, failure: BackendError) -> None:
        if self.on_start_failed is not None:
            self.on_start_failed(backend, failure)

    def start_soon(self, task: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run a task of the pool's (a recheck on tools/list_changed) until the pool closes."""
        if self._task_group is not None:
            self._task_group.start_soon(task)

    async def session(self, server: str, workspace: Path | None = None) -> BackendSession:
        """The backend's session, started if it sleeps (import and add list its tools)."""
        assert self._task_group is not None, "BackendPool used outside `async with`"
        backend = self.get(server, workspace)
        assert backend is not None, f"no backend {server!r}"
        return await backend.ensure_started(self._task_group)

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
        updated = self._build(servers)  # a typo refuses the whole change, before anything stops
        for name, old in self.backends.items():
            new = updated.get(name)
            if new is not None and new.config == old.config and new.timeouts == old.timeouts:
                updated[name] = old  # unchanged: keeps running
                continue
            logger.info("backend %s %s: stopping it", name, "changed" if new else "was removed")
            old.stop()
            if new is not None:
                new.follow(old)
        for key, old in list(self._elsewhere.items()):
            new = updated.get(key[0])
            if new is not None and new.config == old.config and new.timeouts == old.timeouts:
                continue
            logger.info("backend %s in %s changed or was removed: stopping it", *key)
            old.stop()
            del self._elsewhere[key]
            if new is not None and uses_workspace(new.config):
                replacement = self._elsewhere[key] = self._in_workspace(new, key[1])
                replacement.follow(old)
        self.config, self.backends = servers, updated
        self._workspace_matters = None
        self.longest_call_s = call_allowance_s(servers)

    async def __aenter__(self) -> "BackendPool":
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self._task_group.start_soon(self._stop_idle_backends)
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        assert self._task_group is not None
        for backend in self._all():
            backend.stop()
        with anyio.move_on_after(SHUTDOWN_GRACE_S, shield=True):
            for backend in self._all():
                await backend.wait_stopped()
            # orphans of this router's backends, adopted as subreaper, go with it
            await anyio.to_thread.run_sync(kill_orphans, None)
        self._task_group.cancel_scope.cancel()
        await self._task_group.__aexit__(*exc_info)

    async def call(
        self, server: str, tool: str, arguments: dict[str, Any], workspace: Path | None = None
    ) -> types.CallToolResult:
        backend = self.get(server, workspace)
        assert backend is not None, f"no backend {server!r}"
        assert self._task_group is not None, "BackendPool used outside `async with`"
        return await backend.call(self._task_group, tool, arguments)

    def wake_in_background(self, server: str, workspace: Path | None = None) -> None:
        """Start a sleeping backend without waiting, so a call soon after skips the cold start
        (a failed start counts toward its server's breaker, as any start does)."""
        backend = self.get(server, workspace)
        # a start under way is not queued behind: if it fails, only a call starts it again
        if backend is None or backend.running or backend.starting or self._task_group is None:
            return
        if backend in self._waking:
            return
        self._waking.add(backend)
        self._task_group.start_soon(self._wake_quietly, backend)

    async def _wake_quietly(self, backend: Backend) -> None:
        assert self._task_group is not None
        try:
            await backend.ensure_started(self._task_group)
        except BackendError as exc:
            logger.info("background wake of %s failed: %s", backend.name, exc)
            if exc.process_failure and exc.counted_by_call:  # a missing program: no attempt counted it
                self._start_failed(backend, exc)
        finally:
            self._waking.discard(backend)

    def _reap_interval(self) -> float:
        shortest = min((b.timeouts.idle_stop_s for b in self._all()), default=MAX_REAP_INTERVAL_S * 4)
        return min(MAX_REAP_INTERVAL_S, max(MIN_REAP_INTERVAL_S, shortest / 4))

    async def _stop_idle_backends(self) -> None:
        reaped_at = self.clock()
        while True:
            await anyio.sleep(self._reap_interval())  # the servers config may change meanwhile
            try:
                reaped_at = await self._stop_idle_once(reaped_at)
            except Exception as exc:  # e.g. EMFILE reading /proc: try again next round
                logger.warning("checking for idle backends failed (%s); trying again", describe_failure(exc))

    async def _stop_idle_once(self, reaped_at: float) -> float:
        """One round: reap adopted orphans now and then, stop backends idle too long; returns
        when orphans were last reaped."""
        now = self.clock()
        if self.adopts_orphans and now - reaped_at >= ORPHAN_REAP_INTERVAL_S:
            reaped_at = now
            await anyio.to_thread.run_sync(process_tree.reap_adopted_zombies, set(LIVE_BACKEND_PIDS))
        for backend in self._all():
            idle_for = now - backend.last_used
            if backend.running and backend.in_flight == 0 and idle_for >= backend.timeouts.idle_stop_s:
                logger.info("stopping idle backend %s after %.1f s", backend.name, idle_for)
                backend.stop()
        return reaped_at
