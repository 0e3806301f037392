"""One tool's full definition from the catalog (v_tool_schema)."""

import json
from typing import Any

import apsw

from router.db import query_dicts
from router.errors import UnknownToolError, echo

INSPECT_SQL = "SELECT * FROM v_tool_schema WHERE name = :name"


def inspect_tool(conn: apsw.Connection, tool_name: str) -> dict[str, Any]:
    """The tool's definition; title and outputSchema only when the backend gives them (the
    answer lands in a model's context, where an empty key is tokens spent on nothing)."""
    rows = query_dicts(conn, INSPECT_SQL, {"name": tool_name})
    if not rows:
        raise UnknownToolError(
            f"no tool named {echo(tool_name)} in the catalog; use mcp_search_tools to find one"
        )
    row = rows[0]
    definition: dict[str, Any] = {"name": row["name"]}
    if row["title"] is not None:
        definition["title"] = row["title"]
    definition |= {
        "profile": row["profile"],
        "server": row["server"],
        "description": row["description"],
        "inputSchema": json.loads(row["input_schema"]),
    }
    if row["output_schema"] is not None:
        definition["outputSchema"] = json.loads(row["output_schema"])
    definition["annotations"] = json.loads(row["annotations"])
    definition["mutating"] = bool(row["mutating"])
    return definition
