"""No notification ends the stdio router and no request goes unanswered (issue 35, items 1
and 9), over a real `context-router serve` on real pipes: a cancel whose requestId is an
object, an array, a float, a boolean or null is ignored, a notification is never answered,
valid or not, a request that also carries error or result gets -32600 and an audit row, and
a request the client cancelled no longer holds the router open once stdin closes."""

import json
import time

import anyio
import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage

from router.db import connect
from router.facade.jsonrpc_lines import LineClient
from router.facade.stdio_answering import AnsweringReadStream, Unanswered, UnreadableMessage
from tests.facade_support import RawStdioClient, audit_rows
from tests.test_stdio_transport import ROUTER

pytestmark = pytest.mark.slow

ODD_REQUEST_IDS = [{"a": 1}, [1], 1.5, True, False, None, "never-sent", 424242]


def cancel(request_id) -> bytes:
    message = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
    return (json.dumps(message) + "\n").encode()


def test_a_cancel_with_any_request_id_is_ignored_and_every_ping_after_it_answered(facade):
    with RawStdioClient(facade.params()) as client:
        for request_id in ODD_REQUEST_IDS:
            client.write_raw(cancel(request_id))
            ping = client.send("ping")
            answer = json.loads(client.read_line(timeout_s=10))
            # the next line is the ping's answer: the notification got none
            assert answer == {"jsonrpc": "2.0", "id": ping, "result": {}}, (request_id, answer)
        assert client.process.poll() is None
        assert client.request("tools/list")["tools"]
    assert client.process.returncode == 0
    assert audit_rows(facade.db) == []  # nothing was refused: the SDK ignores such a cancel


NOTIFICATIONS_THE_SDK_REFUSES = [
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}',
    b'{"jsonrpc":"2.0","method":"notifications/initialized","params":"x"}',
    b'{"jsonrpc":"1.0","method":"notifications/cancelled","params":{"requestId":1}}',
]


def test_a_notification_the_sdk_cannot_read_is_never_answered_but_audited(facade):
    with RawStdioClient(facade.params()) as client:
        for line in NOTIFICATIONS_THE_SDK_REFUSES:
            client.write_raw(line + b"\n")
            ping = client.send("ping")
            assert json.loads(client.read_line(timeout_s=10))["id"] == ping, line
    rows = audit_rows(facade.db)
    assert [(r["meta_tool"], r["outcome"]) for r in rows] == [
        ("(unreadable request)", "invalid_request")
    ] * len(NOTIFICATIONS_THE_SDK_REFUSES)
    assert all(r["error"].startswith("Invalid Request: not a JSON-RPC 2.0 message") for r in rows)


REQUESTS_WITH_A_RESPONSE_MEMBER = [
    (b'{"jsonrpc":"2.0","id":7,"method":"ping","error":{"code":1,"message":"x"}}', 7, "method and error"),
    (
        b'{"jsonrpc":"2.0","id":"e","method":"tools/list","error":{"code":1,"message":"x"}}',
        "e",
        "method and error",
    ),
    (b'{"jsonrpc":"2.0","id":8,"method":"ping","result":{}}', 8, "method and result"),
    (b'{"jsonrpc":"2.0","method":"ping","error":{"code":1,"message":"x"}}', None, "method and error"),
]


def test_a_request_that_also_carries_error_or_result_gets_minus_32600_and_an_audit_row(facade):
    with RawStdioClient(facade.params()) as client:
        for line, request_id, words in REQUESTS_WITH_A_RESPONSE_MEMBER:
            client.write_raw(line + b"\n")
            answer = json.loads(client.read_line(timeout_s=10))
            assert answer["id"] == request_id, (line, answer)
            assert answer["error"]["code"] == -32600
            assert words in answer["error"]["message"], answer
        # a request whose params merely hold a member called "error" is run as usual
        listed = client.request("tools/call", {"name": "mcp_search_tools", "arguments": {"query": "error"}})
        assert "content" in listed
    rows = audit_rows(facade.db)
    refused = [r for r in rows if r["outcome"] == "invalid_request"]
    assert len(refused) == len(REQUESTS_WITH_A_RESPONSE_MEMBER)
    assert [r["error"] for r in refused] == [
        f"Invalid Request: a request carries both {words}" for _, _, words in REQUESTS_WITH_A_RESPONSE_MEMBER
    ]


def test_a_call_the_client_cancelled_by_a_string_id_no_longer_holds_the_router_at_end_of_input(facade):
    """The SDK cancels a request named "5" when its id is 5, and never answers it: the end of
    input must not wait for that answer."""
    with RawStdioClient(facade.params()) as client:
        call = client.send(
            "tools/call", {"name": "mcp_call_tool", "arguments": {"toolName": "hang_forever", "args": {}}}
        )
        time.sleep(1.0)  # the call is under way (the backend started, the call forwarded)
        client.write_raw(cancel(str(call)))
        ping = client.send("ping")
        assert json.loads(client.read_line(timeout_s=10))["id"] == ping
        started = time.monotonic()
        client._stdin.close()
        # the backend's call timeout is 10 s: an answer-waiting router would hang for ever
        assert client.process.wait(timeout=20) == 0
        assert time.monotonic() - started < 10
        assert client.read_line(timeout_s=1) == b""  # nothing more: the cancelled call got no answer


class _Lines:
    """A read stream of given items, then the end of input."""

    def __init__(self, items: list) -> None:
        self._items = list(items)

    async def receive(self):
        if not self._items:
            raise anyio.EndOfStream
        return self._items.pop(0)

    async def aclose(self) -> None:
        pass


class _Written:
    def __init__(self) -> None:
        self.items: list = []

    async def send(self, item) -> None:
        self.items.append(item)


def test_a_fault_while_handling_one_line_is_logged_and_the_next_lines_still_arrive(caplog):
    ping = SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id=3, method="ping"))
    refused = UnreadableMessage(-32600, "Invalid Request: x", 9)
    reports = []

    def audit_that_breaks(code: int, message: str) -> None:
        reports.append(message)
        raise RuntimeError("the audit broke: token=ghp_0123456789abcdefghijABCDEFGHIJ012345")

    async def run() -> tuple[SessionMessage, list]:
        written = _Written()
        stream = AnsweringReadStream(
            _Lines([refused, refused, ping]), Unanswered(), written, audit_that_breaks
        )
        return await stream.receive(), written.items

    got, written = anyio.run(run)
    assert got.message == ping.message  # the loop went on past both faults
    assert [item.message.id for item in written] == [9, 9]  # and both lines were still answered
    assert reports == ["Invalid Request: x"] * 2
    logged = caplog.text
    assert "could not report a refused line (RuntimeError" in logged
    assert "ghp_0123456789abcdefghij" not in logged  # what a fault's text quotes is redacted


# Nested past Python's own recursion limit (not only the SDK parser's 200 levels): json.loads
# raises RecursionError, which is not a ValueError.
NESTED_PAST_PYTHON = (
    b'{"jsonrpc":"2.0","id":9,"method":"ping","params":' + b'{"a":' * 100_000 + b"1" + b"}" * 100_001
)


def test_json_nested_past_pythons_own_limit_is_answered_and_the_router_serves_on(tmp_path):
    connect(tmp_path / "r.db").close()  # an empty catalog is all the transport needs
    with LineClient([*ROUTER, "--db", str(tmp_path / "r.db")]) as client:
        client.write_raw(NESTED_PAST_PYTHON + b"\n")
        reply = json.loads(client.read_line(timeout_s=10))
        assert reply["id"] is None and reply["error"]["code"] == -32700, reply
        assert "nested deeper than the parser allows" in reply["error"]["message"]
        assert client.request("tools/list")["tools"]
