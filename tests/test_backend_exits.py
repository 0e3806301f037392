"""A backend that exits cleanly (status 0) after answering is no failure: the next call starts
it again, a call written to it as it exits is sent once more to a new process when its tool
only reads, and reported as not completed (never as a crash) when it changes state; neither
counts toward a breaker. Real router, real backend processes, real pipes."""

import json
import sys
import time

import pytest

from tests.db_rows import rows
from tests.facade_support import add_backend, audit_rows, logged_pids, text_of
from tests.servers import exits_after_answer

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

EXITS_SCRIPT = exits_after_answer.__file__
PAIRS = 10


def declare_exiting_backend(facade, harvested_catalog, exit_mode: str) -> None:
    state = facade.state_dir
    env = {
        "EXIT_MODE": exit_mode,
        "START_LOG_FILE": str(state / "exits-starts.log"),
        "CALL_LOG_FILE": str(state / "exits-calls.log"),
        "DROP_LOG_FILE": str(state / "exits-drops.log"),
        "LINES_FILE": str(state / "lines.txt"),
    }
    declaration = f"""profile = "custom"
command = {json.dumps(sys.executable)}
args = [{json.dumps(EXITS_SCRIPT)}]
env = {{ {", ".join(f"{key} = {json.dumps(value)}" for key, value in env.items())} }}"""
    add_backend(facade, harvested_catalog, "exits", declaration, exits_after_answer.TOOLS)


def breaker_rows(db) -> list[dict]:
    return rows(db, "SELECT tool AS key, state, consecutive_failures FROM breaker") + rows(
        db, "SELECT server AS key, state, consecutive_failures FROM backend_breaker"
    )


async def echo(router, text: str):
    return await router.call_tool("mcp_call_tool", {"toolName": "echo_once", "args": {"text": text}})


@pytest.mark.parametrize("exit_mode", ["on_next_line", "at_once"])
async def test_read_only_calls_in_pipelined_pairs_to_a_backend_that_exits_after_each_answer(
    facade, harvested_catalog, exit_mode
):
    declare_exiting_backend(facade, harvested_catalog, exit_mode)
    answers = []
    started = time.perf_counter()
    async with facade.router(extra_args=("--no-wake-on-search",)) as router:
        for pair in range(PAIRS):
            # each call is sent the moment the previous one is answered
            for half in ("a", "b"):
                result = await echo(router, f"{pair}{half}")
                answers.append((result.is_error, text_of(result)))
    elapsed = time.perf_counter() - started
    expected = [(False, f"{pair}{half}") for pair in range(PAIRS) for half in ("a", "b")]
    assert answers == expected  # 20 of 20 succeed
    assert breaker_rows(facade.db) == []  # no breaker counted anything
    outcomes = [r["outcome"] for r in audit_rows(facade.db)]
    assert outcomes == ["ok"] * 2 * PAIRS
    starts = logged_pids(facade.state_dir / "exits-starts.log")
    drop_log = facade.state_dir / "exits-drops.log"
    drops = drop_log.read_text(encoding="utf-8").split()[0::2] if drop_log.exists() else []
    if exit_mode == "on_next_line":
        # every call after the first was written to a process that was exiting, and sent again
        assert drops == ["tools/call"] * (2 * PAIRS - 1)
        assert len(starts) == 2 * PAIRS
    assert len(set(starts)) == len(starts)
    resent = f", {len(drops)} calls written to an exiting process and resent" if drops else ""
    print(f"\n{exit_mode}: 20/20 ok, {len(starts)} starts{resent}, {elapsed:.1f} s")


async def test_a_mutating_call_the_backend_exits_on_is_not_completed_and_not_sent_again(
    facade, harvested_catalog
):
    declare_exiting_backend(facade, harvested_catalog, "on_next_line")
    lines = facade.state_dir / "lines.txt"
    async with facade.router(extra_args=("--no-wake-on-search",)) as router:
        assert text_of(await echo(router, "first")) == "first"
        # written to the process that answered "first" and is now exiting
        lost = await router.call_tool("mcp_call_tool", {"toolName": "add_line", "args": {"line": "one"}})
        assert lost.is_error is True
        message = text_of(lost)
        assert "exited cleanly (status 0) without answering 'add_line'" in message
        assert "the call was not completed" in message and "it was not sent again" in message
        assert "crash" not in message and "closed the connection" not in message
        assert not lines.exists()  # it never ran, and was not sent to a new process
        # the next call starts the backend again
        added = await router.call_tool("mcp_call_tool", {"toolName": "add_line", "args": {"line": "two"}})
        assert text_of(added) == "added"
    assert lines.read_text(encoding="utf-8") == "two\n"
    assert [(r["target"], r["outcome"]) for r in audit_rows(facade.db)] == [
        ("echo_once", "ok"),
        ("add_line", "not_completed"),
        ("add_line", "ok"),
    ]
    assert breaker_rows(facade.db) == []
    assert len(logged_pids(facade.state_dir / "exits-starts.log")) == 2
