"""The role matrix: the single source of truth for what each agent role may do.

The router's call rules, the OpenCode permission rules and the agentgateway CEL rules are all
generated from ROLE_MATRIX; nothing else decides a permission. Every role sees the same
superset of tools: permissions mask calls, they never remove tools from a list (removing
them would change the prompt prefix and break the provider's cache).
"""

from dataclasses import dataclass
from enum import Enum

from router.errors import RouterError

ROLE_ENV_VAR = "CONTEXT_ROUTER_ROLE"
# A caller that names no role gets the most capable worker role, as a solo agent would be.
DEFAULT_ROLE = "staff-backend"


class Access(str, Enum):  # noqa: UP042 - str() of a member must stay "Access.ALLOW" as before
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@dataclass(frozen=True)
class Role:
    name: str
    level: str
    title: str
    # paths (globs, relative to the workspace) the role may edit; empty: no edits at all
    edit_scope: tuple[str, ...]
    # paths the role must never edit even if a broader scope would allow it
    edit_denied: tuple[str, ...]
    # whether the role may call backend tools not marked read-only
    may_call_mutating_tools: bool
    bash: Access
    # roles this one may hand a TaskBrief to (OpenCode's `task` tool, A2A skills)
    dispatches_to: tuple[str, ...] = ()


ROLE_MATRIX: tuple[Role, ...] = (
    Role(
        "director",
        "L0",
        "Chief orchestrator: plans, emits a task DAG, edits nothing",
        edit_scope=(),
        edit_denied=("**",),
        may_call_mutating_tools=False,
        bash=Access.DENY,
        dispatches_to=("architect", "manager"),
    ),
    Role(
        "architect",
        "L1",
        "Principal architect: owns contracts and design tokens",
        edit_scope=("contracts/**", "tokens/**"),
        edit_denied=(),
        may_call_mutating_tools=True,
        bash=Access.ASK,
    ),
    Role(
        "manager",
        "L1",
        "Tech lead: dispatches work, requires QA PASS, edits nothing",
        edit_scope=(),
        edit_denied=("**",),
        may_call_mutating_tools=True,
        bash=Access.ALLOW,
        dispatches_to=("staff-backend", "staff-ui", "qa-adversary"),
    ),
    Role(
        "staff-backend",
        "L2",
        "Systems builder: implements src/**",
        edit_scope=("src/**",),
        edit_denied=(),
        may_call_mutating_tools=True,
        bash=Access.ALLOW,
    ),
    Role(
        "staff-ui",
        "L2",
        "Design engineer: implements ui/web/**",
        edit_scope=("ui/web/**",),
        edit_denied=(),
        may_call_mutating_tools=True,
        bash=Access.ALLOW,
    ),
    Role(
        "qa-adversary",
        "L2",
        "Adversarial QA: red-proof sabotage, never edits src/**",
        edit_scope=("tests/**",),
        edit_denied=("src/**",),
        may_call_mutating_tools=False,
        bash=Access.ALLOW,
    ),
)

ROLES_BY_NAME = {role.name: role for role in ROLE_MATRIX}
ROLE_NAMES = tuple(role.name for role in ROLE_MATRIX)


class UnknownRoleError(RouterError):
    pass


def get_role(name: str) -> Role:
    try:
        return ROLES_BY_NAME[name]
    except KeyError:
        raise UnknownRoleError(f"unknown role {name!r}; roles are: {', '.join(ROLE_NAMES)}") from None


def may_call(role: Role, tool_mutating: bool) -> bool:
    """The router's call rule: read-only tools for everyone, mutating ones by the matrix."""
    return role.may_call_mutating_tools or not tool_mutating
