"""Names both configs share, so OpenCode's masks and the gateway's rules name the same things."""

from router.roles import Role

# One router entry (OpenCode `mcp` key, agentgateway target) per role: a router process
# serves exactly one role, so the role it enforces is fixed by whoever starts it.
ROUTER_ENTRY_PREFIX = "router-"


def router_entry_name(role: Role) -> str:
    return f"{ROUTER_ENTRY_PREFIX}{role.name}"
