"""The dashboard never gets in the router's way: 1,000 calls through `serve` while the dashboard
reloads its pages and charts in a loop all complete, and the audit holds exactly their rows."""

import threading

import anyio
import httpx
import pytest

from router.dashboard.app import DASHBOARD_PATH, DATABASE_NAME, load_metadata
from tests.dashboard_support import running_dashboard
from tests.db_rows import rows
from tests.facade_support import make_facade, text_of

pytestmark = [pytest.mark.slow]

CALLS = 1_000
CHARTS = load_metadata()["plugins"]["datasette-dashboards"][DATABASE_NAME]["charts"]


class RefreshLoop(threading.Thread):
    """What a person's browser does with an open dashboard: the overview, every chart's data
    query and the canned queries, again and again until told to stop."""

    def __init__(self, base_url: str) -> None:
        super().__init__(daemon=True)
        self.base_url = base_url
        self.stop = threading.Event()
        self.statuses: list[int] = []

    def run(self) -> None:
        requests = [(DASHBOARD_PATH, {}), (f"/{DATABASE_NAME}/failing_backends.json", {})]
        requests += [(f"/{DATABASE_NAME}.json", {"sql": chart["query"]}) for chart in CHARTS.values()]
        with httpx.Client(base_url=self.base_url, timeout=60) as client:
            while not self.stop.is_set():
                for path, params in requests:
                    self.statuses.append(client.get(path, params=params).status_code)


async def thousand_calls(facade) -> list[bool]:
    outcomes = []
    async with facade.router() as router:
        for i in range(CALLS):
            result = await router.call_tool(
                "mcp_call_tool", {"toolName": "shout", "args": {"text": f"call {i}"}}
            )
            outcomes.append(not result.is_error and text_of(result) == f"CALL {i}")
    return outcomes


def test_a_thousand_calls_complete_while_the_dashboard_refreshes(tmp_path, harvested_catalog):
    facade = make_facade(tmp_path / "router", harvested_catalog)
    with running_dashboard(facade.db, tmp_path) as dashboard:
        loop = RefreshLoop(dashboard.url)
        loop.start()
        try:
            outcomes = anyio.run(thousand_calls, facade)
        finally:
            loop.stop.set()
            loop.join(timeout=120)
    assert outcomes.count(True) == CALLS
    audited = rows(
        facade.db,
        "SELECT outcome, count(*) AS n FROM audit WHERE meta_tool = 'mcp_call_tool' AND target = 'shout' GROUP BY 1",
    )
    assert audited == [{"outcome": "ok", "n": CALLS}]
    # the dashboard answered all along: it read while the router wrote
    assert len(loop.statuses) >= len(CHARTS) and set(loop.statuses) == {200}, loop.statuses[-20:]
