"""OpenCode (opencode.json / opencode.jsonc, ~/.config/opencode/opencode.json).

Servers are under `mcp`: `{type: "local", command: [argv...], environment, enabled}` or
`{type: "remote", url, headers, enabled}`. OpenCode substitutes `{env:NAME}` in its config:
that becomes `${env:NAME}`.
"""

import re
from typing import Any

from router.clients import ClientServer, not_an_object
from router.env_references import reference


def _variables(text: str) -> str:
    # an already-${env:...} reference has its own '{env:' inside: leave those whole
    return re.sub(r"(?<!\$)\{env:([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: reference(m.group(1)), text)


def read_entry(name: str, entry: Any, source: str) -> ClientServer:
    if not isinstance(entry, dict):
        return not_an_object(name, source)
    server = ClientServer(name=name, source=source)
    if entry.get("type") == "remote":
        server.url = _variables(str(entry.get("url", "")))
        server.headers = {str(k): _variables(str(v)) for k, v in (entry.get("headers") or {}).items()}
    else:
        argv = [_variables(str(part)) for part in entry.get("command") or []]
        server.command, server.args = (argv[0], argv[1:]) if argv else ("", [])
        server.env = {str(k): _variables(str(v)) for k, v in (entry.get("environment") or {}).items()}
    server.disabled = entry.get("enabled") is False
    return server


def read(document: dict[str, Any], path: str) -> list[ClientServer]:
    return [
        read_entry(name, entry, f"{path}: mcp.{name}") for name, entry in (document.get("mcp") or {}).items()
    ]
