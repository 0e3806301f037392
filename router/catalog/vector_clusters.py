"""An inverted-file index over the catalog's vectors: the rows grouped by their nearest of
√n centroids (spherical k-means), so a query scores the few groups nearest to it instead of
every row.

Why: a float32 matrix-vector product over 100,000 256-d vectors reads 100 MB, ~30 ms on the
bench machine, against a search budget of 1.5 ms; probing PROBES of √n groups reads ~4% of
them (the groups differ in size: 100 to 700 rows at 100,000). Neither a maintained ANN library nor sqlite-vec fit (measured here: usearch adds 55 MB
to the install and took 118 s to index 100,000 vectors, 1.3 ms a query; sqlite-vec's vec0
brute force took 115 ms a query over bit vectors), so this is numpy only. Deterministic: the
same vectors give the same groups.
"""

from dataclasses import dataclass
from functools import cached_property

import numpy as np

# Vectors trained on per centroid (a sample of the catalog: the centroids settle long before
# every row has been seen), and the k-means rounds.
SAMPLE_PER_CENTROID = 48
ROUNDS = 8
# Groups a query scores: a few probes already find nearly all exact nearest tools on the
# synthetic catalogs, and each probe costs a memory scan, so 8 leaves a margin for catalogs
# less clustered (docs/research.md).
PROBES = 8
# Rows assigned per matrix product while grouping (bounds the memory it holds).
ASSIGN_CHUNK = 16_384


@dataclass(frozen=True)
class Clusters:
    centroids: np.ndarray  # (k, dim), L2-normalised
    order: np.ndarray  # row numbers of the matrix, grouped: group g is order[starts[g]:starts[g + 1]]
    starts: np.ndarray

    @cached_property
    def _ranges(self) -> np.ndarray:
        """(k, 2): each group's start and stop in `order`, so a probe reads its groups' in one step."""
        return np.stack((self.starts[:-1], self.starts[1:]), axis=1)

    def probe(self, query: np.ndarray, probes: int | None = None) -> list[list[int]]:
        """The groups nearest to the query, in group order, as [start, stop] ranges of positions
        in `order` (PROBES of them unless told: read at the call, so a setting of it takes
        effect). Ties go to the lower group number."""
        probes = PROBES if probes is None else probes
        scores = self.centroids @ query
        if probes >= len(scores):
            return self._ranges.tolist()
        # the probes-th best score by a partition (a full sort of √n scores was most of the
        # probe), then every group reaching it
        cut = np.partition(scores, len(scores) - probes)[len(scores) - probes]
        nearest = np.flatnonzero(scores >= cut)
        if len(nearest) > probes:  # ties at the cut (e.g. a zero query): the lowest-numbered
            tied = np.flatnonzero(scores == cut)  # of them, as a stable sort by score takes them
            nearest = np.setdiff1d(nearest, tied[probes - (len(nearest) - len(tied)) :])
        # Python ints: a search does a handful of sums on them, cheaper than numpy calls
        return self._ranges[nearest].tolist()


def _nearest(matrix: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    out = np.empty(len(matrix), np.int64)
    for start in range(0, len(matrix), ASSIGN_CHUNK):
        out[start : start + ASSIGN_CHUNK] = np.argmax(
            matrix[start : start + ASSIGN_CHUNK] @ centroids.T, axis=1
        )
    return out


def build(matrix: np.ndarray) -> Clusters:
    """√n groups of the rows of `matrix` (n × dim, rows L2-normalised or zero)."""
    return from_assignment(*kmeans(matrix))


def kmeans(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """√n centroids of the rows of `matrix` (float32, L2-normalised) and each row's group."""
    count = max(1, round(len(matrix) ** 0.5))
    rng = np.random.default_rng(0)
    sample = matrix[
        np.sort(rng.choice(len(matrix), min(len(matrix), count * SAMPLE_PER_CENTROID), replace=False))
    ]
    centroids = sample[np.sort(rng.choice(len(sample), count, replace=False))].copy()
    for _ in range(ROUNDS):
        assigned = _nearest(sample, centroids)
        sums = np.zeros_like(centroids)
        np.add.at(sums, assigned, sample)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        # a group that lost every row keeps its centroid
        centroids = np.where(norms > 0, sums / np.where(norms > 0, norms, 1.0), centroids)
    return centroids.astype(np.float32), _nearest(matrix, centroids)


def from_assignment(centroids: np.ndarray, assigned: np.ndarray) -> Clusters:
    """The groups of rows whose group numbers are `assigned` (one per row, each < the number
    of centroids): built at a search from what a load stored (router/catalog/vector_groups.py)."""
    order = np.argsort(assigned, kind="stable")
    starts = np.searchsorted(assigned[order], np.arange(len(centroids) + 1))
    return Clusters(centroids, order, starts)
