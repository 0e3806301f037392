"""The seeded catalog: its size per profile, its agreement with configs/servers.toml, and,
for the core servers that are installed here, its agreement with what the real servers
answer to `tools/list` over stdio right now."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from router.backends.servers import load_servers
from router.catalog.sources import read_seed_dir
from router.catalog.tool_text import summary
from router.paths import SEEDS_DIR
from tests.project import PROJECT_ROOT

PROFILES = ("core", "appsec", "android", "game", "research")
MIN_TOOLS = 120
MIN_TOOLS_PER_PROFILE = 15
# how long one real backend may take to start and list its tools
LIVE_LIST_TIMEOUT_S = 60
# where the project's own installs put backend programs (see Makefile)
NPM_BIN = PROJECT_ROOT / ".npm-tools" / "node_modules" / ".bin"
VENV_BIN = Path(sys.executable).parent
# a seed's source names a package version or a repository commit
VERSION_OR_COMMIT = re.compile(r"\b\d+\.\d+(\.\d+)?\b|\b[0-9a-f]{40}\b")

SEEDS = [seed for seed, _ in read_seed_dir(SEEDS_DIR)]
SEEDS_BY_SERVER = {seed.server: seed for seed in SEEDS}
SERVERS = load_servers()
CORE_CONFIGS = {name: cfg for name, cfg in SERVERS.servers.items() if cfg.profile == "core"}


def test_catalog_has_the_five_profiles_with_enough_tools():
    per_profile = {profile: 0 for profile in PROFILES}
    for seed in SEEDS:
        assert seed.profile in per_profile, f"{seed.server}: unknown profile {seed.profile!r}"
        per_profile[seed.profile] += len(seed.tools)
    assert sum(per_profile.values()) >= MIN_TOOLS, per_profile
    thin = {p: n for p, n in per_profile.items() if n < MIN_TOOLS_PER_PROFILE}
    assert not thin, f"profiles with fewer than {MIN_TOOLS_PER_PROFILE} tools: {thin}"


def test_system_sqlite3_shows_every_profile_after_make_catalog(tmp_path):
    sqlite3 = shutil.which("sqlite3")
    if sqlite3 is None:
        pytest.skip("the sqlite3 shell is not installed (Debian package sqlite3)")
    db = tmp_path / "router.db"
    subprocess.run(
        [str(VENV_BIN / "context-router"), "catalog", "--db", str(db)],
        check=True,
        capture_output=True,
        text=True,
    )
    shown = subprocess.run(
        [sqlite3, "-json", str(db), "SELECT * FROM v_catalog_per_profile"],
        check=True,
        capture_output=True,
        text=True,
    )
    assert shown.stderr == ""
    rows = {row["profile"]: row for row in json.loads(shown.stdout)}
    assert set(PROFILES) <= rows.keys()
    for profile in PROFILES:
        expected = sum(len(s.tools) for s in SEEDS if s.profile == profile)
        assert rows[profile]["tools"] == expected >= MIN_TOOLS_PER_PROFILE
        assert rows[profile]["servers"] == sum(1 for s in SEEDS if s.profile == profile)
    assert sum(row["tools"] for row in rows.values()) >= MIN_TOOLS


def test_every_core_server_config_has_a_seed_and_every_core_seed_a_config():
    core_seeds = {seed.server for seed in SEEDS if seed.profile == "core"}
    assert core_seeds == set(CORE_CONFIGS), (
        f"seeds without a config: {sorted(core_seeds - set(CORE_CONFIGS))}; "
        f"configs without a seed: {sorted(set(CORE_CONFIGS) - core_seeds)}"
    )
    for name, cfg in SERVERS.servers.items():
        if name in SEEDS_BY_SERVER:
            assert SEEDS_BY_SERVER[name].profile == cfg.profile, name


def test_time_seed_keeps_at_least_two_tools():
    # other tests break time.json's first two tools on purpose
    assert len(SEEDS_BY_SERVER["time"].tools) >= 2


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: s.server)
def test_seed_says_where_its_tool_list_came_from(seed):
    assert VERSION_OR_COMMIT.search(seed.source), (
        f"{seed.server}: source should name a package version or a repository commit: {seed.source!r}"
    )


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: s.server)
def test_no_two_tools_of_a_server_share_a_summary(seed):
    seen: dict[str, str] = {}
    for tool in seed.tools:
        line = summary(tool.description)
        assert line not in seen, f"{seed.server}: {tool.name} and {seen[line]} share summary {line!r}"
        seen[line] = tool.name


def test_every_tool_has_triggers_and_boosts_and_no_trigger_is_shared():
    owner: dict[str, str] = {}
    for seed in SEEDS:
        for tool in seed.tools:
            name = seed.toolPrefix + tool.name
            assert 2 <= len(tool.triggers) <= 5, f"{name}: {len(tool.triggers)} triggers"
            assert 3 <= len(tool.boost) <= 6, f"{name}: {len(tool.boost)} boost keywords"
            assert len({b.lower() for b in tool.boost}) == len(tool.boost), f"{name}: repeated boost"
            for trigger in tool.triggers:
                key = trigger.lower()
                assert key not in owner, f"trigger {trigger!r} is on {owner[key]} and {name}"
                owner[key] = name


# --- live check against the real core servers ----------------------------------------------


def _resolve_program(command: str) -> str | None:
    """The project's own installs first (.venv/bin, .npm-tools), as the router does."""
    search_path = os.pathsep.join([str(VENV_BIN), str(NPM_BIN), os.environ.get("PATH", "")])
    return shutil.which(command, path=search_path)


def _expand(value: str, workspace: Path, data_dir: Path) -> str:
    return value.replace("${WORKSPACE}", str(workspace)).replace("${DATA_DIR}", str(data_dir))


async def _live_tools(params: StdioServerParameters) -> list[dict]:
    with anyio.fail_after(LIVE_LIST_TIMEOUT_S):
        async with Client(params) as client:
            listed = await client.list_tools()
    return [tool.model_dump(by_alias=True, exclude_none=True) for tool in listed.tools]


@pytest.mark.slow
@pytest.mark.parametrize("server", sorted(CORE_CONFIGS))
def test_core_seed_matches_the_live_server(server, tmp_path):
    cfg = CORE_CONFIGS[server]
    program = _resolve_program(cfg.command)
    if program is None:
        pytest.skip(f"{cfg.command} is not installed: {cfg.install}")
    workspace = tmp_path / "workspace"
    data_dir = tmp_path / "data"
    workspace.mkdir()
    data_dir.mkdir()
    # mcp-server-git refuses a directory that is not a repository
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    env = dict(os.environ)
    env.update({k: _expand(v, workspace, data_dir) for k, v in cfg.env.items()})
    params = StdioServerParameters(
        command=program,
        args=[_expand(a, workspace, data_dir) for a in cfg.args],
        env=env,
        cwd=str(workspace),
    )

    live = {tool["name"]: tool for tool in anyio.run(_live_tools, params)}
    seeded = {tool.name: tool.mcp_definition() for tool in SEEDS_BY_SERVER[server].tools}

    assert sorted(seeded) == sorted(live), f"{server}: tool names differ from the live server"
    for name, definition in seeded.items():
        for field in sorted(definition.keys() | live[name].keys()):
            assert definition.get(field) == live[name].get(field), (
                f"{server}/{name}: field {field} differs from the live server; "
                "re-harvest the seed (keep its triggers and boost)"
            )
