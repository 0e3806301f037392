"""A short break-glass scenario against the local OpenRouter stub, for people: it leaves a
database behind and prints the cost and invocation views as the sqlite3 shell shows them.

    .venv/bin/python -m tests.breakglass_scenario /tmp/bg-scenario
"""

import json
import subprocess
import sys
from pathlib import Path

import anyio

from router.breakglass.settings import DEFAULT_PRICES
from tests.breakglass_support import (
    API_KEY,
    LEAN_PROBLEM,
    TIERS,
    arguments,
    break_glass_client,
    prepared_db,
    server_params,
    write_config,
)
from tests.openrouter_stub import OpenRouterStub


async def scenario(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    db = out / "router.db"
    for stale in out.glob("router.db*"):
        stale.unlink()
    prepared_db(db)
    workspace = out / "ws"
    (workspace / "src").mkdir(parents=True, exist_ok=True)
    (workspace / "src" / "Gap.lean").write_text("theorem cleanMerge_preservesGap : True := by\n  sorry\n")
    (workspace / "AGENTS.md").write_text("No sorry in committed code.\n")
    config = write_config(out / "breakglass.toml")
    with OpenRouterStub(DEFAULT_PRICES, API_KEY) as stub:
        async with break_glass_client(
            server_params(db, config, workspace, stub.base_url, session="scenario-a")
        ) as client:
            sample = json.loads(
                (await client.call_tool("break_glass", arguments(context_files=["src/Gap.lean"])))
                .content[0]
                .text
            )
            stub.queue("fusion", "502")
            await client.call_tool(
                "break_glass",
                arguments(
                    "break glass: the regression test fails with a traceback in merge()",
                    problem_type="code_bug",
                ),
            )
            await client.call_tool("break_glass", {"problem": "please fix it", "earlier_tiers": TIERS})
            stub.queue("fusion", "402")
            await client.call_tool("break_glass", arguments(problem_type="infra_debug"))
        async with break_glass_client(
            server_params(db, config, workspace, stub.base_url, session="scenario-b")
        ) as client:
            await client.call_tool("break_glass", arguments(LEAN_PROBLEM, budget=0.01))
            await client.call_tool("break_glass", arguments(LEAN_PROBLEM))
    cost = sample["cost"]
    print(
        f"sample call #{sample['invocation_id']} ({sample['problem_type']}, {sample['mode']}): "
        f"estimate {cost['estimated_usd']} ({cost['estimated_micro_usd']} micro-USD), worst case reserved "
        f"{cost['worst_case_usd']}, actual usage.cost {cost['actual_usd']} ({cost['actual_micro_usd']} micro-USD)"
    )
    for view in ("v_cost_per_session", "v_cost_per_day", "v_breakglass_recent"):
        print(f"\n$ sqlite3 -header -column {db} 'SELECT * FROM {view}'")
        sys.stdout.flush()
        subprocess.run(["sqlite3", "-header", "-column", str(db), f"SELECT * FROM {view}"], check=True)


if __name__ == "__main__":
    anyio.run(scenario, Path(sys.argv[1] if len(sys.argv) > 1 else "bg-scenario"))
