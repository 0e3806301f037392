"""/metrics: the collector over a real SQLite file (counters equal the audit rows, labels from
closed sets and never a secret, in-flight calls counted once finished, totals that survive a
restart), and `serve --http` answering /metrics beside /mcp while real MCP calls go through."""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from router.catalog.load import load_catalog
from router.db import connect
from router.facade import audit, breaker
from router.facade.breaker import BreakerPolicy
from router.metrics import labels
from router.metrics.collector import RouterCollector
from router.redaction.redactor import Redactor
from tests import http_support
from tests.db_rows import rows
from tests.facade_support import make_facade, text_of, write_catalog_file

# a server whose name is a GitHub token's shape: the redactor must keep it out of every label
SECRET_SERVER = "ghp_" + "Zq3Rt7Yp1Lk9Wm2Xc5Vb8Nh4Jd6Fs0Ga1Ue3"
SERVERS = {"alpha", SECRET_SERVER}
POLICY = BreakerPolicy(failure_threshold=3, open_seconds=60.0)


def tool_line(name: str, server: str) -> dict:
    return {
        "name": name,
        "server": server,
        "profile": "custom",
        "description": f"The {name} tool.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    }


@pytest.fixture
def metrics_db(tmp_path) -> Path:
    db = tmp_path / "router.db"
    catalog = write_catalog_file(
        tmp_path / "catalog.jsonl",
        [
            tool_line("alpha_read", "alpha"),
            tool_line("secret_read", SECRET_SERVER),
            tool_line("beta_read", "beta"),
        ],
    )
    conn = connect(db)
    try:
        load_catalog(conn, seed_dir=None, user_files=[catalog])
    finally:
        conn.close()
    return db


def record(conn, meta_tool: str, target: str | None, outcome: str, latency_ms: float = 12.0, **extra) -> None:
    audit.record(
        conn,
        session_id="s1",
        role="staff-backend",
        meta_tool=meta_tool,
        target=target,
        arguments={"target": target},
        outcome=outcome,
        latency_ms=latency_ms,
        error=None,
        **extra,
    )


def fill(db: Path) -> None:
    conn = connect(db)
    try:
        for target, outcome, ms in (
            ("alpha_read", "ok", 4.0),
            ("alpha_read", "ok", 40.0),
            ("alpha_read", "timeout", 10_000.0),
            ("secret_read", "ok", 7.0),
            ("secret_read", "backend_failed", 300.0),
            ("beta_read", "ok", 2.0),  # beta is in the catalog, not in the servers config
            ("no_such_tool", "unknown_tool", 0.5),
            ("alpha_read", "denied", 0.2),
        ):
            record(conn, "mcp_call_tool", target, outcome, ms)
        record(conn, "mcp_search_tools", None, "ok", result_tokens=120, page_tools=3)
        record(conn, "mcp_search_tools", None, "ok", result_tokens=4, page_tools=0)
        record(conn, "mcp_search_tools", None, "invalid_arguments")
        record(conn, "mcp_inspect_schema", "alpha_read", "ok", result_tokens=80)
        for i in range(3):
            breaker.record(conn, "secret_read", False, 1_800_000_000.0 + i, POLICY, "boom")
    finally:
        conn.close()


def scrape(collector: RouterCollector) -> str:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return generate_latest(registry).decode()


def samples(text: str) -> dict[str, dict[tuple, float]]:
    """Each sample by name and its labels (sorted pairs), as prometheus-client's parser reads them."""
    out: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def expected_calls(db: Path) -> dict[tuple, float]:
    expected: dict[tuple, float] = {}
    sql = (
        "SELECT server, outcome, count(*) AS n FROM v_audit_outcomes"
        " WHERE meta_tool = 'mcp_call_tool' AND outcome <> 'in_flight' GROUP BY 1, 2"
    )
    for row in rows(db, sql):
        key = (("outcome", row["outcome"]), ("server", labels.server(row["server"], SERVERS)))
        expected[key] = expected.get(key, 0) + row["n"]
    return expected


def test_call_counters_equal_the_audit_rows_and_labels_come_from_closed_sets(metrics_db):
    fill(metrics_db)
    text = scrape(RouterCollector(metrics_db, lambda: SERVERS))
    found = samples(text)
    assert found["context_router_calls_total"] == expected_calls(metrics_db)
    assert sum(found["context_router_calls_total"].values()) == 8
    servers = {dict(key)["server"] for key in found["context_router_calls_total"]}
    # alpha as configured; the token-shaped name redacted; beta (not configured) and no server
    assert servers == {"alpha", labels.REDACTED_LABEL, labels.OTHER, labels.NO_SERVER}
    assert found["context_router_searches_total"] == {
        (("outcome", "ok"),): 2.0,
        (("outcome", "invalid_arguments"),): 1.0,
    }
    assert found["context_router_search_pages_nothing_callable_total"] == {(): 1.0}
    assert found["context_router_tokens_served_total"] == {
        (("meta_tool", "mcp_inspect_schema"),): 80.0,
        (("meta_tool", "mcp_search_tools"),): 124.0,
    }
    assert found["context_router_breaker_openings_total"] == {
        (("kind", "tool"), ("server", labels.REDACTED_LABEL)): 1.0
    }
    # the latency histogram counts the calls a backend answered or failed, per server
    count = found["context_router_call_latency_seconds_count"]
    assert count[(("server", "alpha"),)] == 3.0 and count[(("server", labels.REDACTED_LABEL),)] == 2.0
    buckets = found["context_router_call_latency_seconds_bucket"]
    assert buckets[(("le", "0.005"), ("server", "alpha"))] == 1.0
    assert buckets[(("le", "+Inf"), ("server", "alpha"))] == 3.0
    assert found["context_router_call_latency_seconds_sum"][(("server", "alpha"),)] == pytest.approx(10.044)


def test_no_label_holds_what_the_redactor_would_remove(metrics_db, monkeypatch):
    secret_value = "correct-horse-battery-staple-42"
    monkeypatch.setenv("TEAM_API_TOKEN", secret_value)
    labels.guarded.cache_clear()
    conn = connect(metrics_db)
    try:
        # an outcome no router writes, shaped like a key: stored by some other writer
        conn.execute(
            "INSERT INTO audit(started_at, finished_at, session_id, role, meta_tool, target, args_hash,"
            " outcome, latency_ms, pid) VALUES ('2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.001Z',"
            " 's', 'r', 'mcp_call_tool', 'alpha_read', 'b3:00', :outcome, 1.0, 1)",
            {"outcome": "sk-or-v1-" + "ab" * 24},
        )
    finally:
        conn.close()
    fill(metrics_db)
    text = scrape(RouterCollector(metrics_db, lambda: SERVERS | {secret_value}))
    redactor = Redactor()
    values = {
        value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        for value in s.labels.values()
    }
    assert values and all(redactor.text(value) == value for value in values), values
    assert SECRET_SERVER not in text and "sk-or-v1" not in text and secret_value not in text
    assert labels.OTHER in values


def test_guard_removes_a_value_the_redactor_would_change(monkeypatch):
    monkeypatch.setenv("TEAM_API_TOKEN", "correct-horse-battery-staple-42")
    labels.guarded.cache_clear()
    assert labels.guarded("filesystem") == "filesystem"
    assert labels.guarded(SECRET_SERVER) == labels.REDACTED_LABEL
    assert labels.guarded("correct-horse-battery-staple-42") == labels.REDACTED_LABEL
    assert labels.closed("made_up_outcome", labels.OUTCOMES) == labels.OTHER


def start_call(db: Path) -> int:
    conn = connect(db)
    try:
        return audit.start(
            conn,
            session_id="s2",
            role="staff-backend",
            meta_tool="mcp_call_tool",
            target="alpha_read",
            arguments={},
            within_s=60.0,
        )
    finally:
        conn.close()


def finish_call(db: Path, row: int) -> None:
    conn = connect(db)
    try:
        audit.finish(conn, row, outcome="ok", latency_ms=5.0, error=None)
    finally:
        conn.close()


@pytest.mark.parametrize("started", ["before the first scrape", "between two scrapes"])
def test_a_call_in_flight_counts_once_it_finishes_and_totals_survive_a_restart(metrics_db, started):
    fill(metrics_db)
    row = start_call(metrics_db) if started == "before the first scrape" else None
    collector = RouterCollector(metrics_db, lambda: SERVERS)
    before = samples(scrape(collector))["context_router_calls_total"]
    assert before == expected_calls(metrics_db)  # the call in flight is not counted yet
    if row is None:
        row = start_call(metrics_db)
        assert samples(scrape(collector))["context_router_calls_total"] == before
    finish_call(metrics_db, row)
    after = samples(scrape(collector))["context_router_calls_total"]
    key = (("outcome", "ok"), ("server", "alpha"))
    assert after[key] == before[key] + 1
    assert after == expected_calls(metrics_db)
    # a new process (a restarted router) reads the same totals from the file
    assert (
        samples(scrape(RouterCollector(metrics_db, lambda: SERVERS)))["context_router_calls_total"] == after
    )


def test_the_first_scrape_and_row_by_row_scrapes_add_up_the_same(metrics_db):
    """The grouped read of the history and the incremental one are the same counts."""
    collector = RouterCollector(metrics_db, lambda: SERVERS)
    scrape(collector)  # an empty history: every row below is read one by one
    fill(metrics_db)
    one_by_one = samples(scrape(collector))
    grouped = samples(scrape(RouterCollector(metrics_db, lambda: SERVERS)))
    assert one_by_one == grouped
    assert sum(grouped["context_router_calls_total"].values()) == 8


# --- serve --http ---------------------------------------------------------------------------


@contextmanager
def serving_http(facade, log: Path) -> Iterator[str]:
    """`serve --http` as staff-backend; yields its base URL (/mcp and /metrics below it)."""
    with (
        log.open("a") as errors,
        http_support.serving_http(facade, "staff-backend", stderr=errors) as (url, _),
    ):
        yield url.removesuffix("/mcp")


def http_client(url: str) -> Client:
    return Client(streamable_http_client(url + "/mcp", http_client=httpx2.AsyncClient()))


async def make_calls(url: str, flag: Path) -> None:
    flag.write_text("broken", encoding="utf-8")
    async with http_client(url) as client:
        await client.call_tool("mcp_search_tools", {"query": "current time"})
        nothing = await client.call_tool(
            "mcp_search_tools", {"query": "book me a flight to Lisbon next friday"}
        )
        assert not json.loads(text_of(nothing))["tools"], text_of(nothing)
        for _ in range(2):
            assert not (await client.call_tool("mcp_call_tool", {"toolName": "whoami", "args": {}})).is_error
        for _ in range(4):  # three failures open the breaker, the fourth is refused by it
            failed = await client.call_tool("mcp_call_tool", {"toolName": "flaky_step", "args": {}})
            assert failed.is_error, text_of(failed)


@pytest.mark.slow
def test_serve_http_answers_metrics_equal_to_the_audit_and_after_a_restart(tmp_path, harvested_catalog):
    facade = make_facade(tmp_path / "router", harvested_catalog)
    log = tmp_path / "serve.log"
    with serving_http(facade, log) as url:
        anyio.run(make_calls, url, facade.state_dir / "flaky.flag")
        response = httpx.get(url + "/metrics", timeout=30)
        assert response.status_code == 200, log.read_text()
        assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
        assert httpx.post(url + "/metrics", timeout=30).status_code == 405
    found = samples(response.text)
    configured = {"time", "git", "filesystem", "misbehaving", "absent"}
    expected: dict[tuple, float] = {}
    for row in rows(
        facade.db,
        "SELECT server, outcome, count(*) AS n FROM v_audit_outcomes WHERE meta_tool = 'mcp_call_tool' GROUP BY 1, 2",
    ):
        key = (("outcome", row["outcome"]), ("server", labels.server(row["server"], configured)))
        expected[key] = expected.get(key, 0) + row["n"]
    assert found["context_router_calls_total"] == expected
    assert expected[(("outcome", "breaker_open"), ("server", "misbehaving"))] == 1
    assert found["context_router_breaker_openings_total"] == {
        (("kind", "tool"), ("server", "misbehaving")): 1.0
    }
    assert found["context_router_search_pages_nothing_callable_total"] == {(): 1.0}
    searches = rows(facade.db, "SELECT count(*) AS n FROM audit WHERE meta_tool = 'mcp_search_tools'")[0]["n"]
    assert sum(found["context_router_searches_total"].values()) == searches == 2
    served = rows(
        facade.db, "SELECT sum(result_tokens) AS n FROM audit WHERE meta_tool = 'mcp_search_tools'"
    )[0]["n"]
    assert found["context_router_tokens_served_total"][(("meta_tool", "mcp_search_tools"),)] == served
    assert found["context_router_catalog_tools"] == {
        (): float(rows(facade.db, "SELECT count(*) AS n FROM tools")[0]["n"])
    }
    redactor = Redactor()
    assert all(
        redactor.text(value) == value for series in found.values() for key in series for _, value in key
    )
    # a restarted router reports the same counters, from the file
    with serving_http(facade, log) as url:
        again = samples(httpx.get(url + "/metrics", timeout=30).text)
    assert again["context_router_calls_total"] == found["context_router_calls_total"]
    assert again["context_router_breaker_openings_total"] == found["context_router_breaker_openings_total"]
