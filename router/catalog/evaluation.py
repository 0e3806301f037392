"""Retrieval quality: query files, rankings, and the metrics `context-router eval` reports.

A query file is JSON Lines: `{"id", "query"}` per line, plus `"relevant": [tool names]` for
evaluation. Metrics use binary relevance and are averaged over queries:
recall@k = |relevant ∩ top k| / |relevant|; nDCG@10 = DCG / ideal DCG with gain 1/log2(rank+1);
MRR@10 = 1 / rank of the first relevant tool in the top 10 (0 if none).
"""

import json
import math
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw

from router.catalog.search import search
from router.errors import QueryError, echo

RANK_DEPTH = 10


@dataclass(frozen=True)
class QueryLine:
    id: str
    query: str
    relevant: tuple[str, ...] = ()


class QueryLineError(QueryError):
    """A queries-file line that is not a query; `query_id` when the line has a usable one."""

    def __init__(self, message: str, query_id: str | None = None) -> None:
        super().__init__(message)
        self.query_id = query_id


def query_line(item: Any, seen: set[str], *, need_relevant: bool) -> QueryLine:
    """One parsed line of a queries file as a query; `seen` holds the ids before it."""
    if not isinstance(item, dict):
        raise QueryLineError("expected an object with id and query")
    raw_id, query = item.get("id"), item.get("query")
    if not isinstance(raw_id, (str, int)) or isinstance(raw_id, bool):
        raise QueryLineError("field id: expected a string or integer")
    query_id = str(raw_id)
    if not isinstance(query, str):
        raise QueryLineError("field query: expected a string", query_id)
    if query_id in seen:
        raise QueryLineError(f"field id: {echo(query_id)} is used twice", query_id)
    seen.add(query_id)
    relevant = item.get("relevant", [])
    if need_relevant and (
        not isinstance(relevant, list) or not relevant or not all(isinstance(name, str) for name in relevant)
    ):
        raise QueryLineError("field relevant: expected a non-empty list of tool names", query_id)
    return QueryLine(query_id, query, tuple(dict.fromkeys(relevant)))


def read_query_file(path: Path, *, need_relevant: bool) -> list[QueryLine]:
    """Every non-blank line of a queries file; a bad line is named by file and line. Lines are
    split on '\n' only: U+2028, U+2029 and U+0085 are valid inside a JSON string."""
    try:
        lines = Path(path).read_text(encoding="utf-8").split("\n")
    except (FileNotFoundError, IsADirectoryError):
        raise QueryError(f"{path}: file not found") from None
    out: list[QueryLine] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        try:
            out.append(query_line(json.loads(line), seen, need_relevant=need_relevant))
        except json.JSONDecodeError as exc:
            raise QueryError(f"{where}: invalid JSON: {exc.msg}") from None
        except QueryLineError as exc:
            raise QueryError(f"{where}: {exc}") from None
    if not out:
        raise QueryError(f"{path}: no queries in file")
    return out


def recall_at(ranked: list[str], relevant: Iterable[str], k: int) -> float:
    relevant = set(relevant)
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def ndcg_at(ranked: list[str], relevant: Iterable[str], k: int) -> float:
    relevant = set(relevant)
    dcg = sum(1 / math.log2(rank + 1) for rank, name in enumerate(ranked[:k], 1) if name in relevant)
    ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(len(relevant), k) + 1))
    return dcg / ideal


def mrr_at(ranked: list[str], relevant: Iterable[str], k: int) -> float:
    relevant = set(relevant)
    for rank, name in enumerate(ranked[:k], start=1):
        if name in relevant:
            return 1 / rank
    return 0.0


@dataclass(frozen=True)
class Quality:
    queries: int
    recall_at_1: float
    recall_at_5: float
    ndcg_at_10: float
    mrr_at_10: float
    median_ms: float

    def as_row(self) -> dict[str, float]:
        return {
            "queries": self.queries,
            "recall@1": round(self.recall_at_1, 4),
            "recall@5": round(self.recall_at_5, 4),
            "nDCG@10": round(self.ndcg_at_10, 4),
            "MRR@10": round(self.mrr_at_10, 4),
            "median_ms": round(self.median_ms, 4),
        }


def quality(rankings: list[list[str]], queries: list[QueryLine], times_s: list[float]) -> Quality:
    def mean(values):
        return statistics.fmean(values) if values else 0.0

    return Quality(
        queries=len(queries),
        recall_at_1=mean([recall_at(r, q.relevant, 1) for r, q in zip(rankings, queries)]),
        recall_at_5=mean([recall_at(r, q.relevant, 5) for r, q in zip(rankings, queries)]),
        ndcg_at_10=mean([ndcg_at(r, q.relevant, RANK_DEPTH) for r, q in zip(rankings, queries)]),
        mrr_at_10=mean([mrr_at(r, q.relevant, RANK_DEPTH) for r, q in zip(rankings, queries)]),
        median_ms=statistics.median(times_s) * 1000 if times_s else 0.0,
    )


Ranker = Callable[[str], list[str]]


def run_ranker(ranker: Ranker, queries: list[QueryLine]) -> tuple[list[list[str]], list[float]]:
    """Each query's ranking and its wall time in seconds."""
    rankings, times = [], []
    for line in queries:
        started = time.perf_counter()
        try:
            ranked = ranker(line.query)
        except QueryError as exc:
            raise QueryError(f"query {line.id!r}: {exc}") from None
        times.append(time.perf_counter() - started)
        rankings.append(ranked)
    return rankings, times


def router_ranker(
    conn: apsw.Connection, *, profile: str | None = None, limit: int = RANK_DEPTH, semantic: bool = True
) -> Ranker:
    """The router's own search as a ranker; semantic=False: by the words alone."""

    def rank(query: str) -> list[str]:
        return [hit.name for hit in search(conn, query, profile=profile, limit=limit, semantic=semantic)]

    return rank
