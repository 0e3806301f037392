"""configs/agentgateway.yaml: port 3000, one MCP backend multiplexing the router and the
declared backends, behind JWT authentication and the role matrix's CEL rules.

The router is one stdio target per role (`router-<role>`, started with CONTEXT_ROUTER_ROLE),
and a caller reaches only the one its JWT `role` claim names: the role the router enforces
is fixed by the gateway's config, never by what a caller says. Backends are targets too, so
a client that wants them directly still gets exactly the matrix's decisions.

The route also sets the router's role header (X-Context-Router-Role) from the verified JWT
`role` claim, replacing whatever the caller sent: a router reached over HTTP (`serve --http`
without --role, as a `mcp: {host}` target in place of the per-role stdio ones) then gets the
role the identity provider vouched for, and refuses a request that has none.
"""

import string
from typing import Any

from router import env_references
from router.agents.roles import ROLE_ENV_VAR
from router.backends.servers import ServerConfig
from router.configs.cel_rules import ROLE_CLAIM, role_rules
from router.configs.inputs import ConfigInputs
from router.configs.naming import DEFAULT_GATEWAY_DATA_DIR, router_entry_name
from router.facade.http_roles import ROLE_HEADER

GATEWAY_PORT = 3000
ROUTER_COMMAND = "context-router"
# agentgateway starts stdio targets in its own working directory: start it in the workspace.
GATEWAY_WORKSPACE = "."
# Callers authenticate with a JWT whose `role` claim names their role. These three are
# the deployment's to set (see docs/configs.md): the issuer and audience its IdP puts in tokens,
# and the file with the IdP's public keys (JWKS), relative to the gateway's directory.
JWT_ISSUER = "context-router"
JWT_AUDIENCE = "context-router-gateway"
JWKS_FILE = "./gateway-jwks.json"
ROLE_HEADER_VALUE = f"jwt.{ROLE_CLAIM}"


def router_target(role_name: str, entry_name: str) -> dict[str, Any]:
    return {
        "name": entry_name,
        "stdio": {"cmd": ROUTER_COMMAND, "args": ["serve"], "env": {ROLE_ENV_VAR: role_name}},
    }


def backend_target(server: ServerConfig, data_dir: str) -> dict[str, Any]:
    def expand(text: str) -> str:
        # servers.toml placeholders; unknown ones were refused when the router loaded the file.
        # A gateway serves the one workspace it starts in: its state is the data directory's.
        return string.Template(text).safe_substitute(
            WORKSPACE=GATEWAY_WORKSPACE, DATA_DIR=data_dir, WORKSPACE_DATA_DIR=data_dir
        )

    if server.url is not None:
        kind = "sse" if server.http_transport == "sse" else "mcp"
        return {"name": server.name, kind: {"host": expand(server.url)}}
    stdio: dict[str, Any] = {"cmd": server.command, "args": [expand(a) for a in server.args]}
    if server.env:
        stdio["env"] = {k: expand(v) for k, v in sorted(server.env.items())}
    return {"name": server.name, "stdio": stdio}


def needs_environment(server: ServerConfig) -> bool:
    """A server whose declaration reads ${env:NAME} (a secret, a local path) is left out: the
    router expands those from its own environment, and a gateway has no such placeholder."""
    return bool(env_references.referenced_names(server.templated_texts))


def gateway_config(inputs: ConfigInputs, data_dir: str = DEFAULT_GATEWAY_DATA_DIR) -> dict[str, Any]:
    targets = [router_target(role.name, router_entry_name(role)) for role in inputs.roles]
    targets += [
        backend_target(server, data_dir)
        for _, server in sorted(inputs.servers.servers.items())
        if not needs_environment(server)
    ]
    policies = {
        "jwtAuth": {
            "mode": "strict",
            "issuer": JWT_ISSUER,
            "audiences": [JWT_AUDIENCE],
            "jwks": {"file": JWKS_FILE},
        },
        # a CEL expression: the claim jwtAuth verified, never a header the caller wrote
        "transformations": {"request": {"set": {ROLE_HEADER: ROLE_HEADER_VALUE}}},
        "mcpAuthorization": {"rules": role_rules(inputs.roles, inputs.tools)},
    }
    route = {
        "name": "context-router",
        "policies": policies,
        # Several targets: agentgateway prefixes each tool with its target's name.
        "backends": [{"mcp": {"targets": targets, "prefixMode": "always"}}],
    }
    listener = {"name": "mcp", "protocol": "HTTP", "routes": [route]}
    return {"binds": [{"port": GATEWAY_PORT, "listeners": [listener]}]}
