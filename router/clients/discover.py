"""Which client config a file is, and where clients keep theirs.

A file is read as JSON with comments (VS Code's and OpenCode's .jsonc) and recognised by its
keys: `mcp` (OpenCode), `servers` (VS Code), `mcpServers` / `projects` (Claude Desktop,
Claude Code, Cursor).
"""

import re
import sys
from pathlib import Path
from typing import Any

import json5

from router.clients import ClientServer, claude, opencode, vscode
from router.errors import RouterError


class ClientConfigError(RouterError):
    pass


_JSON5_PLACE = re.compile(r"^<string>:(\d+) ")


def read_client_config(path: Path) -> tuple[str, list[ClientServer]]:
    """(format, servers) of one client config file."""
    try:
        document: Any = json5.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ClientConfigError(f"{path}: file not found") from None
    except ValueError as exc:
        # json5 calls the text it parsed "<string>" ('<string>:7 Unexpected "," at column 18')
        where = _JSON5_PLACE.sub(r"line \1: ", str(exc))
        raise ClientConfigError(f"{path}: not JSON (or JSON with comments): {where}") from None
    if not isinstance(document, dict):
        raise ClientConfigError(f"{path}: expected a JSON object")
    if isinstance(document.get("mcp"), dict):
        return "opencode", opencode.read(document, str(path))
    if isinstance(document.get("servers"), dict):
        return "vscode", vscode.read(document, str(path))
    if isinstance(document.get("mcpServers"), dict) or isinstance(document.get("projects"), dict):
        return "claude", claude.read(document, str(path))
    raise ClientConfigError(
        f"{path}: no MCP servers in it (looked for mcpServers, servers and mcp, as Claude, "
        "Cursor, VS Code and OpenCode write them)"
    )


def usual_config_files(home: Path, cwd: Path) -> list[Path]:
    """Where the clients keep their MCP servers (Linux; macOS where it differs), then the
    working directory's project files; only the ones that exist."""
    candidates = [
        home / ".config" / "Claude" / "claude_desktop_config.json",
        home / ".claude.json",
        home / ".cursor" / "mcp.json",
        home / ".config" / "Code" / "User" / "mcp.json",
        home / ".config" / "opencode" / "opencode.json",
        home / ".config" / "opencode" / "opencode.jsonc",
    ]
    if sys.platform == "darwin":
        support = home / "Library" / "Application Support"
        candidates += [
            support / "Claude" / "claude_desktop_config.json",
            support / "Code" / "User" / "mcp.json",
        ]
    candidates += [
        cwd / ".mcp.json",
        cwd / ".vscode" / "mcp.json",
        cwd / ".cursor" / "mcp.json",
        cwd / "opencode.json",
        cwd / "opencode.jsonc",
    ]
    seen: list[Path] = []
    for path in candidates:
        if path.is_file() and path.resolve() not in [p.resolve() for p in seen]:
            seen.append(path)
    return seen
