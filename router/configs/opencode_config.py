"""configs/opencode.base.json: OpenCode loads the lazy router and the design's companions,
with one agent per role.

Each role has its own router entry (`router-<role>`, started with CONTEXT_ROUTER_ROLE), so
the router enforces that role's call rule; an agent sees only its own entry's three tools.
Masks are permission rules (`deny` for every input hides a tool in OpenCode); they come
after the role's own rules from router.agents.permissions, because OpenCode's last matching rule
wins and a role's catch-all must not unmask another role's router. Companions' tools are
masked alike for every agent, so all roles keep the same tool list apart from the
router entry's name.
"""

from collections.abc import Callable
from typing import Any

from router.agents.roles import DEFAULT_ROLE, ROLE_ENV_VAR, Role
from router.configs.companions import COMPANIONS, Companion
from router.configs.inputs import ConfigInputs
from router.configs.naming import ROUTER_ENTRY_PREFIX, router_entry_name

OPENCODE_SCHEMA_URL = "https://opencode.ai/config.json"
ROUTER_COMMAND = ("context-router", "serve")
# Milliseconds OpenCode waits for a local server's tool list; Python start-up plus the
# MCP SDK import take seconds, and OpenCode starts all six routers at once.
ROUTER_TIMEOUT_MS = 30_000
# Prompts live in roles/ beside configs/; OpenCode resolves {file:...} from the config's folder.
ROLES_FROM_CONFIG_DIR = "../roles"
SHARED_CONTEXT_FILE = "00-shared-context.md"

PermissionSource = Callable[[Role], dict[str, Any]]


def _role_permissions(role: Role) -> dict[str, Any]:
    from router.agents.permissions import opencode_permission  # the role matrix's OpenCode rules

    return opencode_permission(role)


def router_entry(role: Role) -> dict[str, Any]:
    return {
        "type": "local",
        "command": list(ROUTER_COMMAND),
        "environment": {ROLE_ENV_VAR: role.name},
        "enabled": True,
        "timeout": ROUTER_TIMEOUT_MS,
    }


BREAK_GLASS_ENTRY = "break-glass"
BREAK_GLASS_COMMAND = ("context-router", "break-glass")


def break_glass_entry() -> dict[str, Any]:
    """The last-resort panel (its own server: one tool, break_glass). The key is passed by
    OpenCode's {env:...} substitution from the environment OpenCode runs in: never written."""
    return {
        "type": "local",
        "command": list(BREAK_GLASS_COMMAND),
        "environment": {"OPENROUTER_API_KEY": "{env:OPENROUTER_API_KEY}"},
        "enabled": True,
        "timeout": ROUTER_TIMEOUT_MS,
    }


def companion_entry(companion: Companion) -> dict[str, Any]:
    # A companion no registry publishes cannot be installed, and one that needs more than a
    # stock machine has (context-mode: Node >= 22.5, a native build) may not start: both stay
    # in the config, switched off.
    enabled = companion.published and companion.on_by_default
    return {"type": "local", "command": list(companion.command), "enabled": enabled}


def mask_rules(companions: tuple[Companion, ...]) -> dict[str, str]:
    """Hide every router entry's tools and every companion's tools (for every input)."""
    masks = {f"{ROUTER_ENTRY_PREFIX}*": "deny"}
    for companion in companions:
        if companion.tool_tokens:
            masks[f"{companion.name}_*"] = "deny"
    return masks


def agent_permission(
    role: Role, role_rules: dict[str, Any], companions: tuple[Companion, ...]
) -> dict[str, Any]:
    masks = mask_rules(companions)
    own_router = {f"{router_entry_name(role)}_*": "allow"}
    # Rebuilt rather than updated: a key already in role_rules would keep its early position.
    ordered = {k: v for k, v in role_rules.items() if k not in masks and k not in own_router}
    return {**ordered, **masks, **own_router}


def agent_prompt(role: Role) -> str:
    # Shared context first: every role's prompt starts with the same bytes.
    return (
        f"{{file:{ROLES_FROM_CONFIG_DIR}/{SHARED_CONTEXT_FILE}}}\n\n"
        f"{{file:{ROLES_FROM_CONFIG_DIR}/{role.name}.md}}"
    )


def agent(role: Role, role_rules: dict[str, Any], companions: tuple[Companion, ...]) -> dict[str, Any]:
    return {
        "description": f"{role.level} {role.title}",
        # The L0 orchestrator is where a session starts; the others can also be dispatched.
        "mode": "primary" if role.level == "L0" else "all",
        "prompt": agent_prompt(role),
        "permission": agent_permission(role, role_rules, companions),
    }


def opencode_config(
    inputs: ConfigInputs,
    permissions: PermissionSource = _role_permissions,
    companions: tuple[Companion, ...] = COMPANIONS,
) -> dict[str, Any]:
    mcp = {router_entry_name(role): router_entry(role) for role in inputs.roles}
    mcp.update({companion.name: companion_entry(companion) for companion in companions})
    mcp[BREAK_GLASS_ENTRY] = break_glass_entry()
    return {
        "$schema": OPENCODE_SCHEMA_URL,
        "default_agent": DEFAULT_ROLE,
        "mcp": mcp,
        # OpenCode's own agents (build, plan, ...) get no router and no companion tools.
        "permission": mask_rules(companions),
        "agent": {role.name: agent(role, permissions(role), companions) for role in inputs.roles},
    }
