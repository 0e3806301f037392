"""Reading the MCP servers other clients already run: one module per config family.

Each reader turns a client's entries into ClientServer values the router can declare
(router/commands/servers.py writes them into the user's servers file). Variables are
rewritten into the router's own placeholders: a client's environment reference becomes
`${env:NAME}`, its workspace folder `${WORKSPACE}`.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ClientServer:
    """One server entry of a client config, in the router's terms."""

    name: str
    # where it was found: 'FILE: mcpServers.github'
    source: str
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    http_transport: str = "streamable-http"
    # what the reader could not carry over, said to the user
    notes: list[str] = field(default_factory=list)
    # an entry the client itself has switched off
    disabled: bool = False


def not_an_object(name: str, source: str) -> ClientServer:
    """An entry that is not a JSON object: said, and skipped."""
    return ClientServer(name=name, source=source, notes=["not an object: skipped"], disabled=True)


def fill_from_entry(
    server: ClientServer, entry: Mapping[str, Any], kind: str, rewrite: Callable[[str], str]
) -> None:
    """The `mcpServers` / `servers` entry shape Claude's and VS Code's configs share: `url` and
    `headers` for an http or sse server, else `command`, `args` and `env`; every value passed
    through the client's own variable rewriting."""
    if kind in ("http", "sse"):
        server.url = rewrite(str(entry.get("url", "")))
        server.headers = {str(k): rewrite(str(v)) for k, v in (entry.get("headers") or {}).items()}
        server.http_transport = "sse" if kind == "sse" else "streamable-http"
    else:
        server.command = rewrite(str(entry.get("command", "")))
        server.args = [rewrite(str(a)) for a in entry.get("args") or []]
        server.env = {str(k): rewrite(str(v)) for k, v in (entry.get("env") or {}).items()}
