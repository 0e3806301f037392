"""What each tool definition would cost in a prompt, counted once per definition by a catalog
load: the data behind "tokens served against the whole catalog" (v_tokens_per_session).

A definition is counted as its server's tools/list gives it (name, title, description,
inputSchema, outputSchema, annotations), compact JSON in cl100k (router/tokens.py): what a
client attaching that server directly would carry. Counts are keyed by the definition hash,
like the vectors, so reloading unchanged tools counts nothing; the router's own three
meta-tools are counted the same way, as the surface it lists instead.
"""

import json
from collections.abc import Mapping
from typing import Any

import apsw

from router.catalog.models import CatalogTool
from router.clock import utc_now_iso
from router.facade.definitions import meta_tool_definitions
from router.facade.search_page import compact_json
from router.tokens import count_tokens

META_TOOLS_SURFACE = "meta_tools"

UNCOUNTED_SQL = """
SELECT definition_hash, backend_name, title, description, input_schema, output_schema, annotations
FROM tools
WHERE definition_hash NOT IN (SELECT definition_hash FROM tool_tokens)
GROUP BY definition_hash
"""
INSERT_COUNT = "INSERT INTO tool_tokens(definition_hash, tokens) VALUES (?, ?)"
DROP_STALE_SQL = "DELETE FROM tool_tokens WHERE definition_hash NOT IN (SELECT definition_hash FROM tools)"
UPSERT_SURFACE = """
INSERT INTO surface_tokens(surface, tokens, counted_at) VALUES (:surface, :tokens, :counted_at)
ON CONFLICT(surface) DO UPDATE SET tokens = excluded.tokens, counted_at = excluded.counted_at
WHERE tokens <> excluded.tokens
"""


def listed_definition(
    name: Any, title: Any, description: Any, input_schema: Any, output_schema: Any, annotations: Any
) -> dict[str, Any]:
    """A catalog row (UNCOUNTED_SQL's columns) back in the shape its server's tools/list gives
    (the fields it left out stay out)."""
    definition: dict[str, Any] = {"name": name}
    if title:
        definition["title"] = title
    if description:
        definition["description"] = description
    definition["inputSchema"] = json.loads(input_schema)
    if output_schema is not None:
        definition["outputSchema"] = json.loads(output_schema)
    parsed_annotations = json.loads(annotations)
    if parsed_annotations:
        definition["annotations"] = parsed_annotations
    return definition


def _listed(tool: CatalogTool | None, columns: list[Any]) -> dict[str, Any]:
    return tool.mcp_definition() if tool is not None else listed_definition(*columns)


def meta_tools_tokens() -> int:
    return sum(count_tokens(compact_json(definition)) for definition in meta_tool_definitions())


def count_catalog_tokens(conn: apsw.Connection, definitions: Mapping[str, CatalogTool]) -> int:
    """Count every definition not counted yet and drop counts no tool has; call inside the
    load's transaction. `definitions`: the load's tools by definition hash, each counted as
    its server listed it (fields and key order the catalog's columns do not keep); a tool it
    lacks is counted from its row. Returns how many definitions were counted."""
    conn.execute(DROP_STALE_SQL)
    uncounted: list[Any] = conn.execute(UNCOUNTED_SQL).fetchall()
    conn.executemany(
        INSERT_COUNT,
        [
            (definition_hash, count_tokens(compact_json(_listed(definitions.get(definition_hash), columns))))
            for definition_hash, *columns in uncounted
        ],
    )
    conn.execute(
        UPSERT_SURFACE,
        {"surface": META_TOOLS_SURFACE, "tokens": meta_tools_tokens(), "counted_at": utc_now_iso()},
    )
    return len(uncounted)
