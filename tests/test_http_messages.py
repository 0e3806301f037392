"""Over Streamable HTTP too (issue 35, items 1 and 9): a cancel whose requestId is an object,
an array, a float, a boolean or null is accepted and ignored, and every request after it is
answered; a request that also carries error or result gets a -32600 answer and an audit row
instead of the SDK's 202 for a "response"."""

import pytest

from tests.facade_support import audit_rows
from tests.http_support import RawHttpSession, serving_http
from tests.test_stdio_notifications import (
    NESTED_PAST_PYTHON,
    ODD_REQUEST_IDS,
    REQUESTS_WITH_A_RESPONSE_MEMBER,
)

pytestmark = pytest.mark.slow


def test_over_http_a_cancel_with_any_request_id_is_accepted_and_every_ping_after_it_answered(facade):
    with serving_http(facade, "staff-backend") as (url, _), RawHttpSession(url) as session:
        for request_id in ODD_REQUEST_IDS:
            cancel = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": request_id},
            }
            accepted = session.post(cancel)
            assert accepted.status_code == 202 and accepted.content == b"", (request_id, accepted.text)
            assert session.request("ping") == {"jsonrpc": "2.0", "id": session._next_id, "result": {}}
        assert "content" in session.search("current time")
    assert [r["outcome"] for r in audit_rows(facade.db)] == ["ok"]


def test_over_http_a_request_that_also_carries_error_or_result_is_answered_and_audited(facade):
    with serving_http(facade, "staff-backend") as (url, _), RawHttpSession(url) as session:
        for line, request_id, words in REQUESTS_WITH_A_RESPONSE_MEMBER:
            answer = session.post(line)
            assert answer.status_code == 400, (line, answer.status_code, answer.text)
            error = answer.json()
            assert error["id"] == request_id and error["error"]["code"] == -32600, (line, error)
            assert words in error["error"]["message"]
        assert session.request("ping")["result"] == {}
    assert [(r["meta_tool"], r["outcome"], r["error"]) for r in audit_rows(facade.db)] == [
        ("(unreadable request)", "invalid_request", f"Invalid Request: a request carries both {words}")
        for _, _, words in REQUESTS_WITH_A_RESPONSE_MEMBER
    ]


def test_over_http_json_nested_past_pythons_own_limit_gets_400_not_500(facade):
    with serving_http(facade, "staff-backend") as (url, _), RawHttpSession(url) as session:
        for in_session in (True, False):
            answer = session.post(NESTED_PAST_PYTHON, in_session=in_session)
            assert answer.status_code == 400, (in_session, answer.status_code, answer.text[:200])
            assert answer.json()["error"]["code"] == -32700
        assert session.request("ping")["result"] == {}
