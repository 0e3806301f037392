"""The router's stdio client session (router/facade/backend_session.py), spoken to by a scripted peer
over a real socket pair (the same stream reader and writer a backend's pipes give it).

End to end against real backend processes (crash, hang, cancel, idle exit, stderr) this
session is covered by test_facade_lifecycle.py and test_facade_calls.py; here are the
exchanges a real server rarely produces on demand: answers out of order, ids echoed as
strings, requests and junk lines from the server, a version the router does not speak."""

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import anyio
import anyio.abc
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from router.facade.backend_session import StdioBackendSession
from tests.facade_support import alive

pytestmark = pytest.mark.anyio

INITIALIZE_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "peer", "version": "1"},
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Peer:
    """The backend's side: reads the lines the session writes, writes replies."""

    async def connect(self) -> "Peer":
        session_end, peer_end = socket.socketpair()
        reader, writer = await asyncio.open_connection(sock=session_end)
        self.session = StdioBackendSession(reader, writer, "peer")
        self._reader, self._writer = await asyncio.open_connection(sock=peer_end)
        return self

    async def receive(self) -> dict:
        with anyio.fail_after(5):
            return json.loads(await self._reader.readline())

    async def write(self, message: dict | bytes) -> None:
        self._writer.write(message if isinstance(message, bytes) else (json.dumps(message) + "\n").encode())
        await self._writer.drain()

    async def reply(self, request_id, result: dict | None = None, error: dict | None = None) -> None:
        body = {"error": error} if error is not None else {"result": result or {}}
        await self.write({"jsonrpc": "2.0", "id": request_id, **body})

    async def answer_next(self, result: dict | None = None, error: dict | None = None) -> None:
        """Reply to the next request the session sends."""
        request = await self.receive()
        await self.reply(request["id"], result, error)

    def hang_up(self) -> None:
        self._writer.close()  # the process exited: its stdout ended


@asynccontextmanager
async def connected() -> AsyncIterator[tuple[Peer, anyio.abc.TaskGroup]]:
    """A peer whose session is being served, in a task group cancelled at the end."""
    peer = await Peer().connect()
    async with anyio.create_task_group() as tg:
        tg.start_soon(peer.session.serve)
        yield peer, tg
        tg.cancel_scope.cancel()


def text_result(text: str) -> dict:
    return {"content": [{"type": "text", "text": text}], "isError": False}


async def test_initialize_offers_2025_11_25_then_sends_initialized():
    async with connected() as (peer, tg):
        tg.start_soon(peer.session.initialize)
        request = await peer.receive()
        assert request["method"] == "initialize"
        assert request["params"]["protocolVersion"] == "2025-11-25"
        assert request["params"]["clientInfo"]["name"] == "context-router"
        await peer.reply(request["id"], INITIALIZE_RESULT)
        notification = await peer.receive()
        assert notification == {"jsonrpc": "2.0", "method": "notifications/initialized"}


async def test_a_protocol_version_the_router_does_not_speak_is_refused():
    async with connected() as (peer, tg):
        tg.start_soon(peer.answer_next, INITIALIZE_RESULT | {"protocolVersion": "2026-07-28"})
        with pytest.raises(MCPError) as refused:
            await peer.session.initialize()
        assert refused.value.error.code == types.UNSUPPORTED_PROTOCOL_VERSION
        assert "'2026-07-28'" in refused.value.error.message


async def test_calls_in_flight_get_their_own_answers_whatever_the_order():
    results: dict[str, str] = {}
    async with connected() as (peer, tg):

        async def call(name: str) -> None:
            result = await peer.session.call_tool(name, {"n": name})
            results[name] = result.content[0].text

        for name in ("a", "b", "c"):
            tg.start_soon(call, name)
        requests = [await peer.receive() for _ in range(3)]
        assert len({r["id"] for r in requests}) == 3
        # answer backwards, one id echoed as a string
        for request in reversed(requests):
            request_id = str(request["id"]) if request["params"]["name"] == "b" else request["id"]
            await peer.reply(request_id, text_result(f"answer to {request['params']['arguments']['n']}"))
        with anyio.fail_after(5):
            while len(results) < 3:
                await anyio.sleep(0.01)
    assert results == {"a": "answer to a", "b": "answer to b", "c": "answer to c"}


async def test_an_error_response_is_an_mcp_error_with_the_backends_code_and_message():
    async with connected() as (peer, tg):
        tg.start_soon(partial(peer.answer_next, error={"code": -32602, "message": "unknown tool nope"}))
        with pytest.raises(MCPError) as refused:
            await peer.session.call_tool("nope", {})
        assert (refused.value.error.code, refused.value.error.message) == (-32602, "unknown tool nope")


async def test_a_result_that_is_not_a_tool_result_is_rejected():
    async with connected() as (peer, tg):
        tg.start_soon(peer.answer_next, {"content": "not a list"})
        with pytest.raises(ValueError):  # pydantic's ValidationError
            await peer.session.call_tool("x", {})


async def test_server_requests_are_answered_ping_with_a_result_the_rest_refused_and_junk_skipped():
    async with connected() as (peer, tg):
        await peer.write(b"a stray print on the backend's stdout\n")
        await peer.write(
            {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}}
        )
        await peer.write({"jsonrpc": "2.0", "id": "p1", "method": "ping"})
        assert await peer.receive() == {"jsonrpc": "2.0", "id": "p1", "result": {}}
        await peer.write({"jsonrpc": "2.0", "id": 9, "method": "sampling/createMessage", "params": {}})
        refused = await peer.receive()
        assert refused["id"] == 9 and refused["error"]["code"] == types.METHOD_NOT_FOUND
        assert "sampling/createMessage" in refused["error"]["message"]

        # and the session still serves calls afterwards
        tg.start_soon(peer.answer_next, text_result("still here"))
        assert (await peer.session.call_tool("x", {})).content[0].text == "still here"


async def test_the_backend_closing_fails_calls_in_flight_and_later_calls_at_once():
    async with connected() as (peer, tg):

        async def close_after_request() -> None:
            await peer.receive()
            peer.hang_up()

        tg.start_soon(close_after_request)
        with anyio.fail_after(5), pytest.raises(MCPError) as closed:
            await peer.session.call_tool("x", {})
        assert closed.value.error.code == types.CONNECTION_CLOSED
        with pytest.raises(MCPError) as later:
            await peer.session.call_tool("y", {})
        assert later.value.error.code == types.CONNECTION_CLOSED


async def test_a_call_its_caller_abandons_is_cancelled_at_the_backend():
    async with connected() as (peer, tg):
        with anyio.move_on_after(0.2):
            await peer.session.call_tool("slow", {})
        request = await peer.receive()
        notice = await peer.receive()
        assert notice["method"] == "notifications/cancelled"
        assert notice["params"]["requestId"] == request["id"]
        # a late answer to the abandoned id is dropped, not given to the next call
        await peer.reply(request["id"], text_result("too late"))

        tg.start_soon(peer.answer_next, text_result("fresh"))
        assert (await peer.session.call_tool("next", {})).content[0].text == "fresh"


@pytest.mark.slow
async def test_a_backend_deaf_to_stdin_close_and_sigterm_is_killed_with_its_children():
    import sys

    from mcp import StdioServerParameters

    from router.facade.backend_session import backend_process

    deaf = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
    parent = (
        "import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        f"child = subprocess.Popen([sys.executable, '-c', {deaf!r}]); print(child.pid, flush=True); time.sleep(60)"
    )
    params = StdioServerParameters(command=sys.executable, args=["-c", parent])
    with open("/dev/null", "wb") as stderr:
        async with backend_process(params, stderr) as running:
            process = running.process
            with anyio.fail_after(10):
                child_pid = int(await process.stdout.readline())
            assert alive(process.pid) and alive(child_pid)
    # stdin closed (ignored), SIGTERM to the group (ignored), then SIGKILL to the group
    assert process.returncode == -9
    with anyio.fail_after(5):
        while alive(child_pid):
            await anyio.sleep(0.05)
