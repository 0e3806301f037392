"""The bar of issue 14: a `.mcp.json` naming two real servers is imported into a fresh
database; a real MCP client (the SDK's ClientSession over stdio against `context-router
serve`) finds `echo` by search and calls it; `servers` lists both as installed and the one
the router started as running."""

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from router.db import connect
from router.paths import user_seeds_dir, user_servers_file
from tests.facade_support import CONTEXT_ROUTER, NPM_BIN, json_of, text_of

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

SECRET = "sk-live-ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(CONTEXT_ROUTER), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ) | (env or {}),
        check=False,
    )


@pytest.fixture
def mcp_json(tmp_path) -> Path:
    path = tmp_path / "project" / ".mcp.json"
    path.parent.mkdir()
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "server-everything": {
                        "command": str(NPM_BIN / "mcp-server-everything"),
                        "args": [],
                        "env": {"EVERYTHING_API_TOKEN": SECRET},
                    },
                    "mcp-server-time": {"command": "mcp-server-time", "args": ["--local-timezone", "UTC"]},
                }
            }
        )
    )
    return path


async def test_imported_servers_are_searched_and_called_by_a_real_client(tmp_path, mcp_json):
    """The router runs before, during and after the import: no restart between."""
    db = tmp_path / "fresh.db"
    connect(db).close()  # an empty catalog: serve refuses a missing one (it says to run init)
    params = StdioServerParameters(
        command=str(CONTEXT_ROUTER),
        args=["serve", "--db", str(db), "--workspace", str(tmp_path)],
        env=dict(os.environ) | {"EVERYTHING_API_TOKEN": "from-env"},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        before = json_of(await session.call_tool("mcp_search_tools", {"query": "echo back a message"}))
        assert before["tools"] == [] and "catalog is empty" in before["warning"]

        imported = run_cli("import", str(mcp_json), "--db", str(db), env={"EVERYTHING_API_TOKEN": "from-env"})
        assert imported.returncode == 0, imported.stdout + imported.stderr
        out = imported.stdout
        assert "added server-everything: 13 tools" in out
        # mcp-server-time's two tool names are the shipped time server's: prefixed automatically
        assert "added mcp-server-time: 2 tools (named mcp-server-time_<tool>" in out
        assert "export EVERYTHING_API_TOKEN=" in out
        # progress on stderr while each server starts, then the reload
        assert "[1/2] server-everything: starting " in imported.stderr
        assert "[2/2] mcp-server-time: starting mcp-server-time for its tools/list" in imported.stderr
        assert f"reloading the catalog in {db}" in imported.stderr
        # the secret stays a reference, written nowhere
        servers_text = user_servers_file().read_text()
        assert 'EVERYTHING_API_TOKEN = "${env:EVERYTHING_API_TOKEN}"' in servers_text
        seeds = [p.read_text() for p in user_seeds_dir().glob("*.json")]
        for text in (out, imported.stderr, servers_text, *seeds):
            assert SECRET not in text
        assert SECRET.encode() not in db.read_bytes()

        found = json_of(await session.call_tool("mcp_search_tools", {"query": "echo back a message"}))
        names = [tool["name"] for tool in found["tools"]]
        assert names[0] == "echo", found
        assert found["tools"][0].get("available", True) is True
        echoed = await session.call_tool(
            "mcp_call_tool", {"toolName": "echo", "args": {"message": "hi there"}}
        )
        assert not echoed.is_error, text_of(echoed)
        assert "hi there" in text_of(echoed)
        timed = await session.call_tool(
            "mcp_call_tool", {"toolName": "mcp-server-time_get_current_time", "args": {"timezone": "UTC"}}
        )
        assert not timed.is_error and "UTC" in text_of(timed)

        # while the router runs: both installed, the two it started running, with their pids
        status = run_cli("servers", "--db", str(db), "--json", env={"EVERYTHING_API_TOKEN": "from-env"})
        assert status.returncode == 0, status.stderr
        rows = {row["server"]: row for row in json.loads(status.stdout)}
        for name, tools in (("server-everything", 13), ("mcp-server-time", 2)):
            assert rows[name]["installed"] is True, rows[name]
            assert rows[name]["tools"] == tools
            assert rows[name]["declared"] == str(user_servers_file())
            assert rows[name]["running"].startswith("pid "), rows[name]
    # the router is gone: its backends too, and `servers` says so
    rows = {row["server"]: row for row in json.loads(run_cli("servers", "--db", str(db), "--json").stdout)}
    assert rows["server-everything"]["running"] == "no"
    # without the variable the server needs, it is reported and not started
    assert rows["server-everything"]["installed"] is False
    assert "EVERYTHING_API_TOKEN" in rows["server-everything"]["problem"]


def test_a_server_that_fails_to_start_is_reported_with_its_stderr_and_not_declared(tmp_path):
    config = tmp_path / "claude_desktop_config.json"
    failing = [sys.executable, "-c", "import sys; sys.stderr.write('boom: no license file\\n'); sys.exit(3)"]
    config.write_text(json.dumps({"mcpServers": {"broken": {"command": failing[0], "args": failing[1:]}}}))
    result = run_cli("import", str(config), "--db", str(tmp_path / "r.db"))
    assert result.returncode == 1
    assert "failed broken:" in result.stdout and "boom: no license file" in result.stdout
    assert not user_servers_file().exists()


def test_add_then_remove_updates_servers_file_and_catalog(tmp_path):
    db = tmp_path / "r.db"
    # options before NAME: everything after it is the server's own command line; a literal
    # secret given with --env is written as a reference, and read from the environment
    added = run_cli(
        *("add", "--db", str(db), "--env", f"CLOCK_API_KEY={SECRET}", "clock"),
        *("--", "mcp-server-time", "--local-timezone", "UTC"),
        env={"CLOCK_API_KEY": SECRET},
    )
    assert added.returncode == 0, added.stdout + added.stderr
    assert "added clock: 2 tools (named clock_<tool>" in added.stdout
    assert "export CLOCK_API_KEY=" in added.stdout and SECRET not in added.stdout
    assert 'CLOCK_API_KEY = "${env:CLOCK_API_KEY}"' in user_servers_file().read_text()
    # in the ranking (the page may leave out a copy of the time server without its triggers)
    searched = run_cli("search", "--db", str(db), "--json", "--all", "current time in a timezone")
    assert "clock_get_current_time" in searched.stdout
    removed = run_cli("remove", "clock", "--db", str(db))
    assert removed.returncode == 0, removed.stderr
    assert "[servers.clock]" not in user_servers_file().read_text()
    assert not (user_seeds_dir() / "clock.json").exists()
    assert "clock_get_current_time" not in run_cli("search", "--db", str(db), "--json", "current time").stdout
    # a shipped server is switched off in the user's file, and its tools leave the catalog
    off = run_cli("remove", "fetch", "--db", str(db))
    assert off.returncode == 0, off.stderr
    assert (
        "[servers.fetch]" in user_servers_file().read_text()
        and "enabled = false" in user_servers_file().read_text()
    )
    hits = json.loads(run_cli("search", "--db", str(db), "--json", "fetch a url from the internet").stdout)
    assert "fetch" not in [hit["name"] for hit in hits]


def test_a_name_add_had_to_change_is_told_by_add_and_by_remove(tmp_path):
    db = tmp_path / "r.db"
    given = "../../outside/a1"
    added = run_cli("add", "--db", str(db), given, "--", "mcp-server-time", "--local-timezone", "UTC")
    assert added.returncode == 0, added.stdout + added.stderr
    assert "added ..-..-outside-a1: 2 tools" in added.stdout
    assert "declared as '..-..-outside-a1' ('../../outside/a1' is not a server name" in added.stdout
    refused = run_cli("remove", given, "--db", str(db))
    assert refused.returncode != 0
    assert "no server named '../../outside/a1'" in refused.stderr
    assert "declared as '..-..-outside-a1'" in refused.stderr
    assert "context-router remove ..-..-outside-a1" in refused.stderr
    declared = tomllib.loads(user_servers_file().read_text())["servers"]
    assert "..-..-outside-a1" in declared  # nothing removed on a guess
    removed = run_cli("remove", "..-..-outside-a1", "--db", str(db))
    assert removed.returncode == 0, removed.stderr
    assert "..-..-outside-a1" not in tomllib.loads(user_servers_file().read_text()).get("servers", {})
    # a name nobody declared is still just not found
    unknown = run_cli("remove", "../nobody", "--db", str(db))
    assert "no server named '../nobody'" in unknown.stderr and "declared as" not in unknown.stderr


def test_a_server_whose_seed_the_catalog_would_refuse_is_reported_and_not_declared(tmp_path):
    # its tools' names are taken (the shipped time server), and '<41 letters>_' is longer than
    # a seed's toolPrefix may be: the seed is checked before it is written, as harvest's is
    name = "a" * 40
    added = run_cli(
        *("add", "--db", str(tmp_path / "r.db"), name, "--", "mcp-server-time", "--local-timezone", "UTC")
    )
    assert added.returncode == 1, added.stdout + added.stderr
    assert f"failed {name}:" in added.stdout and "toolPrefix" in added.stdout
    assert not (user_seeds_dir() / f"{name}.json").exists()
    assert not user_servers_file().exists()
