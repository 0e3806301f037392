"""Above $2 of worst case a person confirms: for a 2026-07-28 client as an input request
answered within the call, for a handshake-era client by elicitation (accepted, declined, not
approved), and for a client with neither by a one-time token; and a cancelled call releases
its reservation. Real SDK clients over real stdio sessions."""

import json

import anyio
import pytest
from mcp.types import ElicitResult

from router.breakglass.gate import EarlierTiers
from router.breakglass.prepare import Request, prepare
from router.breakglass.settings import DEFAULT_PRICES, load_settings
from router.db import connect
from tests.breakglass_support import (
    API_KEY,
    TIERS,
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
ARCH_PROBLEM = (
    "break glass: should the ledger module boundary become an interface shared by the "
    "router and break-glass? the design keeps coupling them"
)
# architecture panel, $10 budget: with Opus at 30x its price the estimate lands between $2 and $6
EXPENSIVE = {"problem": ARCH_PROBLEM, "problem_type": "architecture", "budget": 10.0}


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def expensive_prices(tmp_path):
    document = json.loads(DEFAULT_PRICES.read_text())
    for model in document["data"]:
        if model["id"] == "anthropic/claude-opus-4.8":
            model["pricing"].update(prompt="0.00015", completion="0.00075")
    path = tmp_path / "expensive-models.json"
    path.write_text(json.dumps(document))
    return path


@pytest.fixture
def stub(expensive_prices):
    with OpenRouterStub(expensive_prices, API_KEY, slow_seconds=6.0) as running:
        yield running


@pytest.fixture
def db(tmp_path, expensive_prices):
    return prepared_db(tmp_path / "router.db", expensive_prices)


@pytest.fixture
def config(tmp_path):
    return write_config(
        tmp_path / "bg.toml",
        {
            "types.architecture.threshold_usd": 2.0,
            "cost.session_max_usd": 100.0,
            "cost.session_max_invocations": 20,
        },
    )


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "ledger.md").write_text("The ledger module boundary: reservations, settlements.\n")
    return ws


def answering(action, content=None, asked=None):
    async def callback(context, params):
        if asked is not None:
            asked.append(params.message)
        return ElicitResult(action=action, content=content)

    return callback


MODERN, LEGACY = "2026-07-28", "legacy"


@pytest.mark.parametrize("mode", [MODERN, LEGACY])
async def test_elicitation_accepted_proceeds(db, config, workspace, stub, mode):
    asked = []
    params = server_params(db, config, workspace, stub.base_url)
    async with break_glass_client(
        params, mode=mode, elicitation_callback=answering("accept", {"approve": True}, asked)
    ) as client:
        # the protocol the test means: input requests (2026-07-28) or the handshake era's
        assert (client.protocol_version == MODERN) == (mode == MODERN)
        call = await client.call_tool("break_glass", arguments(**EXPENSIVE))
    assert not call.is_error, call.content[0].text
    result = json.loads(call.content[0].text)
    cost = result["cost"]
    assert result["status"] == "ok" and cost["worst_case_micro_usd"] > 2_000_000
    assert len(asked) == 1
    assert (
        f"may spend up to {cost['worst_case_usd']} (worst case; expected about {cost['estimated_usd']})"
        in asked[0]
    )
    assert stub.routes() == ["fusion"]
    details = [r["detail"] for r in rows(db, "SELECT detail FROM cost_ledger WHERE kind = 'confirmation'")]
    assert details == ["approved by a person (elicitation)"]


async def test_elicitation_declined_spends_nothing(db, config, workspace, stub):
    answers = [("decline", None), ("cancel", None), ("accept", {"approve": False})]

    async def callback(context, params):
        action, content = answers[len(seen)]
        seen.append(action)
        return ElicitResult(action=action, content=content)

    seen: list[str] = []
    params = server_params(db, config, workspace, stub.base_url)
    async with break_glass_client(params, elicitation_callback=callback) as client:
        for _ in answers:
            call = await client.call_tool("break_glass", arguments(**EXPENSIVE))
            assert call.is_error and "nothing was reserved or spent" in call.content[0].text
    assert seen == ["decline", "cancel", "accept"]
    assert stub.requests == []
    assert rows(db, "SELECT status FROM breakglass_invocations") == [{"status": "declined"}] * 3
    assert [r["kind"] for r in rows(db, "SELECT kind FROM cost_ledger ORDER BY id")] == [
        "estimate",
        "refusal",
    ] * 3


@pytest.mark.parametrize("mode", [MODERN, LEGACY])
async def test_token_fallback_without_elicitation(db, config, workspace, stub, mode):
    params = server_params(db, config, workspace, stub.base_url)
    async with break_glass_client(params, mode=mode) as client:  # no elicitation capability
        first = json.loads((await client.call_tool("break_glass", arguments(**EXPENSIVE))).content[0].text)
        assert first["status"] == "needs_confirmation" and first["confirmation_token"].startswith("bgc_")
        cost = first["cost"]
        assert (
            f"the worst case {cost['worst_case_usd']} (expected {cost['estimated_usd']})" in first["message"]
        )
        assert stub.requests == []
        token = first["confirmation_token"]
        changed = await client.call_tool(
            "break_glass", arguments(**{**EXPENSIVE, "budget": 9.0}, confirmation_token=token)
        )
        assert changed.is_error and "issued for a different request" in changed.content[0].text
        second = await client.call_tool("break_glass", arguments(**EXPENSIVE, confirmation_token=token))
        assert not second.is_error, second.content[0].text
        assert json.loads(second.content[0].text)["status"] == "ok"
        replay = await client.call_tool("break_glass", arguments(**EXPENSIVE, confirmation_token=token))
        assert replay.is_error and "already used" in replay.content[0].text
    assert stub.routes() == ["fusion"]
    statuses = [r["status"] for r in rows(db, "SELECT status FROM breakglass_invocations ORDER BY id")]
    assert statuses == ["needs_confirmation", "refused", "ok", "refused"]
    token_row = rows(db, "SELECT used_by, token_hash FROM breakglass_tokens")[0]
    assert token_row["used_by"] == 3 and token not in token_row["token_hash"]


async def test_confirmation_follows_the_worst_case_not_the_estimate(tmp_path, workspace, stub):
    """A call whose estimate is below the line but whose worst case is above it is asked."""
    db = prepared_db(tmp_path / "plain.db")  # ordinary prices
    problem = {"problem": ARCH_PROBLEM, "problem_type": "architecture"}
    probe_config = write_config(tmp_path / "probe.toml")
    estimate = probe(db, probe_config, workspace, ARCH_PROBLEM, "architecture").estimate
    line = round((estimate.expected_micro + estimate.worst_case_micro) / 2 / 1e6, 4)
    config = write_config(tmp_path / "line.toml", {"cost.confirm_above_usd": line})
    asked = []
    params = server_params(db, config, workspace, stub.base_url)
    async with break_glass_client(
        params, mode=MODERN, elicitation_callback=answering("decline", None, asked)
    ) as client:
        call = await client.call_tool("break_glass", arguments(**problem))
    assert estimate.expected_micro < line * 1e6 < estimate.worst_case_micro
    assert call.is_error and "a person declined the worst case" in call.content[0].text
    assert len(asked) == 1 and stub.requests == []


async def test_cancelled_call_releases_its_reservation(tmp_path, workspace, stub):
    db = prepared_db(tmp_path / "cancel.db")  # ordinary prices
    problem = {
        "problem": "break glass: the gpt panel keeps failing the regression test with a traceback",
        "problem_type": "code_bug",
    }
    # room for one worst case and a half: a second call can only run if the first one's was released
    settings = load_settings(write_config(tmp_path / "probe.toml"))
    conn = connect(db)
    worst = prepare(
        conn,
        settings,
        workspace,
        "probe",
        Request(problem["problem"], [], "code_bug", None, EarlierTiers.model_validate(TIERS)),
        lambda stage: None,
    ).estimate.worst_case_micro
    conn.close()
    cheap = write_config(tmp_path / "cheap.toml", {"cost.session_max_usd": round(worst * 1.5 / 1e6, 6)})
    params = server_params(db, cheap, workspace, stub.base_url)
    stub.queue("fusion", "slow")
    panel_started = anyio.Event()

    async def on_progress(value, total, message):
        if message and message.startswith("panel"):
            panel_started.set()

    async with break_glass_client(params) as client:
        async with anyio.create_task_group() as group:

            async def call():
                await client.call_tool("break_glass", arguments(**problem), progress_callback=on_progress)

            group.start_soon(call)
            with anyio.fail_after(60):
                await panel_started.wait()
            group.cancel_scope.cancel()
        with anyio.fail_after(20):
            while not rows(db, "SELECT 1 FROM breakglass_invocations WHERE status = 'cancelled'"):
                await anyio.sleep(0.1)
        kinds = [
            r["kind"] for r in rows(db, "SELECT kind FROM cost_ledger WHERE invocation_id = 1 ORDER BY id")
        ]
        assert kinds == ["estimate", "reservation", "settlement", "release", "outcome"]
        after = await client.call_tool("break_glass", arguments(**problem))
        assert not after.is_error, after.content[0].text
    session = rows(db, "SELECT calls, open_reserved_micro_usd FROM v_cost_per_session")[0]
    assert session == {"calls": 2, "open_reserved_micro_usd": 0}
