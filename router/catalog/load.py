"""Seeds and user catalogs → the catalog tables, validated first, written in one transaction.

Reading and validating happen entirely before the database is touched; the write is a diff
(insert what is new, update what changed, delete what is gone) inside one transaction, so a
bad file leaves the old catalog whole and reloading the same input changes nothing.
"""

import json
from dataclasses import astuple, dataclass
from pathlib import Path

import apsw
from pydantic import ValidationError

from router.catalog import tool_text
from router.catalog.models import CatalogTool, SeedFile, UserCatalogLine
from router.clock import utc_now_iso
from router.errors import SeedError
from router.hashing import content_hash
from router.validation import field_error

# A user catalog line without these gets them from here.
DEFAULT_USER_PROFILE = "custom"

PROFILE_DESCRIPTIONS = {
    "core": "Everyday coding: files, git, time, memory, fetching pages.",
    "appsec": "Application security: reverse engineering and binary analysis.",
    "android": "Android devices and apps: adb, UI automation, app testing.",
    "game": "Game and 3D work: Godot, Blender.",
    "research": "Research: web search, crawling, desktop automation.",
    DEFAULT_USER_PROFILE: "Tools loaded from a user's own catalog file.",
}


@dataclass(frozen=True)
class ServerRow:
    name: str
    profile: str
    source: str
    origin_file: str


@dataclass(frozen=True)
class ToolRow:
    name: str
    backend_name: str
    server: str
    description: str
    summary: str
    input_schema: str
    annotations: str
    name_words: str
    arg_text: str
    triggers: str
    boost: str
    mutating: int
    definition_hash: str
    # None when the backend gives none; stored as NULL, and inspect then leaves the key out
    output_schema: str | None
    title: str | None


@dataclass(frozen=True)
class CatalogInput:
    servers: tuple[ServerRow, ...]
    tools: tuple[ToolRow, ...]

    def input_hash(self) -> str:
        return content_hash(
            [[list(astuple(s)) for s in self.servers], [list(astuple(t)) for t in self.tools]]
        )


@dataclass(frozen=True)
class LoadSummary:
    tools_per_profile: dict[str, int]
    added: int
    changed: int
    removed: int

    @property
    def total(self) -> int:
        return sum(self.tools_per_profile.values())

    def one_line(self) -> str:
        parts = ", ".join(f"{p} {n}" for p, n in sorted(self.tools_per_profile.items()))
        return (
            f"catalog: {self.total} tools ({parts}); "
            f"{self.added} added, {self.changed} changed, {self.removed} removed"
        )


# --- reading and validating ---------------------------------------------------------------


def read_seed_dir(seed_dir: Path) -> list[tuple[SeedFile, str]]:
    """Every seeds/*.json, validated, with the path it came from (sorted for determinism)."""
    if not seed_dir.is_dir():
        raise SeedError(f"{seed_dir}: seed directory not found")
    files = sorted(seed_dir.glob("*.json"))
    if not files:
        raise SeedError(f"{seed_dir}: no seed files (*.json)")
    return [(read_seed_file(path), str(path)) for path in files]


def read_seed_file(path: Path) -> SeedFile:
    text = path.read_text(encoding="utf-8")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SeedError(f"{path}: line {exc.lineno} column {exc.colno}: invalid JSON: {exc.msg}") from None
    try:
        return SeedFile.model_validate(raw)
    except ValidationError as exc:
        raise SeedError(f"{path}: {_describe_validation_error(exc, raw)}") from None


def read_user_catalog(path: Path) -> list[UserCatalogLine]:
    """A JSON Lines file of MCP tool objects; blank lines are skipped."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise SeedError(f"{path}: file not found") from None
    tools = []
    for line_number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SeedError(f"{path}: line {line_number}: invalid JSON: {exc.msg}") from None
        try:
            tools.append(UserCatalogLine.model_validate(raw))
        except ValidationError as exc:
            detail = _describe_validation_error(exc, raw)
            raise SeedError(f"{path}: line {line_number}: {detail}") from None
    if not tools:
        raise SeedError(f"{path}: no tools in file")
    return tools


def _describe_validation_error(exc: ValidationError, raw: object) -> str:
    """'tool 'git_status' (tools[3]): field inputSchema: <why>' from pydantic's first error."""
    first = exc.errors()[0]
    loc = list(first["loc"])
    where = ""
    if len(loc) >= 2 and loc[0] == "tools" and isinstance(loc[1], int):
        index = loc[1]
        tool_name = _tool_name_at(raw, index)
        where = f"tool {tool_name!r} (tools[{index}]): " if tool_name else f"tools[{index}]: "
        loc = loc[2:]
    elif isinstance(raw, dict) and isinstance(raw.get("name"), str):
        where = f"tool {raw['name']!r}: "
    return where + field_error(first, loc)


def _tool_name_at(raw: object, index: int) -> str | None:
    try:
        name = raw["tools"][index]["name"]  # type: ignore[index]
    except (KeyError, IndexError, TypeError):
        return None
    return name if isinstance(name, str) else None


# --- building rows ------------------------------------------------------------------------


def tool_row(tool: CatalogTool, *, server: str, catalog_name: str) -> ToolRow:
    definition = tool.mcp_definition()
    annotations = definition.get("annotations", {})
    return ToolRow(
        name=catalog_name,
        backend_name=tool.name,
        server=server,
        description=tool.description,
        summary=tool_text.summary(tool.description),
        input_schema=json.dumps(tool.inputSchema, ensure_ascii=False, sort_keys=True),
        annotations=json.dumps(annotations, ensure_ascii=False, sort_keys=True),
        name_words=tool_text.name_words(tool.name),
        arg_text=tool_text.arg_text(tool.inputSchema),
        triggers="\n".join(tool.triggers),
        boost="\n".join(tool.boost),
        mutating=0 if tool.read_only else 1,
        definition_hash=content_hash(definition),
        output_schema=(
            None
            if tool.outputSchema is None
            else json.dumps(tool.outputSchema, ensure_ascii=False, sort_keys=True)
        ),
        title=tool.title,
    )


def build_catalog_input(
    seeds: list[tuple[SeedFile, str]],
    user_catalogs: list[tuple[list[UserCatalogLine], str]],
) -> CatalogInput:
    """Combine validated files into rows; refuse duplicate servers and tool names."""
    servers: dict[str, ServerRow] = {}
    tools: dict[str, ToolRow] = {}
    tool_origin: dict[str, str] = {}

    def add_server(row: ServerRow) -> None:
        existing = servers.get(row.name)
        if existing is not None and existing.origin_file != row.origin_file:
            raise SeedError(
                f"{row.origin_file}: server {row.name!r} is already declared by {existing.origin_file}"
            )
        if existing is not None and existing.profile != row.profile:
            raise SeedError(
                f"{row.origin_file}: server {row.name!r} is put in profile {row.profile!r} "
                f"and in {existing.profile!r}; a server has one profile"
            )
        servers.setdefault(row.name, row)

    def add_tool(row: ToolRow, origin: str) -> None:
        if row.name in tools:
            raise SeedError(
                f"{origin}: tool {row.name!r} is already in the catalog from "
                f"{tool_origin[row.name]}; give one server a toolPrefix"
            )
        tools[row.name] = row
        tool_origin[row.name] = origin

    for seed, origin in seeds:
        add_server(ServerRow(seed.server, seed.profile, seed.source, origin))
        for tool in seed.tools:
            add_tool(tool_row(tool, server=seed.server, catalog_name=seed.toolPrefix + tool.name), origin)

    for lines, origin in user_catalogs:
        default_server = Path(origin).stem
        for number, line in enumerate(lines, start=1):
            server = line.server or default_server
            profile = line.profile or DEFAULT_USER_PROFILE
            add_server(ServerRow(server, profile, "", origin))
            add_tool(tool_row(line, server=server, catalog_name=line.name), f"{origin}: tool #{number}")

    return CatalogInput(
        servers=tuple(sorted(servers.values(), key=lambda s: s.name)),
        tools=tuple(sorted(tools.values(), key=lambda t: t.name)),
    )


# --- writing ------------------------------------------------------------------------------

UPSERT_PROFILE = """
INSERT INTO profiles(name, description) VALUES (:name, :description)
ON CONFLICT(name) DO UPDATE SET description = excluded.description
WHERE description IS NOT excluded.description
"""

UPSERT_SERVER = """
INSERT INTO servers(name, profile, source, origin_file)
VALUES (:name, :profile, :source, :origin_file)
ON CONFLICT(name) DO UPDATE SET
    profile = excluded.profile, source = excluded.source, origin_file = excluded.origin_file
WHERE (profile, source, origin_file) IS NOT (excluded.profile, excluded.source, excluded.origin_file)
"""

SELECT_TOOL_ROWS = """
SELECT name, backend_name, server, description, summary, input_schema, annotations,
       name_words, arg_text, triggers, boost, mutating, definition_hash, output_schema, title
FROM tools
"""

INSERT_TOOL = """
INSERT INTO tools(name, backend_name, server, description, summary, input_schema, annotations,
                  name_words, arg_text, triggers, boost, mutating, definition_hash,
                  output_schema, title)
VALUES (:name, :backend_name, :server, :description, :summary, :input_schema, :annotations,
        :name_words, :arg_text, :triggers, :boost, :mutating, :definition_hash,
        :output_schema, :title)
"""

UPDATE_TOOL = """
UPDATE tools SET backend_name = :backend_name, server = :server, description = :description,
    summary = :summary, input_schema = :input_schema, annotations = :annotations,
    name_words = :name_words, arg_text = :arg_text, triggers = :triggers, boost = :boost,
    mutating = :mutating, definition_hash = :definition_hash,
    output_schema = :output_schema, title = :title
WHERE name = :name
"""

DELETE_TOOL = "DELETE FROM tools WHERE name = :name"
SELECT_SERVER_NAMES = "SELECT name FROM servers"
DELETE_SERVER = "DELETE FROM servers WHERE name = :name"
DELETE_UNUSED_PROFILES = "DELETE FROM profiles WHERE name NOT IN (SELECT profile FROM servers)"
SELECT_TOOLS_PER_PROFILE = """
SELECT s.profile, count(*) FROM tools t JOIN servers s ON s.name = t.server GROUP BY s.profile
"""
INSERT_CATALOG_LOAD = """
INSERT INTO catalog_loads(loaded_at, input_hash, tools, added, changed, removed)
VALUES (:loaded_at, :input_hash, :tools, :added, :changed, :removed)
"""
# Row-by-row writes leave the FTS5 index in many small segments, and a query then pays for
# each of them (measured: 8x slower bm25 ranking on a 2,500-tool catalog); merging them into
# one after a load that changed something keeps search fast.
OPTIMIZE_SEARCH_INDEX = "INSERT INTO tools_fts(tools_fts) VALUES ('optimize')"


def replace_catalog(conn: apsw.Connection, catalog: CatalogInput) -> LoadSummary:
    """Make the catalog tables equal to `catalog`, in one transaction, touching only changes."""
    new_tools = {t.name: t for t in catalog.tools}
    new_servers = {s.name for s in catalog.servers}
    added = changed = removed = 0
    with conn:
        for profile in sorted({s.profile for s in catalog.servers}):
            description = PROFILE_DESCRIPTIONS.get(profile, "")
            conn.execute(UPSERT_PROFILE, {"name": profile, "description": description})
        for server in catalog.servers:
            conn.execute(UPSERT_SERVER, server.__dict__)

        existing = {row[0]: ToolRow(*row) for row in conn.execute(SELECT_TOOL_ROWS)}
        for name in sorted(existing.keys() - new_tools.keys()):
            conn.execute(DELETE_TOOL, {"name": name})
            removed += 1
        for name, row in new_tools.items():
            old = existing.get(name)
            if old is None:
                conn.execute(INSERT_TOOL, row.__dict__)
                added += 1
            elif old != row:
                conn.execute(UPDATE_TOOL, row.__dict__)
                changed += 1

        for (name,) in conn.execute(SELECT_SERVER_NAMES).fetchall():
            if name not in new_servers:
                conn.execute(DELETE_SERVER, {"name": name})
        conn.execute(DELETE_UNUSED_PROFILES)

        per_profile = {str(profile): int(tools) for profile, tools in conn.execute(SELECT_TOOLS_PER_PROFILE)}
        if added or changed or removed:
            conn.execute(
                INSERT_CATALOG_LOAD,
                {
                    "loaded_at": utc_now_iso(),
                    "input_hash": catalog.input_hash(),
                    "tools": len(new_tools),
                    "added": added,
                    "changed": changed,
                    "removed": removed,
                },
            )
            conn.execute(OPTIMIZE_SEARCH_INDEX)
    return LoadSummary(per_profile, added, changed, removed)


def load_catalog(conn: apsw.Connection, *, seed_dir: Path | None, user_files: list[Path]) -> LoadSummary:
    """Validate every input file, then replace the catalog; nothing is written on error."""
    seeds = read_seed_dir(seed_dir) if seed_dir is not None else []
    user_catalogs = [(read_user_catalog(path), str(path)) for path in user_files]
    return replace_catalog(conn, build_catalog_input(seeds, user_catalogs))
