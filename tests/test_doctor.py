"""`context-router doctor` (issue 20): real checks of Node, the workspace, each server, the
database and the clients' configs, each finding saying what to do."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from router.backends.doctor import (
    check_clients,
    check_database,
    check_node,
    check_server,
    check_workspace,
    node_minimum,
)
from router.backends.servers import load_servers
from router.cli import main
from router.commands.catalog import load_default_catalog
from router.db import connect
from router.paths import SHIPPED_SERVERS_FILE

NODE = shutil.which("node")


def servers_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "servers.toml"
    path.write_text(body, encoding="utf-8")
    return path


def npm_backend(root: Path, engines: str | None, dependency_engines: str | None = None) -> Path:
    """An installed npm package as npm lays it out: its bin script (a node shebang) linked
    from node_modules/.bin, its package.json, and one dependency beside it."""
    package = root / "node_modules" / "demo-server"
    (package / "dist").mkdir(parents=True)
    manifest: dict = {"name": "demo-server", "bin": {"demo-server": "dist/index.js"}}
    if engines is not None:
        manifest["engines"] = {"node": engines}
    manifest["dependencies"] = {"demo-sdk": "^1"}
    (package / "package.json").write_text(json.dumps(manifest))
    script = package / "dist" / "index.js"
    script.write_text("#!/usr/bin/env node\nconsole.log('hi')\n")
    script.chmod(0o755)
    sdk = root / "node_modules" / "demo-sdk"
    sdk.mkdir()
    sdk_manifest: dict = {"name": "demo-sdk"}
    if dependency_engines is not None:
        sdk_manifest["engines"] = {"node": dependency_engines}
    (sdk / "package.json").write_text(json.dumps(sdk_manifest))
    bin_dir = root / "node_modules" / ".bin"
    bin_dir.mkdir()
    (bin_dir / "demo-server").symlink_to(script)
    return bin_dir / "demo-server"


def node_servers(tmp_path: Path, program: Path):
    return load_servers(
        servers_file(tmp_path, f'[servers.demo]\nprofile = "custom"\ncommand = "{program}"\n')
    )


def test_node_ranges_give_their_lowest_version():
    assert node_minimum(">=20") == (20, 0, 0)
    assert node_minimum(">=22.19.0") == (22, 19, 0)
    assert node_minimum("^18 || >=20") == (18, 0, 0)
    assert node_minimum("~16.4") == (16, 4, 0)
    assert node_minimum("*") is None
    assert node_minimum(">=18 <21") is None  # not a form read here: shown, not checked


@pytest.mark.skipif(NODE is None, reason="needs node on PATH")
def test_a_backend_needing_a_newer_node_is_a_problem_naming_the_version(tmp_path):
    program = npm_backend(tmp_path, ">=99.1")
    [finding] = check_node(node_servers(tmp_path, program))
    assert finding.status == "problem"
    assert "is too old: demo-server needs node >=99.1" in finding.detail
    assert "install Node 99.1.0 or newer" in finding.fix


@pytest.mark.skipif(NODE is None, reason="needs node on PATH")
def test_a_dependencys_engines_count_when_the_package_names_none(tmp_path):
    program = npm_backend(tmp_path, None, dependency_engines=">=18")
    [finding] = check_node(node_servers(tmp_path, program))
    assert finding.status == "ok"
    assert "(demo-sdk needs node >=18)" in finding.detail
    program_too_new = npm_backend(tmp_path / "b", None, dependency_engines=">=99")
    [finding] = check_node(node_servers(tmp_path / "b", program_too_new))
    assert finding.status == "problem" and "demo-sdk needs node >=99" in finding.detail


def test_no_node_on_path_is_a_problem_for_node_backends(tmp_path, monkeypatch):
    program = npm_backend(tmp_path, ">=18")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    [finding] = check_node(node_servers(tmp_path, program))
    assert finding.status == "problem" and "no working node is on PATH" in finding.detail


def test_python_backends_need_no_node(tmp_path):
    [finding] = check_node(
        load_servers(servers_file(tmp_path, '[servers.t]\nprofile = "c"\ncommand = "sh"\n'))
    )
    assert finding.status == "ok" and "no installed backend runs on Node" in finding.detail


def test_outside_a_git_repository_the_clients_root_is_named_as_the_fix(tmp_path):
    shipped = load_servers(SHIPPED_SERVERS_FILE)
    plain = tmp_path / "plain"
    plain.mkdir()
    finding = check_workspace(plain, shipped)
    # the client's root decides where git works: doctor cannot know it, so a note, not a problem
    assert finding.status == "note" and "not a git repository" in finding.detail
    assert "each client's root (MCP roots)" in finding.detail
    assert finding.fix.startswith("open the agent in a git repository: clients that declare roots")
    assert "--workspace" in finding.fix  # for a client without roots
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    finding = check_workspace(repo, shipped)
    assert finding.status == "ok" and str(repo) in finding.detail
    # without a git backend declared, a plain directory is only a note
    no_git = load_servers(servers_file(tmp_path, '[servers.t]\nprofile = "c"\ncommand = "sh"\n'))
    assert check_workspace(plain, no_git).status == "note"


def test_a_server_with_an_unset_variable_says_what_to_export(tmp_path):
    config = load_servers(
        servers_file(
            tmp_path,
            '[servers.s]\nprofile = "custom"\ncommand = "sh"\nenv = { TOKEN = "${env:DEMO_TOKEN}" }\n',
        )
    )
    finding = check_server(config.servers["s"], config.origin("s"), {})
    assert finding.status == "problem"
    assert "needs DEMO_TOKEN set" in finding.detail and "DEMO_TOKEN (unset)" in finding.detail
    assert finding.fix == "export DEMO_TOKEN=..."
    ok = check_server(config.servers["s"], config.origin("s"), {"DEMO_TOKEN": "x"})
    assert ok.status == "ok" and "DEMO_TOKEN (set)" in ok.detail and shutil.which("sh") in ok.detail


def test_a_missing_optional_shipped_server_is_a_note_with_its_install_line(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    shipped = load_servers(SHIPPED_SERVERS_FILE)
    finding = check_server(shipped.servers["radare2"], shipped.origin("radare2"), {})
    assert finding.status == "note"
    assert "its program 'r2mcp' is not found" in finding.detail
    assert (
        finding.fix.startswith("r2pm -Uci r2mcp") and "context-router servers --hide radare2" in finding.fix
    )


def test_the_database_missing_empty_or_built(tmp_path):
    missing = tmp_path / "missing.db"
    finding = check_database(missing)
    assert finding.status == "problem" and finding.detail == "does not exist"
    assert f"context-router catalog --db {missing}" in finding.fix
    assert not missing.exists()  # the check creates nothing
    empty = tmp_path / "empty.db"
    connect(empty).close()
    assert check_database(empty).detail == "the catalog is empty"
    load_default_catalog(empty)
    built = check_database(empty)
    assert built.status == "ok" and built.detail.endswith("tools in the catalog")
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(b"not sqlite " * 500)
    assert "not an SQLite database or is damaged" in check_database(damaged).detail


def test_client_configs_attached_or_not_and_broken(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    assert check_clients(home, project)[0].subject == "(none found)"
    (home / ".claude.json").write_text(
        json.dumps(
            {"mcpServers": {"router": {"command": "/opt/cr/.venv/bin/context-router", "args": ["serve"]}}}
        )
    )
    (project / ".mcp.json").write_text('{\n  "mcpServers": {\n    "a": {"command": "x",,}\n  }\n}\n')
    attached, broken = check_clients(home, project)
    assert attached.status == "ok" and "context-router attached as router" in attached.detail
    assert broken.status == "problem" and f"{project / '.mcp.json'}: not JSON" in broken.detail
    assert "line 3" in broken.detail and "<string>" not in broken.detail
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"github": {"command": "gh-mcp"}}}))
    _, other = check_clients(home, project)
    assert other.status == "note" and "context-router is not attached" in other.detail
    assert f"context-router import {project / '.mcp.json'}" in other.fix


def test_the_command_prints_each_finding_and_fails_on_a_problem(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the clients' configs of no real user
    db = tmp_path / "router.db"
    assert main(["doctor", "--db", str(db), "--workspace", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"PROBLEM database  {db}: does not exist" in out
    assert f"→ context-router catalog --db {db}" in out
    assert out.splitlines()[-1] == "1 problem"  # the database: outside a repository git is a note
    load_default_catalog(db)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    main(["doctor", "--db", str(db), "--workspace", str(tmp_path), "--json"])
    findings = json.loads(capsys.readouterr().out)
    by_area = {f["area"]: f for f in findings}
    assert by_area["database"]["status"] == "ok" and by_area["workspace"]["status"] == "ok"
    assert {f["subject"] for f in findings if f["area"] == "server"} >= {"git", "time", "filesystem"}
    assert by_area["client"]["subject"] == "(none found)"


def test_doctor_outside_a_repository_passes_when_nothing_else_is_wrong(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    db = tmp_path / "router.db"
    load_default_catalog(db)
    servers = servers_file(tmp_path, '[servers.git]\nprofile = "core"\ncommand = "mcp-server-git"\n')
    plain = tmp_path / "plain"
    plain.mkdir()
    status = main(["doctor", "--db", str(db), "--servers", str(servers), "--workspace", str(plain)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert f"note    workspace {plain}: not a git repository" in out
    assert "→ open the agent in a git repository" in out and "roots" in out


def test_only_a_shebang_that_runs_node_makes_a_node_program(tmp_path):
    from router.backends.doctor import _is_node_program

    def script(name: str, first_line: str) -> str:
        path = tmp_path / name
        path.write_text(first_line + "\nrest\n")
        return str(path)

    assert _is_node_program(script("a", "#!/usr/bin/env node"))
    assert _is_node_program(script("b", "#!/usr/bin/env -S node --no-warnings"))
    assert _is_node_program(script("c", "#!/opt/node-20/bin/node"))
    # a Python script in a directory whose name says node (e.g. a checkout called node-tools)
    assert not _is_node_program(script("d", "#!/home/me/node-tools/.venv/bin/python"))
    assert not _is_node_program(script("e", "#!/usr/bin/env python3 # node"))
    assert not _is_node_program(script("f", "no shebang node"))
