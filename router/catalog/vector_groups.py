"""The grouping of a large catalog's vectors, computed when a load changes them and kept in the
file (vector_centroids, vector_groups in schema.sql), so that a search process reads it.

Grouping (spherical k-means, router/catalog/vector_clusters.py) takes seconds at 100,000
vectors: every `context-router search` and the first search of each router process paid it
before answering. A load regroups all the current model's vectors whenever it added or dropped
any (deterministic: the same vectors give the same groups), and also when what is stored does
not match them (a file from before this table, a catalog that shrank below the threshold).
"""

from typing import cast

import apsw
import numpy as np

from router.catalog import vector_clusters
from router.catalog.model_vectors import dequantized

# Catalogs of at most this many vectors are scored whole by search (a fraction of a
# millisecond, docs/benchmarks.md) and store no grouping; larger ones are grouped and probed.
EXHAUSTIVE_MAX_TOOLS = 4_096

MODEL_VECTORS_SQL = """
SELECT definition_hash, scale, vector FROM tool_embeddings WHERE model = :model ORDER BY definition_hash
"""
COUNTS_SQL = """
SELECT (SELECT count(*) FROM tool_embeddings WHERE model = :model),
       (SELECT count(*) FROM vector_groups WHERE model = :model),
       (SELECT count(*) FROM vector_centroids WHERE model = :model)
"""
# One model's vectors are kept at a time (router/catalog/embeddings.py drops the others'), so
# a regrouping replaces whatever was stored.
CLEAR_SQL = "DELETE FROM vector_groups; DELETE FROM vector_centroids;"
INSERT_GROUP_SQL = "INSERT INTO vector_groups(definition_hash, model, group_no) VALUES (?, ?, ?)"
INSERT_CENTROIDS_SQL = """
INSERT INTO vector_centroids(model, groups, dim, centroids) VALUES (:model, :groups, :dim, :centroids)
"""
CENTROIDS_SQL = "SELECT groups, dim, centroids FROM vector_centroids WHERE model = :model"


def clear(conn: apsw.Connection) -> None:
    conn.execute(CLEAR_SQL)


def regroup_if_stale(conn: apsw.Connection, model: str, *, vectors_changed: bool) -> bool:
    """Regroup `model`'s vectors when they changed or the stored grouping does not cover them
    (call inside the load's transaction); whether it regrouped."""
    vectors, grouped, has_centroids = conn.execute(COUNTS_SQL, {"model": model}).fetchone()  # type: ignore[misc]
    wanted = vectors if vectors > EXHAUSTIVE_MAX_TOOLS else 0
    if not vectors_changed and grouped == wanted and bool(has_centroids) == bool(wanted):
        return False
    clear(conn)
    if not wanted:
        return True
    hashes, scales, blobs = zip(*conn.execute(MODEL_VECTORS_SQL, {"model": model}).fetchall())
    centroids, groups = vector_clusters.kmeans(dequantized(scales, blobs))
    conn.executemany(INSERT_GROUP_SQL, [(h, model, int(g)) for h, g in zip(hashes, groups)])
    conn.execute(
        INSERT_CENTROIDS_SQL,
        {
            "model": model,
            "groups": len(centroids),
            "dim": centroids.shape[1],
            "centroids": centroids.tobytes(),
        },
    )
    return True


def stored_centroids(conn: apsw.Connection, model: str) -> np.ndarray | None:
    """The model's stored centroids (groups × dim, float32), or None when none are stored."""
    row = conn.execute(CENTROIDS_SQL, {"model": model}).fetchone()
    if row is None:
        return None
    groups, dim, blob = row
    return np.frombuffer(cast(bytes, blob), np.float32).reshape(int(groups), int(dim)).copy()
