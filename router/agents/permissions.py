"""OpenCode permission rules per role, generated from the role matrix (router.agents.roles).

OpenCode flattens an agent's `permission` object into an ordered rule list
(`{permission, pattern, action}`) and the last rule matching both the tool and its input
wins; `*` matches any run of characters, `?` one. `evaluate` below is that resolution, so
the router can answer "may this role edit that path?" with the very rules OpenCode enforces
(tests compare it with what the real `opencode debug agent` prints).

Masks, never removals: OpenCode drops a tool from an agent's tool list when the last rule
for that tool is a deny with the bare pattern "*". Every role must see the same tools (a
different list changes the prompt prefix and misses the provider's cache), so a tool a role
may not use at all ends with a deny for the pattern "**": it matches every input exactly as
"*" does, but OpenCode keeps the tool listed and refuses each use.
"""

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from router.agents.roles import ROLE_MATRIX, Access, Role

ALLOW, ASK, DENY = Access.ALLOW.value, Access.ASK.value, Access.DENY.value
EVERY_INPUT = "*"
# Matches every input like "*", without making OpenCode hide the tool (see module doc).
MASK_EVERY_INPUT = "**"
# OpenCode's answer when no rule matches.
DEFAULT_ACTION = ASK

# Read-only built-in tools every role keeps: reading never changes the workspace.
READ_ONLY_TOOLS = ("read", "webfetch", "websearch")


def opencode_permission(role: Role) -> dict[str, Any]:
    """The role's OpenCode `permission` object; same keys in the same order for every role."""
    permission: dict[str, Any] = {"read": ALLOW}
    permission["edit"] = _masked(
        {EVERY_INPUT: DENY}
        | {scope: ALLOW for scope in role.edit_scope}
        | {denied: DENY for denied in role.edit_denied}
    )
    permission["bash"] = _masked({EVERY_INPUT: role.bash.value})
    # `task` dispatches a subagent; its input is the agent's name.
    permission["task"] = _masked({EVERY_INPUT: DENY} | {target: ALLOW for target in role.dispatches_to})
    for tool in READ_ONLY_TOOLS[1:]:
        permission[tool] = ALLOW
    return permission


def opencode_agents() -> dict[str, dict[str, Any]]:
    """Every role's permission object, keyed by role name, in matrix order."""
    return {role.name: opencode_permission(role) for role in ROLE_MATRIX}


def _masked(rules: dict[str, str]) -> dict[str, str] | str:
    """Collapse a single catch-all to its action; make a trailing catch-all deny a mask."""
    last_pattern, last_action = list(rules.items())[-1]
    if last_pattern == EVERY_INPUT and last_action == DENY:
        return rules | {MASK_EVERY_INPUT: DENY}
    if list(rules) == [EVERY_INPUT]:
        return last_action
    return rules


# --- OpenCode's resolution ------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    permission: str
    pattern: str
    action: str


def flatten(permission: dict[str, Any]) -> list[Rule]:
    """A `permission` object as OpenCode's ordered rule list (a string means pattern "*")."""
    rules = []
    for tool, value in permission.items():
        if isinstance(value, str):
            rules.append(Rule(tool, EVERY_INPUT, value))
        else:
            rules.extend(Rule(tool, pattern, action) for pattern, action in value.items())
    return rules


@lru_cache(maxsize=512)
def _wildcard_regex(pattern: str) -> re.Pattern[str]:
    regex = "".join(
        ".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern.replace("\\", "/")
    )
    # OpenCode: a pattern ending in " *" also matches the command without arguments
    # ("git *" matches "git").
    if regex.endswith(r"\ .*"):
        regex = regex[: -len(r"\ .*")] + "( .*)?"
    return re.compile(regex, re.DOTALL)


def wildcard_match(text: str, pattern: str) -> bool:
    return _wildcard_regex(pattern).fullmatch(text.replace("\\", "/")) is not None


def evaluate(permission: str, pattern: str, rules: list[Rule]) -> str:
    """The action of the last rule matching both tool and input, else OpenCode's default."""
    for rule in reversed(rules):
        if wildcard_match(permission, rule.permission) and wildcard_match(pattern, rule.pattern):
            return rule.action
    return DEFAULT_ACTION


# Tools OpenCode checks under another tool's permission when deciding what to list.
PERMISSION_OF_TOOL = {"write": "edit", "apply_patch": "edit"}


def is_hidden(tool: str, rules: list[Rule]) -> bool:
    """Whether OpenCode would drop the tool from the agent's list (last rule: bare '*' deny)."""
    permission = PERMISSION_OF_TOOL.get(tool, tool)
    for rule in reversed(rules):
        if wildcard_match(permission, rule.permission):
            return rule.pattern == EVERY_INPUT and rule.action == DENY
    return False


def edit_action(role: Role, path: str) -> str:
    """allow / ask / deny for the role editing a workspace-relative path."""
    return evaluate("edit", path, flatten(opencode_permission(role)))
