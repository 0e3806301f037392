"""agentgateway `mcpAuthorization` rules generated from the role matrix, and their evaluation.

One allow rule per role. A rule matches when the caller's JWT `role` claim names the role
and the tool is one the role may call: any tool of the role's own router target (that
router enforces the matrix itself), or a catalog tool on its backend target that
router.agents.roles.may_call allows. agentgateway allows a request when any rule matches; a rule
that errors (no JWT, a prompt instead of a tool) does not match, so everything not listed
is denied, including tools a backend adds after the catalog was built.
"""

import json
from collections.abc import Iterable, Mapping
from itertools import groupby
from typing import Any

from router.agents.roles import Role, may_call
from router.configs.inputs import CatalogEntry
from router.configs.naming import router_entry_name
from router.errors import RouterError
from router.extras import require

# The JWT claim that carries the caller's role (jwt.<claim> in agentgateway's CEL context).
ROLE_CLAIM = "role"


class CelRuleError(RouterError):
    pass


def _literal(text: str) -> str:
    # JSON string escapes are valid CEL string escapes.
    return json.dumps(text, ensure_ascii=True)


def role_rule(role: Role, tools: Iterable[CatalogEntry]) -> str:
    """The one allow rule for `role`, one line per target so a reviewer can read it."""
    allowed = sorted(
        (t for t in tools if may_call(role, t.mutating)), key=lambda t: (t.server, t.backend_name)
    )
    clauses = [f"mcp.tool.target == {_literal(router_entry_name(role))}"]
    for server, group in groupby(allowed, key=lambda t: t.server):
        names = ", ".join(_literal(t.backend_name) for t in group)
        clauses.append(f"(mcp.tool.target == {_literal(server)} && mcp.tool.name in [{names}])")
    body = "\n  || ".join(clauses)
    return f"jwt.{ROLE_CLAIM} == {_literal(role.name)} && (\n  {body}\n)"


def role_rules(roles: Iterable[Role], tools: Iterable[CatalogEntry]) -> list[str]:
    tools = tuple(tools)
    return [role_rule(role, tools) for role in roles]


def compile_rules(rules: Iterable[str]) -> list[Any]:
    """Parse every rule with a real CEL implementation; a bad one is named by its index."""
    cel = require("cel", extra="configs", feature="checking the gateway's CEL rules")
    programs = []
    for index, rule in enumerate(rules):
        try:
            programs.append(cel.compile(rule))
        except ValueError as exc:
            raise CelRuleError(f"mcpAuthorization rule #{index}: not valid CEL: {exc}") from None
    return programs


def tool_context(*, role: str | None, target: str, tool: str) -> dict[str, Any]:
    """The variables agentgateway gives a rule for a tools/list entry or a tools/call."""
    context: dict[str, Any] = {"mcp": {"tool": {"target": target, "name": tool}}}
    if role is not None:
        context["jwt"] = {ROLE_CLAIM: role}
    return context


def allows(programs: Iterable[Any], context: Mapping[str, Any]) -> bool:
    """agentgateway's decision: allowed when any allow rule evaluates to true."""
    for program in programs:
        try:
            if program.execute(dict(context)) is True:
                return True
        except (RuntimeError, TypeError, ValueError, KeyError):
            # An erroring allow rule counts as not matched.
            continue
    return False
