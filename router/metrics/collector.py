"""A Prometheus collector that reads the router's SQLite file at scrape time.

Nothing is counted in memory alone: every figure is a row of the file (the audit, breaker
openings, the break-glass ledger), so counters survive a restart and every router process on
the file reports the same totals. The audit is read incrementally (router/metrics/
audit_totals.py); the other tables are small and summed whole. The file is opened read-only.
"""

import threading
from collections.abc import Callable, Collection, Iterator
from pathlib import Path

import apsw
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from router.db import one_row
from router.facade.definitions import INSPECT_SCHEMA, SEARCH_TOOLS
from router.metrics import labels
from router.metrics.audit_totals import AuditTotals, Histogram

PREFIX = "context_router"
MICRO = 1_000_000
READ_BUSY_TIMEOUT_MS = 1_000

BREAKER_OPENINGS = "SELECT kind, server, count(*) FROM breaker_openings GROUP BY kind, server"
BREAKERS_NOT_CLOSED = """
SELECT 'tool', count(*) FROM breaker WHERE state <> 'closed'
UNION ALL
SELECT 'server', count(*) FROM backend_breaker WHERE state <> 'closed'
"""
# a call still running ('started') is left out: a counter may not go down when it ends
BREAKGLASS_STATUSES = (
    "SELECT status, count(*) FROM breakglass_invocations WHERE status <> 'started' GROUP BY status"
)
BREAKGLASS_MONEY = """
SELECT coalesce(sum(CASE WHEN kind = 'settlement' THEN micro_usd END), 0),
       count(DISTINCT CASE WHEN kind = 'refusal' THEN invocation_id END)
FROM cost_ledger
"""
SPEND_TODAY = "SELECT committed_micro_usd, day_max_micro_usd FROM v_spend_today"
CATALOG_TOKENS = "SELECT tools, catalog_tokens, meta_tools_tokens FROM v_catalog_tokens"


class RouterCollector(Collector):
    """`servers()` gives the backend server names the servers config declares now: the only
    values a server label may take."""

    def __init__(self, db_path: Path, servers: Callable[[], Collection[str]]) -> None:
        self._db_path = db_path
        self._servers = servers
        self._lock = threading.Lock()  # scrapes may run in parallel threads
        self._conn: apsw.Connection | None = None
        self._audit = AuditTotals()

    def _connection(self) -> apsw.Connection:
        if self._conn is None:
            self._conn = apsw.Connection(str(self._db_path), flags=apsw.SQLITE_OPEN_READONLY)
            self._conn.set_busy_timeout(READ_BUSY_TIMEOUT_MS)
        return self._conn

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            conn = self._connection()
            # one read transaction: every figure of a scrape from the same moment
            conn.execute("BEGIN")
            try:
                self._audit.refresh(conn)
                metrics = [
                    *self._audit_metrics(),
                    *self._breaker_metrics(conn),
                    *self._breakglass_metrics(conn),
                ]
                metrics.extend(self._catalog_metrics(conn))
            finally:
                conn.execute("COMMIT")
        yield from metrics

    def _audit_metrics(self) -> list[Metric]:
        servers = self._servers()
        totals = self._audit
        calls = CounterMetricFamily(
            f"{PREFIX}_calls",
            "mcp_call_tool calls by backend server and outcome",
            labels=["server", "outcome"],
        )
        for (server, outcome), count in _merged(
            ((labels.server(server, servers), labels.closed(outcome, labels.OUTCOMES)), n)
            for (server, outcome), n in totals.calls.items()
        ):
            calls.add_metric([server, outcome], count)
        out: list[Metric] = [calls]
        for name, what, counter in (
            ("searches", SEARCH_TOOLS, totals.searches),
            ("inspects", INSPECT_SCHEMA, totals.inspects),
            ("unreadable_requests", "requests the transport could not read", totals.other),
        ):
            family = CounterMetricFamily(f"{PREFIX}_{name}", f"{what} by outcome", labels=["outcome"])
            for (outcome,), count in _merged(
                ((labels.closed(outcome, labels.OUTCOMES),), n) for outcome, n in counter.items()
            ):
                family.add_metric([outcome], count)
            out.append(family)
        out.append(
            CounterMetricFamily(
                f"{PREFIX}_search_pages_nothing_callable",
                "search pages that held no tool the caller could call",
                value=totals.pages_nothing_callable,
            )
        )
        tokens = CounterMetricFamily(
            f"{PREFIX}_tokens_served",
            "tokens (cl100k) of search pages and inspected schemas",
            labels=["meta_tool"],
        )
        for meta_tool, count in sorted(totals.tokens.items()):
            tokens.add_metric([labels.closed(meta_tool, (SEARCH_TOOLS, INSPECT_SCHEMA))], count)
        out.append(tokens)
        latency = HistogramMetricFamily(
            f"{PREFIX}_call_latency_seconds",
            "latency of mcp_call_tool calls a backend answered or failed, per backend server",
            labels=["server"],
        )
        by_label: dict[str, Histogram] = {}
        for raw_server, histogram in totals.latency.items():
            by_label.setdefault(labels.server(raw_server, servers), Histogram()).add(histogram)
        for label, histogram in sorted(by_label.items()):
            latency.add_metric([label], histogram.cumulative(), histogram.total_s)
        out.append(latency)
        return out

    def _breaker_metrics(self, conn: apsw.Connection) -> list[Metric]:
        servers = self._servers()
        openings = CounterMetricFamily(
            f"{PREFIX}_breaker_openings",
            "circuit breaker openings, of a backend tool's breaker or its server's",
            labels=["kind", "server"],
        )
        for (kind, server), count in _merged(
            ((labels.closed(kind, labels.BREAKER_KINDS), labels.server(server, servers)), n)
            for kind, server, n in conn.execute(BREAKER_OPENINGS)
        ):
            openings.add_metric([kind, server], count)
        not_closed = GaugeMetricFamily(
            f"{PREFIX}_breakers_not_closed", "breakers open or half-open now", labels=["kind"]
        )
        for kind, count in conn.execute(BREAKERS_NOT_CLOSED):
            not_closed.add_metric([labels.closed(kind, labels.BREAKER_KINDS)], count)
        return [openings, not_closed]

    def _breakglass_metrics(self, conn: apsw.Connection) -> list[Metric]:
        invocations = CounterMetricFamily(
            f"{PREFIX}_breakglass_invocations", "finished break_glass calls by status", labels=["status"]
        )
        for (status,), count in _merged(
            ((labels.closed(status, labels.BREAKGLASS_STATUSES),), n)
            for status, n in conn.execute(BREAKGLASS_STATUSES)
        ):
            invocations.add_metric([status], count)
        spent, refusals = one_row(conn, BREAKGLASS_MONEY)
        committed_today, day_cap = one_row(conn, SPEND_TODAY)
        out: list[Metric] = [
            invocations,
            CounterMetricFamily(
                f"{PREFIX}_breakglass_refusals",
                "break_glass calls refused (gate, budget or caps)",
                value=refusals,
            ),
            CounterMetricFamily(
                f"{PREFIX}_breakglass_spend_usd",
                "break-glass spend the provider settled, in USD",
                value=spent / MICRO,
            ),
            GaugeMetricFamily(
                f"{PREFIX}_breakglass_committed_today_usd",
                "what today's (UTC) break-glass calls committed against the day cap, in USD",
                value=committed_today / MICRO,
            ),
        ]
        if day_cap is not None:
            out.append(
                GaugeMetricFamily(
                    f"{PREFIX}_breakglass_day_cap_usd",
                    "the break-glass day cap last recorded, in USD",
                    value=day_cap / MICRO,
                )
            )
        return out

    def _catalog_metrics(self, conn: apsw.Connection) -> list[Metric]:
        tools, catalog_tokens, meta_tools_tokens = one_row(conn, CATALOG_TOKENS)
        return [
            GaugeMetricFamily(f"{PREFIX}_catalog_tools", "tools in the catalog", value=tools),
            GaugeMetricFamily(
                f"{PREFIX}_catalog_tokens",
                "tokens (cl100k) of every catalog tool's definition: attaching them all directly",
                value=catalog_tokens,
            ),
            GaugeMetricFamily(
                f"{PREFIX}_meta_tools_tokens",
                "tokens (cl100k) of the router's own tools/list",
                value=meta_tools_tokens or 0,
            ),
        ]

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def _merged(pairs) -> list[tuple[tuple[str, ...], float]]:
    """Counts whose labels became equal (several values mapped to OTHER) added together."""
    sums: dict[tuple[str, ...], float] = {}
    for key, count in pairs:
        sums[key] = sums.get(key, 0) + count
    return sorted(sums.items())
