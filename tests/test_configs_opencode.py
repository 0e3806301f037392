"""configs/opencode.base.json: valid for the real `opencode` binary and OpenCode's published
schema; each role's agent sees only its own router's three tools, under 500 tokens."""

import copy
import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest
from jsonschema import Draft202012Validator

from router.agents.permissions import Rule
from router.agents.roles import DEFAULT_ROLE, ROLE_ENV_VAR, ROLE_MATRIX
from router.configs.companions import COMPANIONS
from router.configs.generate import OPENCODE_FILE
from router.configs.naming import router_entry_name
from router.configs.opencode_config import BREAK_GLASS_ENTRY
from router.configs.surface import SURFACE_BUDGET_TOKENS, offered_tools, visible_surface
from router.db import connect
from router.facade.definitions import meta_tool_definitions
from router.paths import CONFIGS_DIR, ROLES_DIR
from tests.project import PROJECT_ROOT

SCHEMA_PATH = PROJECT_ROOT / "tests" / "schemas" / "opencode-config.schema.json"
OPENCODE_BIN = PROJECT_ROOT / ".npm-tools" / "node_modules" / ".bin" / "opencode"
# What checks.md prescribes for running the binary without touching the network or $HOME.
OPENCODE_FLAGS = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
}
ROLE_FILES = ["00-shared-context.md"] + [f"{role.name}.md" for role in ROLE_MATRIX]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def committed():
    return json.loads((CONFIGS_DIR / OPENCODE_FILE).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def opencode_schema():
    if not SCHEMA_PATH.is_file():
        pytest.fail(f"OpenCode schema not found at {SCHEMA_PATH}")
    return Draft202012Validator(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


class Scratch:
    """A copy of the config and prompts laid out as in a checkout, a separate project dir
    to run OpenCode in, and a scratch HOME; the committed files are never touched."""

    def __init__(self, root, config):
        if not OPENCODE_BIN.is_file():
            pytest.fail(f"{OPENCODE_BIN} missing: run `make install` (npm opencode-ai)")
        self.checkout = root / "checkout"
        (self.checkout / "configs").mkdir(parents=True)
        shutil.copytree(ROLES_DIR, self.checkout / "roles")
        self.config_path = self.checkout / "configs" / OPENCODE_FILE
        self.config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")
        self.project = root / "project"
        self.project.mkdir()
        self.home = root / "home"
        self.home.mkdir()

    def env(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCODE", "XDG_"))}
        env.update(OPENCODE_FLAGS, HOME=str(self.home), OPENCODE_CONFIG=str(self.config_path))
        return env

    def run(self, *args):
        return subprocess.run(
            [str(OPENCODE_BIN), *args],
            cwd=self.project,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
        )


def json_out(result):
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory, committed):
    return Scratch(tmp_path_factory.mktemp("opencode"), committed)


@pytest.fixture(scope="module")
def agent_rules(scratch):
    """`opencode debug agent NAME` for every role and the built-in `build`: the binary's own
    flattened, ordered permission rules."""
    names = [role.name for role in ROLE_MATRIX] + ["build"]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda name: scratch.run("debug", "agent", name), names))
    return {
        name: [Rule(r["permission"], r["pattern"], r["action"]) for r in json_out(res)["permission"]]
        for name, res in zip(names, results)
    }


@pytest.fixture(scope="module")
def offered(committed):
    routers = [name for name, entry in committed["mcp"].items() if name.startswith("router-")]
    enabled = [c for c in COMPANIONS if committed["mcp"][c.name]["enabled"]]
    return offered_tools(routers, enabled)


def test_committed_config_is_valid_under_the_published_schema(opencode_schema, committed):
    errors = sorted(opencode_schema.iter_errors(committed), key=lambda e: list(e.path))
    assert not errors, [f"{'/'.join(map(str, e.path))}: {e.message[:200]}" for e in errors]


def test_the_schema_check_rejects_args_on_a_local_server(opencode_schema, committed):
    broken = copy.deepcopy(committed)
    broken["mcp"]["context-mode"]["args"] = ["--verbose"]  # OpenCode has `command` only
    assert list(opencode_schema.iter_errors(broken))


def test_opencode_debug_config_accepts_it_and_resolves_every_prompt(scratch, committed):
    resolved = json_out(scratch.run("debug", "config"))
    shared = (ROLES_DIR / "00-shared-context.md").read_text(encoding="utf-8")
    for role in ROLE_MATRIX:
        own = (ROLES_DIR / f"{role.name}.md").read_text(encoding="utf-8")
        # OpenCode trims each file it splices in; the shared context comes first for all
        assert resolved["agent"][role.name]["prompt"] == f"{shared.strip()}\n\n{own.strip()}"
    assert set(resolved["mcp"]) == set(committed["mcp"])
    assert resolved["default_agent"] == DEFAULT_ROLE


def test_opencode_debug_config_exits_1_on_a_broken_copy(tmp_path, committed):
    broken = copy.deepcopy(committed)
    broken["agent"]["director"]["permission"]["bash"] = "maybe"
    result = Scratch(tmp_path, broken).run("debug", "config")
    assert result.returncode == 1
    assert "agent.director.permission.bash" in result.stderr


def test_only_the_router_and_the_designs_companions_are_loaded(committed):
    routers = {router_entry_name(role): role for role in ROLE_MATRIX}
    assert set(committed["mcp"]) == set(routers) | {c.name for c in COMPANIONS} | {BREAK_GLASS_ENTRY}
    # break-glass: its own server, the key taken from OpenCode's environment, never written
    assert committed["mcp"][BREAK_GLASS_ENTRY] == {
        "type": "local",
        "command": ["context-router", "break-glass"],
        "environment": {"OPENROUTER_API_KEY": "{env:OPENROUTER_API_KEY}"},
        "enabled": True,
        "timeout": 30_000,
    }
    assert "sk-or-" not in json.dumps(committed)
    for name, role in routers.items():
        entry = committed["mcp"][name]
        assert entry["type"] == "local" and entry["enabled"] is True
        assert entry["command"] == ["context-router", "serve"]
        assert entry["environment"] == {ROLE_ENV_VAR: role.name}
    for companion in COMPANIONS:
        entry = committed["mcp"][companion.name]
        assert entry["enabled"] is (companion.published and companion.on_by_default)
        assert entry["command"] == list(companion.command)
    # on npm, but it needs Node >= 22.5 and a native build: nothing that may not start is on
    assert committed["mcp"]["context-mode"]["enabled"] is False


def test_each_role_sees_exactly_its_own_routers_three_tools(agent_rules, offered):
    meta = {d["name"] for d in meta_tool_definitions()}
    for role in ROLE_MATRIX:
        visible = visible_surface(offered, agent_rules[role.name])
        assert set(visible) == {f"{router_entry_name(role)}_{m}" for m in meta}, role.name


def test_model_visible_tool_surface_is_under_500_tokens(agent_rules, offered):
    for role in ROLE_MATRIX:
        surface = sum(visible_surface(offered, agent_rules[role.name]).values())
        assert 0 < surface < SURFACE_BUDGET_TOKENS, (role.name, surface)


def test_opencodes_own_agents_get_no_router_and_no_companion_tools(agent_rules, offered):
    assert visible_surface(offered, agent_rules["build"]) == {}


def test_without_the_masks_the_surface_would_blow_the_budget(tmp_path, committed, offered):
    """Red-proof: drop the generated masks from one agent and the real binary's rules let
    it see every router and context-mode: far over budget."""
    unmasked = copy.deepcopy(committed)
    unmasked["permission"] = {}
    permission = unmasked["agent"]["director"]["permission"]
    for key in [k for k in permission if k.startswith(("router-", "context-mode"))]:
        del permission[key]
    result = Scratch(tmp_path, unmasked).run("debug", "agent", "director")
    rules = [Rule(r["permission"], r["pattern"], r["action"]) for r in json_out(result)["permission"]]
    assert sum(visible_surface(offered, rules).values()) > SURFACE_BUDGET_TOKENS


def test_opencode_starts_and_connects_every_router_entry(tmp_path, committed):
    """OpenCode as a real MCP client: `opencode mcp list` starts each router entry exactly as
    configured and completes the MCP handshake. context-mode is switched off in this copy
    only because npx would fetch it from the registry."""
    import re
    import sys
    from pathlib import Path

    config = copy.deepcopy(committed)
    config["mcp"]["context-mode"]["enabled"] = False
    scratch = Scratch(tmp_path, config)
    env = scratch.env()
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # context-router
    env["CONTEXT_ROUTER_DB"] = str(tmp_path / "router.db")
    connect(tmp_path / "router.db").close()  # an empty catalog: serve refuses a missing one
    result = subprocess.run(
        [str(OPENCODE_BIN), "mcp", "list"],
        cwd=scratch.project,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    listing = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout + result.stderr)
    for role in ROLE_MATRIX:
        assert f"{router_entry_name(role)} connected" in listing, listing[-3000:]
    assert f"{BREAK_GLASS_ENTRY} connected" in listing, listing[-3000:]
    for companion in COMPANIONS:
        assert f"{companion.name} disabled" in listing
