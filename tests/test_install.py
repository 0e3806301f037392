"""The built wheel works anywhere: installed into a fresh virtual environment outside the
checkout, with no checkout on any path, it builds its catalog in the user's data directory,
searches, inspects, and serves a real MCP client."""

import json
import os
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
    subprocess.run(
        [
            str(env_dir / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel),
            "--constraint", str(PROJECT_ROOT / "requirements-core.lock"),
        ],
        check=True,
        timeout=INSTALL_TIMEOUT_S,
    )  # fmt: skip
    home = root / "home"
    work = root / "elsewhere"
    home.mkdir()
    work.mkdir()
    return {"bin": env_dir / "bin", "home": home, "work": work}


def clean_env(installed: dict[str, Path]) -> dict[str, str]:
    """Only what a user's shell would have: no checkout on PATH or PYTHONPATH, no router
    variables, a home of its own (so the user data directory is under it)."""
    return {"HOME": str(installed["home"]), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


def run(installed: dict[str, Path], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(installed["bin"] / "context-router"), *args],
        cwd=installed["work"],
        env=clean_env(installed),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_installed_package_knows_it_is_not_a_checkout_and_reads_its_own_data(installed):
    described = json.loads(run(installed, "paths", "--json").stdout)
    assert described["installed_as"] == "package"
    assert "site-packages" in described["shipped_data"] and str(PROJECT_ROOT) not in described["shipped_data"]
    user_data = installed["home"] / ".local" / "share" / "context-router"
    assert described["database"] == str(user_data / "router.db")


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
