"""One tool's full definition from the catalog (v_tool_schema)."""

import json
from typing import Any

import apsw

from router.db import query_dicts
from router.errors import UnknownToolError

INSPECT_SQL = "SELECT * FROM v_tool_schema WHERE name = :name"


def inspect_tool(conn: apsw.Connection, tool_name: str) -> dict[str, Any]:
    rows = query_dicts(conn, INSPECT_SQL, {"name": tool_name})
    if not rows:
        raise UnknownToolError(
            f"no tool named {tool_name!r} in the catalog; use mcp_search_tools to find one"
        )
    row = rows[0]
    return {
        "name": row["name"],
        "profile": row["profile"],
        "server": row["server"],
        "description": row["description"],
        "inputSchema": json.loads(row["input_schema"]),
        "annotations": json.loads(row["annotations"]),
        "mutating": bool(row["mutating"]),
    }
