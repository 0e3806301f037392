"""A backend that floods its stderr stalls nobody (issue 35 item 2): while a call to a real
backend that wrote one 30,000-character line, or 200,000 characters without a newline, is
running, searches sent meanwhile answer, and the router exits soon after its stdin closes or
it gets SIGTERM. The copy on the router's stderr is cut and says what it left out.

The times asserted are generous bounds for a loaded machine (the unredacted quadratic
redaction took 80 s for one such line); bench/redaction.py measures the real figures."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from router.facade.jsonrpc_lines import LineClient
from router.facade.stderr_lines import MAX_LINE_BYTES
from tests.facade_support import add_backend
from tests.servers import noisy

pytestmark = pytest.mark.slow

# each search, and the router's exit, within this (the bars are 1 s and 5 s, measured by bench)
SEARCH_BOUND_S = 10.0
EXIT_BOUND_S = 15.0
SEARCHES = 3


def declare_noisy_backend(facade, harvested_catalog) -> None:
    declaration = f"""profile = "custom"
command = {json.dumps(sys.executable)}
args = [{json.dumps(noisy.__file__)}]"""
    add_backend(facade, harvested_catalog, "noisy", declaration, noisy.TOOLS)


def answer_to(client: LineClient, request_id: int, timeout_s: float) -> dict:
    """The reply to `request_id`, skipping replies to other requests (and notifications)."""
    deadline = time.monotonic() + timeout_s
    while True:
        line = client.read_line(timeout_s=max(0.01, deadline - time.monotonic()))
        assert line, "the router closed its stdout"
        message = json.loads(line)
        if message.get("id") == request_id:
            return message


def search(client: LineClient) -> float:
    """Seconds one search took to answer while the flooding call runs."""
    started = time.monotonic()
    request_id = client.send(
        "tools/call", {"name": "mcp_search_tools", "arguments": {"query": "current time"}}
    )
    reply = answer_to(client, request_id, SEARCH_BOUND_S)
    assert "result" in reply and not reply["result"].get("isError"), reply
    return time.monotonic() - started


def flood_while_searching(facade, tmp_path, *, chars: int, newline: bool, hold_s: float):
    """A router whose call to the noisy backend floods its stderr again and again for hold_s;
    three searches answered meanwhile. Returns the client (call in flight) and its stderr."""
    params = facade.params(extra_args=("--no-wake-on-search",))
    stderr = (tmp_path / "router.stderr").open("wb")
    client = LineClient([params.command, *params.args], os.environ | (params.env or {}), stderr=stderr)
    try:
        client.send(
            "tools/call",
            {
                "name": "mcp_call_tool",
                "arguments": {
                    "toolName": "flood_stderr",
                    "args": {"chars": chars, "newline": newline, "hold_s": hold_s, "every_s": 0.05},
                },
            },
        )
        time.sleep(1.0)  # the backend starts and writes its flood
        times = [search(client) for _ in range(SEARCHES)]
    except BaseException:
        client.process.kill()  # its backend goes with it (it is the backend's subreaper)
        client.close()
        stderr.close()
        raise
    assert max(times) < SEARCH_BOUND_S, times
    return client, stderr


def exited_within(process: subprocess.Popen, timeout_s: float) -> float:
    started = time.monotonic()
    process.wait(timeout=timeout_s)
    return time.monotonic() - started


def test_a_30000_character_stderr_line_stalls_no_search_and_stdin_closing_ends_the_router(
    facade, harvested_catalog, tmp_path
):
    declare_noisy_backend(facade, harvested_catalog)
    # the router answers every request read before its stdin closed (router/facade/stdio_transport.py):
    # the flooding call ends a few seconds after the searches, and the router with it
    client, stderr = flood_while_searching(facade, tmp_path, chars=30_000, newline=True, hold_s=5)
    with stderr:
        client.process.stdin.close()  # type: ignore[union-attr]
        assert exited_within(client.process, EXIT_BOUND_S) < EXIT_BOUND_S
    client.close()
    logged = (tmp_path / "router.stderr").read_bytes()
    assert b"A" * (MAX_LINE_BYTES + 1) not in logged  # the line was cut, not copied whole
    assert b"[line cut]" in logged


def test_200000_characters_without_a_newline_stall_no_search_and_sigterm_ends_the_router(
    facade, harvested_catalog, tmp_path
):
    declare_noisy_backend(facade, harvested_catalog)
    client, stderr = flood_while_searching(facade, tmp_path, chars=200_000, newline=False, hold_s=30)
    with stderr:
        client.process.send_signal(signal.SIGTERM)
        assert exited_within(client.process, EXIT_BOUND_S) < EXIT_BOUND_S
    client.close()
    assert b"A" * (MAX_LINE_BYTES + 1) not in (tmp_path / "router.stderr").read_bytes()


def test_ten_megabytes_of_stderr_lines_do_not_slow_the_call_and_what_was_dropped_is_reported(
    facade, harvested_catalog, tmp_path
):
    declare_noisy_backend(facade, harvested_catalog)
    params = facade.params(extra_args=("--no-wake-on-search",))
    with (tmp_path / "router.stderr").open("wb") as stderr:
        with LineClient(
            [params.command, *params.args], os.environ | (params.env or {}), stderr=stderr
        ) as client:
            started = time.monotonic()
            result = client.call_tool(
                "mcp_call_tool",
                {"toolName": "flood_stderr", "args": {"chars": 257, "lines": 40_000, "hold_s": 0}},
            )
            took = time.monotonic() - started
            assert not result.get("isError"), result
    assert took < SEARCH_BOUND_S * 2, took  # the backend was not slowed to the redaction's pace
    logged = (tmp_path / "router.stderr").read_text(encoding="utf-8")
    copied = logged.count("A" * 257 + "\n")
    assert 0 < copied < 40_000
    report = [line for line in logged.splitlines() if "backend 'noisy' stderr:" in line]
    assert report and "dropped (written faster than" in report[-1], logged[-2000:]
