"""A new user's first commands (issue 37): serve before init says to run init and creates no
database; every suggested fix works when run as printed; an unknown --profile is refused with
the profiles that exist, and a --workspace that is not a directory is refused; init says what
it did, what is callable here and where the memory server keeps this workspace's graph."""

import http.server
import json
import os
import shutil
import socket
import ssl
import subprocess
import threading
from pathlib import Path

import pytest

from router.cli import main
from router.paths import DB_ENV_VAR, SEEDS_DIR
from tests.conftest import project_env
from tests.facade_support import CONTEXT_ROUTER, json_of, make_workspace, running_router, text_of

PROFILES = "android, appsec, core, game, research"


def serve(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CONTEXT_ROUTER), "serve", *args],
        input="",  # a client that leaves at once: a router that starts reports, then stops
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=project_env(),
    )


def suggestion(stderr: str, after: str) -> str:
    """The command an error suggests: the text after `after`, up to the next comma or line end."""
    return stderr.split(after, 1)[1].split(",")[0].strip()


@pytest.mark.slow
def test_serve_before_init_says_to_run_init_creates_nothing_and_the_fix_works(tmp_path):
    default = Path(os.environ[DB_ENV_VAR])  # conftest's stand-in for the user's default database
    done = serve(cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        f"context-router serve: error: no catalog at {default}: set up first with context-router init, then serve\n"
    )
    assert not default.exists() and list(tmp_path.iterdir()) == []

    # a --db in a directory that does not exist: the suggested init makes it, then serve works
    wanted = tmp_path / "not" / "yet" / "router.db"
    done = serve("--db", str(wanted), cwd=tmp_path)
    assert done.returncode == 2 and not wanted.parent.exists()
    fix = suggestion(done.stderr, "set up first with ")
    assert fix == f"context-router init --db {wanted}"
    ran = subprocess.run(fix, shell=True, capture_output=True, text=True, timeout=300, env=project_env())
    assert ran.returncode == 0, ran.stderr
    done = serve("--db", str(wanted), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"ready on stdio: {wanted} (183 tools;" in done.stderr


def test_the_build_command_suggested_for_a_database_in_a_missing_directory_works(tmp_path, capsys):
    wanted = tmp_path / "missing" / "dir" / "x.db"
    assert main(["search", "--db", str(wanted), "read a file"]) == 2
    fix = suggestion(capsys.readouterr().err, "build it with ")
    assert fix == f"context-router catalog --db {wanted}"
    ran = subprocess.run(fix, shell=True, capture_output=True, text=True, timeout=300, env=project_env())
    assert ran.returncode == 0, ran.stderr
    assert main(["search", "--db", str(wanted), "read a file"]) == 0
    assert "read_file" in capsys.readouterr().out


def test_an_unknown_profile_is_refused_naming_the_catalogs_profiles(seeded_db, tmp_path, capsys):
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"id": "1", "query": "read a file", "relevant": ["read_file"]}) + "\n")
    for argv in (
        ["search", "read a file", "--profile", "cor"],
        ["search", "read a file", "--profile", "cor", "--page"],
        ["search", "--batch", str(queries), "--profile", "cor"],
        ["eval", str(queries), "--profile", "cor"],
    ):
        assert main([argv[0], "--db", str(seeded_db), *argv[1:]]) == 2, argv
        captured = capsys.readouterr()
        assert captured.out == ""
        assert f"error: unknown profile 'cor'; the catalog's profiles are: {PROFILES}\n" in captured.err
    # a known profile still narrows the search
    assert main(["search", "--db", str(seeded_db), "read a file", "--profile", "core", "--json"]) == 0
    assert {hit["profile"] for hit in json.loads(capsys.readouterr().out)} == {"core"}


@pytest.mark.slow
@pytest.mark.anyio
async def test_an_agent_asking_for_an_unknown_profile_is_told_the_profiles(seeded_db, tmp_path):
    from router.paths import SHIPPED_SERVERS_FILE

    async with running_router(seeded_db, SHIPPED_SERVERS_FILE, tmp_path) as router:
        refused = await router.call_tool("mcp_search_tools", {"query": "read a file", "profile": "cor"})
        assert refused.is_error
        assert f"unknown profile 'cor'; the catalog's profiles are: {PROFILES}" in text_of(refused)
        found = json_of(
            await router.call_tool("mcp_search_tools", {"query": "read a file", "profile": "core"})
        )
        assert found["tools"]


@pytest.mark.parametrize(
    "argv",
    [
        ["servers"],
        ["servers", "--hide", "blender"],
        ["doctor"],
        ["harvest", "time"],
        ["add", "--workspace", "{w}", "demo", "--", "true"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_a_workspace_that_is_not_a_directory_is_refused(argv, seeded_db, tmp_path, capsys):
    user_servers = Path(os.environ["XDG_CONFIG_HOME"]) / "context-router" / "servers.toml"
    for bad, said in ((tmp_path / "nonexistent", "no such directory"), (seeded_db, "not a directory")):
        line = [a.format(w=bad) for a in argv]
        if "--workspace" not in line:
            line += ["--workspace", str(bad)]
        assert main([line[0], "--db", str(seeded_db), *line[1:]]) == 2
        assert f"error: --workspace {bad}: {said}\n" in capsys.readouterr().err
    assert not user_servers.exists()  # refused before anything was written


def test_serve_refuses_a_workspace_that_does_not_exist(seeded_db, tmp_path):
    done = serve("--db", str(seeded_db), "--workspace", str(tmp_path / "nonexistent"), cwd=tmp_path)
    assert done.returncode == 2
    assert f"error: --workspace {tmp_path / 'nonexistent'}: no such directory" in done.stderr


def test_init_says_what_is_callable_here_and_where_the_memory_graph_is(tmp_path, monkeypatch, capsys):
    project = make_workspace(tmp_path / "project")
    monkeypatch.chdir(project)
    db = tmp_path / "data" / "router.db"
    assert main(["init", "--db", str(db), "--no-node-backends"]) == 0
    out = capsys.readouterr().out
    # the checkout's `make install` put the npm backends where the router looks
    assert f"callable here ({project}): core 5 of 5, android 0 of 2, appsec 0 of 2" in out
    [graph_line] = [line for line in out.splitlines() if line.startswith("memory keeps its data in ")]
    graph = Path(graph_line.split()[5])
    assert graph.name == "memory.jsonl"
    assert graph.parent.parent == tmp_path / "data" / "router-data" / "workspaces"
    assert "(MEMORY_FILE_PATH; this workspace's own)" in graph_line
    assert not any(project.glob("**/memory.jsonl"))  # never inside the user's repository

    # `servers` says the same, per server, and the same counts
    assert main(["servers", "--db", str(db)]) == 0
    listed = capsys.readouterr().out
    assert f"    data:     {graph} (MEMORY_FILE_PATH; this workspace's own)" in listed
    assert listed.rstrip().endswith(
        "core 5 of 5, android 0 of 2, appsec 0 of 2, game 0 of 2, research 0 of 3; 5 of 14 servers"
    )


def test_a_graph_every_workspace_shared_before_is_pointed_at(tmp_path, capsys):
    project = make_workspace(tmp_path / "project")
    db = tmp_path / "router.db"
    assert main(["catalog", "--db", str(db), "--seeds", str(SEEDS_DIR)]) == 0
    shared = tmp_path / "router-data" / "memory.jsonl"
    shared.parent.mkdir()
    shared.write_text('{"type":"entity","name":"old","entityType":"note","observations":[]}\n')
    capsys.readouterr()
    assert main(["servers", "--db", str(db), "--workspace", str(project)]) == 0
    assert f"the one every workspace shared before is {shared}: copy it there to keep using it" in (
        capsys.readouterr().out
    )


def init_against(registry: str, tmp_path: Path, monkeypatch) -> int:
    """init with npm pointed at `registry`, installing into a fresh prefix with a fresh cache
    (nothing cached may answer instead), retrying nothing."""
    from router.commands import setup

    monkeypatch.setattr(setup, "npm_prefix", lambda: tmp_path / "node-backends")
    monkeypatch.setenv("npm_config_registry", registry)
    monkeypatch.setenv("npm_config_fetch_retries", "0")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    return main(["init", "--db", str(tmp_path / "router.db")])


NOT_INSTALLED = (
    "@modelcontextprotocol/server-filesystem, @modelcontextprotocol/server-memory not installed "
    "(their servers stay unavailable; the others work without them)"
)


@pytest.mark.slow
def test_init_says_when_the_npm_registry_cannot_be_reached(tmp_path, monkeypatch, capsys):
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        registry = f"http://127.0.0.1:{probe.getsockname()[1]}/"
    assert init_against(registry, tmp_path, monkeypatch) == 2
    captured = capsys.readouterr()
    assert (
        "installing @modelcontextprotocol/server-filesystem@2026.8.31, "
        f"@modelcontextprotocol/server-memory@2026.8.31 into {tmp_path / 'node-backends'} with npm "
        f"(from {registry}; usually under a minute)\n"
    ) in captured.err
    assert (
        f"context-router init: error: cannot reach the npm registry {registry} (ECONNREFUSED): "
        f"{NOT_INSTALLED}. Check the network or proxy"
    ) in captured.err
    assert "then run context-router init again\n" in captured.err
    # the rest of init was done, and said, before the error
    assert (tmp_path / "router.db").is_file() and "callable here (" in captured.out
    assert "next:" not in captured.out


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl for a self-signed certificate")
def test_init_says_when_the_registrys_certificate_is_not_trusted(tmp_path, monkeypatch, capsys):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        registry = f"https://127.0.0.1:{server.server_address[1]}/"
        assert init_against(registry, tmp_path, monkeypatch) == 2
    finally:
        server.shutdown()
        server.server_close()
    assert (
        f"context-router init: error: the npm registry {registry} answered with a certificate Node "
        f"does not trust (DEPTH_ZERO_SELF_SIGNED_CERT; a proxy with its own CA?): {NOT_INSTALLED}. "
        "Let Node trust it (export NODE_EXTRA_CA_CERTS=/path/to/ca-bundle.pem, or "
        "NODE_USE_SYSTEM_CA=1 for the system's certificates), then run context-router init again\n"
    ) in capsys.readouterr().err
