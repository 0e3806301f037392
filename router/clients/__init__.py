"""Reading the MCP servers other clients already run: one module per config family.

Each reader turns a client's entries into ClientServer values the router can declare
(router/commands/servers_import.py writes them into the user's servers file). Variables are
rewritten into the router's own placeholders: a client's environment reference becomes
`${env:NAME}`, its workspace folder `${WORKSPACE}`.
"""

from dataclasses import dataclass, field


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
