"""What search shows and weighs for its scored candidates: each tool's name, profile, server,
summary and mutating flag (read once per catalog version, as candidates first need them), and
what changes without the catalog changing (its breakers, a quarantine), read again after
anything was written to the file: the view v_search (schema.sql) answers the same per tool,
but reaching it once per candidate cost a third of a search on a large catalog.
"""

import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

import apsw

from router.catalog.request_objects import takes_a_path
from router.db import PerConnection, write_mark

# The fixed part of each candidate, for the ids not yet read at this catalog version.
TOOL_ROWS_SQL = """
SELECT t.id, t.name, (SELECT s.profile FROM servers s WHERE s.name = t.server), t.server, t.summary,
       t.mutating, t.read_only_source, t.deprecated, t.replaced_by, t.name_words,
       t.arg_text
FROM json_each(:ids) c JOIN tools t ON t.id = c.value
"""
# What may make a candidate uncallable now: an open breaker of the tool or of its server
# (opened at), a quarantine (the fields its server lists differently). These rows are few (a
# tool that failed, a server that changed), so a search reads all of them, up to
# MAX_CHANGING_ROWS; past that, only the candidates' (CANDIDATES_CHANGING_STATE_SQL).
CHANGING_STATE_SQL = """
SELECT 'tool', tool, opened_at FROM breaker WHERE state = 'open'
UNION ALL
SELECT 'server', server, opened_at FROM backend_breaker WHERE state = 'open'
UNION ALL
SELECT 'quarantine', tool, changed FROM tool_quarantine
LIMIT :limit
"""
CANDIDATES_CHANGING_STATE_SQL = """
SELECT 'tool', tool, opened_at FROM breaker
WHERE state = 'open' AND tool IN (SELECT value FROM json_each(:names))
UNION ALL
SELECT 'server', server, opened_at FROM backend_breaker
WHERE state = 'open' AND server IN (SELECT value FROM json_each(:servers))
UNION ALL
SELECT 'quarantine', tool, changed FROM tool_quarantine
WHERE tool IN (SELECT value FROM json_each(:names))
"""
MAX_CHANGING_ROWS = 256


@dataclass(frozen=True)
class ToolRow:
    name: str
    profile: str
    server: str
    summary: str
    mutating: bool
    # who decided `mutating` (schema.sql tools.read_only_source): 'default-mutating' when nobody did
    read_only_source: str = "default-mutating"
    deprecated: bool = False
    replaced_by: str | None = None
    # its name's words, lower case (tools.name_words): what the name says it does
    name_words: tuple[str, ...] = ()
    # one of its arguments takes a file, folder or path (router/catalog/request_objects.py)
    takes_a_path: bool = False

    @property
    def changes_things(self) -> bool:
        """Its server or a review says it changes state (not merely: nobody said it only reads)."""
        return self.mutating and self.read_only_source != "default-mutating"

    @property
    def only_reads(self) -> bool:
        """Its server or a review says it only reads (mutating is false only when someone said so)."""
        return not self.mutating


@dataclass(frozen=True)
class ChangingState:
    """Open breakers (tool or server → opened at, unix seconds) and quarantines (tool → the
    fields that differ), as one search read them (all of them, or its candidates' when many)."""

    tool_breakers: dict[str, float | None]
    server_breakers: dict[str, float | None]
    quarantined: dict[str, str]

    @property
    def empty(self) -> bool:
        """No breaker open and nothing quarantined: every tool may be called, as far as this says."""
        return not (self.tool_breakers or self.server_breakers or self.quarantined)

    def breaker_opened_at(self, row: ToolRow) -> float | None:
        """When the later of the tool's and its server's open breakers opened (both share one
        window, so the later one decides); None when neither is open."""
        if not self.tool_breakers and not self.server_breakers:  # the usual case: none open
            return None
        times = [
            found
            for found in (self.tool_breakers.get(row.name), self.server_breakers.get(row.server))
            if found is not None
        ]
        return max(times) if times else None


class ToolRows:
    """The fixed part of the tools searches have shown, per connection, until the catalog changes."""

    def __init__(self, conn: apsw.Connection):
        self._conn = conn
        self._version: int | None = None
        self._rows: dict[int, ToolRow] = {}

    def rows(self, version: int, ids: Iterable[int]) -> dict[int, ToolRow]:
        """The rows of these tool ids (those still in the catalog), in the order given."""
        if version != self._version:
            self._version, self._rows = version, {}
        wanted = list(ids)
        missing = [tool_id for tool_id in wanted if tool_id not in self._rows]
        if missing:
            for (
                tool_id,
                name,
                profile,
                server,
                summary,
                mutating,
                source,
                deprecated,
                replaced_by,
                name_words,
                argument_text,
            ) in self._conn.execute(TOOL_ROWS_SQL, {"ids": json.dumps(missing)}):
                self._rows[int(tool_id)] = ToolRow(
                    str(name),
                    str(profile),
                    str(server),
                    str(summary),
                    bool(mutating),
                    str(source),
                    bool(deprecated),
                    None if replaced_by is None else str(replaced_by),
                    tuple(str(name_words or "").lower().split()),
                    takes_a_path(str(argument_text or "")),
                )
        return {tool_id: self._rows[tool_id] for tool_id in wanted if tool_id in self._rows}


tool_rows = PerConnection(ToolRows)


class ChangingStates:
    """The changing state of the last search, per connection, kept while nothing is written to
    the file (router/db.py write_mark): most searches follow no write, and reading the three
    tables was a statement per search."""

    def __init__(self, conn: apsw.Connection):
        self._conn = conn
        self._mark: tuple[int, int] | None = None
        self._state: ChangingState | None = None

    def read(self, rows: Collection[ToolRow]) -> ChangingState:
        mark = write_mark(self._conn)  # before the read: a write after it changes the mark
        if self._state is not None and mark == self._mark:
            return self._state
        found = self._conn.execute(CHANGING_STATE_SQL, {"limit": MAX_CHANGING_ROWS + 1}).fetchall()
        if len(found) > MAX_CHANGING_ROWS:  # only these candidates': nothing to keep
            self._state = None
            names = json.dumps(sorted({row.name for row in rows}), ensure_ascii=False)
            server_names = json.dumps(sorted({row.server for row in rows}), ensure_ascii=False)
            return _state(
                self._conn.execute(CANDIDATES_CHANGING_STATE_SQL, {"names": names, "servers": server_names})
            )
        self._mark, self._state = mark, _state(found)
        return self._state


_changing_states = PerConnection(ChangingStates)


def changing_state(conn: apsw.Connection, rows: Collection[ToolRow]) -> ChangingState:
    """The open breakers and quarantines that may concern these candidates."""
    return _changing_states(conn).read(rows)


def _state(found: Iterable[tuple[Any, ...]]) -> ChangingState:
    tools: dict[str, float | None] = {}
    servers: dict[str, float | None] = {}
    quarantined: dict[str, str] = {}
    for kind, key, value in found:
        if kind == "quarantine":
            quarantined[str(key)] = str(value)
        else:
            (tools if kind == "tool" else servers)[str(key)] = None if value is None else float(value)
    return ChangingState(tools, servers, quarantined)
