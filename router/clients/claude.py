"""Claude Desktop (claude_desktop_config.json) and Claude Code (.mcp.json, ~/.claude.json).

Both list servers under `mcpServers`: `{command, args, env}` for stdio, `{type: "http" | "sse",
url, headers}` for remote ones. ~/.claude.json also keeps per-project servers under
`projects.<dir>.mcpServers`. Claude Code expands `${VAR}` and `${VAR:-default}` in these
fields from its environment: they become `${env:VAR}` (a default is dropped, and said).
"""

import re
from typing import Any

from router.clients import ClientServer, fill_from_entry, not_an_object
from router.env_references import reference

_CLAUDE_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def _variables(text: str, notes: list[str]) -> str:
    def replace(match: re.Match[str]) -> str:
        if match.group(2) is not None:
            notes.append(f"${{{match.group(1)}:-...}}: its default is not carried over; set {match.group(1)}")
        return reference(match.group(1))

    return _CLAUDE_VAR.sub(replace, text)


def read_entry(name: str, entry: Any, source: str) -> ClientServer:
    if not isinstance(entry, dict):
        return not_an_object(name, source)
    server = ClientServer(name=name, source=source)
    kind = entry.get("type", "stdio")
    if kind not in ("http", "sse") and "url" in entry and "command" not in entry:
        kind = "http"  # an entry with only a url is a remote server, whatever its type says
    fill_from_entry(server, entry, kind, lambda text: _variables(text, server.notes))
    server.disabled = entry.get("disabled") is True
    return server


def read(document: dict[str, Any], path: str) -> list[ClientServer]:
    servers = [
        read_entry(name, entry, f"{path}: mcpServers.{name}")
        for name, entry in (document.get("mcpServers") or {}).items()
    ]
    projects = document.get("projects")
    if isinstance(projects, dict):  # ~/.claude.json: servers added per project directory
        for directory, project in sorted(projects.items()):
            entries = project.get("mcpServers") if isinstance(project, dict) else None
            for name, entry in (entries or {}).items():
                servers.append(read_entry(name, entry, f"{path}: projects.{directory}.mcpServers.{name}"))
    return servers
