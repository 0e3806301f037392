"""The money bars through a real server over stdio and the OpenRouter stand-in: the budget caps
the worst case (fitted by lowering max_tokens, or refused with the numbers before anything is
sent), day caps hold across processes, the provider is asked to hold the prices, and a cost
that is malformed or above the reservation is never settled at less than it may be."""

import json

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
from tests.openrouter_stub import OVERCHARGE_USD, OpenRouterStub

pytestmark = [pytest.mark.slow, pytest.mark.anyio]
ROOMY = {
    "cost.session_max_invocations": 50,
    "cost.session_max_usd": 100.0,
    "cost.day_max_invocations": 50,
    "cost.day_max_usd": 100.0,
}


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def stub():
    with OpenRouterStub(DEFAULT_PRICES, API_KEY) as running:
        yield running


@pytest.fixture
def db(tmp_path):
    return prepared_db(tmp_path / "router.db")


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "Gap.lean").write_text("theorem cleanMerge_preservesGap : True := by\n  sorry\n")
    return ws


def result_of(call):
    assert not call.is_error, call.content[0].text
    return json.loads(call.content[0].text)


async def test_budget_between_estimate_and_worst_case_fits_by_lowering_max_tokens(
    db, tmp_path, workspace, stub
):
    config = write_config(tmp_path / "bg.toml", ROOMY)
    full = probe(db, config, workspace, LEAN_PROBLEM, "lean_proof", default_budget_usd=100.0).estimate
    least = probe(
        db, config, workspace, LEAN_PROBLEM, "lean_proof", default_budget_usd=100.0, output_cap_tokens=1200
    ).estimate
    # a budget above the expected cost, below the worst case, but above the least useful worst case
    budget = round((least.worst_case_micro + full.worst_case_micro) / 2 / 1e6, 4)
    assert full.expected_micro < budget * 1e6 < full.worst_case_micro
    async with break_glass_client(server_params(db, config, workspace, stub.base_url)) as client:
        result = result_of(await client.call_tool("break_glass", arguments(budget=budget)))
    cost = result["cost"]
    assert result["status"] == "ok" and 1200 <= cost["max_tokens"] < 4000
    assert cost["worst_case_micro_usd"] <= budget * 1e6 and cost["actual_micro_usd"] <= budget * 1e6
    assert f"max_tokens lowered from 4000 to {cost['max_tokens']} per call" in result["warnings"][0]
    assert f"this call's budget is ${budget:.2f}" in result["warnings"][0]
    assert [r["body"]["max_tokens"] for r in stub.completions()] == [cost["max_tokens"]]
    stored = rows(db, "SELECT output_cap_tokens, worst_case_micro_usd FROM breakglass_invocations")
    assert stored == [
        {"output_cap_tokens": cost["max_tokens"], "worst_case_micro_usd": cost["worst_case_micro_usd"]}
    ]


async def test_budget_that_no_useful_max_tokens_fits_sends_nothing_and_says_by_how_much(
    db, tmp_path, workspace, stub
):
    config = write_config(tmp_path / "bg.toml", ROOMY)
    full = probe(db, config, workspace, LEAN_PROBLEM, "lean_proof", default_budget_usd=100.0).estimate
    least = probe(
        db, config, workspace, LEAN_PROBLEM, "lean_proof", default_budget_usd=100.0, output_cap_tokens=1200
    ).estimate
    budget_micro = (full.expected_micro + least.worst_case_micro) // 2
    budget = round(budget_micro / 1e6, 2)
    assert full.expected_micro < budget * 1e6 < least.worst_case_micro
    async with break_glass_client(server_params(db, config, workspace, stub.base_url)) as client:
        call = await client.call_tool("break_glass", arguments(budget=budget))
    assert call.is_error
    short = (full.worst_case_micro - round(budget * 1e6)) / 1e6
    message = call.content[0].text
    assert f"the worst case ${full.worst_case_micro / 1e6:.4f}" in message
    assert f"this call's budget is ${budget:.2f}, short by ${short:.4f}" in message
    assert (
        f"at max_tokens 1200, the least that leaves room for a useful answer, the worst case would be ${least.worst_case_micro / 1e6:.4f}"
        in message
    )
    assert stub.requests == []
    assert rows(db, "SELECT count(*) AS n FROM cost_ledger WHERE kind = 'reservation'") == [{"n": 0}]


async def test_day_cap_refuses_a_new_process_before_anything_is_sent(db, tmp_path, workspace, stub):
    config = write_config(tmp_path / "bg.toml", {**ROOMY, "cost.day_max_invocations": 2})
    async with break_glass_client(
        server_params(db, config, workspace, stub.base_url, session="first")
    ) as client:
        for _ in range(2):
            assert result_of(await client.call_tool("break_glass", arguments()))["status"] == "ok"
    sent = len(stub.requests)
    async with break_glass_client(
        server_params(db, config, workspace, stub.base_url, session="second")
    ) as client:
        call = await client.call_tool("break_glass", arguments())
    assert (
        call.is_error
        and "day cap reached: 2 of 2 break-glass calls already made today" in call.content[0].text
    )
    assert len(stub.requests) == sent == 2
    assert rows(db, "SELECT status FROM breakglass_invocations WHERE session_id = 'second'") == [
        {"status": "refused"}
    ]


async def test_a_stable_session_keeps_its_caps_across_restarts(db, tmp_path, workspace, stub):
    config = write_config(tmp_path / "bg.toml", {**ROOMY, "cost.session_max_invocations": 2})
    for _ in range(2):
        async with break_glass_client(
            server_params(db, config, workspace, stub.base_url, session="proj")
        ) as client:
            assert result_of(await client.call_tool("break_glass", arguments()))["status"] == "ok"
    async with break_glass_client(
        server_params(db, config, workspace, stub.base_url, session="proj")
    ) as client:
        call = await client.call_tool("break_glass", arguments())
    assert call.is_error and "2 of 2 break-glass calls already made in session proj" in call.content[0].text
    assert len(stub.requests) == 2


async def test_the_provider_is_asked_to_hold_the_estimates_prices(db, tmp_path, workspace, stub):
    config = write_config(tmp_path / "bg.toml", {**ROOMY, "openrouter.fusion": False})
    async with break_glass_client(server_params(db, config, workspace, stub.base_url)) as client:
        result_of(await client.call_tool("break_glass", arguments()))
    ceilings = {r["body"]["model"]: r["body"]["provider"]["max_price"] for r in stub.completions()}
    # USD per million tokens at the catalog's prices (Opus $5/$25, DeepSeek V4 $0.30/$1.20)
    assert ceilings["anthropic/claude-opus-4.8"] == {"prompt": 5.0, "completion": 25.0}
    assert ceilings["deepseek/deepseek-v4"] == {"prompt": 0.3, "completion": 1.2}
    # a provider above the ceiling is refused by OpenRouter, as the stand-in does too
    stub.prices["deepseek/deepseek-v4"] = tuple(p * 2 for p in stub.prices["deepseek/deepseek-v4"])
    stub.requests.clear()
    async with break_glass_client(server_params(db, config, workspace, stub.base_url)) as client:
        result = result_of(await client.call_tool("break_glass", arguments()))
    assert result["status"] == "ok" and "Panelist deepseek" not in stub.completions()[-1]["raw"]


@pytest.mark.parametrize("behaviour", ["cost_abc", "cost_negative", "no_usage"])
async def test_a_missing_or_malformed_cost_is_looked_up_by_the_generation(
    db, tmp_path, workspace, stub, behaviour
):
    """No usable usage.cost, but OpenRouter knows what the generation cost: that is asked
    (GET /api/v1/generation?id=) and settled, not the worst case."""
    config = write_config(tmp_path / "bg.toml", ROOMY)
    stub.queue("fusion", behaviour)
    async with break_glass_client(server_params(db, config, workspace, stub.base_url)) as client:
        result = result_of(await client.call_tool("break_glass", arguments()))
    cost = result["cost"]
    [request] = rows(db, "SELECT generation_id, cost_micro_usd FROM breakglass_requests")
    generation = request["generation_id"]
    lookups = [r["raw"] for r in stub.requests if r["route"] == "GET"]
    assert f"/api/v1/generation?id={generation}" in lookups
    billed = round(stub.generations[generation] * 1e6 + 0.5)
    assert result["status"] == "ok" and abs(cost["actual_micro_usd"] - billed) <= 1
    assert request["cost_micro_usd"] == cost["actual_micro_usd"] < cost["worst_case_micro_usd"] // 2
    reason = rows(db, "SELECT reason FROM breakglass_invocations")[0]["reason"]
    assert "looked up" in reason and "counted at worst case" not in reason


async def test_a_cost_nobody_can_tell_counts_at_the_worst_case_never_zero(db, tmp_path, workspace, stub):
    config = write_config(tmp_path / "bg.toml", ROOMY)
    stub.queue("fusion", "no_usage_unknown")
    async with break_glass_client(server_params(db, config, workspace, stub.base_url)) as client:
        result = result_of(await client.call_tool("break_glass", arguments()))
    cost = result["cost"]
    assert result["status"] == "ok"
    assert cost["actual_micro_usd"] == cost["worst_case_micro_usd"] // 2 > 0  # one attempt's worst case
    reason = rows(db, "SELECT reason FROM breakglass_invocations")[0]["reason"]
    assert "counted at worst case" in reason and "ExceptionGroup" not in reason


async def test_a_charge_above_the_reservation_is_kept_as_reported_and_stops_the_session(
    db, tmp_path, workspace, stub
):
    config = write_config(tmp_path / "bg.toml", {**ROOMY, "cost.session_max_usd": 5.0})
    stub.queue("fusion", "overcharge")
    async with break_glass_client(server_params(db, config, workspace, stub.base_url, session="s")) as client:
        result = result_of(await client.call_tool("break_glass", arguments()))
        assert result["cost"]["actual_micro_usd"] == OVERCHARGE_USD * 1e6  # never clipped
        assert result["cost"]["over_worst_case"] is True and result["status"] == "failed"
        assert "stopped: fusion attempt 1 was charged $4.000000, above its worst case" in result["message"]
        sent = len(stub.requests)
        call = await client.call_tool("break_glass", arguments())
        assert call.is_error and "session s is stopped" in call.content[0].text
    assert len(stub.requests) == sent == 1
    overrun = rows(db, "SELECT micro_usd FROM cost_ledger WHERE kind = 'overrun'")
    assert overrun == [{"micro_usd": OVERCHARGE_USD * 1e6 - result["cost"]["reserved_micro_usd"]}]
    recent = rows(db, "SELECT over_worst_case FROM v_breakglass_recent ORDER BY id LIMIT 1")
    assert recent == [{"over_worst_case": 1}]
