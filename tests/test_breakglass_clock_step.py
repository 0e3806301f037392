"""One break-glass call in flight, whatever the clocks say (issue 35 item 8): two real
break-glass servers on one database, one with its wall clock an hour ahead (libfaketime's
`faketime -f +1h` where it is installed, Debian's `faketime`; else the router's own clock
shifted in the process, tests/servers/shifted_clock.py). While either one's call is held at
the OpenRouter stand-in, the other's calls are refused as in flight, for several lease
periods: never two requests at the provider at once, and the held call settles as itself,
not as interrupted."""

import json
import shutil
import sys

import anyio
import pytest
from mcp import StdioServerParameters

from router.breakglass.settings import DEFAULT_PRICES
from tests.breakglass_support import (
    API_KEY,
    arguments,
    break_glass_client,
    prepared_db,
    server_params,
    write_config,
)
from tests.db_rows import rows
from tests.openrouter_stub import OpenRouterStub
from tests.servers import shifted_clock

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

IN_FLIGHT = "another break-glass call is in flight since"
HOUR_S = 3600
LEASE_S = 1.5
# the held call's lease is renewed several times while the other process keeps trying
TRIES, TRY_EVERY_S = 4, LEASE_S


@pytest.fixture
def anyio_backend():
    return "asyncio"


def an_hour_ahead(params: StdioServerParameters) -> StdioServerParameters:
    """The same server, its wall clock an hour ahead."""
    faketime = shutil.which("faketime")
    if faketime is not None:
        return params.model_copy(
            update={"command": faketime, "args": ["-f", "+1h", params.command, *params.args]}
        )
    assert params.args[:2] == ["-m", "router"]
    env = dict(params.env or {}) | {"CLOCK_SHIFT_S": str(HOUR_S)}
    return params.model_copy(
        update={"command": sys.executable, "args": [shifted_clock.__file__, *params.args[2:]], "env": env}
    )


def outcome(call) -> str:
    return "refused: " + call.content[0].text if call.is_error else json.loads(call.content[0].text)["status"]


@pytest.mark.parametrize("holder", ["on time", "an hour ahead"])
async def test_a_clock_an_hour_apart_never_lets_two_calls_reach_the_provider(tmp_path, holder):
    db = prepared_db(tmp_path / "router.db")
    config = write_config(tmp_path / "bg.toml", {"cost.session_max_usd": 50.0, "cost.lease_seconds": LEASE_S})
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with OpenRouterStub(DEFAULT_PRICES, API_KEY) as stub:
        stub.hold()
        on_time = server_params(db, config, workspace, stub.base_url, session="on-time")
        ahead = an_hour_ahead(server_params(db, config, workspace, stub.base_url, session="ahead"))
        first, second = (on_time, ahead) if holder == "on time" else (ahead, on_time)
        held: list[str] = []
        others: list[str] = []

        async def hold_the_flight() -> None:
            async with break_glass_client(first) as client:
                held.append(outcome(await client.call_tool("break_glass", arguments())))

        async with anyio.create_task_group() as group:
            group.start_soon(hold_the_flight)
            with anyio.fail_after(120):
                while not stub.completions():
                    await anyio.sleep(0.05)
            async with break_glass_client(second) as client:
                for _ in range(TRIES):
                    # a call let through would wait at the held provider: fail at once instead
                    with anyio.fail_after(60):
                        others.append(outcome(await client.call_tool("break_glass", arguments())))
                    await anyio.sleep(TRY_EVERY_S)
            assert len(stub.completions()) == 1  # still only the held call's request
            stub.release()
            with anyio.fail_after(120):
                while not held:
                    await anyio.sleep(0.05)
    assert all(o.startswith("refused") and IN_FLIGHT in o for o in others), others
    assert stub.most_in_flight == 1 and len(stub.completions()) == 1
    assert held == ["ok"]
    statuses = [r["status"] for r in rows(db, "SELECT status FROM breakglass_invocations ORDER BY id")]
    assert statuses == ["ok"] + ["refused"] * TRIES  # the held call was never taken for dead
