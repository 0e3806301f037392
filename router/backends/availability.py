"""Which catalog servers cannot be called in this deployment, and why, in words for a model.

A tool is searchable as soon as its seed is in the catalog; it is callable only when its
server is declared (and not switched off), its program is installed where the router looks
(router/backends/programs.py), every ${env:NAME} it references is set, and the workspace it would
run in is one it can work in (git: inside a git repository). Search marks the tools of
the others `available: false` with the reason (router.catalog.search's `unavailable`);
mcp_call_tool refuses them before looking at their arguments.

Finding a program is a few stat() calls per server: the answer is kept for a couple of
seconds (a program installed while the router runs is seen on the next search after that)
and for as long as the servers config and the catalog stay the same.
"""

import ipaddress
import os
import socket
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

import apsw

from router import env_references
from router.backends.programs import resolve_command
from router.backends.servers import ServerConfig, ServersConfig
from router.db import catalog_version

# how long a computed answer is reused (programs installed meanwhile are seen after it)
TTL_S = 2.0

# a loopback port either accepts or refuses at once; this only bounds a firewalled one
PROBE_TIMEOUT_S = 0.2

CATALOG_SERVERS_SQL = "SELECT name FROM servers ORDER BY name"

# Workspaces whose answers are kept at once (an HTTP router serves a client per project).
MAX_WORKSPACES = 64

# How a user gives a server the workspace it needs, in the router's order: the client's root
# (most clients open the agent in the project), then the router's own, for clients without roots.
WORKSPACE_FIX = (
    "open the agent in a git repository (clients that declare MCP roots, such as Claude Code and "
    "OpenCode, use the project they open); for a client without roots, start the router in one "
    "or pass --workspace DIR"
)
# What each kind of workspace need asks of a directory, in words.
WORKSPACE_NEEDS = {"git-repository": "a git repository"}


def server_problem(
    server: ServerConfig, environ: Mapping[str, str] = os.environ, workspace: Path | None = None
) -> str | None:
    """Why a declared server cannot start here, or None. An HTTP server on this machine is
    asked whether anything listens on its port (a refused connection answers at once); a
    remote one is taken as reachable: only a call can tell, and a failing one opens the breaker.
    `workspace`: where it would run (None: not checked)."""
    install = f"; to install it: {server.install}" if server.install else ""
    if server.command is not None and resolve_command(server.command) is None:
        return f"not installed: its program {server.command!r} is not found{install}"
    if server.url is not None and not _listening(server.url):
        return f"not running: nothing listens at {server.url}{install}"
    unset = env_references.unset_names(server.templated_texts, environ)
    if unset:
        return f"not configured: needs {', '.join(unset)} set in the router's environment"
    return workspace_problem(server, workspace)


def workspace_problem(server: ServerConfig, workspace: Path | None) -> str | None:
    """Why the server cannot work in this workspace, with how to fix it, or None."""
    if workspace is None or server.needs_workspace is None:
        return None
    if server.needs_workspace == "git-repository" and not in_git_repository(workspace):
        return (
            f"not usable in this workspace: {workspace} is not inside a git repository; "
            f"to fix it: {WORKSPACE_FIX}"
        )
    return None


def roots_decide(server: ServerConfig, workspace: Path) -> str | None:
    """For a report made before any client connects (serve's ready line, `servers`, `doctor`):
    that each client's root decides where the server works, and whether `workspace`, what a
    client without roots gets, will do; None for a server that needs no particular workspace."""
    if server.needs_workspace is None:
        return None
    need = WORKSPACE_NEEDS.get(server.needs_workspace, server.needs_workspace)
    fallback = (
        f"a client without roots gets {workspace}, which is {need} too"
        if workspace_problem(server, workspace) is None
        else f"a client without roots gets {workspace}, which is not inside {need}: start the router "
        "in one or pass --workspace DIR"
    )
    return (
        f"each client's root decides: usable where the client's root is {need} (clients that "
        f"declare MCP roots, such as Claude Code and OpenCode, use the project they open); {fallback}"
    )


def root_lines(config: ServersConfig, root: Path) -> list[str]:
    """What serve says when a client's root is learned: whether each declared server that
    needs a particular workspace can work there."""
    lines = []
    for name, server in sorted(config.servers.items()):
        if server.needs_workspace is None:
            continue
        problem = workspace_problem(server, root)
        need = WORKSPACE_NEEDS.get(server.needs_workspace, server.needs_workspace)
        said = f"usable there ({need})" if problem is None else f"unavailable there: {problem}"
        lines.append(f"context-router serve: client root {root}: {name} {said}")
    return lines


def in_git_repository(directory: Path) -> bool:
    """Inside a git working tree, as git finds one: a .git (directory, or file in a worktree
    or submodule) here or in a parent."""
    return any((folder / ".git").exists() for folder in (directory, *directory.parents))


def unavailable_servers(
    config: ServersConfig,
    catalog_servers: Iterable[str],
    environ: Mapping[str, str] = os.environ,
    workspace: Path | None = None,
) -> dict[str, str]:
    """Catalog server name → why its tools cannot be called; callable servers are absent."""
    out: dict[str, str] = {}
    for name in catalog_servers:
        server = config.servers.get(name)
        if server is None:
            off = config.disabled.get(name)
            out[name] = (
                f"switched off (enabled = false in {off})"
                if off is not None
                else "not set up: no servers file declares its server"
            )
            continue
        problem = server_problem(server, environ, workspace)
        if problem is not None:
            out[name] = problem
    return out


def _listening(url: str) -> bool:
    parsed = urlsplit(url)
    host = parsed.hostname or ""
    if not is_loopback(host):
        return True
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S):
            return True
    except OSError:
        return False


def is_loopback(host: str) -> bool:
    """'localhost' or a loopback address: a host only this machine reaches."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Availability:
    """unavailable_servers for one router process, per workspace, kept TTL_S seconds while the
    servers config and the catalog stay the same."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._config: ServersConfig | None = None
        self._version: int | None = None
        # workspace → (when it was worked out, the answer)
        self._answers: dict[Path | None, tuple[float, dict[str, str]]] = {}

    def unavailable(
        self, conn: apsw.Connection, config: ServersConfig, workspace: Path | None = None
    ) -> dict[str, str]:
        version = catalog_version(conn)
        now = self._clock()
        if config is not self._config or version != self._version:
            self._config, self._version, self._answers = config, version, {}
        kept = self._answers.get(workspace)
        if kept is not None and now - kept[0] <= TTL_S:
            return kept[1]
        if len(self._answers) >= MAX_WORKSPACES:
            self._answers.clear()
        servers = [name for (name,) in conn.execute(CATALOG_SERVERS_SQL)]
        answer = unavailable_servers(config, servers, workspace=workspace)
        self._answers[workspace] = (now, answer)
        return answer
