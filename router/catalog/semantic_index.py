"""The catalog's vectors in memory, for search: the query's nearest tools and the cosine of
any tool, over one float32 matrix.

Loaded once per catalog version and model (like the term statistics), per connection: the
vectors change only with the catalog. Up to EXHAUSTIVE_MAX_TOOLS rows every row is scored;
above, the rows are in the groups the catalog load stored (router/catalog/vector_groups.py)
and a query scores the groups nearest to it. Vectors are L2-normalised, so a dot product is the cosine.
A tool without a vector (none was computed for this model) has cosine 0 and is never a
semantic neighbour. The tools' example requests have vectors of their own
(router/catalog/example_vectors.py), always scored whole (a catalog's examples are a few per
tool that has any): a tool's cosine is the better of its own vector's and its examples' match
(EXAMPLE_CENTROID_SHARE). So are the servers' not-for requests, each read against its server's
tools (not_for_matches).
"""

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import cast

import apsw
import numpy as np

from router.catalog import example_vectors, vector_clusters, vector_groups
from router.catalog.filter_columns import FilterColumns
from router.catalog.model_vectors import EmbeddingModel, dequantized
from router.catalog.search_filters import Filters
from router.db import PerConnection, catalog_version

VECTORS_SQL = """
SELECT t.id, t.mutating, (SELECT s.profile FROM servers s WHERE s.name = t.server), t.server,
       e.scale, e.vector, g.group_no
FROM tools t
JOIN tool_embeddings e ON e.definition_hash = t.definition_hash AND e.model = :model AND e.dim = :dim
LEFT JOIN vector_groups g ON g.definition_hash = e.definition_hash AND g.model = e.model
ORDER BY t.id
"""
# Vectors stored under the model's name that do not fit it (another dimension: a damaged file,
# a half-applied upgrade): read as missing, so those tools are ranked by their words alone.
UNFIT_SQL = "SELECT count(*), min(dim) FROM tool_embeddings WHERE model = :model AND dim <> :dim"
# what has been warned of in this process: each (model, number of unfit vectors) once
_warned: set[tuple[str, int]] = set()


# A tool's examples match a request by the cosine of their best example and by that of their
# mean vector (the tool's typical request), this much of the latter: with a static model one
# example that names the request's objects ("config.yaml") outscores the tool whose examples
# share its action ("find ... files") on its own; the mean keeps what the examples have in
# common. Chosen on the page_dev requests and the development sets (bench/page_quality.py).
EXAMPLE_CENTROID_SHARE = 0.5


@dataclass(frozen=True)
class ExampleCosines:
    """One query's best example cosine per tool with examples: `rows` (index rows) and `best`
    (as an array and a list) in one order, and each tool id's place in it."""

    rows: np.ndarray
    best: np.ndarray
    best_list: list[float]
    at: Mapping[int, int]

    def of(self, tool_id: int) -> float:
        """The tool's best example cosine (0 for a tool without examples)."""
        found = self.at.get(tool_id)
        return 0.0 if found is None else self.best_list[found]


NO_EXAMPLES = ExampleCosines(np.zeros(0, np.intp), np.zeros(0, np.float32), [], {})


@dataclass(frozen=True)
class NotForMatch:
    """How a request matches a server's not-for requests and its tools: the best cosine of
    each, over the request and its readings (the tools': their own vectors' and every example's)."""

    not_for: float
    tools: float


@dataclass(frozen=True)
class _NotForServer:
    rows: np.ndarray  # its not-for requests' rows in the not-for matrix
    tool_rows: np.ndarray  # its tools' rows in the index
    example_rows: np.ndarray  # its tools' examples' rows in the examples' matrix


class SemanticIndex:
    """The vectors of one catalog version for one model, with what the search filters read."""

    def __init__(self, conn: apsw.Connection):
        self._conn = conn
        self._key: tuple[int, str] | None = None
        self.ids = np.zeros(0, np.int64)
        self.matrix = np.zeros((0, 1), np.float32)
        self._row_of: dict[int, int] = {}
        self._columns = FilterColumns((), (), ())
        self._clusters: vector_clusters.Clusters | None = None
        # the examples' vectors, grouped by tool (ascending ids): each run's tool and start
        self._examples = np.zeros((0, 1), np.float32)
        self._example_starts = np.zeros(0, np.intp)
        self._example_rows = np.zeros(0, np.intp)
        self._example_at: dict[int, int] = {}
        self._example_means = np.zeros((0, 1), np.float32)
        self._example_owners = np.zeros(0, np.int64)
        # the servers' not-for requests' vectors, and each such server's rows
        self._not_for = np.zeros((0, 1), np.float32)
        self._not_for_changes = np.zeros(0, bool)
        self._not_for_servers: dict[str, _NotForServer] = {}

    def refresh(self, model: EmbeddingModel, version: int | None = None) -> "SemanticIndex":
        """Reload when the catalog or the model changed since the last load."""
        version = catalog_version(self._conn) if version is None else version
        if self._key == (version, model.identity):
            return self
        which = {"model": model.identity, "dim": model.dim}
        rows = self._conn.execute(VECTORS_SQL, which).fetchall()
        _warn_of_unfit_vectors(self._conn, model, which)
        # column by column (one pass each, in C): at 100,000 tools a row-by-row loop per column
        # was a third of the load
        ids, mutating, profiles, servers, scales, vectors, groups = zip(*rows) if rows else ((),) * 7
        self.ids = np.array(ids, np.int64)
        self._columns = FilterColumns(mutating, profiles, servers)
        if rows:
            self.matrix = dequantized(cast(list[float], scales), cast(list[bytes], vectors))
        else:
            self.matrix = np.zeros((0, model.dim), np.float32)
        self._clusters = None
        if len(rows) > vector_groups.EXHAUSTIVE_MAX_TOOLS:
            # rows reordered group by group, so a probed group is one contiguous slice
            self._clusters = self._grouping(model, list(groups))
            order = self._clusters.order
            self.ids, self.matrix = self.ids[order], np.ascontiguousarray(self.matrix[order])
            self._columns = self._columns.reordered(order)
        self._row_of = dict(zip(self.ids.tolist(), range(len(self.ids))))
        self._load_examples(model)
        self._load_not_for(model, dict(zip(ids, servers)))
        self._key = (version, model.identity)
        return self

    def _load_examples(self, model: EmbeddingModel) -> None:
        """The examples' vectors of the tools in the index, a run per tool."""
        found = example_vectors.example_rows(self._conn, model.identity, model.dim)
        inside = np.array([int(owner) in self._row_of for owner in found.owners], bool)
        owners, self._examples, written = found.owners[inside], found.matrix[inside], found.written[inside]
        self._example_owners = owners
        self._example_starts = (
            np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]]) if len(owners) else owners
        )
        tools = owners[self._example_starts].tolist() if len(owners) else []
        self._example_rows = np.array([self._row_of[tool_id] for tool_id in tools], np.intp)
        self._example_at = {tool_id: at for at, tool_id in enumerate(tools)}
        if len(owners):  # each tool's written examples' mean (its typical request), L2-normalised
            sums = np.add.reduceat(self._examples * written[:, None], self._example_starts, axis=0)
            norms = np.linalg.norm(sums, axis=1, keepdims=True)
            self._example_means = (sums / np.where(norms > 0, norms, 1.0)).astype(np.float32)
        else:
            self._example_means = np.zeros((0, model.dim), np.float32)

    def _load_not_for(self, model: EmbeddingModel, server_of: Mapping[int, object]) -> None:
        """The not-for requests' vectors, and for each server that has any the rows of its
        tools and of their examples (`server_of`: each tool id's server)."""
        found = example_vectors.not_for_rows(self._conn, model.identity, model.dim)
        self._not_for = found.matrix
        self._not_for_changes = np.array(found.changes, bool)
        names = np.array(found.servers, object)
        row_servers = np.array([server_of[tool_id] for tool_id in self.ids.tolist()], object)
        example_servers = np.array([server_of[tool_id] for tool_id in self._example_owners.tolist()], object)
        self._not_for_servers = {
            str(name): _NotForServer(
                np.flatnonzero(names == name),
                np.flatnonzero(row_servers == name),
                np.flatnonzero(example_servers == name),
            )
            for name in sorted(set(found.servers))
        }

    def not_for_matches(
        self, query: np.ndarray, *readings: np.ndarray, reads_only: bool = False
    ) -> dict[str, NotForMatch]:
        """For each server with not-for requests, how the request matches them and its tools;
        for a request that only reads (`reads_only`), the not-for requests that ask for a
        change say nothing of it ("is there a branch for the oauth work?" is no "open a PR for
        my branch")."""
        if not self._not_for_servers:
            return {}
        queries = np.stack([np.asarray(q, np.float32) for q in (query, *readings)], axis=1)
        not_for = (self._not_for @ queries).max(axis=1)
        if reads_only:
            not_for = np.where(self._not_for_changes, 0.0, not_for)
        matches = {}
        for name, server in self._not_for_servers.items():
            tools = (self.matrix[server.tool_rows] @ queries).max(initial=0.0)
            if len(server.example_rows):
                tools = max(tools, (self._examples[server.example_rows] @ queries).max())
            matches[name] = NotForMatch(float(not_for[server.rows].max(initial=0.0)), float(tools))
        return matches

    def example_cosines(self, query: np.ndarray, *readings: np.ndarray) -> ExampleCosines:
        """How each tool's examples match the query (EXAMPLE_CENTROID_SHARE), for the tools
        with examples: the better of the query's and its other readings' match (its reading
        without payload, router/catalog/request_payload.py)."""
        if not len(self._examples):
            return NO_EXAMPLES
        match = self._example_match(np.asarray(query, np.float32))
        for reading in readings:
            match = np.maximum(match, self._example_match(np.asarray(reading, np.float32)))
        return ExampleCosines(self._example_rows, match, match.tolist(), self._example_at)

    def _example_match(self, query: np.ndarray) -> np.ndarray:
        best = np.maximum.reduceat(self._examples @ query, self._example_starts)
        return (1 - EXAMPLE_CENTROID_SHARE) * best + EXAMPLE_CENTROID_SHARE * (self._example_means @ query)

    def _grouping(self, model: EmbeddingModel, groups: list) -> vector_clusters.Clusters:
        """The grouping the last load stored; computed here only for a file no load has
        grouped (one written before the grouping was stored, or by another model)."""
        centroids = vector_groups.stored_centroids(self._conn, model.identity)
        if centroids is not None and None not in groups and centroids.shape[1] == model.dim:
            return vector_clusters.from_assignment(centroids, np.array(groups, np.int64))
        return vector_clusters.build(self.matrix)

    @property
    def has_examples(self) -> bool:
        """Whether any tool of the index has example vectors."""
        return bool(len(self._examples))

    def __len__(self) -> int:
        return len(self.ids)

    def nearest(
        self,
        query: np.ndarray,
        k: int,
        *,
        filters: Filters,
        min_cosine: float,
        examples: "ExampleCosines | None" = None,
        example_weight: float = 1.0,
    ) -> dict[int, float]:
        """The `k` tools most like the query (tool id → cosine) that pass the filters (a
        hidden server's tools are never hits, so they take no neighbour's place) and reach
        `min_cosine`, best first, ties by id. With `examples` (example_cosines), a tool's
        cosine is the best of its own and example_weight × its best example's."""
        if not len(self.ids) or k <= 0:
            return {}
        query = np.asarray(query, np.float32)
        if examples is None or not len(examples.rows):
            return self._nearest_of(*self._scored(query), k, filters, min_cosine)
        weighed = (example_weight * examples.best).astype(np.float32)
        if self._clusters is None:  # every row scored: one vector, each tool at its best
            scores = self.matrix @ query
            scores[examples.rows] = np.maximum(scores[examples.rows], weighed)
            return self._nearest_of(scores, lambda positions: positions, k, filters, min_cosine)
        found = self._nearest_of(*self._scored(query), k, filters, min_cosine)
        # probed groups: the tools whose examples reach the floor join them, at their best
        rows = examples.rows[weighed >= min_cosine]
        if filters.restricts and len(rows):
            rows = rows[self._columns.allowed(rows, filters)]
        combined = dict(found)
        own = self.matrix[rows] @ query
        best = weighed.tolist()  # the float32 values the whole matrix's path compares too
        for tool_id, cosine in zip(self.ids[rows].tolist(), own.tolist()):
            combined[tool_id] = max(combined.get(tool_id, cosine), cosine, best[examples.at[tool_id]])
        return dict(sorted(combined.items(), key=lambda pair: (-pair[1], pair[0]))[:k])

    def _nearest_of(
        self,
        scores: np.ndarray,
        rows_of: Callable[[np.ndarray], np.ndarray],
        k: int,
        filters: Filters,
        min_cosine: float,
    ) -> dict[int, float]:
        """The k best of `scores` (cosines of the rows `rows_of` maps them to) that pass."""
        kept = None  # the positions among `scores` still in; None: all of them
        if filters.restricts:
            # the floor first: the filters read only the rows that reach it
            kept = np.flatnonzero(scores >= min_cosine)
            kept = kept[self._columns.allowed(rows_of(kept), filters)]
        candidates = scores if kept is None else scores[kept]
        floor = min_cosine
        if len(candidates) > k:
            # the k-th best cosine by a partition; every candidate reaching it stays in, ties at
            # it included, so the sort below (ties by id) decides among them, not the pivots
            floor = max(floor, np.partition(candidates, len(candidates) - k)[len(candidates) - k])
        best = np.flatnonzero(candidates >= floor)
        if kept is not None:
            best = kept[best]
        ids, best_scores = self.ids[rows_of(best)], scores[best]
        order = np.lexsort((ids, -best_scores))[:k]
        return dict(zip(ids[order].tolist(), best_scores[order].tolist()))

    def _scored(self, query: np.ndarray) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
        """The cosines of the rows the query scores, and what turns a position among them into
        its row: every row up to EXHAUSTIVE_MAX_TOOLS, else the probed groups' rows, group
        after group."""
        if self._clusters is None:
            return self.matrix @ query, lambda positions: positions
        ranges = self._clusters.probe(query)
        scores = np.empty(sum(stop - start for start, stop in ranges), np.float32)
        sizes, shifts, end = [], [], 0
        # each group's product straight into its place: no per-group array, no concatenation
        for start, stop in ranges:
            np.dot(self.matrix[start:stop], query, out=scores[end : end + stop - start])
            shifts.append(start - end)  # a probed group's rows are consecutive: one shift each
            sizes.append(stop - start)
            end += stop - start

        def rows_of(positions: np.ndarray) -> np.ndarray:
            return positions + np.repeat(shifts, sizes)[positions]

        return scores, rows_of

    def alike(self, tool_ids: list[int], min_cosine: float) -> dict[int, set[int]]:
        """For each of the tools that has a vector, the others among them whose own vectors (their
        descriptions) are at least `min_cosine` alike: tools that do the same job."""
        found = [tool_id for tool_id in dict.fromkeys(tool_ids) if tool_id in self._row_of]
        if len(found) < 2:
            return {}
        rows = self.matrix.take([self._row_of[tool_id] for tool_id in found], axis=0)
        close = (rows @ rows.T) >= min_cosine
        np.fill_diagonal(close, False)
        return {
            found[i]: {found[j] for j in np.flatnonzero(close[i]).tolist()}
            for i in range(len(found))
            if close[i].any()
        }

    def cosines(self, query: np.ndarray, tool_ids: list[int]) -> dict[int, float]:
        """The cosine of each tool that has a vector."""
        # a search asks for a dozen or two: dict lookups in Python beat any numpy call there
        row_of = self._row_of
        found = [tool_id for tool_id in tool_ids if tool_id in row_of]
        if not found:
            return {}
        scores = self.matrix.take([row_of[tool_id] for tool_id in found], axis=0) @ query
        return dict(zip(found, scores.tolist()))


def _warn_of_unfit_vectors(conn: apsw.Connection, model: EmbeddingModel, which: dict) -> None:
    """Once per process, on stderr: how many vectors do not fit, and what mends them."""
    unfit, dim = conn.execute(UNFIT_SQL, which).fetchone()  # type: ignore[misc]
    if not unfit or (model.identity, unfit) in _warned:
        return
    _warned.add((model.identity, unfit))
    print(
        f"context-router: warning: {unfit} tool vectors in the catalog do not fit the semantic model "
        f"(dimension {dim}, the model's is {model.dim}): those tools are found by their words only. "
        "Run `context-router catalog` (make catalog in a checkout) to embed them again.",
        file=sys.stderr,
        flush=True,
    )


semantic_index = PerConnection(SemanticIndex)
