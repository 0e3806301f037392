"""VS Code (.vscode/mcp.json, the user's mcp.json) and Cursor (.cursor/mcp.json, ~/.cursor/mcp.json).

VS Code lists servers under `servers`, Cursor under `mcpServers`; an entry is
`{type: "stdio", command, args, env}` or `{type: "http" | "sse", url, headers}` (Cursor leaves
`type` out). Variables: `${env:NAME}` is the router's own form already; `${input:id}` (a value
VS Code prompts for) becomes `${env:ID}`, upper-cased, and the user is told to export it;
`${workspaceFolder}` becomes `${WORKSPACE}`; `${userHome}` the home directory.
"""

import re
from pathlib import Path
from typing import Any

from router.clients import ClientServer, fill_from_entry, not_an_object
from router.env_references import reference, variable_name

_VARIABLE = re.compile(r"\$\{(env|input):([^}]+)\}|\$\{(workspaceFolder|userHome)\}")


def _variables(text: str, notes: list[str]) -> str:
    def replace(match: re.Match[str]) -> str:
        kind, name, builtin = match.group(1), match.group(2), match.group(3)
        if builtin == "workspaceFolder":
            return "${WORKSPACE}"
        if builtin == "userHome":
            return str(Path.home())
        if kind == "input":
            variable = variable_name(name)
            notes.append(f"${{input:{name}}} (VS Code prompts for it) is read from ${variable}: export it")
            return reference(variable)
        return reference(name)

    return _VARIABLE.sub(replace, text)


def read_entry(name: str, entry: Any, source: str) -> ClientServer:
    if not isinstance(entry, dict):
        return not_an_object(name, source)
    server = ClientServer(name=name, source=source)
    kind = entry.get("type") or ("http" if "url" in entry else "stdio")
    fill_from_entry(server, entry, kind, lambda text: _variables(text, server.notes))
    if kind not in ("http", "sse"):
        if entry.get("envFile"):
            server.notes.append(f"envFile {entry['envFile']!r} is not read: set its variables in env instead")
    return server


def read(document: dict[str, Any], path: str) -> list[ClientServer]:
    key = "servers" if isinstance(document.get("servers"), dict) else "mcpServers"
    return [
        read_entry(name, entry, f"{path}: {key}.{name}") for name, entry in (document.get(key) or {}).items()
    ]
