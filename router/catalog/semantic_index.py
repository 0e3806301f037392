"""The catalog's vectors in memory, for search: the query's nearest tools and the cosine of
any tool, over one float32 matrix.

Loaded once per catalog version and model (like the term statistics), per connection: the
vectors change only with the catalog. Up to EXHAUSTIVE_MAX_TOOLS rows every row is scored;
above, the rows are in the groups the catalog load stored (router/catalog/vector_groups.py)
and a query scores the groups nearest to it. Vectors are L2-normalised, so a dot product is the cosine.
A tool without a vector (none was computed for this model) has cosine 0 and is never a
semantic neighbour.
"""

from collections.abc import Collection
from typing import cast

import apsw
import numpy as np

from router.catalog import vector_clusters, vector_groups
from router.catalog.embeddings import EmbeddingModel
from router.db import PerConnection, catalog_version

VECTORS_SQL = """
SELECT t.id, t.mutating, (SELECT s.profile FROM servers s WHERE s.name = t.server), t.server,
       e.scale, e.vector, g.group_no
FROM tools t
JOIN tool_embeddings e ON e.definition_hash = t.definition_hash AND e.model = :model
LEFT JOIN vector_groups g ON g.definition_hash = e.definition_hash AND g.model = e.model
ORDER BY t.id
"""


class SemanticIndex:
    """The vectors of one catalog version for one model, with what the search filters read."""

    def __init__(self, conn: apsw.Connection):
        self._conn = conn
        self._key: tuple[int, str] | None = None
        self.ids = np.zeros(0, np.int64)
        self.matrix = np.zeros((0, 1), np.float32)
        self._row_of: dict[int, int] = {}
        self._mutating = np.zeros(0, bool)
        self._profile_codes = np.zeros(0, np.int32)
        self._profiles: dict[str, int] = {}
        self._server_codes = np.zeros(0, np.int32)
        self._servers: dict[str, int] = {}
        self._clusters: vector_clusters.Clusters | None = None
        self._positions = np.zeros(0, np.int64)

    def refresh(self, model: EmbeddingModel, version: int | None = None) -> "SemanticIndex":
        """Reload when the catalog or the model changed since the last load."""
        version = catalog_version(self._conn) if version is None else version
        if self._key == (version, model.identity):
            return self
        rows = self._conn.execute(VECTORS_SQL, {"model": model.identity}).fetchall()
        # column by column (one pass each, in C): at 100,000 tools a row-by-row loop per column
        # was a third of the load
        ids, mutating, profiles, servers, scales, vectors, groups = zip(*rows) if rows else ((),) * 7
        self._profiles, self._servers = {}, {}
        self.ids = np.array(ids, np.int64)
        self._mutating = np.array(mutating, bool)
        self._profile_codes = _codes(profiles, self._profiles)
        self._server_codes = _codes(servers, self._servers)
        if rows:
            self.matrix = vector_groups.dequantized(cast(list[float], scales), cast(list[bytes], vectors))
        else:
            self.matrix = np.zeros((0, model.dim), np.float32)
        self._clusters = None
        if len(rows) > vector_groups.EXHAUSTIVE_MAX_TOOLS:
            # rows reordered group by group, so a probed group is one contiguous slice
            self._clusters = self._grouping(model, list(groups))
            order = self._clusters.order
            self.ids, self.matrix = self.ids[order], np.ascontiguousarray(self.matrix[order])
            self._mutating, self._profile_codes = self._mutating[order], self._profile_codes[order]
            self._server_codes = self._server_codes[order]
        self._row_of = {int(tool_id): row for row, tool_id in enumerate(self.ids)}
        self._positions = np.arange(len(self.ids))
        self._key = (version, model.identity)
        return self

    def _grouping(self, model: EmbeddingModel, groups: list) -> vector_clusters.Clusters:
        """The grouping the last load stored; computed here only for a file no load has
        grouped (one written before the grouping was stored, or by another model)."""
        centroids = vector_groups.stored_centroids(self._conn, model.identity)
        if centroids is not None and None not in groups:
            return vector_clusters.from_assignment(centroids, np.array(groups, np.int64))
        return vector_clusters.build(self.matrix)

    def __len__(self) -> int:
        return len(self.ids)

    def nearest(
        self,
        query: np.ndarray,
        k: int,
        *,
        profile: str | None,
        may_call_mutating: bool,
        min_cosine: float,
        hidden_servers: Collection[str] = (),
    ) -> dict[int, float]:
        """The `k` tools most like the query (tool id → cosine) that pass the filters (a
        hidden server's tools are never hits, so they take no neighbour's place) and reach
        `min_cosine`, best first, ties by id."""
        if not len(self.ids) or k <= 0:
            return {}
        if self._clusters is None:
            scores, rows = self.matrix @ query, None
        else:
            ranges = self._clusters.probe(query)
            scores = np.concatenate([self.matrix[a:b] @ query for a, b in ranges])
            rows = np.concatenate([self._positions[a:b] for a, b in ranges])
        # the floor first: it leaves a few dozen of the rows scored, and the filters read only those
        kept = np.flatnonzero(scores >= min_cosine)
        at = kept if rows is None else rows[kept]
        allowed = np.ones(len(kept), bool)
        if profile is not None:
            allowed &= self._profile_codes[at] == self._profiles.get(profile, -1)
        if not may_call_mutating:
            allowed &= ~self._mutating[at]
        hidden = [self._servers[server] for server in hidden_servers if server in self._servers]
        if hidden:
            allowed &= ~np.isin(self._server_codes[at], hidden)
        kept, at = kept[allowed], at[allowed]
        if len(kept) > k:
            best = np.argpartition(-scores[kept], k - 1)[:k]
            kept, at = kept[best], at[best]
        ids, kept_scores = self.ids[at], scores[kept]
        order = np.lexsort((ids, -kept_scores))
        return dict(zip(ids[order].tolist(), kept_scores[order].tolist()))

    def cosines(self, query: np.ndarray, tool_ids: list[int]) -> dict[int, float]:
        """The cosine of each tool that has a vector."""
        rows = [(tool_id, self._row_of[tool_id]) for tool_id in tool_ids if tool_id in self._row_of]
        if not rows:
            return {}
        scores = self.matrix[[row for _, row in rows]] @ query
        return {tool_id: float(score) for (tool_id, _), score in zip(rows, scores)}


def _codes(values: tuple, codes: dict[str, int]) -> np.ndarray:
    """Each value's number in `codes` (filled as values first appear): filters compare ints."""
    return np.array([codes.setdefault(str(value), len(codes)) for value in values], np.int32)


semantic_index = PerConnection(SemanticIndex)
