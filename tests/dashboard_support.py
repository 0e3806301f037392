"""Shared set-up for the dashboard and /metrics tests: a database filled through real MCP calls
(searches, calls ok / failed / refused, a breaker opening, break-glass against the local
OpenRouter stand-in), `context-router dashboard` as a real process, and headless Chromium."""

import shutil
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from router.breakglass.prices import load_prices
from router.breakglass.settings import DEFAULT_PRICES
from router.db import connect
from tests.breakglass_support import API_KEY, arguments, break_glass_client, server_params, write_config
from tests.facade_support import (
    CONTEXT_ROUTER,
    Facade,
    json_of,
    text_of,
)
from tests.http_support import free_port, wait_for_port
from tests.openrouter_stub import OpenRouterStub

BROWSER = "chromium"
# what an unreachable or slow page gets before the test says so
PAGE_TIMEOUT_S = 30.0
# Datasette and its plugins load slowly on a busy machine
DASHBOARD_START_S = 60.0
BREAKGLASS_SESSION = "dashboard-breakglass"


def browser() -> str:
    """Debian's chromium: `make install` installs it. Missing, the test fails (never skips)."""
    found = shutil.which(BROWSER)
    if found is None:
        pytest.fail(
            f"headless Chromium is missing: install Debian's '{BROWSER}' package (make install does, as root)"
        )
    return found


def chromium(*args: str, timeout_s: float = 120.0) -> subprocess.CompletedProcess:
    """Headless Chromium on a page: virtual time lets the page's own fetches and charts finish
    before it dumps the DOM or takes the screenshot."""
    command = [
        browser(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--virtual-time-budget=10000",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)


@dataclass
class Dashboard:
    url: str
    process: subprocess.Popen
    stderr: Path

    def get(self, path: str, **params: str) -> httpx.Response:
        return httpx.get(self.url + path, params=params or None, timeout=PAGE_TIMEOUT_S)


@contextmanager
def running_dashboard(db: Path, log_dir: Path, *extra: str):
    """`context-router dashboard` on a free loopback port, stopped (and waited for) after."""
    port = free_port()
    stderr = log_dir / f"dashboard-{port}.log"
    with stderr.open("w") as errors:
        process = subprocess.Popen(
            [str(CONTEXT_ROUTER), "dashboard", "--db", str(db), "--port", str(port), *extra],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
    try:
        wait_for_port(port, process, timeout_s=DASHBOARD_START_S)
        yield Dashboard(f"http://127.0.0.1:{port}", process, stderr)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


@dataclass
class Filled:
    """What fill_through_mcp did, to compare with what the dashboard shows."""

    facade: Facade
    tools_called: set[str] = field(default_factory=set)
    searches: int = 0
    searches_nothing_callable: int = 0
    breakglass_invocation: int | None = None


async def fill_through_mcp(facade: Facade) -> Filled:
    """Searches, calls that succeed, fail and are refused, a breaker opening, and a break-glass
    call, each through a real MCP client and server process."""
    filled = Filled(facade)
    (facade.state_dir / "flaky.flag").write_text("broken", encoding="utf-8")
    async with facade.router() as router:
        found = json_of(await router.call_tool("mcp_search_tools", {"query": "current time in a timezone"}))
        assert found["tools"], found
        # no tool of the test catalog books travel: a page with nothing to call
        nothing = json_of(
            await router.call_tool("mcp_search_tools", {"query": "book me a flight to Lisbon next friday"})
        )
        assert not nothing["tools"], nothing
        filled.searches, filled.searches_nothing_callable = 2, 1
        await router.call_tool("mcp_inspect_schema", {"toolName": "get_current_time"})
        for tool, args in (
            ("get_current_time", {"timezone": "UTC"}),
            ("whoami", {}),
            ("shout", {"text": "hi"}),
        ):
            result = await router.call_tool("mcp_call_tool", {"toolName": tool, "args": args})
            assert not result.is_error, text_of(result)
            filled.tools_called.add(tool)
        for _ in range(3):  # the third failure opens flaky_step's breaker
            failed = await router.call_tool("mcp_call_tool", {"toolName": "flaky_step", "args": {}})
            assert failed.is_error
        refused = await router.call_tool("mcp_call_tool", {"toolName": "flaky_step", "args": {}})
        assert refused.is_error and "circuit open" in text_of(refused), text_of(refused)
        unknown = await router.call_tool("mcp_call_tool", {"toolName": "no_such_tool", "args": {}})
        assert unknown.is_error
        filled.tools_called.add("flaky_step")
    async with facade.router(role="director") as director:
        denied = await director.call_tool("mcp_call_tool", {"toolName": "append_note", "args": {"note": "x"}})
        assert denied.is_error and "director" in text_of(denied), text_of(denied)
    filled.breakglass_invocation = await _break_glass(facade)
    return filled


async def _break_glass(facade: Facade) -> int:
    """One break_glass call the stand-in provider answers, and one the gate refuses."""
    conn = connect(facade.db)
    try:
        load_prices(conn, DEFAULT_PRICES)
    finally:
        conn.close()
    workspace = facade.workspace
    (workspace / "src").mkdir(exist_ok=True)
    (workspace / "src" / "Gap.lean").write_text("theorem cleanMerge_preservesGap : True := by\n  sorry\n")
    config = write_config(facade.state_dir / "breakglass.toml")
    with OpenRouterStub(DEFAULT_PRICES, API_KEY) as stub:
        params = server_params(facade.db, config, workspace, stub.base_url, session=BREAKGLASS_SESSION)
        async with break_glass_client(params) as client:
            answered = await client.call_tool("break_glass", arguments(context_files=["src/Gap.lean"]))
            assert not answered.is_error, text_of(answered)
            refused = await client.call_tool("break_glass", {"problem": "please fix it", "earlier_tiers": {}})
            assert refused.is_error, text_of(refused)
    return int(json_of(answered)["invocation_id"])
