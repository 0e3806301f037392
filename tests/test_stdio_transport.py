"""The router's stdio transport (router/facade/stdio_transport.py) over real pipes and files: every
request is answered even when stdin closes right after it, stray output never reaches the
wire, the pipes are handed back as they were, and a file on stdin still works."""

import asyncio
import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from router.db import connect
from router.facade import stdio_transport
from router.facade.jsonrpc_lines import LineClient, shape_problem
from router.facade.log_guard import REPEAT_BURST
from router.facade.stdio_transport import UnreadableMessage, _next_line
from tests.bounded_io import readline_within
from tests.db_rows import rows

pytestmark = pytest.mark.slow

ROUTER = [str(Path(sys.executable).parent / "context-router"), "serve"]
STRAY_SERVER = [sys.executable, str(Path(__file__).parent / "servers" / "stray_output.py")]
PROJECT_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _empty_catalog(tmp_path):
    """The database each test's router serves: an empty catalog (serve refuses a missing one,
    saying to run init), which is all the transport needs."""
    connect(tmp_path / "r.db").close()


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
    """The ids answered, sorted: a search that waits for the router's warm-up
    (router/facade/warmup.py) may be answered after a later tools/list."""
    return sorted(json.loads(line)["id"] for line in stdout.splitlines())


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


def test_a_regular_file_on_stdin_and_stdout_gets_every_bad_id_answered_and_audited(tmp_path):
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(
        HANDSHAKE + b"".join(line + b"\n" for line in BAD_ID_LINES) + request(2, "tools/list")
    )
    replies = tmp_path / "replies.jsonl"
    with requests.open("rb") as stdin, replies.open("wb") as stdout:
        done = subprocess.run(
            [*ROUTER, "--db", str(tmp_path / "r.db")],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            timeout=60,
            check=True,
        )
    answers = [json.loads(line) for line in replies.read_bytes().splitlines()]
    assert [a["id"] for a in answers] == [1] + [None] * len(BAD_ID_LINES) + [2], done.stderr[-2000:]
    assert all(a["error"]["code"] == -32600 for a in answers[1:-1])
    assert answers[-1]["result"]["tools"]
    audited = rows(tmp_path / "r.db", "SELECT outcome FROM audit")
    assert [r["outcome"] for r in audited] == ["invalid_request"] * len(BAD_ID_LINES)


def test_an_over_long_line_in_a_file_is_refused_and_the_next_lines_still_arrive(tmp_path, monkeypatch):
    monkeypatch.setattr(stdio_transport, "MAX_LINE_BYTES", 64)
    path = tmp_path / "lines"
    path.write_bytes(b'{"a":1}\n' + b"x" * 5000 + b"\n" + b'{"b":2}\n' + b'{"c":3}')

    async def run() -> list[str]:
        fd = os.open(path, os.O_RDONLY)
        try:
            lines, source = [], stdio_transport._FileLines(fd)
            while (line := await source.next_line()) is not None:
                lines.append(line.message if isinstance(line, UnreadableMessage) else line.decode())
            return lines
        finally:
            os.close(fd)

    lines = asyncio.run(run())
    assert lines[0] == '{"a":1}\n'
    assert lines[1].startswith("Parse error: request line longer than 64 bytes")
    assert lines[2:] == ['{"b":2}\n', '{"c":3}']


def test_the_null_device_on_stdin_ends_the_server_at_once(tmp_path):
    # /dev/null is a character device epoll refuses (EPERM): the server must see the end of
    # its input, not wait on a pipe it could never watch
    done = subprocess.run(
        [*ROUTER, "--db", str(tmp_path / "r.db")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""


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
        assert json.loads(readline_within(router.stdout))["id"] == 1
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
            lines.append(line.message if isinstance(line, UnreadableMessage) else line.decode())
        return lines

    return asyncio.run(run())


def test_an_over_long_line_is_refused_by_name_and_the_next_lines_still_arrive():
    lines = read_lines(b'{"a":1}\n' + b"x" * 5000 + b"\n" + b'{"b":2}\n' + b'{"c":3}', limit=64)
    assert lines[0] == '{"a":1}\n'
    assert lines[1].startswith("Parse error: request line longer than")  # refused, not a crash
    assert lines[2:] == ['{"b":2}\n', '{"c":3}']  # the last line needs no newline


UNREADABLE_LINES = {
    "truncated JSON": (b'{"jsonrpc":"2.0","id":9,"method":"tools/li', -32700, "while parsing a string"),
    "invalid UTF-8": (b'{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":"\xff"}}', -32700, "unicode"),
    "lone surrogate": (
        b'{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":"\\ud800"}}',
        -32700,
        "escape",
    ),
    "nested past the limit": (
        b'{"jsonrpc":"2.0","id":9,"method":"ping","params":' + b'{"a":' * 300 + b"1" + b"}" * 301,
        -32700,
        "nested deeper than the parser allows",
    ),
    "not JSON-RPC": (b'{"jsonrpc":"2.0","id":9,"method":5}', -32600, "not a JSON-RPC 2.0 message"),
}


@pytest.mark.parametrize("case", sorted(UNREADABLE_LINES))
def test_an_unreadable_line_gets_a_json_rpc_error_within_5_s_and_an_audit_row(tmp_path, case):
    line, code, words = UNREADABLE_LINES[case]
    db = tmp_path / "r.db"
    with LineClient([*ROUTER, "--db", str(db)], os.environ) as client:
        client.write_raw(line + b"\n")
        reply = json.loads(client.read_line(timeout_s=5))
        assert reply["error"]["code"] == code
        assert words in reply["error"]["message"]
        # JSON-RPC: an id that could not be read is null; a readable one is echoed
        assert reply["id"] == (9 if code == -32600 else None)
        # and the router goes on serving
        assert client.request("tools/list")["tools"]
    audited = rows(db, "SELECT meta_tool, outcome, error FROM audit")
    assert [(r["meta_tool"], r["outcome"]) for r in audited] == [("(unreadable request)", "invalid_request")]
    assert words in audited[0]["error"]


def test_an_over_long_line_is_answered_over_real_stdio(tmp_path, monkeypatch):
    with LineClient([*ROUTER, "--db", str(tmp_path / "r.db")], os.environ) as client:
        client.write_raw(
            b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"y" * (65 * 1024 * 1024) + b'"}}\n'
        )
        reply = json.loads(client.read_line(timeout_s=30))
        assert reply == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32700,
                "message": "Parse error: request line longer than 67108864 bytes (one JSON-RPC message per "
                "line); refused",
            },
        }
        assert client.request("tools/list")["tools"]


# Lines the SDK's message types accept yet no peer may send (issue 22): an id that is not a
# string or an integer reads as a notification, a response with both members as an error.
BAD_ID_LINES = [
    b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
    b'{"jsonrpc":"2.0","id":[7],"method":"tools/list"}',
    b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":-0.0,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":2.0,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":true,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":false,"method":"tools/list"}',
    b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call","params":{"name":"mcp_search_tools"}}',
    b'{"jsonrpc":"2.0","id":5,"result":{},"error":{"code":1,"message":"x"}}',
    b'{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"},"result":{}}',
]
# and the shapes refused before (their answers keep a readable id, or null)
REFUSED_BEFORE = [line for line, _, _ in UNREADABLE_LINES.values()] + [
    b"[]",
    b'[{"jsonrpc":"2.0","id":9,"method":"ping"}]',
    b'"hello"',
    b"{}",
    b'{"jsonrpc":"2.0","id":null,"result":{}}',
    b'{"jsonrpc":"2.0","id":9,"method":"ping","params":[1]}',
]
INVALID_LINES = 200


def test_200_invalid_lines_get_200_answers_within_5_s_and_200_audit_rows(tmp_path):
    shapes = BAD_ID_LINES + REFUSED_BEFORE
    lines = [shapes[i % len(shapes)] for i in range(INVALID_LINES)]
    db = tmp_path / "r.db"
    with (tmp_path / "stderr").open("wb") as stderr:
        with LineClient([*ROUTER, "--db", str(db)], os.environ, stderr=stderr) as client:
            client.write_raw(b"".join(line + b"\n" for line in lines))
            deadline = time.monotonic() + 5
            answers = [
                json.loads(client.read_line(timeout_s=max(0.01, deadline - time.monotonic()))) for _ in lines
            ]
            assert client.request("tools/list")["tools"]  # and it goes on serving
    for line, answer in zip(lines, answers, strict=True):
        assert answer["error"]["code"] in (-32700, -32600), (line, answer)
        if line in BAD_ID_LINES:
            assert answer["id"] is None, (line, answer)
            assert answer["error"]["code"] == -32600
            assert answer["error"]["message"].startswith("Invalid Request: "), answer
    audited = rows(db, "SELECT meta_tool, outcome, error FROM audit")
    assert len(audited) == INVALID_LINES
    assert {(r["meta_tool"], r["outcome"]) for r in audited} == {("(unreadable request)", "invalid_request")}
    assert [r["error"] for r in audited] == [a["error"]["message"] for a in answers]
    # each is logged until the log's repeat limit, which keeps a flood off stderr
    logged = (tmp_path / "stderr").read_text().count("refused a request line: ")
    assert logged == REPEAT_BURST < INVALID_LINES


@pytest.mark.parametrize(
    ("line", "words"),
    [
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', "not an object"),
        (b'{"jsonrpc":"2.0","id":[7],"method":"ping"}', "not an array"),
        (b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}', "not a number with a fraction or an exponent"),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', "not a boolean"),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', "not null"),
        (b'{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"x"}}', "both result and error"),
    ],
)
def test_each_bad_id_says_what_it_is(line, words):
    assert words in (shape_problem(json.loads(line)) or "")


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":7,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":"x","method":"ping"}',
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b'{"jsonrpc":"2.0","id":7,"result":{}}',
        # an error about a message whose id could not be read has a null id
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
    ],
)
def test_valid_ids_pass(line):
    assert shape_problem(json.loads(line)) is None
