"""Running totals of the audit rows, read incrementally: the first scrape of a process sums the
whole history in SQL (grouped: one pass, no row reaches Python), every later one reads only
the rows written since (and those still in flight then), so a scrape stays cheap however long
the file's history, and a restarted router reports its whole history again.

A row counts once its outcome is final (v_audit_outcomes: a 'started' row whose deadline has
passed is 'interrupted'); a row in flight is read again by the next scrape.
"""

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import apsw

from router.db import scalar
from router.facade.definitions import CALL_TOOL, INSPECT_SCHEMA, SEARCH_TOOLS

# Upper bounds (seconds) of the call latency histogram's buckets: a local tool answers in
# milliseconds, a backend starting or timing out takes up to its timeouts (tens of seconds).
LATENCY_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
# the outcomes of calls that reached a backend, as v_call_latency counts them
FORWARDED = frozenset({"ok", "tool_error", "backend_failed", "timeout", "not_completed"})
IN_FLIGHT = "in_flight"
# Rows read per statement after the first scrape, so a burst holds a bounded batch at once.
BATCH_ROWS = 20_000

_COLUMNS = "id, meta_tool, outcome, latency_ms, page_tools, result_tokens, server"
ROWS_AFTER = f"SELECT {_COLUMNS} FROM v_audit_outcomes WHERE id > :after ORDER BY id LIMIT :limit"
ROWS_BY_ID = f"SELECT {_COLUMNS} FROM v_audit_outcomes WHERE id IN (SELECT value FROM json_each(:ids))"
LAST_ID = "SELECT coalesce(max(id), 0) FROM audit"
# The histogram bucket of a latency (NULL without one), as the bucket_of below computes it.
_BUCKET_SQL = (
    "CASE WHEN latency_ms IS NULL THEN NULL "
    + " ".join(f"WHEN latency_ms <= {bound * 1000!r} THEN {i}" for i, bound in enumerate(LATENCY_BUCKETS_S))
    + f" ELSE {len(LATENCY_BUCKETS_S)} END"
)
HISTORY = f"""
SELECT meta_tool, server, outcome, {_BUCKET_SQL} AS bucket, count(*), coalesce(sum(latency_ms), 0),
       coalesce(sum(page_tools = 0), 0), coalesce(sum(result_tokens), 0),
       group_concat(CASE WHEN outcome = '{IN_FLIGHT}' THEN id END)
FROM v_audit_outcomes
WHERE id <= :upto
GROUP BY meta_tool, server, outcome, bucket
"""


def bucket_of(latency_ms: float) -> int:
    seconds = latency_ms / 1000
    return next((i for i, bound in enumerate(LATENCY_BUCKETS_S) if seconds <= bound), len(LATENCY_BUCKETS_S))


@dataclass
class Histogram:
    """Cumulative-ready bucket counts of one server's call latencies."""

    counts: list[int] = field(default_factory=lambda: [0] * (len(LATENCY_BUCKETS_S) + 1))
    total_s: float = 0.0

    def observe(self, bucket: int, count: int, total_s: float) -> None:
        self.counts[bucket] += count
        self.total_s += total_s

    def add(self, other: "Histogram") -> None:
        self.counts = [a + b for a, b in zip(self.counts, other.counts)]
        self.total_s += other.total_s

    def cumulative(self) -> list[tuple[str, float]]:
        bounds = [*(str(bound) for bound in LATENCY_BUCKETS_S), "+Inf"]
        running, out = 0, []
        for bound, count in zip(bounds, self.counts):
            running += count
            out.append((bound, float(running)))
        return out


@dataclass
class AuditTotals:
    """What the audit rows add up to, keyed by raw values (labels are made at collect time)."""

    # (server or None, outcome) for mcp_call_tool; outcome for the two catalog meta-tools
    calls: Counter[tuple[str | None, str]] = field(default_factory=Counter)
    searches: Counter[str] = field(default_factory=Counter)
    inspects: Counter[str] = field(default_factory=Counter)
    # rows of no meta-tool (a request the transport could not read), by outcome
    other: Counter[str] = field(default_factory=Counter)
    pages_nothing_callable: int = 0
    # tokens of the answers the model got, per meta-tool
    tokens: Counter[str] = field(default_factory=Counter)
    latency: dict[str | None, Histogram] = field(default_factory=dict)
    # whether the history was summed; the last id read, and the rows at or below it in flight
    history_read: bool = False
    after: int = 0
    pending: set[int] = field(default_factory=set)

    def refresh(self, conn: apsw.Connection) -> None:
        """Count the rows finished since the last refresh (all of them, the first time)."""
        if not self.history_read:
            upto = scalar(conn, LAST_ID)
            for meta_tool, server, outcome, bucket, count, latency_ms, nothing, tokens, ids in conn.execute(
                HISTORY, {"upto": upto}
            ):
                if outcome == IN_FLIGHT:
                    self.pending.update(int(row_id) for row_id in str(ids).split(","))
                else:
                    self._add(meta_tool, server, outcome, count, bucket, latency_ms, nothing, tokens)
            self.after, self.history_read = upto, True
        if self.pending:
            for row in conn.execute(ROWS_BY_ID, {"ids": json.dumps(sorted(self.pending))}).fetchall():
                self._count(row)
        while True:
            batch: list[Any] = conn.execute(ROWS_AFTER, {"after": self.after, "limit": BATCH_ROWS}).fetchall()
            for row in batch:
                self._count(row)
            if batch:
                self.after = batch[-1][0]
            if len(batch) < BATCH_ROWS:
                return

    def _count(self, row: tuple) -> None:
        row_id, meta_tool, outcome, latency_ms, page_tools, result_tokens, server = row
        if outcome == IN_FLIGHT:
            self.pending.add(row_id)
            return
        self.pending.discard(row_id)
        bucket = None if latency_ms is None else bucket_of(latency_ms)
        self._add(
            meta_tool, server, outcome, 1, bucket, latency_ms or 0.0, page_tools == 0, result_tokens or 0
        )

    def _add(
        self,
        meta_tool: str,
        server: str | None,
        outcome: str,
        count: int,
        bucket: int | None,
        latency_ms: float,
        nothing_callable: int,
        tokens: int,
    ) -> None:
        """`count` finished rows alike; latency_ms, nothing_callable and tokens are their sums."""
        if meta_tool == CALL_TOOL:
            self.calls[(server, outcome)] += count
            if outcome in FORWARDED and bucket is not None:
                self.latency.setdefault(server, Histogram()).observe(bucket, count, latency_ms / 1000)
        elif meta_tool == SEARCH_TOOLS:
            self.searches[outcome] += count
            self.pages_nothing_callable += nothing_callable
        elif meta_tool == INSPECT_SCHEMA:
            self.inspects[outcome] += count
        else:
            self.other[outcome] += count
        if tokens and meta_tool in (SEARCH_TOOLS, INSPECT_SCHEMA):
            self.tokens[meta_tool] += tokens
