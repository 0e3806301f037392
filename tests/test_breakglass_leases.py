"""kill -9 of a break-glass server mid-call: the next ledger write (here, the next call of the
same session from a new process) settles the dead call as interrupted, at the cost each
request reported, the cost OpenRouter's generation endpoint reports for the one that
answered without one, and the worst case of the one in flight; and the new call sees the
session's right remaining budget."""

import json
import os
import signal

import anyio
import pytest

from router.breakglass.settings import DEFAULT_PRICES
from tests.breakglass_support import (
    API_KEY,
    LEAN_PROBLEM,
    arguments,
    break_glass_client,
    prepared_db,
    probe,
    server_params,
    write_config,
)
from tests.db_rows import rows
from tests.openrouter_stub import OpenRouterStub

pytestmark = [pytest.mark.slow, pytest.mark.anyio]
PANEL = ["anthropic/claude-opus-4.8", "deepseek/deepseek-v4", "google/gemini-3.1-pro"]


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def test_killed_mid_call_is_settled_by_the_next_write(tmp_path):
    db = prepared_db(tmp_path / "router.db")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    base = {"openrouter.fusion": False, "cost.day_max_usd": 100.0, "cost.day_max_invocations": 50}
    probe_config = write_config(tmp_path / "probe.toml", base)
    estimate = probe(db, probe_config, workspace, LEAN_PROBLEM, "lean_proof", session_max_usd=100.0).estimate
    reserved, one_run = estimate.worst_case_micro, estimate.worst_run_micro
    # room for the new call only if the dead one counts what it spent, not its whole reservation
    cap = (reserved + reserved - one_run // 2) / 1e6
    config = write_config(tmp_path / "bg.toml", {**base, "cost.session_max_usd": cap})

    with OpenRouterStub(DEFAULT_PRICES, API_KEY, slow_seconds=20.0) as stub:
        # answers with a generation id and no cost, which OpenRouter knows only later
        stub.queue("deepseek/deepseek-v4", "no_usage_late")
        stub.queue("judge", "slow")  # still thinking when the server is killed
        params = server_params(db, config, workspace, stub.base_url, session="kept")
        killed = []
        with pytest.raises(BaseException):  # noqa: B017 - the client loses its server mid-call, however it says so
            async with break_glass_client(params) as client:
                async with anyio.create_task_group() as group:
                    group.start_soon(client.call_tool, "break_glass", arguments())
                    with anyio.fail_after(60):
                        while "judge" not in stub.routes():
                            await anyio.sleep(0.05)
                    pid = rows(db, "SELECT pid FROM breakglass_invocations")[0]["pid"]
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                    await anyio.sleep(0.5)
                    group.cancel_scope.cancel()
        assert killed, "the server was not killed mid-call"
        dead = rows(db, "SELECT id, status FROM breakglass_invocations")
        assert dead == [{"id": 1, "status": "started"}]  # nobody has written since
        requests = rows(
            db, "SELECT what, generation_id, cost_micro_usd, worst_micro_usd FROM breakglass_requests"
        )
        answered = {r["what"]: r for r in requests}
        assert set(answered) == {*(f"panel {m}" for m in PANEL), "judge attempt 1"}
        lookup = answered["panel deepseek/deepseek-v4"]
        assert lookup["generation_id"].startswith("gen-") and lookup["cost_micro_usd"] is None
        assert answered["judge attempt 1"]["generation_id"] is None

        stub.publish_generations()
        async with break_glass_client(
            server_params(db, config, workspace, stub.base_url, session="kept")
        ) as client:
            call = await client.call_tool("break_glass", arguments())
        assert not call.is_error, call.content[0].text
        result = json.loads(call.content[0].text)

    # the dead call: interrupted, at reported + looked-up + in-flight worst case costs
    looked_up = round(stub.generations[lookup["generation_id"]] * 1e6 + 0.5)
    reported = sum(answered[f"panel {m}"]["cost_micro_usd"] for m in PANEL if m != "deepseek/deepseek-v4")
    expected = reported + looked_up + answered["judge attempt 1"]["worst_micro_usd"]
    first = rows(db, "SELECT status, actual_micro_usd, reason FROM breakglass_invocations WHERE id = 1")[0]
    assert first["status"] == "interrupted" and abs(first["actual_micro_usd"] - expected) <= 1
    assert "4 requests sent, cost 2 reported, 1 looked up, 1 worst case" in first["reason"]
    assert any(r["path"] == "/api/v1/generation" for r in stub.requests)
    kinds = [r["kind"] for r in rows(db, "SELECT kind FROM cost_ledger WHERE invocation_id = 1 ORDER BY id")]
    assert kinds == ["estimate", "reservation", "settlement", "release", "outcome"]
    # the new call saw the right room: its worst case fitted without lowering max_tokens
    assert result["status"] == "ok" and result["cost"]["max_tokens"] == 4000 and result["warnings"] == []
    session = rows(db, "SELECT calls, open_reserved_micro_usd, spent_micro_usd FROM v_cost_per_session")[0]
    assert session["calls"] == 2 and session["open_reserved_micro_usd"] == 0
    assert session["spent_micro_usd"] == first["actual_micro_usd"] + result["cost"]["actual_micro_usd"]
    assert rows(db, "SELECT status FROM v_breakglass_recent ORDER BY id") == [
        {"status": "interrupted"},
        {"status": "ok"},
    ]
