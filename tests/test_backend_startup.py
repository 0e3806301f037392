"""Concurrent calls to a backend that hangs at start-up share one start attempt and its
outcome; the breaker counts the attempt once, and once it is open every call is refused at
once; no waiting call reads 'interrupted' in v_recent_audit while its router lives. Real
router, real hanging backend processes."""

import sys
import time

import anyio
import pytest

from router.backends.servers import ServersConfig
from router.db import connect
from router.facade.backends import BackendPool
from router.facade.placeholders import Placeholders
from tests.facade_support import add_hanging_backend, alive, audit_rows, logged_pids, text_of
from tests.servers import exits_after_answer

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

STARTUP_TIMEOUT_S = 3.0
CONCURRENT_CALLS = 10
# An upper bound on a hang, not a speed bar: a start that never answered initialize gets
# SIGTERM at once, then SIGKILL 2 s later, reaped within 2 s more.
STOP_BOUND_S = 4.0
POLL_S = 0.02


class Watch:
    """What the test sees from outside the router while calls wait: how many of the hanging
    backend's processes live at once, when each was first seen gone, and every call
    v_recent_audit showed as 'interrupted'."""

    def __init__(self, facade) -> None:
        self.starts_log = facade.state_dir / "hang-starts.log"
        self.conn = connect(facade.db)
        self.most_alive = 0
        self.gone: dict[int, float] = {}
        self.interrupted: set[int] = set()

    async def run(self) -> None:
        while True:
            now = time.perf_counter()
            living = 0
            for pid in logged_pids(self.starts_log):
                if alive(pid):
                    living += 1
                else:
                    self.gone.setdefault(pid, now)
            self.most_alive = max(self.most_alive, living)
            shown = self.conn.execute("SELECT id FROM v_recent_audit WHERE outcome = 'interrupted'")
            self.interrupted.update(row_id for (row_id,) in shown)
            await anyio.sleep(POLL_S)


async def burst(router, starts_log) -> tuple[float, list[tuple[float, str, bool]]]:
    """CONCURRENT_CALLS calls at once: when they were sent, and for each (seconds to the
    answer, its text, whether the hanging process was still alive when it came)."""
    answers: list[tuple[float, str, bool]] = []
    sent = time.perf_counter()

    async def one() -> None:
        result = await router.call_tool("mcp_call_tool", {"toolName": "hangs_whoami", "args": {}})
        assert result.is_error is True
        answered = time.perf_counter() - sent
        answers.append((answered, text_of(result), any(alive(pid) for pid in logged_pids(starts_log))))

    async with anyio.create_task_group() as tg:
        for _ in range(CONCURRENT_CALLS):
            tg.start_soon(one)
    return sent, answers


async def test_concurrent_calls_to_a_backend_hanging_at_start_share_one_attempt(facade, harvested_catalog):
    add_hanging_backend(facade, harvested_catalog, startup_timeout_s=STARTUP_TIMEOUT_S)
    watch = Watch(facade)
    figures = []
    try:
        async with (
            facade.router(extra_args=("--no-wake-on-search",)) as router,
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(watch.run)
            for attempt in (1, 2, 3):
                sent, answers = await burst(router, watch.starts_log)
                # one start for the ten calls, whose one outcome each of them heard
                assert len(logged_pids(watch.starts_log)) == attempt
                assert all(
                    "did not finish starting within 3 s; it was stopped" in text for _, text, _ in answers
                )
                assert not any(living for _, _, living in answers)  # "it was stopped" was true
                pid = logged_pids(watch.starts_log)[-1]
                await anyio.sleep(2 * POLL_S)  # the watch has seen it gone
                # its stop took at most this (it was spawned after the calls were sent)
                stop_s = watch.gone[pid] - sent - STARTUP_TIMEOUT_S
                slowest = max(seconds for seconds, _, _ in answers)
                assert min(seconds for seconds, _, _ in answers) >= STARTUP_TIMEOUT_S
                assert slowest <= STARTUP_TIMEOUT_S + stop_s + 1.0
                assert stop_s <= STOP_BOUND_S
                figures.append((slowest, stop_s))
            # three attempts, three failures: the server's breaker refuses every call at once
            refused_at = time.perf_counter()
            _, refused = await burst(router, watch.starts_log)
            refused_in = time.perf_counter() - refused_at
            assert all("failed to start, crashed or hung 3 times in a row" in text for _, text, _ in refused)
            assert refused_in < STARTUP_TIMEOUT_S  # refused, not started: no fourth attempt
            assert len(logged_pids(watch.starts_log)) == 3
            tg.cancel_scope.cancel()
    finally:
        watch.conn.close()
    assert watch.most_alive == 1  # never two start attempts in flight
    assert watch.interrupted == set()  # no waiting call read 'interrupted' while the router lived
    outcomes = [r["outcome"] for r in audit_rows(facade.db)]
    assert outcomes == ["timeout"] * 30 + ["breaker_open"] * 10
    children = logged_pids(facade.state_dir / "hang-children.log")
    assert len(children) == 3 and not any(alive(pid) for pid in children)
    print(
        "\n10 concurrent calls x 3 attempts: slowest answer / stop time "
        + ", ".join(f"{slowest:.2f} s / {stop:.2f} s" for slowest, stop in figures)
        + f"; 10 refused by the open breaker in {refused_in:.2f} s; 3 starts, at most 1 alive"
    )


async def test_a_caller_that_gives_up_does_not_end_the_start_the_others_wait_for(tmp_path):
    starts = tmp_path / "starts.log"
    slow = {
        "name": "slow",
        "profile": "custom",
        "command": sys.executable,
        "args": [exits_after_answer.__file__],
        "env": {"START_DELAY_S": "1", "START_LOG_FILE": str(starts)},
    }
    config = ServersConfig.model_validate({"servers": {"slow": slow}})
    answers = []
    async with BackendPool(config, Placeholders(tmp_path, tmp_path / "data")) as pool:

        async def patient() -> None:
            answers.append(text_of(await pool.call("slow", "echo_once", {"text": "kept"})))

        async with anyio.create_task_group() as tg:
            tg.start_soon(patient)
            with anyio.move_on_after(0.3) as gave_up:
                await pool.call("slow", "echo_once", {"text": "given up"})
            assert gave_up.cancelled_caught
    # the start the impatient call began went on for the patient one: one process in all
    assert answers == ["kept"]
    assert len(logged_pids(starts)) == 1
