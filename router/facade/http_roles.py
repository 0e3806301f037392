"""The caller's role over HTTP, from the X-Context-Router-Role header, failing closed.

A router started with a role (`--role` or $CONTEXT_ROUTER_ROLE) gives every request that
role; a header may only lower it. Started without one, it serves only requests that carry
exactly one valid role header. An empty header, a doubled one, or one naming an unknown
role is refused, whatever the router was started with.

"Lower" is by the router's own call rule (router.agents.roles.may_call): a role is lower than
or equal to another when every tool it may call, the other may call too. Today that makes
two ranks: the read-only roles (director, qa-adversary) below the roles that may call
mutating tools (architect, manager, staff-backend, staff-ui); any role may go down to the
read-only rank, and no header lifts a read-only router.
"""

from router.agents.roles import ROLE_NAMES, Role, UnknownRoleError, get_role, may_call
from router.errors import RouterError, echo

ROLE_HEADER = "x-context-router-role"
# A role name is short; a longer header is not echoed back whole.
MAX_ROLE_HEADER_CHARS = 64


class RoleHeaderError(RouterError):
    """A request whose role header is missing, empty, doubled or unknown."""


def is_lower_or_equal(role: Role, ceiling: Role) -> bool:
    """Every tool `role` may call, `ceiling` may call too."""
    return all(may_call(ceiling, mutating) for mutating in (False, True) if may_call(role, mutating))


def role_for_request(ceiling: Role | None, header_values: list[str]) -> Role:
    """The role a request runs with, given the router's start role and the header's values
    (one per header line, as the HTTP server received them)."""
    if len(header_values) > 1:
        raise RoleHeaderError(f"HTTP header {ROLE_HEADER} was sent {len(header_values)} times; send it once")
    if not header_values:
        if ceiling is None:
            raise RoleHeaderError(
                f"this router was started without --role: every request must name its role "
                f"in one {ROLE_HEADER} header"
            )
        return ceiling
    value = header_values[0].strip()
    if not value:
        raise RoleHeaderError(f"HTTP header {ROLE_HEADER} is empty; name one role")
    try:
        role = get_role(value[: MAX_ROLE_HEADER_CHARS + 1])
    except UnknownRoleError:
        raise RoleHeaderError(
            f"HTTP header {ROLE_HEADER}: unknown role {echo(value, MAX_ROLE_HEADER_CHARS)}; "
            f"roles are: {', '.join(ROLE_NAMES)}"
        ) from None
    if ceiling is not None and not is_lower_or_equal(role, ceiling):
        raise RoleHeaderError(
            f"HTTP header {ROLE_HEADER}: {role.name!r} may call tools this router's role "
            f"{ceiling.name!r} may not; a header may only lower the role"
        )
    return role
