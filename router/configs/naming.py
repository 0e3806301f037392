"""Names both configs share, so OpenCode's masks and the gateway's rules name the same things."""

from router.agents.roles import Role

# One router entry (OpenCode `mcp` key, agentgateway target) per role: a router process
# serves exactly one role, so the role it enforces is fixed by whoever starts it.
ROUTER_ENTRY_PREFIX = "router-"

# Backends' state behind the gateway (e.g. the memory server's file, which must be an
# absolute path). `context-router configs --data-dir DIR` generates a config for another
# directory.
DEFAULT_GATEWAY_DATA_DIR = "/var/lib/context-router/data"


def router_entry_name(role: Role) -> str:
    return f"{ROUTER_ENTRY_PREFIX}{role.name}"
