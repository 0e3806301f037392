"""break-glass through a real MCP client session over stdio (`python -m router break-glass`),
with OPENROUTER_BASE_URL pointing at the local OpenRouter stub on 127.0.0.1: every gate,
refusal, outcome and provider error, with the rows each leaves in the SQLite file."""

import itertools
import json

import pytest

from router.breakglass.pricing import usd_text_to_micro_ceil
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
from tests.db_rows import rows
from tests.openrouter_stub import OpenRouterStub

pytestmark = [pytest.mark.slow, pytest.mark.anyio]
SECRET_IN_FILE = "sk-ant-api03-" + "Zq9" * 12
SECRET_IN_PROBLEM = "ghp_" + "Pr0b" * 9
SECRET_IN_EVIDENCE = "AKIAABCDEFGHIJKLMNOP"


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def stub():
    with OpenRouterStub(DEFAULT_PRICES, API_KEY, slow_seconds=4.0) as running:
        yield running


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "Gap.lean").write_text(
        "theorem cleanMerge_preservesGap (xs : List Nat) : True := by\n  sorry\n"
        f"-- scratch note: ANTHROPIC_API_KEY={SECRET_IN_FILE}\n"
    )
    (ws / "AGENTS.md").write_text("Lean is the source of truth. No sorry in committed code.\n")
    (ws / ".env").write_text(f"OPENROUTER_API_KEY={API_KEY}\nDB_PASSWORD=hunter2-correct-horse\n")
    return ws


@pytest.fixture
def db(tmp_path):
    return prepared_db(tmp_path / "router.db")


def ledger_kinds(db, invocation_id):
    return [
        r["kind"]
        for r in rows(
            db, "SELECT kind FROM cost_ledger WHERE invocation_id = ? ORDER BY id", (invocation_id,)
        )
    ]


def result_of(call):
    assert not call.is_error, call.content[0].text
    return json.loads(call.content[0].text)


async def test_fusion_call_end_to_end(db, tmp_path, workspace, stub):
    config = write_config(tmp_path / "bg.toml")
    progress = []

    async def on_progress(value, total, message):
        progress.append((value, total, message))

    async with break_glass_client(server_params(db, config, workspace, stub.base_url)) as client:
        listed = (await client.list_tools()).tools
        assert [t.name for t in listed] == ["break_glass"]
        tool = listed[0]
        assert tool.annotations.read_only_hint is False
        assert {
            "problem",
            "earlier_tiers",
            "context_files",
            "problem_type",
            "budget",
            "confirmation_token",
        } <= set(tool.input_schema["properties"])
        tiers = {
            **TIERS,
            "skill_system": {
                **TIERS["skill_system"],
                "failure": f"the skill's fetch failed with key {SECRET_IN_EVIDENCE}",
            },
        }
        call = await client.call_tool(
            "break_glass",
            {
                "problem": LEAN_PROBLEM + f" (the CI token {SECRET_IN_PROBLEM} is not the cause)",
                "earlier_tiers": tiers,
                "context_files": ["src/Gap.lean", ".env"],
            },
            progress_callback=on_progress,
        )
    result = result_of(call)
    assert result["status"] == "ok" and result["mode"] == "fusion"
    assert result["problem_type"] == "lean_proof" and "keyword 'sorry'" in result["classification"]
    assert result["solution"]["confidence"] == 0.8 and result["diagnosis"].startswith("diagnosis by fusion")
    assert result["context_files"][:2] == ["src/Gap.lean", ".env"]
    assert "lake build skipped" in " ".join(result["context_notes"])

    # the request OpenRouter received: one Fusion call with the lean panel and the judge
    assert stub.routes() == ["fusion"]
    sent = stub.requests[0]
    assert sent["headers"]["authorization"] == f"Bearer {API_KEY}"
    assert sent["headers"]["x-title"] == "context-router break-glass"
    body = sent["body"]
    assert body["model"] == "openrouter/fusion"
    assert body["plugins"] == [
        {
            "id": "fusion",
            "model": "anthropic/claude-opus-4.8",
            "analysis_models": ["anthropic/claude-opus-4.8", "deepseek/deepseek-v4", "google/gemini-3.1-pro"],
        }
    ]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["required"] == [
        "diagnosis",
        "solution",
        "alternatives",
        "risks",
    ]
    assert body["max_tokens"] == 4000
    prompt = body["messages"][1]["content"]
    assert "cleanMerge_preservesGap" in prompt and "No sorry in committed code" in prompt
    assert "OPENROUTER_API_KEY=[REDACTED]" in prompt
    # no secret from the files, the problem or the environment left the machine
    everything_but_auth = json.dumps(body)
    for secret in (SECRET_IN_FILE, "hunter2-correct-horse", API_KEY, SECRET_IN_PROBLEM, SECRET_IN_EVIDENCE):
        assert secret not in everything_but_auth
    assert "cleanMerge_preservesGap" in everything_but_auth  # the problem itself did arrive
    assert result["secrets_removed"]

    # progress: the five stages in order, strictly increasing
    stages = [m.split(":")[0] for _, _, m in progress]
    assert [s for s in stages if s != "waiting for the panel"] == [
        "classify",
        "context",
        "estimate",
        "panel",
        "judge",
    ]
    assert all(b[0] > a[0] for a, b in itertools.pairwise(progress))

    # the cost: estimate before, reservation of the worst case, settlement with usage.cost
    cost = result["cost"]
    assert cost["reserved_micro_usd"] == cost["worst_case_micro_usd"] > cost["estimated_micro_usd"] > 0
    assert 0 < cost["actual_micro_usd"] <= cost["reserved_micro_usd"]
    invocation = result["invocation_id"]
    assert ledger_kinds(db, invocation) == ["estimate", "reservation", "settlement", "release", "outcome"]
    settled = rows(
        db, "SELECT micro_usd FROM cost_ledger WHERE invocation_id = ? AND kind = 'settlement'", (invocation,)
    )[0]["micro_usd"]
    assert settled == cost["actual_micro_usd"]
    stored = rows(
        db, "SELECT status, mode, problem, diagnosis FROM breakglass_invocations WHERE id = ?", (invocation,)
    )[0]
    assert stored["status"] == "ok" and stored["mode"] == "fusion" and stored["diagnosis"]
    assert SECRET_IN_PROBLEM not in stored["problem"] and "[REDACTED]" in stored["problem"]


async def test_refusals_say_what_is_missing_and_leave_rows(db, tmp_path, workspace, stub):
    config = write_config(tmp_path / "bg.toml", {"types.code_bug.threshold_usd": 0.001})
    bad_tiers = {k: v for k, v in TIERS.items() if k != "skill_system"}
    cases = [
        ({"problem": "fix the lemma please", "earlier_tiers": TIERS}, "must start with 'break glass:'"),
        ({"problem": LEAN_PROBLEM, "earlier_tiers": bad_tiers}, "earlier_tiers.skill_system: no evidence"),
        ({"problem": LEAN_PROBLEM}, "earlier_tiers.local_model: no evidence"),
        (
            arguments(context_files=["../outside.txt"]),
            "context_files[0] (../outside.txt): outside the workspace",
        ),
        (arguments(context_files=["src/Missing.lean"]), "no such file in the workspace"),
        (arguments(problem_type="code_bug"), "escalate to a person"),
        (arguments(budget=0.01), "does not fit: this call's budget is $0.01, short by"),
        (arguments(budget=-1), "budget: must be a positive number"),
    ]
    async with break_glass_client(server_params(db, config, workspace, stub.base_url)) as client:
        for args, expected in cases:
            call = await client.call_tool("break_glass", args)
            assert call.is_error, args
            assert expected in call.content[0].text
    async with break_glass_client(
        server_params(db, config, workspace, stub.base_url, api_key=None)
    ) as client:
        call = await client.call_tool("break_glass", arguments())
        assert call.is_error and "OPENROUTER_API_KEY is not set" in call.content[0].text
    assert stub.requests == []  # nothing reached OpenRouter
    statuses = rows(db, "SELECT status, count(*) AS n FROM breakglass_invocations GROUP BY status")
    assert statuses == [{"status": "refused", "n": len(cases) + 1}]
    refusals = rows(db, "SELECT count(*) AS n FROM cost_ledger WHERE kind = 'refusal'")[0]["n"]
    assert refusals == len(cases) + 1
    assert rows(db, "SELECT count(*) AS n FROM cost_ledger WHERE kind = 'reservation'")[0]["n"] == 0


async def test_session_caps_calls_and_money(db, tmp_path, workspace, stub):
    calls_cap = write_config(tmp_path / "calls.toml", {"cost.session_max_invocations": 2})
    async with break_glass_client(server_params(db, calls_cap, workspace, stub.base_url)) as client:
        assert result_of(await client.call_tool("break_glass", arguments()))["status"] == "ok"
        assert result_of(await client.call_tool("break_glass", arguments()))["status"] == "ok"
        third = await client.call_tool("break_glass", arguments())
        assert third.is_error and "2 of 2 break-glass calls already made" in third.content[0].text
    assert len(stub.requests) == 2
    # the second call was shown the first one as an earlier call on a similar problem (FTS5)
    first_prompt, second_prompt = (r["body"]["messages"][1]["content"] for r in stub.requests)
    assert "Earlier break-glass calls on similar problems" not in first_prompt
    assert "# Earlier break-glass calls on similar problems\n- #1 [lean_proof, ok]" in second_prompt
    assert "diagnosis by fusion" in second_prompt
    # a money cap smaller than one worst case: refused before anything is reserved or sent
    money_cap = write_config(tmp_path / "money.toml", {"cost.session_max_usd": 0.05})
    async with break_glass_client(server_params(db, money_cap, workspace, stub.base_url)) as client:
        call = await client.call_tool("break_glass", arguments())
        assert call.is_error and "has $0.0500 left of its $0.05 cap, short by" in call.content[0].text
    assert len(stub.requests) == 2


async def test_provider_errors_and_fallback(db, tmp_path, workspace, stub):
    config = write_config(
        tmp_path / "bg.toml",
        {
            "cost.session_max_invocations": 50,
            "cost.session_max_usd": 100.0,
            "cost.day_max_invocations": 50,
            "cost.day_max_usd": 100.0,
            "openrouter.timeout_seconds": 1.5,
            "openrouter.max_retry_after_seconds": 5,
        },
    )
    panel = ["anthropic/claude-opus-4.8", "deepseek/deepseek-v4", "google/gemini-3.1-pro"]

    async def run(client, *script):
        stub.requests.clear()
        for route, behaviour in script:
            stub.queue(route, behaviour)
        call = await client.call_tool("break_glass", arguments())
        return result_of(call), list(stub.routes())

    async with break_glass_client(server_params(db, config, workspace, stub.base_url)) as client:
        # 502 from Fusion: the router runs the panel itself, then the judge
        result, routes = await run(client, ("fusion", "502"))
        assert result["status"] == "ok" and result["mode"] == "fanout"
        assert routes[0] == "fusion" and sorted(routes[1:4]) == sorted(panel) and routes[4] == "judge"
        # 402: out of credits; no fallback, a failed outcome (not a crash), nothing spent
        result, routes = await run(client, ("fusion", "402"))
        assert result["status"] == "failed" and "Insufficient credits" in result["message"]
        assert routes == ["fusion"] and result["cost"]["actual_micro_usd"] == 0
        # 429 with a short Retry-After: waited out and retried once
        result, routes = await run(client, ("fusion", "429"))
        assert result["status"] == "ok" and routes == ["fusion", "fusion"]
        waits = [r["at"] for r in stub.requests]
        assert waits[1] - waits[0] >= 1.0
        # 429 with a Retry-After longer than allowed: failed, says when to retry
        result, routes = await run(client, ("fusion", "429_long"))
        assert result["status"] == "failed" and "Retry-After 120" in result["message"]
        # a slow answer: the call times out, is counted at its worst case, the fan-out answers
        result, routes = await run(client, ("fusion", "slow"))
        assert result["status"] == "ok" and result["mode"] == "fanout"
        assert result["cost"]["actual_micro_usd"] >= result["cost"]["worst_case_micro_usd"] // 2
        # malformed JSON body from Fusion: fan-out
        result, routes = await run(client, ("fusion", "malformed_json"))
        assert result["status"] == "ok" and result["mode"] == "fanout"
        # a malformed judge answer is retried once ...
        result, routes = await run(client, ("fusion", "malformed_answer"))
        assert result["status"] == "ok" and routes == ["fusion", "fusion"]
        # ... and a second malformed answer is a failed outcome with its cost settled
        result, routes = await run(client, ("fusion", "malformed_answer"), ("fusion", "malformed_answer"))
        assert result["status"] == "failed" and "malformed twice" in result["message"]
        assert result["cost"]["actual_micro_usd"] > 0 and result["solution"] is None
        # one panel member failing in the fan-out: the judge weighs the others
        result, routes = await run(client, ("fusion", "502"), ("deepseek/deepseek-v4", "502"))
        assert result["status"] == "ok" and routes[-1] == "judge"
        judge_prompt = stub.requests[-1]["body"]["messages"][1]["content"]
        assert "Panelist google/gemini-3.1-pro" in judge_prompt and "Panelist deepseek" not in judge_prompt
        # the fan-out's judge malformed twice: failed outcome
        result, routes = await run(
            client, ("fusion", "502"), ("judge", "malformed_answer"), ("judge", "malformed_answer")
        )
        assert result["status"] == "failed" and routes.count("judge") == 2
        # usage missing from a response, and its generation unknown to the lookup: counted at
        # that call's worst case
        result, routes = await run(client, ("fusion", "no_usage_unknown"))
        assert (
            result["status"] == "ok"
            and result["cost"]["actual_micro_usd"] == result["cost"]["worst_case_micro_usd"] // 2
        )

    outcomes = rows(db, "SELECT status, mode FROM breakglass_invocations ORDER BY id")
    assert [o["status"] for o in outcomes] == [
        "ok",
        "failed",
        "ok",
        "failed",
        "ok",
        "ok",
        "ok",
        "failed",
        "ok",
        "failed",
        "ok",
    ]
    # every reservation was settled; nothing stays reserved
    open_reserved = rows(db, "SELECT open_reserved_micro_usd FROM v_cost_per_session")[0]
    assert open_reserved["open_reserved_micro_usd"] == 0


async def test_fanout_when_fusion_is_off(db, tmp_path, workspace, stub):
    config = write_config(
        tmp_path / "bg.toml", {"openrouter.fusion": False, "openrouter.heartbeat_seconds": 0.2}
    )
    stub.delay_seconds = 0.5
    progress = []

    async def on_progress(value, total, message):
        progress.append((value, message))

    async with break_glass_client(server_params(db, config, workspace, stub.base_url)) as client:
        result = result_of(
            await client.call_tool(
                "break_glass", arguments(problem_type="code_bug"), progress_callback=on_progress
            )
        )
    # while the panel and the judge think (about 1 s), the client keeps hearing from the server
    assert sum(1 for _, m in progress if m == "waiting for the panel") >= 3
    assert all(b[0] > a[0] for a, b in itertools.pairwise(progress))
    routes = stub.routes()
    assert result["mode"] == "fanout" and "fusion" not in routes
    assert sorted(routes[:3]) == sorted(["openai/gpt-5.5", "anthropic/claude-fable", "moonshotai/kimi-k2.6"])
    assert routes[3] == "judge"
    # parallel: all three panel requests arrived before the first could have been answered
    arrivals = [r["at"] for r in stub.requests[:3]]
    assert max(arrivals) - min(arrivals) < stub.delay_seconds
    # settled with exactly the usage.cost the provider reported, call by call
    assert result["cost"]["actual_micro_usd"] == sum(usd_text_to_micro_ceil(r["cost"]) for r in stub.requests)
