"""Real parallel processes racing for one session's caps never overspend: first the ledger
itself (many processes reserving at once, one call in flight at a time), then whole
break-glass servers sharing a session."""

import json
import subprocess
import sys
import textwrap

import anyio
import pytest

from router.breakglass import caps as capsmod
from router.breakglass.settings import DEFAULT_PRICES
from router.db import connect, query_dicts
from tests.bounded_io import readline_within
from tests.breakglass_support import (
    API_KEY,
    arguments,
    break_glass_client,
    prepared_db,
    server_params,
    write_config,
)
from tests.openrouter_stub import OpenRouterStub

pytestmark = pytest.mark.slow

RACER = textwrap.dedent("""
    import os, sys, time
    from router.breakglass import ledger
    from router.breakglass.caps import Caps
    from router.db import connect
    db, go, attempts = sys.argv[1], sys.argv[2], int(sys.argv[3])
    conn = ledger.prepare_connection(connect(db))
    caps = Caps(session_max_invocations=int(sys.argv[4]), session_max_micro=int(sys.argv[5]),
                day_max_invocations=10**6, day_max_micro=10**12)
    print("ready", flush=True)
    while not os.path.exists(go):
        time.sleep(0.001)
    won = made = 0
    while made < attempts:
        inv = ledger.open_invocation(conn, "race", problem="p", problem_type="code_bug", classification="",
                                     complexity="low", panel=[], judge="j", context_tokens=1, estimate=1,
                                     worst_case=700)
        refusal = ledger.reserve(conn, "race", inv, 700, caps)
        if refusal is not None and "in flight" in refusal:
            continue  # another racer holds the one flight: retry once it settles
        made += 1
        if refusal is None:
            won += 1
            ledger.settle(conn, "race", inv, status="ok", reserved=700, actual=700)
    print(won, flush=True)
    # alive until every racer is done: a call whose process is gone is released by the next write
    while not os.path.exists(go + ".done"):
        time.sleep(0.001)
""")


SETTLING_ORDER = "SELECT kind FROM cost_ledger WHERE kind IN ('reservation', 'settlement') ORDER BY id"


@pytest.mark.parametrize("max_invocations, max_micro, expected", [(100, 10_000, 14), (9, 1_000_000, 9)])
def test_racing_processes_never_exceed_the_caps(tmp_path, max_invocations, max_micro, expected):
    db = tmp_path / "race.db"
    connect(db).close()
    go = tmp_path / "go"
    racers = []
    for _ in range(6):
        # opened one after another (opening is not what this test races), then released together
        racer = subprocess.Popen(
            [sys.executable, "-c", RACER, str(db), str(go), "6", str(max_invocations), str(max_micro)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert readline_within(racer.stdout).strip() == "ready"
        racers.append(racer)
    go.touch()
    wins = [int(readline_within(p.stdout, timeout_s=120)) for p in racers]
    (tmp_path / "go.done").touch()
    for p in racers:
        p.communicate(timeout=120)
    assert all(p.returncode == 0 for p in racers)
    assert sum(wins) == expected
    conn = connect(db)
    usage = capsmod.usage(conn, "race")
    assert usage.session_calls == expected and usage.session_committed == expected * 700 <= max_micro
    refusals = query_dicts(
        conn, "SELECT count(*) AS n FROM cost_ledger WHERE kind = 'refusal' AND detail NOT LIKE '%in flight%'"
    )[0]["n"]
    assert refusals == 36 - expected
    # one call in flight at a time across the processes: every reservation is settled before the next
    money = [r["kind"] for r in query_dicts(conn, SETTLING_ORDER)]
    assert money == ["reservation", "settlement"] * expected


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_parallel_servers_sharing_a_session_respect_the_call_cap(tmp_path):
    db = prepared_db(tmp_path / "router.db")
    config = write_config(tmp_path / "bg.toml", {"cost.session_max_invocations": 3})
    workspace = tmp_path / "ws"
    workspace.mkdir()
    outcomes: list[str] = []
    with OpenRouterStub(DEFAULT_PRICES, API_KEY) as stub:
        stub.delay_seconds = 1.0  # answers overlap, so the racers really are concurrent

        async def racer():
            params = server_params(db, config, workspace, stub.base_url, session="shared-session")
            async with break_glass_client(params) as client:
                call = await client.call_tool("break_glass", arguments())
                # one call in flight per database: a racer refused for that retries after a while
                while call.is_error and "in flight" in call.content[0].text:
                    await anyio.sleep(0.2)
                    call = await client.call_tool("break_glass", arguments())
                outcomes.append(
                    "refused: " + call.content[0].text
                    if call.is_error
                    else json.loads(call.content[0].text)["status"]
                )

        async with anyio.create_task_group() as group:
            for _ in range(6):
                group.start_soon(racer)
    assert outcomes.count("ok") == 3, outcomes
    refused = [o for o in outcomes if o.startswith("refused")]
    assert len(refused) == 3 and all("3 of 3 break-glass calls" in o for o in refused)
    assert len(stub.requests) == 3
    conn = connect(db)
    session = query_dicts(conn, "SELECT calls, refusals, open_reserved_micro_usd FROM v_cost_per_session")
    assert session == [{**session[0], "calls": 3, "open_reserved_micro_usd": 0}]
    assert session[0]["refusals"] >= 3  # the cap's three, and the racers told to wait
    assert [r["kind"] for r in query_dicts(conn, SETTLING_ORDER)] == ["reservation", "settlement"] * 3
