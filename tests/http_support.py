"""`context-router serve --http` as a real subprocess on a loopback port, and a raw
Streamable HTTP client for it (JSON-RPC bodies in, each answer's JSON out, no SDK between)."""

import json
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx2

from tests.facade_support import CONTEXT_ROUTER

POST_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
PROTOCOL_VERSION = "2025-11-25"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"{process.args[0]} exited with {process.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listening on 127.0.0.1:{port} after {timeout_s} s")


@contextmanager
def serving_http(
    facade,
    role: str | None,
    *,
    stderr: Any = subprocess.DEVNULL,
    preexec_fn: Callable[[], None] | None = None,
) -> Iterator[tuple[str, int]]:
    """`context-router serve --http` on a free loopback port, with `--role` if given; yields
    (url, port) and stops it after."""
    port = free_port()
    argv = [
        str(CONTEXT_ROUTER),
        "serve",
        "--http",
        f"127.0.0.1:{port}",
        "--db",
        str(facade.db),
        "--servers",
        str(facade.servers_file),
        "--workspace",
        str(facade.workspace),
    ]
    env = {k: v for k, v in os.environ.items() if k != "CONTEXT_ROUTER_ROLE"}
    process = subprocess.Popen(
        argv + (["--role", role] if role else []),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        preexec_fn=preexec_fn,
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp", port
    finally:
        process.terminate()
        process.wait(timeout=15)


def initialize_request(name: str) -> dict:
    """The initialize request a client named `name` opens an MCP session with."""
    return {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": name, "version": "0"},
        },
    }


def answers_in(response: httpx2.Response) -> list[dict]:
    """The JSON-RPC messages in a response: its JSON body, or each SSE `data:` line."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")]
    return [response.json()] if response.content else []


class RawHttpSession:
    """One MCP session over Streamable HTTP, spoken with raw JSON-RPC bodies."""

    def __init__(self, url: str, *, timeout_s: float = 30.0, name: str = "raw-http-test") -> None:
        self.url = url
        self.http = httpx2.Client(timeout=timeout_s)
        self._next_id = 0
        opened = self.post(initialize_request(name), in_session=False)
        assert opened.status_code == 200, (opened.status_code, opened.text)
        self.session_id = opened.headers["mcp-session-id"]
        assert self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202

    def headers(self, in_session: bool = True) -> dict[str, str]:
        if not in_session:
            return POST_HEADERS
        return POST_HEADERS | {"mcp-session-id": self.session_id, "mcp-protocol-version": PROTOCOL_VERSION}

    def post(self, body: dict | bytes, *, in_session: bool = True) -> httpx2.Response:
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        return self.http.post(self.url, content=content, headers=self.headers(in_session))

    def request(self, method: str, params: dict | None = None) -> dict:
        """The answer (result or error) to one request."""
        self._next_id += 1
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            body["params"] = params
        response = self.post(body)
        assert response.status_code == 200, (response.status_code, response.text)
        [answer] = [m for m in answers_in(response) if m.get("id") == self._next_id]
        return answer

    def search(self, query: str) -> dict:
        answer = self.request("tools/call", {"name": "mcp_search_tools", "arguments": {"query": query}})
        assert "result" in answer, answer
        return answer["result"]

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> "RawHttpSession":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
