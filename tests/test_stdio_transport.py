"""The router's stdio transport (router/facade/stdio_transport.py) over real pipes and files: every
request is answered even when stdin closes right after it, stray output never reaches the
wire, the pipes are handed back as they were, and a file on stdin still works."""

import asyncio
import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from router.facade.stdio_transport import _next_line

pytestmark = pytest.mark.slow

ROUTER = [str(Path(sys.executable).parent / "context-router"), "serve"]
STRAY_SERVER = [sys.executable, str(Path(__file__).parent / "servers" / "stray_output.py")]
PROJECT_ROOT = Path(__file__).resolve().parent.parent


def request(request_id: int, method: str, params: dict | None = None) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return (json.dumps(message) + "\n").encode()


HANDSHAKE = (
    request(
        1,
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "transport-test", "version": "0"},
        },
    )
    + b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
)
SEARCH_THEN_LIST = request(
    2, "tools/call", {"name": "mcp_search_tools", "arguments": {"query": "current time"}}
) + request(3, "tools/list")


def answered_ids(stdout: bytes) -> list[int]:
    return [json.loads(line)["id"] for line in stdout.splitlines()]


def test_requests_sent_just_before_stdin_closes_are_all_answered(tmp_path):
    for attempt in range(3):  # the race this guards against is lost most of the time
        done = subprocess.run(
            [*ROUTER, "--db", str(tmp_path / "r.db")],
            input=HANDSHAKE + SEARCH_THEN_LIST,
            capture_output=True,
            timeout=60,
            check=True,
        )
        assert answered_ids(done.stdout) == [1, 2, 3], (attempt, done.stdout, done.stderr[-2000:])


def test_a_regular_file_on_stdin_is_served_too(tmp_path):
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(HANDSHAKE + SEARCH_THEN_LIST)
    with requests.open("rb") as stdin:
        done = subprocess.run(
            [*ROUTER, "--db", str(tmp_path / "r.db")],
            stdin=stdin,
            capture_output=True,
            timeout=60,
            check=True,
        )
    assert answered_ids(done.stdout) == [1, 2, 3]


def test_stray_output_goes_to_stderr_and_never_onto_the_wire():
    env = os.environ | {"PYTHONPATH": str(PROJECT_ROOT)}
    done = subprocess.run(
        STRAY_SERVER,
        input=HANDSHAKE + request(2, "tools/call", {"name": "stray", "arguments": {}}),
        capture_output=True,
        timeout=60,
        check=True,
        env=env,
    )
    lines = done.stdout.splitlines()
    assert [json.loads(line)["id"] for line in lines] == [1, 2]  # every stdout line is JSON-RPC
    assert json.loads(lines[1])["result"]["content"][0]["text"] == "wrote junk"
    for junk in (b"stray-print", b"stray-fd1", b"stray-child"):
        assert junk in done.stderr


def test_the_client_pipe_is_left_blocking_once_the_router_exits(tmp_path):
    # The router makes its end of the pipe non-blocking while it serves; that mode belongs to
    # the pipe, which a parent (a terminal, a shell) shares, so it must be undone.
    read_end, write_end = os.pipe()
    router = subprocess.Popen(
        [*ROUTER, "--db", str(tmp_path / "r.db")],
        stdin=read_end,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        os.write(write_end, HANDSHAKE)
        assert json.loads(router.stdout.readline())["id"] == 1
        assert fcntl.fcntl(read_end, fcntl.F_GETFL) & os.O_NONBLOCK  # while serving
        os.close(write_end)
        assert router.wait(timeout=30) == 0
        assert not fcntl.fcntl(read_end, fcntl.F_GETFL) & os.O_NONBLOCK
    finally:
        os.close(read_end)
        if router.poll() is None:
            router.kill()


def read_lines(data: bytes, limit: int) -> list[str]:
    async def run() -> list[str]:
        stream = asyncio.StreamReader(limit=limit)
        stream.feed_data(data)
        stream.feed_eof()
        lines = []
        while (line := await _next_line(stream)) is not None:
            lines.append(line.decode())
        return lines

    return asyncio.run(run())


def test_an_over_long_line_becomes_its_head_alone_and_the_next_lines_still_arrive():
    lines = read_lines(b'{"a":1}\n' + b"x" * 5000 + b"\n" + b'{"b":2}\n' + b'{"c":3}', limit=64)
    assert lines[0] == '{"a":1}\n'
    assert lines[1].startswith("x") and len(lines[1]) <= 256  # a parse error for the SDK, not a crash
    assert lines[2:] == ['{"b":2}\n', '{"c":3}']  # the last line needs no newline
