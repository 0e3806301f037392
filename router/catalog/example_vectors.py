"""The vectors of the tools' example requests (tools.examples) and of the servers' not-for
requests (servers.not_for): written by a catalog load, read by search.

An example is embedded on its own (one vector per example, and one for its reading without
payload where that differs: router/catalog/request_payload.py; example_embeddings in schema.sql),
keyed by the hash of its text and the model: a load embeds only the texts no vector exists
for, so a reload that changes one example embeds that one, and drops the vectors no tool's
example has any more. Search reads them beside the tools' own vectors and gives each tool its
best cosine over its own vector and its examples' (router/catalog/semantic_index.py): a tool
is found by how people ask for it as well as by how its author described it. A server's
not-for requests (the jobs next to its own that none of its tools does) are embedded alike and
read beside them: the fit gate weighs a request's match with them against its match with the
server's examples (router/catalog/fit_gate.py rule 8).
"""

import json
from dataclasses import dataclass, field

import apsw
import numpy as np

from router.catalog.model_vectors import EmbeddingModel, dequantized, quantize
from router.catalog.request_intent import asks_for_a_change
from router.catalog.request_payload import without_payload
from router.clock import utc_now_iso
from router.hashing import content_hash

# Examples encoded per call: bounds the memory a load holds at once.
ENCODE_BATCH = 2_048

# Every tool with examples, and its examples (one per line).
TOOL_EXAMPLES_SQL = "SELECT id, examples FROM tools WHERE examples <> '' ORDER BY id"
# Every server with not-for requests, and its requests (one per line).
SERVER_NOT_FOR_SQL = "SELECT name, not_for FROM servers WHERE not_for <> '' ORDER BY name"
EMBEDDED_SQL = "SELECT example_hash FROM example_embeddings WHERE model = :model"
INSERT_SQL = """
INSERT INTO example_embeddings(example_hash, model, dim, scale, vector, created_at)
VALUES (?, ?, ?, ?, ?, ?)
"""
# Another model's vectors, vectors that do not fit this model (another dimension: a damaged
# file, a half-applied upgrade; embedded again), and the texts no tool has as an example (nor
# any server as a not-for request) any more.
DROP_STALE_SQL = """
DELETE FROM example_embeddings
WHERE (:model IS NOT NULL AND (model <> :model OR dim <> :dim))
   OR example_hash NOT IN (SELECT value FROM json_each(:hashes))
"""
VECTORS_SQL = "SELECT example_hash, scale, vector FROM example_embeddings WHERE model = :model AND dim = :dim"


def example_hash(text: str) -> str:
    """The key of an example's vector: the b3: hash of its text (as tools.examples holds it,
    or its reading without payload)."""
    return content_hash(text)


def tool_examples(conn: apsw.Connection) -> list[tuple[int, str]]:
    """(tool id, example) for every example of the catalog, by tool id then in order."""
    return [
        (int(tool_id), line)
        for tool_id, examples in conn.execute(TOOL_EXAMPLES_SQL)
        for line in str(examples).split("\n")
        if line
    ]


def embedded_examples(conn: apsw.Connection) -> list[tuple[int, str, bool]]:
    """(tool id, text, written) for every text embedded for the tools' examples: each example
    as written, and after it its reading without payload where that differs
    (router/catalog/request_payload.py), a vector of its own."""
    return [
        (tool_id, text, written)
        for tool_id, example in tool_examples(conn)
        for text, written in _with_reading(example)
    ]


def embedded_not_for(conn: apsw.Connection) -> list[tuple[str, str]]:
    """(server, text) for every text embedded for the servers' not-for requests: each as
    written and its reading without payload, as for examples."""
    return [
        (str(server), text)
        for server, lines in conn.execute(SERVER_NOT_FOR_SQL)
        for line in str(lines).split("\n")
        if line
        for text, _ in _with_reading(line)
    ]


def _with_reading(line: str) -> list[tuple[str, bool]]:
    reading = without_payload(line)
    return [(line, True)] + ([(reading, False)] if reading and reading != line else [])


def embed_examples(conn: apsw.Connection, model: EmbeddingModel | None) -> tuple[int, int]:
    """Embed every example `model` has no vector for and drop the vectors no example uses
    (all of them when model is None); (embedded, dropped). Inside the load's transaction."""
    texts = {example_hash(text): text for _, text, _ in embedded_examples(conn)}
    texts |= {example_hash(text): text for _, text in embedded_not_for(conn)}
    identity = None if model is None else model.identity
    hashes = [] if model is None else sorted(texts)
    dim = None if model is None else model.dim
    conn.execute(DROP_STALE_SQL, {"model": identity, "dim": dim, "hashes": json.dumps(hashes)})
    dropped = conn.changes()
    if model is None:
        return 0, dropped
    have = {str(h) for (h,) in conn.execute(EMBEDDED_SQL, {"model": identity})}
    missing = [h for h in hashes if h not in have]
    created = utc_now_iso()
    for start in range(0, len(missing), ENCODE_BATCH):
        batch = missing[start : start + ENCODE_BATCH]
        codes, scales = quantize(np.asarray(model.encode([texts[h] for h in batch]), np.float32))
        conn.executemany(
            INSERT_SQL,
            [
                (h, identity, model.dim, float(scale), row.tobytes(), created)
                for h, row, scale in zip(batch, codes, scales)
            ],
        )
    return len(missing), dropped


@dataclass(frozen=True)
class ExampleRows:
    """The examples' vectors of one catalog version, each with the tool it belongs to."""

    owners: np.ndarray  # tool id per row
    matrix: np.ndarray  # (rows, dim) float32, L2-normalised
    written: np.ndarray  # per row: an example as written (False: its reading without payload)


@dataclass(frozen=True)
class NotForRows:
    """The servers' not-for requests' vectors of one catalog version, each with its server."""

    servers: list[str]
    matrix: np.ndarray  # (rows, dim) float32, L2-normalised
    # whether each asks for a change (it leads with a verb of change: "delete a branch")
    changes: list[bool] = field(default_factory=list)


def _stored_vectors(conn: apsw.Connection, model_identity: str, dim: int) -> dict[str, tuple[float, bytes]]:
    return {
        str(h): (float(scale), bytes(vector))
        for h, scale, vector in conn.execute(VECTORS_SQL, {"model": model_identity, "dim": dim})
    }


def not_for_rows(conn: apsw.Connection, model_identity: str, dim: int) -> NotForRows:
    """Every not-for request that has a vector for this model, with its server."""
    vectors = _stored_vectors(conn, model_identity, dim)
    found = [
        (server, vectors[example_hash(text)], asks_for_a_change(text))
        for server, text in embedded_not_for(conn)
        if example_hash(text) in vectors
    ]
    if not found:
        return NotForRows([], np.zeros((0, dim), np.float32))
    servers, stored, changes = zip(*found)
    return NotForRows(
        list(servers), dequantized([s for s, _ in stored], [v for _, v in stored]), list(changes)
    )


def example_rows(conn: apsw.Connection, model_identity: str, dim: int) -> ExampleRows:
    """Every example that has a vector for this model, with its tool."""
    vectors = _stored_vectors(conn, model_identity, dim)
    owners, scales, blobs, written = [], [], [], []
    for tool_id, text, as_written in embedded_examples(conn):
        found = vectors.get(example_hash(text))
        if found is not None:
            owners.append(tool_id)
            scales.append(found[0])
            blobs.append(found[1])
            written.append(as_written)
    if not owners:
        return ExampleRows(np.zeros(0, np.int64), np.zeros((0, dim), np.float32), np.zeros(0, bool))
    return ExampleRows(np.array(owners, np.int64), dequantized(scales, blobs), np.array(written, bool))
