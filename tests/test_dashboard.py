"""`context-router dashboard` as a real process over a database filled through real MCP calls,
read by HTTP and by headless Chromium: every view, canned query and chart answers with the
rows the calls made, the overview renders (screenshot), and nothing it is asked writes."""

import hashlib
import json
import re
from urllib.parse import quote, unquote

import anyio
import pytest

from router.dashboard.app import DASHBOARD_PATH, DATABASE_NAME, load_metadata
from router.db import query_dicts
from tests.dashboard_support import Filled, chromium, fill_through_mcp, running_dashboard
from tests.db_rows import rows
from tests.facade_support import make_facade

pytestmark = [pytest.mark.slow]

METADATA = load_metadata()
QUERIES = METADATA["databases"][DATABASE_NAME]["queries"]
TABLES = METADATA["databases"][DATABASE_NAME]["tables"]
CHARTS = METADATA["plugins"]["datasette-dashboards"][DATABASE_NAME]["charts"]
# charts whose data the filled database must give: every one
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def filled(tmp_path_factory, harvested_catalog) -> Filled:
    facade = make_facade(tmp_path_factory.mktemp("dashboard"), harvested_catalog)
    return anyio.run(fill_through_mcp, facade)


@pytest.fixture(scope="module")
def dashboard(filled, tmp_path_factory):
    with running_dashboard(filled.facade.db, tmp_path_factory.mktemp("dashboard-logs")) as running:
        yield running


def view_rows(filled: Filled, view: str) -> list[dict]:
    return rows(filled.facade.db, f"SELECT * FROM {view}")


def json_rows(dashboard, path: str, **params: str) -> list[dict]:
    response = dashboard.get(path, _shape="objects", **params)
    assert response.status_code == 200, (path, response.text[:500])
    body = response.json()
    assert "error" not in body or not body["error"], body
    return body["rows"]


def test_database_page_links_every_view_and_canned_query_and_each_answers(dashboard, filled):
    page = dashboard.get(f"/{DATABASE_NAME}")
    assert page.status_code == 200
    links = {unquote(m) for m in re.findall(rf'href="/{DATABASE_NAME}/([^"?#/]+)"', page.text)}
    views = {row["name"] for row in view_rows(filled, "sqlite_master WHERE type = 'view'")}
    assert views <= links, views - links
    assert set(QUERIES) <= links, set(QUERIES) - links
    for name in sorted(views | set(QUERIES)):
        response = dashboard.get(f"/{DATABASE_NAME}/{quote(name)}")
        assert response.status_code == 200, (name, response.text[:500])
        # each page titles its view or query as the metadata does
        title = (QUERIES.get(name) or TABLES.get(name) or {}).get("title")
        if title:
            assert title.replace("'", "&#39;") in response.text, (name, title)


def test_canned_queries_show_the_rows_the_calls_made(dashboard, filled):
    failing = json_rows(dashboard, f"/{DATABASE_NAME}/failing_backends.json")
    misbehaving = next(row for row in failing if row["server"] == "misbehaving")
    assert misbehaving["failures"] >= 4 and misbehaving["failing_since"] is not None
    assert misbehaving["breaker_openings"] == 1

    slow = json_rows(dashboard, f"/{DATABASE_NAME}/slow_calls.json")
    assert filled.tools_called <= {row["tool"] for row in slow}
    latencies = [row["latency_ms"] for row in slow]
    assert latencies == sorted(latencies, reverse=True)

    latency = json_rows(dashboard, f"/{DATABASE_NAME}/latency_per_backend.json")
    assert {"time", "misbehaving"} <= {row["server"] for row in latency}
    assert all(row["p50_ms"] <= row["p95_ms"] <= row["p99_ms"] <= row["max_ms"] for row in latency)

    (today,) = json_rows(dashboard, f"/{DATABASE_NAME}/spend_today.json")
    assert today["calls"] == 1 and today["refusals"] == 1
    assert today["day_max_micro_usd"] is not None and today["left_micro_usd"] < today["day_max_micro_usd"]

    (saved,) = json_rows(dashboard, f"/{DATABASE_NAME}/tokens_saved.json")
    assert saved["sessions"] == 2 and 0 < saved["tokens_served"] < saved["full_catalog_tokens"]
    assert saved["tokens_saved"] == saved["full_catalog_tokens"] - saved["tokens_served"]

    nothing = json_rows(dashboard, f"/{DATABASE_NAME}/searches_nothing_callable.json")
    assert len(nothing) == filled.searches_nothing_callable

    # each canned query shows exactly what its view holds for the sqlite3 shell
    assert json_rows(dashboard, f"/{DATABASE_NAME}/tokens_per_session.json") == [
        {key: row[key] for key in json_rows(dashboard, f"/{DATABASE_NAME}/tokens_per_session.json")[0]}
        for row in view_rows(filled, "v_tokens_per_session")
    ]


@pytest.mark.parametrize("chart", sorted(CHARTS))
def test_each_chart_page_answers_and_its_data_holds_the_calls(dashboard, chart):
    assert dashboard.get(f"{DASHBOARD_PATH}/{chart}").status_code == 200
    data = json_rows(dashboard, f"/{DATABASE_NAME}.json", sql=CHARTS[chart]["query"])
    assert data, chart
    if CHARTS[chart]["library"] == "metric":
        field = CHARTS[chart]["display"]["field"]
        assert data[0][field] not in (None, "", 0, "0"), (chart, data)
    else:  # a chart with something to draw: one value above zero at least
        assert any(isinstance(v, int | float) and v > 0 for row in data for v in row.values()), (chart, data)


def test_chromium_renders_the_overview_and_a_chart(dashboard, tmp_path):
    screenshot = tmp_path / "overview.png"
    shot = chromium("--window-size=1400,1100", f"--screenshot={screenshot}", dashboard.url + DASHBOARD_PATH)
    assert screenshot.is_file(), shot.stderr[-2000:]
    assert screenshot.read_bytes().startswith(PNG_SIGNATURE) and screenshot.stat().st_size > 20_000

    dom = chromium("--dump-dom", f"{dashboard.url}{DASHBOARD_PATH}/calls-per-hour").stdout
    # vega-embed drew the chart: its container, and the bars as marks of its SVG
    assert re.search(r'class="[^"]*\bvega-embed\b', dom), dom[-3000:]
    assert "<svg" in dom and "mark-rect" in dom, dom[-3000:]
    overview = chromium("--dump-dom", dashboard.url + DASHBOARD_PATH).stdout
    embedded = re.findall(r'class="[^"]*\bvega-embed\b', overview)
    assert len(embedded) == sum(chart["library"] == "vega-lite" for chart in CHARTS.values()), overview[
        -3000:
    ]
    # the metric tiles show the filled figures, not a loading state
    assert "Backends failing now" in overview and re.search(r">\s*1\s*<", overview)


def file_digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_dashboard_cannot_write_and_leaves_the_file_unchanged(filled, tmp_path):
    db = filled.facade.db
    before = file_digest(db)
    counts = rows(
        db, "SELECT (SELECT count(*) FROM audit) AS audit, (SELECT count(*) FROM cost_ledger) AS ledger"
    )
    with running_dashboard(db, tmp_path) as dashboard:
        refused = dashboard.get(f"/{DATABASE_NAME}.json", sql="DELETE FROM audit")
        assert refused.status_code == 400 and "must be a SELECT" in refused.text
        # a statement Datasette's own check lets through (it starts with WITH) meets SQLite's
        sneaky = dashboard.get(f"/{DATABASE_NAME}.json", sql="WITH x AS (SELECT 1) DELETE FROM audit")
        assert "readonly database" in json.dumps(sneaky.json()), sneaky.text[:500]
        pragma = dashboard.get(f"/{DATABASE_NAME}.json", sql="SELECT 1; PRAGMA query_only = 0")
        assert pragma.status_code == 400
        for path in (f"/{DATABASE_NAME}", DASHBOARD_PATH, *(f"/{DATABASE_NAME}/{q}" for q in QUERIES)):
            assert dashboard.get(path).status_code == 200
        download = dashboard.get(f"/{DATABASE_NAME}.db")
        assert download.status_code in (403, 404)
    assert file_digest(db) == before
    assert (
        rows(db, "SELECT (SELECT count(*) FROM audit) AS audit, (SELECT count(*) FROM cost_ledger) AS ledger")
        == counts
    )


def test_a_foreign_host_header_is_refused(dashboard):
    """A page that rebinds its name to 127.0.0.1 cannot read the audit."""
    import httpx

    response = httpx.get(
        dashboard.url + f"/{DATABASE_NAME}", headers={"Host": "attacker.example"}, timeout=30
    )
    assert response.status_code == 400
    assert "audit" not in response.text


def test_the_views_answer_the_same_in_the_sqlite3_shell(filled):
    """What the dashboard shows, a person gets from the sqlite3 they have (3.40)."""
    import subprocess

    for view in ("v_backend_failures", "v_spend_today", "v_tokens_per_session", "v_call_latency"):
        shell = subprocess.run(
            ["sqlite3", "-json", str(filled.facade.db), f"SELECT * FROM {view}"],
            capture_output=True,
            text=True,
            check=True,
        )
        from router.db import connect

        conn = connect(filled.facade.db)
        try:
            expected = query_dicts(conn, f"SELECT * FROM {view}")
        finally:
            conn.close()
        assert json.loads(shell.stdout or "[]") == expected, view
