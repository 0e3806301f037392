"""The router's stdio client session (router/backend_session.py), spoken to by a scripted peer
over the same in-memory message streams the SDK's stdio transport hands it.

End to end against real backend processes (crash, hang, cancel, idle exit) this session is
covered by test_facade_lifecycle.py and test_facade_calls.py; here are the exchanges a real
server rarely produces on demand: answers out of order, ids echoed as strings, requests and
junk lines from the server, a version the router does not speak."""

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from router.backend_session import StdioBackendSession

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
    """The backend's side of the streams: reads what the session sends, writes replies."""

    def __init__(self) -> None:
        self.to_session, self.session_reads = anyio.create_memory_object_stream[SessionMessage | Exception](16)
        self.session_writes, self.from_session = anyio.create_memory_object_stream[SessionMessage](16)
        self.session = StdioBackendSession(self.session_reads, self.session_writes, "peer")

    async def receive(self):
        return (await self.from_session.receive()).message

    async def reply(self, request_id, result: dict | None = None, error: dict | None = None) -> None:
        if error is not None:
            message = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(**error))
        else:
            message = types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result or {})
        await self.to_session.send(SessionMessage(message))


def text_result(text: str) -> dict:
    return {"content": [{"type": "text", "text": text}], "isError": False}


async def test_initialize_offers_2025_11_25_then_sends_initialized():
    peer = Peer()
    async with anyio.create_task_group() as tg:
        tg.start_soon(peer.session.serve)
        tg.start_soon(peer.session.initialize)
        request = await peer.receive()
        assert request.method == "initialize"
        assert request.params["protocolVersion"] == "2025-11-25"
        assert request.params["clientInfo"]["name"] == "context-router"
        await peer.reply(request.id, INITIALIZE_RESULT)
        notification = await peer.receive()
        assert isinstance(notification, types.JSONRPCNotification)
        assert notification.method == "notifications/initialized"
        tg.cancel_scope.cancel()


async def test_a_protocol_version_the_router_does_not_speak_is_refused():
    peer = Peer()
    async with anyio.create_task_group() as tg:
        tg.start_soon(peer.session.serve)

        async def answer() -> None:
            request = await peer.receive()
            await peer.reply(request.id, INITIALIZE_RESULT | {"protocolVersion": "2026-07-28"})

        tg.start_soon(answer)
        with pytest.raises(MCPError) as refused:
            await peer.session.initialize()
        assert refused.value.error.code == types.UNSUPPORTED_PROTOCOL_VERSION
        assert "'2026-07-28'" in refused.value.error.message
        tg.cancel_scope.cancel()


async def test_calls_in_flight_get_their_own_answers_whatever_the_order():
    peer = Peer()
    results: dict[str, str] = {}
    async with anyio.create_task_group() as tg:
        tg.start_soon(peer.session.serve)

        async def call(name: str) -> None:
            result = await peer.session.call_tool(name, {"n": name})
            results[name] = result.content[0].text

        for name in ("a", "b", "c"):
            tg.start_soon(call, name)
        requests = [await peer.receive() for _ in range(3)]
        assert len({r.id for r in requests}) == 3
        # answer backwards, one id echoed as a string
        for request in reversed(requests):
            request_id = str(request.id) if request.params["name"] == "b" else request.id
            await peer.reply(request_id, text_result(f"answer to {request.params['arguments']['n']}"))
        with anyio.fail_after(5):
            while len(results) < 3:
                await anyio.sleep(0.01)
        tg.cancel_scope.cancel()
    assert results == {"a": "answer to a", "b": "answer to b", "c": "answer to c"}


async def test_an_error_response_is_an_mcp_error_with_the_backends_code_and_message():
    peer = Peer()
    async with anyio.create_task_group() as tg:
        tg.start_soon(peer.session.serve)

        async def answer() -> None:
            request = await peer.receive()
            await peer.reply(request.id, error={"code": -32602, "message": "unknown tool nope"})

        tg.start_soon(answer)
        with pytest.raises(MCPError) as refused:
            await peer.session.call_tool("nope", {})
        assert (refused.value.error.code, refused.value.error.message) == (-32602, "unknown tool nope")
        tg.cancel_scope.cancel()


async def test_a_result_that_is_not_a_tool_result_is_rejected():
    peer = Peer()
    async with anyio.create_task_group() as tg:
        tg.start_soon(peer.session.serve)

        async def answer() -> None:
            request = await peer.receive()
            await peer.reply(request.id, {"content": "not a list"})

        tg.start_soon(answer)
        with pytest.raises(ValueError):  # pydantic's ValidationError
            await peer.session.call_tool("x", {})
        tg.cancel_scope.cancel()


async def test_server_requests_are_answered_ping_with_a_result_the_rest_refused_and_junk_skipped():
    peer = Peer()
    async with anyio.create_task_group() as tg:
        tg.start_soon(peer.session.serve)
        await peer.to_session.send(ValueError("a stray print on the backend's stdout"))
        await peer.to_session.send(SessionMessage(types.JSONRPCNotification(
            jsonrpc="2.0", method="notifications/message", params={"level": "info", "data": "hi"})))
        await peer.to_session.send(SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id="p1", method="ping")))
        pong = await peer.receive()
        assert isinstance(pong, types.JSONRPCResponse) and pong.id == "p1" and pong.result == {}
        await peer.to_session.send(SessionMessage(types.JSONRPCRequest(
            jsonrpc="2.0", id=9, method="sampling/createMessage", params={})))
        refused = await peer.receive()
        assert isinstance(refused, types.JSONRPCError) and refused.id == 9
        assert refused.error.code == types.METHOD_NOT_FOUND
        assert "sampling/createMessage" in refused.error.message

        # and the session still serves calls afterwards
        async def answer() -> None:
            request = await peer.receive()
            await peer.reply(request.id, text_result("still here"))

        tg.start_soon(answer)
        assert (await peer.session.call_tool("x", {})).content[0].text == "still here"
        tg.cancel_scope.cancel()


async def test_the_backend_closing_fails_calls_in_flight_and_later_calls_at_once():
    peer = Peer()
    async with anyio.create_task_group() as tg:
        tg.start_soon(peer.session.serve)

        async def close_after_request() -> None:
            await peer.receive()
            await peer.to_session.aclose()  # the process exited: its stdout ended

        tg.start_soon(close_after_request)
        with anyio.fail_after(5), pytest.raises(MCPError) as closed:
            await peer.session.call_tool("x", {})
        assert closed.value.error.code == types.CONNECTION_CLOSED
        with pytest.raises(MCPError) as later:
            await peer.session.call_tool("y", {})
        assert later.value.error.code == types.CONNECTION_CLOSED


async def test_a_call_its_caller_abandons_is_cancelled_at_the_backend():
    peer = Peer()
    async with anyio.create_task_group() as tg:
        tg.start_soon(peer.session.serve)
        with anyio.move_on_after(0.2):
            await peer.session.call_tool("slow", {})
        request = await peer.receive()
        notice = await peer.receive()
        assert isinstance(notice, types.JSONRPCNotification)
        assert notice.method == "notifications/cancelled"
        assert notice.params["requestId"] == request.id
        # a late answer to the abandoned id is dropped, not given to the next call
        await peer.reply(request.id, text_result("too late"))

        async def answer() -> None:
            next_request = await peer.receive()
            await peer.reply(next_request.id, text_result("fresh"))

        tg.start_soon(answer)
        assert (await peer.session.call_tool("next", {})).content[0].text == "fresh"
        tg.cancel_scope.cancel()
