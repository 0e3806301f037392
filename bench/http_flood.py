"""Half-sent HTTP requests against `serve --http` under an open-file limit (issue 35, item 5).

The router runs with RLIMIT_NOFILE set (default 1,024, a common default); a flooder opens
CONNECTIONS connections at once (default 1,100), sends half a request head on each and holds
them, opening a new one whenever the router closes one, for HOLD_S seconds. Meanwhile
another client searches every PROBE_EVERY_S over its own MCP session, and a new client opens
a session and searches. Then the flood stops and every request after it must be answered
normally. Reported: the probes' latencies (the bar: each within 5 s), how many connections
the router closed, the most descriptors it held, its stderr size (the bar: under 10 MB), and
the answers after the flood (the bar: no 500).

Run: python -m bench.http_flood [--limit 1024] [--connections 1100] [--hold-s 30]
"""

import argparse
import os
import resource
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx2

from router.catalog.load import load_catalog
from router.db import connect
from router.paths import SEEDS_DIR

VENV_BIN = Path(sys.executable).parent
HALF_HEAD = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty"
PROBE_EVERY_S = 0.5
PROBE_BOUND_S = 5.0
STDERR_BOUND_BYTES = 10 * 1024 * 1024
AFTER_REQUESTS = 50
MINIMAL_SERVERS = """
[servers.time]
profile = "core"
command = "mcp-server-time"
args = ["--local-timezone", "UTC"]
"""
POST_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
PROTOCOL_VERSION = "2025-11-25"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def seeded_db(path: Path) -> Path:
    conn = connect(path)
    try:
        load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    finally:
        conn.close()
    return path


@contextmanager
def router_with_open_file_limit(
    db: Path, servers: Path, limit: int, stderr: Path, extra_args: tuple[str, ...] = ()
) -> Iterator[tuple[subprocess.Popen, int]]:
    """`context-router serve --http` on a free loopback port with RLIMIT_NOFILE = limit."""
    port = free_port()

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    argv = [str(VENV_BIN / "context-router"), "serve", "--http", f"127.0.0.1:{port}", "--db", str(db)]
    argv += ["--servers", str(servers), "--role", "staff-backend", *extra_args]
    with stderr.open("wb") as err:
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, preexec_fn=limited)
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"serve exited with {process.returncode}: {stderr.read_text()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield process, port
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


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


def mcp_session(url: str, timeout_s: float) -> tuple[httpx2.Client, dict[str, str]]:
    """A new MCP session: an HTTP client and the headers its requests carry."""
    client = httpx2.Client(timeout=timeout_s)
    opened = client.post(url, json=initialize_request("flood-probe"), headers=POST_HEADERS)
    opened.raise_for_status()
    headers = POST_HEADERS | {
        "mcp-session-id": opened.headers["mcp-session-id"],
        "mcp-protocol-version": PROTOCOL_VERSION,
    }
    client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return client, headers


def search(client: httpx2.Client, url: str, headers: dict[str, str], query: str = "what time is it") -> int:
    """One mcp_search_tools call; its HTTP status (200 with a result, else what came)."""
    answer = client.post(
        url,
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "mcp_search_tools", "arguments": {"query": query}},
        },
        headers=headers,
    )
    if answer.status_code == 200 and '"result"' not in answer.text:
        return 0  # answered, but with an error
    return answer.status_code


@dataclass
class Flood:
    """`connections` half-sent requests held open, each reopened when the router closes it."""

    port: int
    connections: int
    opened: int = 0
    closed_by_router: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        selector = selectors.DefaultSelector()
        try:
            for _ in range(self.connections):
                self._open(selector)
            while not self._stop.is_set():
                for key, _ in selector.select(0.1):
                    sock = key.fileobj
                    assert isinstance(sock, socket.socket)
                    if key.data == "connecting" and not sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                        try:
                            sock.send(HALF_HEAD)
                            selector.modify(sock, selectors.EVENT_READ, "held")
                            continue
                        except OSError:
                            pass
                    # refused, or answered (408, 503) or closed by the router: open another
                    selector.unregister(sock)
                    sock.close()
                    self.closed_by_router += 1
                    self._open(selector)
        finally:
            for key in list(selector.get_map().values()):
                key.fileobj.close()  # type: ignore[union-attr]
            selector.close()

    def _open(self, selector: selectors.BaseSelector) -> None:
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", self.port))
        selector.register(sock, selectors.EVENT_WRITE, "connecting")
        self.opened += 1

    def stop(self) -> None:
        self._stop.set()


def descriptors_of(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


@dataclass
class FloodResult:
    limit: int
    connections: int
    hold_s: float
    probes_s: list[float]
    probe_failures: list[str]
    new_client_s: float | None
    opened: int
    closed_by_router: int
    most_descriptors: int
    statuses_after: dict[int, int]
    stderr_bytes: int
    accept_failures_logged: int
    alive_after: bool


def measure(
    limit: int, connections: int, hold_s: float, scratch: Path, on_line: Callable[[str], None] = print
) -> FloodResult:
    db = seeded_db(scratch / "flood.db")
    servers = scratch / "servers.toml"
    servers.write_text(MINIMAL_SERVERS, encoding="utf-8")
    stderr = scratch / "serve.stderr"
    own = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(own[0], min(own[1], connections * 2 + 256)), own[1]))
    with router_with_open_file_limit(db, servers, limit, stderr) as (process, port):
        url = f"http://127.0.0.1:{port}/mcp"
        client, headers = mcp_session(url, timeout_s=PROBE_BOUND_S * 4)
        assert search(client, url, headers) == 200
        flood = Flood(port, connections)
        flooder = threading.Thread(target=flood.run, daemon=True)
        flooder.start()
        probes, failures, most = [], [], 0
        new_client_s = None
        until = time.monotonic() + hold_s
        while time.monotonic() < until:
            started = time.monotonic()
            try:
                status = search(client, url, headers)
                if status != 200:
                    failures.append(f"status {status}")
            except httpx2.HTTPError as exc:
                failures.append(type(exc).__name__)
            probes.append(time.monotonic() - started)
            most = max(most, descriptors_of(process.pid))
            if new_client_s is None and time.monotonic() > until - hold_s / 2:
                started = time.monotonic()
                try:
                    other, other_headers = mcp_session(url, timeout_s=PROBE_BOUND_S * 4)
                    if search(other, url, other_headers) == 200:
                        new_client_s = time.monotonic() - started
                    other.close()
                except httpx2.HTTPError as exc:
                    failures.append(f"new client: {type(exc).__name__}")
            time.sleep(max(0.0, started + PROBE_EVERY_S - time.monotonic()))
        flood.stop()
        flooder.join(timeout=30)
        on_line(
            f"flood stopped: {flood.opened} connections opened, {flood.closed_by_router} closed by the router"
        )
        time.sleep(1.0)
        statuses: dict[int, int] = {}
        for index in range(AFTER_REQUESTS):
            fresh, fresh_headers = (client, headers) if index % 2 else mcp_session(url, timeout_s=30)
            status = search(fresh, url, fresh_headers)
            statuses[status] = statuses.get(status, 0) + 1
        alive = process.poll() is None
    text = stderr.read_bytes()
    return FloodResult(
        limit=limit,
        connections=connections,
        hold_s=hold_s,
        probes_s=probes,
        probe_failures=failures,
        new_client_s=new_client_s,
        opened=flood.opened,
        closed_by_router=flood.closed_by_router,
        most_descriptors=most,
        statuses_after=statuses,
        stderr_bytes=len(text),
        accept_failures_logged=text.count(b"socket.accept() out of system resource"),
        alive_after=alive,
    )


def report(result: FloodResult) -> list[str]:
    probes = sorted(result.probes_s)
    return [
        f"router under RLIMIT_NOFILE {result.limit}; {result.connections} half-sent requests held for "
        f"{result.hold_s:g} s ({result.opened} opened in all, {result.closed_by_router} closed by the router)",
        f"- searches by another client meanwhile: {len(probes)}, median {statistics.median(probes):.3f} s, "
        f"max {probes[-1]:.3f} s (bar: each within {PROBE_BOUND_S:g} s); failed: {len(result.probe_failures)} "
        f"{result.probe_failures[:5]}",
        "- a new client's initialize and search during the flood: "
        + (f"{result.new_client_s:.3f} s" if result.new_client_s is not None else "FAILED"),
        f"- most descriptors the router held: {result.most_descriptors} of {result.limit}",
        f"- after the flood, {AFTER_REQUESTS} searches (half on new sessions): {result.statuses_after} "
        f"(bar: all 200); router alive: {result.alive_after}",
        f"- router stderr: {result.stderr_bytes:,} bytes (bar: under {STDERR_BOUND_BYTES:,}); "
        f"accept() failures logged: {result.accept_failures_logged}",
    ]


def met(result: FloodResult) -> bool:
    return (
        not result.probe_failures
        and max(result.probes_s) < PROBE_BOUND_S
        and result.new_client_s is not None
        and result.statuses_after == {200: AFTER_REQUESTS}
        and result.stderr_bytes < STDERR_BOUND_BYTES
        and result.alive_after
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.http_flood")
    parser.add_argument("--limit", type=int, default=1024, help="the router's RLIMIT_NOFILE")
    parser.add_argument("--connections", type=int, default=1100, help="half-sent requests held at once")
    parser.add_argument("--hold-s", type=float, default=30.0, help="how long the flood lasts")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        result = measure(args.limit, args.connections, args.hold_s, Path(scratch))
    print("\n".join(report(result)))
    return 0 if met(result) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
