"""One break-glass call in flight per database: a second call while one is between its
reservation and its settlement is refused at once with who holds the flight, so a provider
billing above every reservation overshoots a cap by one call's charge at most, and the next
call is refused with the figures. Also: what an interrupted call's settlement amount is."""

import json
import time

import anyio
import pytest

from router.breakglass import ledger
from router.breakglass.settings import DEFAULT_PRICES
from router.db import connect, query_dicts
from tests.breakglass_support import (
    API_KEY,
    arguments,
    break_glass_client,
    prepared_db,
    server_params,
    write_config,
)
from tests.ledger_support import ROOMY, invocation
from tests.openrouter_stub import OpenRouterStub

DEAD_PID = 2147483000
IN_FLIGHT = "another break-glass call is in flight since"


def status(conn, invocation_id):
    return conn.execute(
        "SELECT status FROM breakglass_invocations WHERE id = ?", (invocation_id,)
    ).fetchone()[0]


def lapse(conn, invocation_id):
    """The call's lease ran out long ago: it is no longer renewed."""
    conn.execute(
        "UPDATE breakglass_invocations SET lease_expires_at = '2000-01-01T00:00:00.000Z' WHERE id = ?",
        (invocation_id,),
    )


def settlement_detail(conn, invocation_id):
    return conn.execute(
        "SELECT detail FROM cost_ledger WHERE invocation_id = ? AND kind = 'settlement'", (invocation_id,)
    ).fetchone()[0]


def test_a_second_call_is_refused_while_one_is_in_flight(conn):
    first = invocation(conn, "s1")
    assert ledger.reserve(conn, "s1", first, 1_000, ROOMY) is None
    # any session, any process sharing the file: the flight is the database's
    second = invocation(conn, "s2")
    refusal = ledger.reserve(conn, "s2", second, 1_000, ROOMY)
    assert refusal is not None and refusal.startswith(IN_FLIGHT)
    assert f"invocation #{first} (session s1, process" in refusal and "$0.0010 reserved" in refusal
    assert refusal.endswith("retry after it settles")
    assert status(conn, second) == "refused"
    assert query_dicts(conn, "SELECT detail FROM cost_ledger WHERE kind = 'refusal'") == [{"detail": refusal}]
    # a call that is only open (not reserved: estimating, or waiting for a person) holds nothing
    assert status(conn, invocation(conn, "s3")) == "started"
    ledger.settle(conn, "s1", first, status="ok", reserved=1_000, actual=400)
    third = invocation(conn, "s2")
    assert ledger.reserve(conn, "s2", third, 1_000, ROOMY) is None

    # a flight whose process died is resolved by the next reservation, which then takes it
    conn.execute("UPDATE breakglass_invocations SET pid = ? WHERE id = ?", (DEAD_PID, third))
    fourth = invocation(conn, "s2")
    assert ledger.reserve(conn, "s2", fourth, 1_000, ROOMY) is None
    assert status(conn, third) == "interrupted"
    # on another host only the lease tells: current, it holds; run out, it is resolved
    conn.execute("UPDATE breakglass_invocations SET host = 'elsewhere', pid = 1 WHERE id = ?", (fourth,))
    assert ledger.reserve(conn, "s2", invocation(conn, "s2"), 1_000, ROOMY).startswith(IN_FLIGHT)
    lapse(conn, fourth)
    assert ledger.reserve(conn, "s2", invocation(conn, "s2"), 1_000, ROOMY) is None
    assert status(conn, fourth) == "interrupted"


def test_this_process_s_own_call_whose_lease_lapsed_does_not_hold_the_flight(conn):
    """A call of this very process that stopped renewing its lease (it ended without settling)
    is resolved like anyone's, once a whole lease passed without a renewal (timed by this
    process's steady clock, whatever its wall clock says), or this process could never call
    again; a call that renews holds the flight however long it runs."""
    stuck = invocation(conn, "s1", lease_seconds=0.3)
    ledger.reserve(conn, "s1", stuck, 1_000, ROOMY)
    for _ in range(4):  # renewed: held past its lease's length
        time.sleep(0.1)
        ledger.renew_lease(conn, stuck, 0.3)
    assert ledger.reserve(conn, "s1", invocation(conn, "s1"), 1_000, ROOMY).startswith(IN_FLIGHT)
    lapse(conn, stuck)  # its wall-clock expiry alone says nothing on this host
    assert ledger.reserve(conn, "s1", invocation(conn, "s1"), 1_000, ROOMY).startswith(IN_FLIGHT)
    time.sleep(0.4)  # no renewal for longer than its lease
    assert ledger.reserve(conn, "s1", invocation(conn, "s1"), 1_000, ROOMY) is None
    assert status(conn, stuck) == "interrupted"


def test_a_stopped_session_is_told_so_before_being_told_to_wait(conn):
    stopped = invocation(conn, "s1")
    ledger.reserve(conn, "s1", stopped, 1_000, ROOMY)
    ledger.settle(conn, "s1", stopped, status="failed", reserved=1_000, actual=250_000)
    assert ledger.reserve(conn, "s2", invocation(conn, "s2"), 1_000, ROOMY) is None
    # waiting for the other session's call would not help: the figures that stopped it first
    refusal = ledger.reserve(conn, "s1", invocation(conn, "s1"), 1_000, ROOMY)
    assert refusal.startswith(f"session s1 is stopped: invocation #{stopped} was charged more than")
    assert "($0.2500 settled against $0.0010 reserved: charged $0.250000, above the $0.001000" in refusal
    assert IN_FLIGHT not in refusal


def test_an_interrupted_settlement_says_what_its_amount_is(conn):
    mid_call, nothing_sent = invocation(conn, "s1"), invocation(conn, "s1")
    ledger.reserve(conn, "s1", mid_call, 1_000, ROOMY)
    answered = ledger.request_sent(conn, mid_call, "panel a", 300)
    ledger.request_answered(conn, answered, "gen-a", 120)
    ledger.request_sent(conn, mid_call, "judge attempt 1", 400)  # in flight when it died
    conn.execute("UPDATE breakglass_invocations SET pid = ? WHERE id = ?", (DEAD_PID, mid_call))
    ledger.reserve(conn, "s1", nothing_sent, 1_000, ROOMY)
    conn.execute("UPDATE breakglass_invocations SET pid = ? WHERE id = ?", (DEAD_PID, nothing_sent))
    ledger.resolve_dead(conn)
    detail = settlement_detail(conn, mid_call)
    assert detail == (
        "interrupted call: 2 requests counted, 1 reported, 1 worst case "
        "(the worst case of a request whose cost nobody reported)"
    )
    assert "as reported" not in detail
    assert settlement_detail(conn, nothing_sent) == "interrupted call: nothing was sent"


@pytest.fixture
def anyio_backend():
    return "asyncio"


def _outcome(call) -> str:
    return "refused: " + call.content[0].text if call.is_error else json.loads(call.content[0].text)["status"]


async def _wait_for(condition, seconds: float = 120) -> None:
    with anyio.fail_after(seconds):
        while not condition():
            await anyio.sleep(0.05)


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("racers", ["processes", "tasks"])
async def test_overlapping_calls_to_an_overcharging_provider_overshoot_by_one_call_at_most(tmp_path, racers):
    """The bar: a provider billing $4.00 per request, 4 calls started at once in a $5.00
    session. One reaches the provider; it is held there until the other three were refused,
    so the overlap is certain, not a matter of timing."""
    db = prepared_db(tmp_path / "router.db")
    config = write_config(tmp_path / "bg.toml", {"cost.session_max_usd": 5.0})
    workspace = tmp_path / "ws"
    workspace.mkdir()
    outcomes: list[str] = []
    with OpenRouterStub(DEFAULT_PRICES, API_KEY) as stub:
        stub.charge_usd = 4.0
        stub.hold()
        params = server_params(db, config, workspace, stub.base_url, session="s")

        async def call(client) -> None:
            outcomes.append(_outcome(await client.call_tool("break_glass", arguments())))

        async def own_server() -> None:
            async with break_glass_client(params) as client:
                await call(client)

        async with anyio.create_task_group() as group:
            if racers == "processes":
                for _ in range(4):
                    group.start_soon(own_server)
            else:
                shared = await group.start(_serve_one_client, params)
                for _ in range(4):
                    group.start_soon(call, shared)
            # three refused while one is held at the provider (its request may arrive last)
            await _wait_for(lambda: len(outcomes) == 3 and stub.completions())
            assert len(stub.completions()) == 1  # only the held call reached the provider
            stub.release()
            await _wait_for(lambda: len(outcomes) == 4)  # the held call settled
            group.cancel_scope.cancel()

        refused = [o for o in outcomes if o.startswith("refused")]
        assert len(refused) == 3 and all(IN_FLIGHT in o for o in refused), outcomes
        assert outcomes.count("failed") == 1  # stopped: charged above its worst case
        async with break_glass_client(params) as client:
            after = await client.call_tool("break_glass", arguments())
        assert len(stub.completions()) == 1
    spent = query_dicts(
        connect(db), "SELECT kind, micro_usd FROM cost_ledger WHERE kind IN ('reservation', 'settlement')"
    )
    reserved = spent[0]["micro_usd"]
    assert [r["kind"] for r in spent] == ["reservation", "settlement"]
    settled = spent[1]["micro_usd"]
    assert settled == 4_000_000 <= 5_000_000 + 4_000_000
    # the next call is refused with the figures
    text = after.content[0].text
    assert after.is_error and "break_glass: session s is stopped: invocation #" in text
    assert f"($4.0000 settled against ${reserved / 1e6:.4f} reserved" in text
    assert "the session has committed $4.0000 of its $5.00 cap" in text


async def _serve_one_client(params, *, task_status=anyio.TASK_STATUS_IGNORED) -> None:
    """One server process and one client session, whose calls run concurrently."""
    async with break_glass_client(params) as client:
        task_status.started(client)
        await anyio.sleep_forever()


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_fitted_budget_billed_above_its_worst_case_states_the_figures(tmp_path):
    """A $0.20 budget, max_tokens lowered to fit, a provider billing $0.25: the call says what
    was charged against what budget and reservation; the next call is refused with them."""
    db = prepared_db(tmp_path / "router.db")
    config = write_config(tmp_path / "bg.toml", {"cost.session_max_usd": 5.0})
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with OpenRouterStub(DEFAULT_PRICES, API_KEY) as stub:
        stub.charge_usd = 0.25
        params = server_params(db, config, workspace, stub.base_url, session="s")
        async with break_glass_client(params) as client:
            first = await client.call_tool("break_glass", arguments(budget=0.20))
            result = json.loads(first.content[0].text)
            after = await client.call_tool("break_glass", arguments(budget=0.20))
    reserved = result["cost"]["reserved_micro_usd"]
    assert any("max_tokens lowered" in w for w in result["warnings"]) and reserved <= 200_000
    assert result["status"] == "failed" and result["cost"]["actual_micro_usd"] == 250_000
    assert (
        f"charged $0.2500 against this call's $0.2000 budget and the ${reserved / 1e6:.4f} reserved: "
        "the provider billed above the worst case, so session s is stopped" in result["message"]
    )
    text = after.content[0].text
    assert after.is_error and f"($0.2500 settled against ${reserved / 1e6:.4f} reserved" in text
    assert len(stub.completions()) == 1
