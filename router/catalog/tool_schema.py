"""One tool's full definition from the catalog (v_tool_schema), and what the router decided
about it: whether it only reads (and who said so), the draft its arguments are checked under
when that is not the default, and a quarantine (its backend now lists another definition)."""

import json
from typing import Any

import apsw

from router.catalog.draft_keys import DEFAULT_DRAFT, UNCHECKED
from router.db import query_dicts
from router.errors import UnknownToolError, echo

INSPECT_SQL = "SELECT * FROM v_tool_schema WHERE name = :name"


def inspect_tool(
    conn: apsw.Connection, tool_name: str, *, finder: str = "mcp_search_tools"
) -> dict[str, Any]:
    """The tool's definition; title and outputSchema only when the backend gives them (the
    answer lands in a model's context, where an empty key is tokens spent on nothing).

    finder: what an unknown name's error says to search with (a model has mcp_search_tools,
    a person at a terminal `context-router search`)."""
    rows = query_dicts(conn, INSPECT_SQL, {"name": tool_name})
    if not rows:
        raise UnknownToolError(f"no tool named {echo(tool_name)} in the catalog; use {finder} to find one")
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
    # who decided: the server's readOnlyHint, the router's reviewed seed, or nobody (fail-closed)
    definition["readOnly"] = not row["mutating"]
    definition["readOnlySource"] = row["read_only_source"]
    if row["arg_validator"] == UNCHECKED:
        definition["argsChecked"] = False  # no JSON Schema draft accepts its inputSchema
    elif row["arg_validator"] != DEFAULT_DRAFT:
        definition["schemaDraft"] = row["arg_validator"]
    if row["quarantined_fields"] is not None:
        definition["quarantined"] = {
            "changed": row["quarantined_fields"],
            "since": row["quarantined_at"],
            "callable": False,
            "why": "its running backend lists a different definition than the catalog's; the "
            "user must accept it (context-router harvest SERVER --accept-changed, or import)",
        }
    return definition
