"""Servers files: switching a server off, ${env:NAME} references, availability, and the
user's servers file edited in place."""

import json
from pathlib import Path

import pytest

from router.backends.availability import Availability, unavailable_servers
from router.backends.servers import ConfigError, ServerConfig, load_servers
from router.backends.user_servers import UserServersFile
from router.catalog.load import load_catalog
from router.cli import main
from router.db import connect
from router.facade.backend_errors import UnsetVariableError
from router.facade.call_handler import _check_arguments
from router.facade.handlers import ToolCallError
from router.facade.placeholders import Placeholders
from router.paths import SEEDS_DIR, SHIPPED_SERVERS_FILE


def layer(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_enabled_false_switches_a_shipped_server_off_and_a_later_layer_back_on(tmp_path):
    off = layer(tmp_path / "off.toml", "[servers.fetch]\nenabled = false\n")
    config = load_servers([SHIPPED_SERVERS_FILE, off])
    assert "fetch" not in config.servers and config.disabled == {"fetch": off}
    on = layer(tmp_path / "on.toml", '[servers.fetch]\nprofile = "core"\ncommand = "mcp-server-fetch"\n')
    config = load_servers([SHIPPED_SERVERS_FILE, off, on])
    assert "fetch" in config.servers and config.disabled == {} and config.origin("fetch") == on
    with pytest.raises(ConfigError, match=r"servers\.fetch\.enabled: must be true or false"):
        load_servers(
            [SHIPPED_SERVERS_FILE, layer(tmp_path / "bad.toml", '[servers.fetch]\nenabled = "no"\n')]
        )


def test_headers_belong_to_http_servers(tmp_path):
    bad = layer(
        tmp_path / "h.toml", '[servers.x]\nprofile = "custom"\ncommand = "x"\nheaders = { A = "b" }\n'
    )
    with pytest.raises(ConfigError, match="headers are for HTTP servers"):
        load_servers(bad)


def test_env_references_expand_from_the_environment_and_nothing_else(tmp_path, monkeypatch):
    placeholders = Placeholders(tmp_path / "w", tmp_path / "d")
    monkeypatch.setenv("TOKEN_WITH_DOLLAR", "a$b${WORKSPACE}")
    # the variable's value is taken as it is: never read as a template itself
    assert (
        placeholders.expand("${WORKSPACE}:${env:TOKEN_WITH_DOLLAR}", "w")
        == f"{tmp_path / 'w'}:a$b${{WORKSPACE}}"
    )
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    with pytest.raises(UnsetVariableError, match=r"\$\{env:NOT_SET_ANYWHERE\} is not set"):
        placeholders.expand("--key=${env:NOT_SET_ANYWHERE}", "w")


def test_unavailable_says_why_for_each_kind_of_server(tmp_path, monkeypatch):
    monkeypatch.delenv("SEARXNG_URL", raising=False)
    off = layer(tmp_path / "off.toml", "[servers.fetch]\nenabled = false\n")
    config = load_servers([SHIPPED_SERVERS_FILE, off])
    reasons = unavailable_servers(config, ["time", "ghidra", "searxng", "fetch", "crawl4ai", "nowhere"])
    assert "time" not in reasons  # installed by make install
    assert reasons["ghidra"].startswith("not installed: its program 'uv' is not found")
    assert reasons["fetch"] == f"switched off (enabled = false in {off})"
    assert reasons["crawl4ai"].startswith("not running: nothing listens at http://127.0.0.1:11235")
    assert reasons["nowhere"] == "not set up: no servers file declares its server"
    # searxng's program is missing here too; with one installed the unset URL would be said
    assert reasons["searxng"].startswith("not installed")
    server = ServerConfig(
        name="s", profile="custom", command="mcp-server-time", env={"U": "${env:SEARXNG_URL}"}
    )
    assert unavailable_servers(load_servers(SHIPPED_SERVERS_FILE), []) == {}
    from router.backends.availability import server_problem

    assert server_problem(server, {}) == "not configured: needs SEARXNG_URL set in the router's environment"
    assert server_problem(server, {"SEARXNG_URL": "http://x"}) is None


def test_availability_is_kept_two_seconds_and_follows_the_catalog(conn):
    now = [0.0]
    availability = Availability(clock=lambda: now[0])
    config = load_servers(SHIPPED_SERVERS_FILE)
    assert availability.unavailable(conn, config) == {}  # an empty catalog has no servers
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    first = availability.unavailable(conn, config)  # the catalog changed: worked out again
    assert "ghidra" in first and "time" not in first
    now[0] = 1.0
    assert availability.unavailable(conn, config) is first


def test_draft_04_arguments_are_checked_under_draft_04():
    schema = json.dumps(
        {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "exclusiveMinimum": True}}}
    )
    _check_arguments("count", schema, "draft4", {"n": 1})
    with pytest.raises(ToolCallError, match="at n: 0 is less than or equal to the minimum of 0"):
        _check_arguments("count", schema, "draft4", {"n": 0})
    _check_arguments("anything", json.dumps({"type": "array"}), "unchecked", {"n": "whatever"})


def test_user_servers_file_keeps_comments_and_refuses_a_bad_edit(tmp_path):
    path = layer(
        tmp_path / "servers.toml",
        "# my own notes\n[servers.mine]  # hand-written\nprofile = 'custom'\ncommand = 'x'\n",
    )
    file = UserServersFile(path)
    file.declare(
        ServerConfig(name="other", profile="custom", url="http://127.0.0.1:9/mcp", headers={"A": "${env:A}"})
    )
    file.save([SHIPPED_SERVERS_FILE])
    text = path.read_text()
    assert text.startswith("# my own notes\n[servers.mine]  # hand-written\n")
    assert load_servers([SHIPPED_SERVERS_FILE, path]).servers["other"].headers == {"A": "${env:A}"}
    before = path.read_text()
    file.document["servers"]["broken"] = {"profile": "custom"}  # neither command nor url
    with pytest.raises(ConfigError, match=r"exactly one of command .* nothing written"):
        file.save([SHIPPED_SERVERS_FILE])
    assert path.read_text() == before


def test_cli_search_marks_unavailable_tools_and_an_empty_catalog_is_an_error(tmp_path, capsys):
    db = tmp_path / "r.db"
    connect(db).close()
    assert main(["search", "--db", str(db), "decompile"]) == 1
    assert "catalog in" in capsys.readouterr().err
    conn = connect(db)
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    conn.close()
    assert main(["search", "--db", str(db), "--json", "decompile a function in ghidra", "--limit", "3"]) == 0
    hits = json.loads(capsys.readouterr().out)
    ghidra = next(hit for hit in hits if hit["name"] == "ghidra_decompile_function")
    assert ghidra["available"] is False and ghidra["unavailable_reason"].startswith("not installed")
    assert main(["search", "--db", str(db), "current time in a timezone", "--limit", "1"]) == 0
    assert "unavailable" not in capsys.readouterr().out  # mcp-server-time is installed


def test_servers_shows_a_backend_breaker_with_its_last_failure(tmp_path, capsys):
    servers = layer(tmp_path / "s.toml", '[servers.flaky]\nprofile = "custom"\ncommand = "flaky-mcp"\n')
    db = tmp_path / "r.db"
    conn = connect(db)
    conn.execute(
        "INSERT INTO backend_breaker(server, state, consecutive_failures, opened_at, updated_at, last_error) "
        "VALUES ('flaky', 'open', 3, 1764583200.0, '2026-12-01T10:00:00Z', 'exited with status 3 at start')"
    )
    conn.close()
    assert main(["servers", "--db", str(db), "--servers", str(servers), "--json"]) == 0
    row = next(r for r in json.loads(capsys.readouterr().out) if r["server"] == "flaky")
    assert row["server_breaker"] == "open since 2025-12-01T10:00:00Z"
    assert row["server_breaker_error"] == "exited with status 3 at start"
    assert main(["servers", "--db", str(db), "--servers", str(servers)]) == 0
    text = capsys.readouterr().out
    assert "flaky: NOT AVAILABLE" in text and "server breaker open since 2025-12-01T10:00:00Z" in text
    assert "last failure: exited with status 3 at start" in text
