"""configs/agentgateway.yaml: valid under agentgateway's published schema, every CEL rule
parsed by a real CEL implementation, and its decisions equal the router's own rule."""

import copy
import json

import pytest
import yaml
from jsonschema import Draft202012Validator

from router.agents.roles import ROLE_MATRIX, may_call
from router.backends.servers import load_servers
from router.configs.cel_rules import (
    CelRuleError,
    allows,
    compile_rules,
    role_rules,
    tool_context,
)
from router.configs.gateway_config import GATEWAY_PORT, needs_environment
from router.configs.generate import GATEWAY_FILE
from router.configs.inputs import read_inputs
from router.configs.naming import router_entry_name
from router.paths import CONFIGS_DIR
from tests.project import PROJECT_ROOT

# shared/ sits beside the repository (here and in CI), see shared/checks.md
SCHEMA_PATH = PROJECT_ROOT / "tests" / "schemas" / "agentgateway-config.schema.json"


@pytest.fixture(scope="module")
def gateway_schema():
    if not SCHEMA_PATH.is_file():
        pytest.fail(f"agentgateway schema not found at {SCHEMA_PATH}")
    return Draft202012Validator(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def committed():
    return yaml.safe_load((CONFIGS_DIR / GATEWAY_FILE).read_text(encoding="utf-8"))


def route_of(config):
    [bind] = config["binds"]
    [listener] = bind["listeners"]
    [route] = listener["routes"]
    return route


@pytest.fixture(scope="module")
def programs(committed):
    return compile_rules(route_of(committed)["policies"]["mcpAuthorization"]["rules"])


@pytest.fixture(scope="module")
def catalog():
    return read_inputs().tools


def test_committed_gateway_config_is_valid_under_the_published_schema(gateway_schema, committed):
    errors = sorted(gateway_schema.iter_errors(committed), key=lambda e: list(e.path))
    assert not errors, [f"{'/'.join(map(str, e.path))}: {e.message[:200]}" for e in errors]


@pytest.mark.parametrize(
    "breakage",
    [
        lambda c: route_of(c)["backends"][0]["mcp"]["targets"][0]["stdio"].update(command="x"),
        lambda c: c["binds"][0].update(port="3000"),
        lambda c: route_of(c)["policies"]["mcpAuthorization"].update(rule="true"),
    ],
    ids=["stdio-command-instead-of-cmd", "port-as-string", "rule-instead-of-rules"],
)
def test_the_schema_check_rejects_a_broken_config(gateway_schema, committed, breakage):
    broken = copy.deepcopy(committed)
    breakage(broken)
    assert list(gateway_schema.iter_errors(broken))


def test_listener_on_port_3000_with_jwt_and_one_rule_per_role(committed):
    assert committed["binds"][0]["port"] == GATEWAY_PORT == 3000
    policies = route_of(committed)["policies"]
    assert policies["jwtAuth"]["mode"] == "strict"
    rules = policies["mcpAuthorization"]["rules"]
    assert len(rules) == len(ROLE_MATRIX)
    for role, rule in zip(ROLE_MATRIX, rules):
        assert rule.startswith(f'jwt.role == "{role.name}" && (')


def test_targets_are_one_router_per_role_and_every_declared_backend(committed):
    targets = {t["name"]: t for t in route_of(committed)["backends"][0]["mcp"]["targets"]}
    servers = {name: s for name, s in load_servers().servers.items() if not needs_environment(s)}
    # the ones reading ${env:NAME} (ghidra's bridge path, searxng's URL) stay with the router
    assert {"time", "git", "adb", "crawl4ai"} <= set(servers) and "ghidra" not in servers
    assert set(targets) == {router_entry_name(r) for r in ROLE_MATRIX} | set(servers)
    for role in ROLE_MATRIX:
        stdio = targets[router_entry_name(role)]["stdio"]
        assert stdio["cmd"] == "context-router" and stdio["args"] == ["serve"]
        assert stdio["env"] == {"CONTEXT_ROUTER_ROLE": role.name}
    for name, server in servers.items():
        if server.url is not None:
            kind = "sse" if server.http_transport == "sse" else "mcp"
            assert targets[name][kind]["host"] == server.url
        else:
            assert targets[name]["stdio"]["cmd"] == server.command
            assert "${" not in json.dumps(targets[name])  # placeholders were expanded


def test_every_rule_parses_with_a_real_cel_implementation(programs):
    assert len(programs) == len(ROLE_MATRIX)


def test_a_rule_that_is_not_cel_is_refused_with_its_index():
    with pytest.raises(CelRuleError, match=r"rule #1: not valid CEL"):
        compile_rules(['jwt.role == "director"', 'jwt.role == "director" && (mcp.tool.name'])


def test_every_role_and_catalog_tool_gets_the_routers_decision(programs, catalog):
    """The agreement: agentgateway's CEL decision == router.agents.roles.may_call, role × tool."""
    assert len(catalog) >= 30  # the seeded catalog, not an empty loop
    decisions = {True: 0, False: 0}
    for role in ROLE_MATRIX:
        for tool in catalog:
            context = tool_context(role=role.name, target=tool.server, tool=tool.backend_name)
            expected = may_call(role, tool.mutating)
            assert allows(programs, context) is expected, (role.name, tool.catalog_name)
            decisions[expected] += 1
    assert decisions[True] and decisions[False]  # both outcomes were exercised


def test_a_role_reaches_only_its_own_router(programs):
    for role in ROLE_MATRIX:
        for other in ROLE_MATRIX:
            for meta_tool in ("mcp_search_tools", "mcp_inspect_schema", "mcp_call_tool"):
                context = tool_context(role=role.name, target=router_entry_name(other), tool=meta_tool)
                assert allows(programs, context) is (role == other), (role.name, other.name)


def test_without_a_known_role_claim_nothing_is_allowed(programs, catalog):
    read_only = next(t for t in catalog if not t.mutating)
    for role in (None, "admin", "Director", ""):
        context = tool_context(role=role, target=read_only.server, tool=read_only.backend_name)
        assert not allows(programs, context)
        assert not allows(
            programs, tool_context(role=role, target="router-director", tool="mcp_search_tools")
        )


def test_tools_outside_the_catalog_and_non_tool_requests_are_denied(programs, catalog):
    server = catalog[0].server
    for role in ROLE_MATRIX:
        assert not allows(programs, tool_context(role=role.name, target=server, tool="not_in_catalog"))
        # a prompt or resource request has no mcp.tool: the rules error, which denies
        assert not allows(
            programs, {"jwt": {"role": role.name}, "mcp": {"prompt": {"target": server, "name": "p"}}}
        )


def test_a_rule_generated_from_a_changed_matrix_changes_the_decision(catalog):
    """Red-proof: the rules follow the matrix; flipping a role's flag flips its decisions."""
    from dataclasses import replace

    director = ROLE_MATRIX[0]
    assert not director.may_call_mutating_tools
    mutating = next(t for t in catalog if t.mutating)
    context = tool_context(role=director.name, target=mutating.server, tool=mutating.backend_name)
    assert not allows(compile_rules(role_rules([director], catalog)), context)
    loosened = replace(director, may_call_mutating_tools=True)
    assert allows(compile_rules(role_rules([loosened], catalog)), context)


def test_an_http_backend_becomes_an_mcp_host_target_and_placeholders_expand(tmp_path, gateway_schema):
    from router.configs.gateway_config import gateway_config
    from router.configs.inputs import ConfigInputs

    servers_file = tmp_path / "servers.toml"
    servers_file.write_text(
        '[servers.remote]\nprofile = "core"\nurl = "http://127.0.0.1:8931/mcp"\n'
        '[servers.notes]\nprofile = "core"\ncommand = "notes-mcp"\n'
        'args = ["--root", "${WORKSPACE}"]\nenv = { NOTES_FILE = "${DATA_DIR}/notes.json" }\n'
    )
    inputs = ConfigInputs(roles=ROLE_MATRIX, servers=load_servers(servers_file), tools=read_inputs().tools)
    config = gateway_config(inputs, data_dir="/srv/router-data")
    assert not list(gateway_schema.iter_errors(config))
    targets = {t["name"]: t for t in route_of(config)["backends"][0]["mcp"]["targets"]}
    assert targets["remote"] == {"name": "remote", "mcp": {"host": "http://127.0.0.1:8931/mcp"}}
    assert targets["notes"]["stdio"] == {
        "cmd": "notes-mcp",
        "args": ["--root", "."],
        "env": {"NOTES_FILE": "/srv/router-data/notes.json"},
    }


def test_the_route_sends_the_routers_role_header_from_the_verified_claim(committed):
    """An HTTP router behind the gateway gets its role from the JWT, never from the caller:
    the header is set (replacing a caller's) to the CEL value of the claim."""
    import cel

    transform = route_of(committed)["policies"]["transformations"]["request"]
    assert set(transform) == {"set"}
    [(header, expression)] = transform["set"].items()
    assert header == "x-context-router-role"
    program = cel.compile(expression)
    for role in ROLE_MATRIX:
        assert program.execute({"jwt": {"role": role.name}}) == role.name
    with pytest.raises((RuntimeError, KeyError, ValueError, TypeError)):
        program.execute({"jwt": {}})  # no claim: no header, and the router refuses the request
