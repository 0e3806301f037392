"""Rug-pull defense: a running backend that lists a tool differently from the catalog.

A tool was reviewed (its description, schema, read-only classification) when its definition
entered the catalog; a server can later answer `tools/list` with another description or
schema for the same name. When a backend starts (and when it sends
`notifications/tools/list_changed`), the router compares what it lists with the catalog's
definition hashes: a tool whose definition differs, or that the server no longer lists, is
quarantined: search and inspect show it as changed, and mcp_call_tool refuses it, until the
user accepts the new definition (`harvest SERVER --accept-changed` or `import`, after which
the catalog's hash is the live one and the row goes: router/catalog/load.py), or the server
lists the catalog's definition again. Each new quarantine is an audit row.

Definitions are compared exactly as the catalog hashes them: the SDK's Tool type, then the
catalog's own model (CatalogTool.mcp_definition), then RFC 8785 bytes and blake3.
"""

import json
import os
from dataclasses import dataclass, field
from typing import Any

import apsw

from router.clock import utc_now_iso
from router.db import PerConnection, catalog_version, immediate
from router.facade import audit
from router.hashing import content_hash

GONE = "(gone)"
# the catalog columns a changed field is named by; a difference elsewhere is 'other fields'
COMPARED_COLUMNS = {
    "description": "description",
    "inputSchema": "input_schema",
    "outputSchema": "output_schema",
    "annotations": "annotations",
    "title": "title",
}

SERVER_TOOL_COLUMNS = (
    "name",
    "backend_name",
    "definition_hash",
    "description",
    "input_schema",
    "output_schema",
    "annotations",
    "title",
)
SERVER_TOOLS_SQL = f"SELECT {', '.join(SERVER_TOOL_COLUMNS)} FROM tools WHERE server = :server"
QUARANTINED_OF_SERVER_SQL = "SELECT tool, live_hash FROM tool_quarantine WHERE server = :server"
QUARANTINE_SQL = """
INSERT INTO tool_quarantine(tool, server, catalog_hash, live_hash, changed, detected_at)
VALUES (:tool, :server, :catalog_hash, :live_hash, :changed, :detected_at)
ON CONFLICT(tool) DO UPDATE SET catalog_hash = excluded.catalog_hash,
    live_hash = excluded.live_hash, changed = excluded.changed, detected_at = excluded.detected_at
"""
RELEASE_SQL = "DELETE FROM tool_quarantine WHERE tool = :tool"
ALL_QUARANTINED_SQL = "SELECT tool, changed FROM tool_quarantine"


@dataclass
class CheckReport:
    server: str
    quarantined: dict[str, str] = field(default_factory=dict)  # tool → changed fields
    released: list[str] = field(default_factory=list)
    # listed by the server but not in the catalog: not callable until harvested or imported
    new: list[str] = field(default_factory=list)


def _as_listed(raw_tool: dict[str, Any]) -> dict[str, Any]:
    """A tool as the SDK's Tool type reads it. Imported here: search reads this module's
    quarantine rows, and the SDK's types (and the catalog's models) would double the start-up
    of every command that searches (`context-router search` and `inspect`)."""
    import mcp_types

    return mcp_types.Tool.model_validate(raw_tool).model_dump(by_alias=True, exclude_none=True, mode="json")


def live_definition_hash(raw_tool: dict[str, Any]) -> str | None:
    """The catalog's hash of a tool as a server lists it (None: not a tool the catalog takes)."""
    from pydantic import ValidationError

    from router.catalog.models import CatalogTool
    from router.catalog.sources import LENIENT

    try:
        listed = _as_listed(raw_tool)
        return content_hash(CatalogTool.model_validate(listed, context=LENIENT).mcp_definition())
    except (ValidationError, ValueError, TypeError):
        return None


def _changed_fields(row: dict[str, Any], raw_tool: dict[str, Any]) -> str:
    listed = _as_listed(raw_tool)
    changed = []
    for key, column in COMPARED_COLUMNS.items():
        stored = row[column]
        if column in ("input_schema", "output_schema", "annotations") and stored is not None:
            stored = json.loads(stored)
        if key == "annotations" and not stored:
            stored = None
        if key == "description" and stored == "":
            stored = None
        if content_hash(stored) != content_hash(listed.get(key)):
            changed.append(key)
    return ", ".join(changed) or "other fields"


def check_server(
    conn: apsw.Connection, server: str, live_tools: list[dict[str, Any]], *, session_id: str
) -> CheckReport:
    """Compare a running server's tools/list with the catalog; quarantine and release in one
    transaction, with an audit row per newly quarantined tool."""
    report = CheckReport(server)
    live = {tool.get("name"): tool for tool in live_tools if isinstance(tool, dict)}
    # hashed before the write lock is taken: validating each definition is the slow part
    live_hashes = {name: live_definition_hash(raw) or "unreadable" for name, raw in live.items()}
    now = utc_now_iso()
    with immediate(conn):
        rows = [
            dict(zip(SERVER_TOOL_COLUMNS, values))
            for values in conn.execute(SERVER_TOOLS_SQL, {"server": server})
        ]
        held = {
            str(tool): str(live_hash)
            for tool, live_hash in conn.execute(QUARANTINED_OF_SERVER_SQL, {"server": server})
        }
        catalogued = set()
        for row in rows:
            catalogued.add(row["backend_name"])
            raw = live.get(row["backend_name"])
            live_hash = "" if raw is None else live_hashes[row["backend_name"]]
            if live_hash == row["definition_hash"]:
                if row["name"] in held:
                    conn.execute(RELEASE_SQL, {"tool": row["name"]})
                    report.released.append(row["name"])
                continue
            changed = GONE if raw is None else _changed_fields(row, raw)
            report.quarantined[row["name"]] = changed
            if held.get(row["name"]) == live_hash:
                continue  # already quarantined for this very definition
            conn.execute(
                QUARANTINE_SQL,
                {
                    "tool": row["name"],
                    "server": server,
                    "catalog_hash": row["definition_hash"],
                    "live_hash": live_hash,
                    "changed": changed,
                    "detected_at": now,
                },
            )
            audit.record(
                conn,
                session_id=session_id,
                role="router",
                meta_tool="tools/list",
                target=row["name"],
                arguments={"server": server},
                outcome=audit.QUARANTINED,
                latency_ms=0.0,
                error=f"{server!r} lists a different definition ({changed}); not callable until accepted",
            )
        report.new = sorted(name for name in live if isinstance(name, str) and name not in catalogued)
    return report


class _Quarantined:
    """tool → changed fields, per connection, until the catalog (or the quarantine) changes."""

    def __init__(self, conn: apsw.Connection) -> None:
        self._conn = conn
        self._version: int | None = None
        self._tools: dict[str, str] = {}

    def get(self) -> dict[str, str]:
        version = catalog_version(self._conn)
        if version != self._version:
            self._tools = {
                str(tool): str(changed) for tool, changed in self._conn.execute(ALL_QUARANTINED_SQL)
            }
            self._version = version
        return self._tools


_quarantined = PerConnection(_Quarantined)


def quarantined_tools(conn: apsw.Connection) -> dict[str, str]:
    return _quarantined(conn).get()


def reason(changed: str) -> str:
    """What a model reads about a quarantined tool."""
    what = "no longer lists it" if changed == GONE else f"now lists a different definition ({changed})"
    return (
        f"quarantined: its server {what} than the one reviewed into the catalog; it stays "
        "uncallable until the user accepts it (context-router harvest SERVER --accept-changed)"
    )


def router_session_id() -> str:
    return f"router-{os.getpid()}"
