"""Streamable HTTP on both sides: the router served with `--http` (role from a request
header), forwarding to @modelcontextprotocol/server-everything running `streamableHttp`,
both bound to 127.0.0.1."""

import os
import subprocess

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from router.commands.serve import parse_http_address
from router.errors import RouterError
from tests.facade_support import (
    LOOPBACK_ONLY,
    NPM_BIN,
    audit_rows,
    harvest,
    load_test_catalog,
    text_of,
    write_catalog_file,
)
from tests.http_support import POST_HEADERS, free_port, serving_http, wait_for_port

pytestmark = [pytest.mark.slow]


def listening_addresses(port: int) -> set[str]:
    out = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True).stdout
    return {line.split()[3].rsplit(":", 1)[0] for line in out.splitlines() if line.strip()}


@pytest.fixture
def everything_http():
    """server-everything over Streamable HTTP on a loopback port, stopped after the test."""
    port = free_port()
    env = dict(os.environ, PORT=str(port), NODE_OPTIONS=f"--require {LOOPBACK_ONLY}")
    process = subprocess.Popen(
        [str(NPM_BIN / "mcp-server-everything"), "streamableHttp"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp", port
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def http_router(facade, everything_http, tmp_path):
    """The router over HTTP started with --role staff-backend, with server-everything (HTTP)
    declared and in its catalog."""
    url, _ = everything_http
    facade.reconfigure(extra=f'\n[servers.everything]\nprofile = "core"\nurl = "{url}"\n')
    lines = anyio.run(
        harvest, facade.servers_file, facade.workspace, tmp_path / "data", ("everything", "time")
    )
    load_test_catalog(facade.db, write_catalog_file(tmp_path / "everything.jsonl", lines))
    with serving_http(facade, "staff-backend") as served:
        yield served


def http_client(url: str, role: str | list[str] | None) -> Client:
    """A client sending the role header once (a name), several times (a list), or not (None)."""
    values = [] if role is None else [role] if isinstance(role, str) else role
    headers = httpx2.Headers([("X-Context-Router-Role", value) for value in values])
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers)))


@pytest.mark.anyio
async def test_router_over_http_forwards_to_an_http_backend_with_a_header_lowering_the_role(
    http_router, everything_http, facade
):
    url, port = http_router
    assert listening_addresses(port) == {"127.0.0.1"}
    assert listening_addresses(everything_http[1]) == {"127.0.0.1"}

    async with http_client(url, "staff-backend") as worker:
        assert [t.name for t in (await worker.list_tools()).tools] == [
            "mcp_call_tool",
            "mcp_inspect_schema",
            "mcp_search_tools",
        ]
        echoed = await worker.call_tool(
            "mcp_call_tool", {"toolName": "echo", "args": {"message": "over http"}}
        )
        toggled = await worker.call_tool(
            "mcp_call_tool", {"toolName": "toggle-simulated-logging", "args": {}}
        )
        summed = await worker.call_tool("mcp_call_tool", {"toolName": "get-sum", "args": {"a": 2, "b": 3}})
    async with http_client(url, "director") as director:
        denied = await director.call_tool(
            "mcp_call_tool", {"toolName": "toggle-simulated-logging", "args": {}}
        )
        allowed = await director.call_tool(
            "mcp_call_tool", {"toolName": "echo", "args": {"message": "read only"}}
        )
    async with http_client(url, None) as default_role:  # no header: the router's --role
        default_allowed = await default_role.call_tool(
            "mcp_call_tool", {"toolName": "toggle-simulated-logging", "args": {}}
        )
    async with http_client(url, "overlord" * 100) as bogus:
        bogus_role = await bogus.call_tool("mcp_search_tools", {"query": "echo"})

    assert text_of(echoed) == "Echo: over http" and not echoed.is_error
    assert not toggled.is_error
    assert "5" in text_of(summed)
    assert denied.is_error and "role 'director' may not call" in text_of(denied)
    assert text_of(allowed) == "Echo: read only"
    assert not default_allowed.is_error, text_of(default_allowed)
    assert bogus_role.is_error and "unknown role 'overlordoverlord" in text_of(bogus_role)
    assert len(text_of(bogus_role)) < 400  # the 800-character header is not echoed whole
    rows = [(r["role"], r["target"], r["outcome"]) for r in audit_rows(facade.db)]
    assert rows == [
        ("staff-backend", "echo", "ok"),
        ("staff-backend", "toggle-simulated-logging", "ok"),
        ("staff-backend", "get-sum", "ok"),
        ("director", "toggle-simulated-logging", "denied"),
        ("director", "echo", "ok"),
        ("staff-backend", "toggle-simulated-logging", "ok"),
    ]


WRITE_FILE = {"toolName": "write_file", "args": {"path": "written-over-http.txt", "content": "x"}}


@pytest.mark.anyio
async def test_without_role_no_empty_or_doubled_header_never_lets_write_file_run(facade):
    """A router started without --role serves only requests naming exactly one valid role."""
    written = facade.workspace / "written-over-http.txt"
    with serving_http(facade, None) as (url, _):
        refused = {}
        for label, header in {
            "no header": None,
            "empty header": "",
            "two headers": ["staff-backend", "director"],
            "two headers, reversed": ["director", "staff-backend"],
            "two values in one": "staff-backend, director",
        }.items():
            async with http_client(url, header) as client:
                refused[label] = await client.call_tool("mcp_call_tool", WRITE_FILE)
                search = await client.call_tool("mcp_search_tools", {"query": "write a file"})
                assert search.is_error, label
        async with http_client(url, "director") as director:
            denied = await director.call_tool("mcp_call_tool", WRITE_FILE)
    for label, result in refused.items():
        assert result.is_error, label
    assert "must name its role in one x-context-router-role header" in text_of(refused["no header"])
    assert "is empty" in text_of(refused["empty header"])
    assert "was sent 2 times" in text_of(refused["two headers"])
    assert "unknown role" in text_of(refused["two values in one"])
    assert denied.is_error and "role 'director' may not call 'write_file'" in text_of(denied)
    assert not written.exists()
    # nothing was forwarded: the only audited call is director's refusal
    assert [
        (r["role"], r["outcome"]) for r in audit_rows(facade.db) if r["meta_tool"] == "mcp_call_tool"
    ] == [("director", "denied")]


@pytest.mark.anyio
async def test_a_header_may_lower_the_start_role_but_never_raise_it(facade):
    written = facade.workspace / "written-over-http.txt"
    with serving_http(facade, "director") as (url, _):
        async with http_client(url, "staff-backend") as raised:
            refused = await raised.call_tool("mcp_call_tool", WRITE_FILE)
        async with http_client(url, "qa-adversary") as lowered:
            read = await lowered.call_tool(
                "mcp_call_tool", {"toolName": "get_current_time", "args": {"timezone": "UTC"}}
            )
    assert refused.is_error and "a header may only lower the role" in text_of(refused)
    assert not read.is_error, text_of(read)
    assert not written.exists()


def test_http_address_parsing_defaults_to_loopback_and_names_bad_input():
    assert parse_http_address("8765") == ("127.0.0.1", 8765)
    assert parse_http_address("localhost:9000") == ("localhost", 9000)
    assert parse_http_address("[::1]:9000") == ("::1", 9000)
    with pytest.raises(RouterError, match="--http 'abc'"):
        parse_http_address("abc")
    with pytest.raises(RouterError, match="port must be"):
        parse_http_address("127.0.0.1:70000")


# What the SDK's types would take for a notification or an error (202, nothing said)
BAD_ID_BODIES = [
    b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
    b'{"jsonrpc":"2.0","id":[7],"method":"tools/list"}',
    b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":-0.0,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":true,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":5,"result":{},"error":{"code":1,"message":"x"}}',
]


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}


def test_over_http_a_bad_id_gets_400_with_a_json_rpc_error_and_an_audit_row(facade):
    with serving_http(facade, "staff-backend") as (url, _):
        # a good message still reaches the SDK, and opens the session the others are sent in
        hello = httpx2.post(url, headers=POST_HEADERS, json=INITIALIZE, timeout=10)
        assert hello.status_code == 200 and '"id":1' in hello.text
        in_session = POST_HEADERS | {"mcp-session-id": hello.headers["mcp-session-id"]}
        initialized = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
        assert httpx2.post(url, content=initialized, headers=in_session, timeout=10).status_code == 202
        for body in BAD_ID_BODIES:
            answer = httpx2.post(url, content=body, headers=in_session, timeout=10)
            assert answer.status_code == 400, (body, answer.status_code, answer.text)
            error = answer.json()
            assert error["id"] is None and error["error"]["code"] == -32600, (body, error)
            assert error["error"]["message"].startswith("Invalid Request: ")
        # the SDK's own Host check still comes first: a rebinding page gets 421, no row
        rebound = httpx2.post(url, content=BAD_ID_BODIES[0], headers=in_session | {"Host": "evil.example"})
        assert rebound.status_code == 421
    audited = audit_rows(facade.db)
    assert [(r["meta_tool"], r["outcome"]) for r in audited] == [
        ("(unreadable request)", "invalid_request")
    ] * len(BAD_ID_BODIES)
