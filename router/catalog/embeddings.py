"""Each tool's vector from the local semantic model, written with the catalog's rows.

A catalog load calls embed_catalog inside its transaction, after the tool rows: every tool
definition the model has no vector for yet is embedded (in batches, with progress on stderr
for a large catalog), vectors no tool or model uses any more are dropped, and a large
catalog's vectors are grouped for search again when that changed any
(router/catalog/vector_groups.py). A vector is
keyed by the definition hash and the model's identity, so reloading unchanged tools encodes
nothing and a new model re-embeds everything. Vectors are stored as int8 with one scale per
vector (router/catalog/model_vectors.py). The tools'
example requests are embedded in the same step, one vector each, keyed by their text
(router/catalog/example_vectors.py).
"""

import sys
from dataclasses import dataclass

import apsw
import numpy as np

from router.catalog import example_vectors, vector_groups
from router.catalog.model_vectors import EmbeddingModel, quantize
from router.catalog.tool_text import embedding_text
from router.clock import utc_now_iso
from router.semantic.choice import configured_model

# Texts encoded per call: bounds the memory a 100,000-tool load holds at once.
ENCODE_BATCH = 2_048
# A load embedding at least this many tools says how far it got on stderr, once per batch.
PROGRESS_MIN_TOOLS = 5_000


@dataclass(frozen=True)
class EmbedSummary:
    model: str | None
    embedded: int
    dropped: int
    # example requests embedded and dropped (router/catalog/example_vectors.py)
    examples_embedded: int = 0
    examples_dropped: int = 0


MISSING_SQL = """
SELECT definition_hash, name_words, description FROM tools
WHERE definition_hash NOT IN (SELECT definition_hash FROM tool_embeddings WHERE model = :model)
GROUP BY definition_hash
ORDER BY definition_hash
"""
INSERT_EMBEDDING = """
INSERT INTO tool_embeddings(definition_hash, model, dim, scale, vector, created_at)
VALUES (?, ?, ?, ?, ?, ?)
"""
# Another model's vectors would only be read again if that model came back; a definition no
# tool has is gone; a vector of another dimension than the model's (a damaged file, a
# half-applied upgrade) cannot be read, so it is embedded again.
DROP_STALE_SQL = """
DELETE FROM tool_embeddings
WHERE (:model IS NOT NULL AND (model <> :model OR dim <> :dim))
   OR definition_hash NOT IN (SELECT definition_hash FROM tools)
"""


def catalog_model() -> EmbeddingModel | None:
    """The model a load embeds with and search encodes queries with (the setting
    CONTEXT_ROUTER_SEMANTIC_MODEL, router/semantic/choice.py; None when "off"): the same one,
    or the catalog's vectors, tagged with the model's identity, are not used."""
    return configured_model()


def embed_catalog(conn: apsw.Connection, model: EmbeddingModel | None) -> EmbedSummary:
    """Embed every tool definition `model` has no vector for, drop vectors nothing uses.
    Call inside the load's transaction. model None (no model file): no new vectors."""
    identity = model.identity if model is not None else None
    conn.execute(DROP_STALE_SQL, {"model": identity, "dim": model.dim if model is not None else None})
    dropped = conn.changes()
    examples_embedded, examples_dropped = example_vectors.embed_examples(conn, model)
    if model is None:
        if dropped:
            vector_groups.clear(conn)  # no vectors left to group
        return EmbedSummary(None, 0, dropped, 0, examples_dropped)
    missing = conn.execute(MISSING_SQL, {"model": identity}).fetchall()
    created = utc_now_iso()
    show = len(missing) >= PROGRESS_MIN_TOOLS
    for start in range(0, len(missing), ENCODE_BATCH):
        batch = missing[start : start + ENCODE_BATCH]
        vectors = model.encode([embedding_text(str(words), str(text)) for _, words, text in batch])
        codes, scales = quantize(np.asarray(vectors, dtype=np.float32))
        conn.executemany(
            INSERT_EMBEDDING,
            [
                (definition_hash, identity, model.dim, float(scale), row.tobytes(), created)
                for (definition_hash, _, _), row, scale in zip(batch, codes, scales)
            ],
        )
        if show:
            print(f"embedding tools: {start + len(batch)}/{len(missing)}", file=sys.stderr, flush=True)
    vector_groups.regroup_if_stale(conn, model.identity, vectors_changed=bool(missing) or bool(dropped))
    return EmbedSummary(identity, len(missing), dropped, examples_embedded, examples_dropped)
