"""OpenCode permission rules from the role matrix, as the real `opencode` binary resolves them.

The expected decisions below are the issue's role matrix written out by hand (not computed
from router.agents.permissions), so a wrong generator fails here. The binary's flattened, ordered
rules (`opencode debug agent NAME`) are resolved last-match-wins, as OpenCode does.
"""

import json
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from router.agents.permissions import (
    Rule,
    edit_action,
    evaluate,
    flatten,
    is_hidden,
    opencode_agents,
    opencode_permission,
    wildcard_match,
)
from router.agents.roles import ROLE_MATRIX, ROLE_NAMES, get_role
from tests.project import PROJECT_ROOT

OPENCODE_BIN = PROJECT_ROOT / ".npm-tools" / "node_modules" / ".bin" / "opencode"
# OpenCode's published config schema (https://opencode.ai/config.json), vendored for CI.
SCHEMA_PATH = Path(__file__).parent / "schemas" / "opencode-config.schema.json"
OPENCODE_ENV = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
}
# An agent written the naive way: whole-tool denies with the bare action. OpenCode removes
# such tools from the agent's list; the role matrix's agents must not lose any.
UNMASKED_AGENT = "unmasked-director"

A, K, D = "allow", "ask", "deny"
# (tool, input) -> decision, per role: the matrix.
EXPECTED = {
    "director": {
        ("edit", "contracts/api.yaml"): D,
        ("edit", "src/x.py"): D,
        ("edit", "README.md"): D,
        ("bash", "ls"): D,
        ("bash", "git status"): D,
        ("task", "architect"): A,
        ("task", "manager"): A,
        ("task", "staff-backend"): D,
        ("read", "src/x.py"): A,
        ("webfetch", "https://example.org"): A,
    },
    "architect": {
        ("edit", "contracts/api.yaml"): A,
        ("edit", "contracts/v2/events.json"): A,
        ("edit", "tokens/colors.json"): A,
        ("edit", "src/x.py"): D,
        ("edit", "ui/web/app.tsx"): D,
        ("edit", "README.md"): D,
        ("bash", "make validate"): K,
        ("task", "staff-backend"): D,
        ("read", "src/x.py"): A,
    },
    "manager": {
        ("edit", "src/x.py"): D,
        ("edit", "contracts/api.yaml"): D,
        ("edit", "tests/t.py"): D,
        ("bash", "git merge feature"): A,
        ("task", "staff-backend"): A,
        ("task", "staff-ui"): A,
        ("task", "qa-adversary"): A,
        ("task", "director"): D,
        ("task", "architect"): D,
    },
    "staff-backend": {
        ("edit", "src/x.py"): A,
        ("edit", "src/deep/pkg/mod.rs"): A,
        ("edit", "ui/web/app.tsx"): D,
        ("edit", "contracts/api.yaml"): D,
        ("edit", "tokens/colors.json"): D,
        ("edit", "srcfile.py"): D,
        ("bash", "cargo test"): A,
        ("task", "qa-adversary"): D,
    },
    "staff-ui": {
        ("edit", "ui/web/app.tsx"): A,
        ("edit", "ui/web/components/Button.tsx"): A,
        ("edit", "ui/mobile/app.tsx"): D,
        ("edit", "src/x.py"): D,
        ("edit", "tokens/c.json"): D,
        ("bash", "npm test"): A,
        ("task", "staff-backend"): D,
    },
    "qa-adversary": {
        ("edit", "src/x.py"): D,
        ("edit", "src/deep/mod.py"): D,
        ("edit", "tests/test_x.py"): A,
        ("edit", "contracts/api.yaml"): D,
        ("bash", "pytest -q"): A,
        ("task", "manager"): D,
        ("read", "src/x.py"): A,
    },
}


# --- the generator, offline ------------------------------------------------------------


def test_every_role_of_the_matrix_has_expectations():
    assert set(EXPECTED) == set(ROLE_NAMES)


@pytest.mark.parametrize("role", ROLE_NAMES)
def test_generated_rules_give_the_matrix_decisions(role):
    rules = flatten(opencode_permission(get_role(role)))
    for (tool, value), expected in EXPECTED[role].items():
        assert evaluate(tool, value, rules) == expected, (role, tool, value)


def test_every_role_has_the_same_tool_keys_in_the_same_order():
    key_orders = {tuple(permission) for permission in opencode_agents().values()}
    assert len(key_orders) == 1


@pytest.mark.parametrize("role", ROLE_NAMES)
def test_permissions_mask_and_never_hide_a_tool(role):
    rules = flatten(opencode_permission(get_role(role)))
    for tool in ("read", "edit", "bash", "task", "webfetch", "websearch"):
        assert not is_hidden(tool, rules), (role, tool)


def test_is_hidden_recognizes_the_bare_catch_all_deny():
    assert is_hidden("bash", [Rule("*", "*", "allow"), Rule("bash", "*", "deny")])
    assert not is_hidden("bash", [Rule("bash", "*", "deny"), Rule("bash", "**", "deny")])


def test_edit_action_is_what_the_router_uses_for_briefs():
    assert edit_action(get_role("architect"), "contracts/api.yaml") == "allow"
    assert edit_action(get_role("architect"), "src/x.py") == "deny"


@pytest.mark.parametrize(
    "text, pattern, matches",
    [
        ("src/a/b.py", "src/**", True),
        ("src", "src/**", False),
        ("git", "git *", True),  # OpenCode: "cmd *" also matches the bare command
        ("git status", "git *", True),
        ("gitk", "git *", False),
        ("a.py", "?.py", True),
        ("ab.py", "?.py", False),
        ("a+b", "a+b", True),  # regex characters are literal
        ("aab", "a+b", False),
    ],
)
def test_wildcard_semantics(text, pattern, matches):
    assert wildcard_match(text, pattern) is matches


# --- the real binary -------------------------------------------------------------------


def _opencode_config() -> dict:
    agents = {
        name: {"description": f"{role.level} {role.title}", "mode": "all", "permission": permission}
        for (name, permission), role in zip(opencode_agents().items(), ROLE_MATRIX)
    }
    agents[UNMASKED_AGENT] = {
        "description": "naive whole-tool denies",
        "mode": "all",
        "permission": {"edit": "deny", "bash": "deny", "task": "deny"},
    }
    return {"$schema": "https://opencode.ai/config.json", "agent": agents}


@pytest.fixture(scope="module")
def opencode_run(tmp_path_factory):
    """Scratch HOME and project (a git repo holding opencode.json); returns a runner."""
    if not OPENCODE_BIN.exists():
        pytest.fail(f"{OPENCODE_BIN} missing: run `make install` (npm opencode-ai)")
    root = tmp_path_factory.mktemp("opencode")
    home, project = root / "home", root / "project"
    home.mkdir()
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "opencode.json").write_text(json.dumps(_opencode_config(), indent=2))
    env = {**os.environ, **OPENCODE_ENV, "HOME": str(home)}

    def run(*args: str, cwd: Path = project) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(OPENCODE_BIN), *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    run.project = project
    return run


_AGENT_HEADER = re.compile(r"^(\S+) \((\w+)\)$", re.MULTILINE)


@pytest.fixture(scope="module")
def listed_rules(opencode_run):
    """`opencode agent list`: every agent's flattened, ordered rules, from one process."""
    result = opencode_run("agent", "list")
    assert result.returncode == 0, result.stderr[-2000:]
    decoder, rules = json.JSONDecoder(), {}
    for header in _AGENT_HEADER.finditer(result.stdout):
        listed, _ = decoder.raw_decode(result.stdout[header.end() :].lstrip())
        rules[header.group(1)] = [Rule(r["permission"], r["pattern"], r["action"]) for r in listed]
    return rules


# The two roles that mask the most (director: edit and bash; architect: task) and the
# naive agent; more `debug agent` runs would add seconds each and test nothing new.
DEBUGGED_AGENTS = ("director", "architect", UNMASKED_AGENT)


@pytest.fixture(scope="module")
def debug_agents(opencode_run, listed_rules):
    """`opencode debug agent NAME`, side by side (listed_rules already set up HOME)."""
    with ThreadPoolExecutor(max_workers=len(DEBUGGED_AGENTS)) as pool:
        results = pool.map(lambda n: opencode_run("debug", "agent", n), DEBUGGED_AGENTS)
    out = {}
    for name, result in zip(DEBUGGED_AGENTS, results):
        assert result.returncode == 0, f"{name}: {result.stderr[-2000:]}"
        out[name] = json.loads(result.stdout)
    return out


def _binary_rules(agent: dict) -> list[Rule]:
    return [Rule(r["permission"], r["pattern"], r["action"]) for r in agent["permission"]]


@pytest.mark.slow
@pytest.mark.parametrize("role", ROLE_NAMES)
def test_opencode_resolves_the_matrix_decisions(listed_rules, role):
    rules = listed_rules[role]
    for (tool, value), expected in EXPECTED[role].items():
        assert evaluate(tool, value, rules) == expected, (role, tool, value)


@pytest.mark.slow
@pytest.mark.parametrize("role", ROLE_NAMES)
def test_our_rules_appear_in_opencodes_order_after_its_defaults(listed_rules, role):
    """OpenCode appends the agent's rules (in our order) after its own defaults."""
    ours = flatten(opencode_permission(get_role(role)))
    theirs = listed_rules[role]
    positions = [theirs.index(rule) for rule in ours]
    assert positions == sorted(positions)


@pytest.mark.slow
def test_debug_agent_prints_the_same_rules_as_agent_list(debug_agents, listed_rules):
    for name, agent in debug_agents.items():
        assert _binary_rules(agent) == listed_rules[name], name


@pytest.mark.slow
def test_masked_roles_keep_every_tool_and_naive_denies_lose_them(debug_agents):
    director, architect = debug_agents["director"]["tools"], debug_agents["architect"]["tools"]
    assert director == architect
    for tool in ("edit", "write", "bash", "task", "read", "webfetch"):
        assert director[tool] is True, tool
    # the check can fail: bare whole-tool denies make OpenCode drop the tools
    naive = debug_agents[UNMASKED_AGENT]["tools"]
    assert naive["edit"] is False and naive["bash"] is False and naive["task"] is False


@pytest.mark.slow
def test_hiding_rule_agrees_with_opencode(debug_agents):
    """router.agents.permissions.is_hidden predicts OpenCode's tool list from the rules."""
    for agent in debug_agents.values():
        rules = _binary_rules(agent)
        for tool in ("edit", "write", "bash", "task", "read", "webfetch", "websearch"):
            assert is_hidden(tool, rules) is (agent["tools"][tool] is False), (agent["name"], tool)


@pytest.mark.slow
@pytest.mark.parametrize("role", ROLE_NAMES)
def test_no_role_loses_a_tool_under_opencodes_rules(listed_rules, role):
    for tool in ("edit", "write", "bash", "task", "read", "webfetch", "websearch"):
        assert not is_hidden(tool, listed_rules[role]), (role, tool)


def test_config_is_valid_under_opencodes_published_schema():
    validator = Draft202012Validator(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    assert list(validator.iter_errors(_opencode_config())) == []
    bad = _opencode_config()
    bad["agent"]["director"]["permission"]["webfetch"] = {"*": "allow"}  # action only
    assert list(validator.iter_errors(bad)) != []
