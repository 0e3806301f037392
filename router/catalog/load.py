"""Seeds and user catalogs → the catalog tables, validated first, written in one transaction.

Reading and validating happen entirely before the database is touched; the write is a diff
(insert what is new, update what changed, delete what is gone) inside one transaction, so a
bad file leaves the old catalog whole and reloading the same input changes nothing.
"""

import json
from collections.abc import Collection, Mapping
from dataclasses import astuple, dataclass, field
from pathlib import Path

import apsw

from router.catalog import deprecation, tool_text
from router.catalog.embeddings import catalog_model, embed_catalog
from router.catalog.model_vectors import EmbeddingModel
from router.catalog.models import CatalogTool, SeedFile, UserCatalogLine
from router.catalog.sources import (
    LoadNotes,
    read_seed_dir,
    read_user_catalog,
    seeds_by_server,
)
from router.catalog.token_counts import count_catalog_tokens
from router.clock import utc_now_iso
from router.errors import SeedError
from router.hashing import content_hash
from router.wording import counted

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
    # its seed's not-for requests, one per line (SeedHeader.not_for)
    not_for: str = ""


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
    read_only_source: str
    arg_validator: str
    examples: str
    deprecated: int
    # the catalog name of the tool this deprecated one names instead (same server), or None
    replaced_by: str | None


@dataclass(frozen=True)
class CatalogInput:
    servers: tuple[ServerRow, ...]
    tools: tuple[ToolRow, ...]
    # what lenient inputs skipped or let through
    notes: tuple[str, ...] = ()
    # each tool definition as its server lists it, by definition hash (what token_counts counts)
    definitions: Mapping[str, CatalogTool] = field(default_factory=dict, compare=False)

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
    notes: tuple[str, ...] = ()
    # tool definitions the semantic model embedded in this load (0 when none was new)
    embedded: int = 0
    # vectors it embedded for the tools' example requests and the servers' not-for requests:
    # each, and its reading without payload where that differs (router/catalog/example_vectors.py)
    examples_embedded: int = 0

    @property
    def total(self) -> int:
        return sum(self.tools_per_profile.values())

    def one_line(self) -> str:
        parts = ", ".join(f"{p} {n}" for p, n in sorted(self.tools_per_profile.items()))
        return (
            f"catalog: {counted(self.total, 'tool')} ({parts}); "
            f"{self.added} added, {self.changed} changed, {self.removed} removed"
            + (f"; {self.embedded} embedded" if self.embedded else "")
            + (
                f"; {counted(self.examples_embedded, 'request vector')} embedded"
                if self.examples_embedded
                else ""
            )
        )

    def report(self) -> str:
        """one_line(), then each thing a lenient input skipped or loaded unchecked."""
        return "\n".join([self.one_line(), *(f"  {note}" for note in self.notes)])


# --- building rows ------------------------------------------------------------------------


def tool_row(tool: CatalogTool, *, server: str, catalog_name: str, replaced_by: str | None = None) -> ToolRow:
    """The row of `tool`; replaced_by: the catalog name of the tool of its server that its
    description names instead of it (server_replacement)."""
    definition = tool.mcp_definition()
    annotations = definition.get("annotations", {})
    # MCP lets a tool go without a description: its name, in words, is all there is
    described = tool.description or tool_text.name_words(tool.name)
    deprecated = deprecation.is_deprecated(tool.description or "", tool.title)
    return ToolRow(
        name=catalog_name,
        backend_name=tool.name,
        server=server,
        description=tool.description or "",
        summary=(
            tool_text.deprecated_summary(described, deprecation.deprecation_note(replaced_by))
            if deprecated
            else tool_text.summary(described)
        ),
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
        read_only_source=tool.read_only_source,
        arg_validator=tool.arg_validator,
        examples="\n".join(tool.examples),
        deprecated=int(deprecated),
        replaced_by=replaced_by if deprecated else None,
    )


def server_replacement(tool: CatalogTool, server_tools: Collection[str], prefix: str = "") -> str | None:
    """The catalog name of the tool among `server_tools` (its server's backend names) that
    `tool`'s description names instead of it, when it is deprecated."""
    if not deprecation.is_deprecated(tool.description or "", tool.title):
        return None
    found = deprecation.named_replacement(tool.description or "", tool.name, server_tools)
    return None if found is None else prefix + found


def build_catalog_input(
    seeds: list[tuple[SeedFile, str]],
    user_catalogs: list[tuple[list[UserCatalogLine], str]],
    *,
    lenient_origins: Collection[str] = (),
    notes: LoadNotes | None = None,
) -> CatalogInput:
    """Combine validated files into rows; refuse duplicate servers and tool names (a
    lenient origin's duplicate tool is skipped and noted instead)."""
    notes = notes if notes is not None else LoadNotes()
    servers: dict[str, ServerRow] = {}
    tools: dict[str, ToolRow] = {}
    tool_origin: dict[str, str] = {}
    definitions: dict[str, CatalogTool] = {}

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

    def add_tool(row: ToolRow, tool: CatalogTool, origin: str, lenient: bool) -> None:
        if row.name in tools:
            message = f"tool {row.name!r} is already in the catalog from {tool_origin[row.name]}"
            if lenient:
                notes.skipped(origin, f"{message} (give this server a tool prefix)")
                return
            raise SeedError(f"{origin}: {message}; give one server a toolPrefix")
        tools[row.name] = row
        tool_origin[row.name] = origin
        definitions[row.definition_hash] = tool

    for seed, origin in seeds:
        add_server(ServerRow(seed.server, seed.profile, seed.source, origin, "\n".join(seed.not_for)))
        lenient = origin in lenient_origins
        names = {tool.name for tool in seed.tools}
        for tool in seed.tools:
            row = tool_row(
                tool,
                server=seed.server,
                catalog_name=seed.toolPrefix + tool.name,
                replaced_by=server_replacement(tool, names, seed.toolPrefix),
            )
            add_tool(row, tool, origin, lenient)

    for lines, origin in user_catalogs:
        default_server = Path(origin).stem
        lenient = origin in lenient_origins
        names_by_server: dict[str, set[str]] = {}
        for line in lines:
            names_by_server.setdefault(line.server or default_server, set()).add(line.name)
        for number, line in enumerate(lines, start=1):
            server = line.server or default_server
            profile = line.profile or DEFAULT_USER_PROFILE
            add_server(ServerRow(server, profile, "", origin))
            row = tool_row(
                line,
                server=server,
                catalog_name=line.name,
                replaced_by=server_replacement(line, names_by_server[server]),
            )
            add_tool(row, line, f"{origin}: tool #{number}", lenient)

    return CatalogInput(
        servers=tuple(sorted(servers.values(), key=lambda s: s.name)),
        tools=tuple(sorted(tools.values(), key=lambda t: t.name)),
        notes=tuple(notes.lines),
        definitions=definitions,
    )


# --- writing ------------------------------------------------------------------------------

UPSERT_PROFILE = """
INSERT INTO profiles(name, description) VALUES (:name, :description)
ON CONFLICT(name) DO UPDATE SET description = excluded.description
WHERE description IS NOT excluded.description
"""

UPSERT_SERVER = """
INSERT INTO servers(name, profile, source, origin_file, not_for)
VALUES (:name, :profile, :source, :origin_file, :not_for)
ON CONFLICT(name) DO UPDATE SET
    profile = excluded.profile, source = excluded.source, origin_file = excluded.origin_file,
    not_for = excluded.not_for
WHERE (profile, source, origin_file, not_for)
      IS NOT (excluded.profile, excluded.source, excluded.origin_file, excluded.not_for)
"""

SELECT_TOOL_ROWS = """
SELECT name, backend_name, server, description, summary, input_schema, annotations,
       name_words, arg_text, triggers, boost, mutating, definition_hash, output_schema, title,
       read_only_source, arg_validator, examples, deprecated, replaced_by
FROM tools
"""

INSERT_TOOL = """
INSERT INTO tools(name, backend_name, server, description, summary, input_schema, annotations,
                  name_words, arg_text, triggers, boost, mutating, definition_hash,
                  output_schema, title, read_only_source, arg_validator, examples, deprecated,
                  replaced_by)
VALUES (:name, :backend_name, :server, :description, :summary, :input_schema, :annotations,
        :name_words, :arg_text, :triggers, :boost, :mutating, :definition_hash,
        :output_schema, :title, :read_only_source, :arg_validator, :examples, :deprecated,
        :replaced_by)
"""

UPDATE_TOOL = """
UPDATE tools SET backend_name = :backend_name, server = :server, description = :description,
    summary = :summary, input_schema = :input_schema, annotations = :annotations,
    name_words = :name_words, arg_text = :arg_text, triggers = :triggers, boost = :boost,
    mutating = :mutating, definition_hash = :definition_hash,
    output_schema = :output_schema, title = :title, read_only_source = :read_only_source,
    arg_validator = :arg_validator, examples = :examples, deprecated = :deprecated,
    replaced_by = :replaced_by
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
# A quarantined tool whose catalog definition is now what its backend listed was accepted.
RELEASE_ACCEPTED_QUARANTINE = """
DELETE FROM tool_quarantine
WHERE live_hash = (SELECT definition_hash FROM tools WHERE tools.name = tool_quarantine.tool)
"""


def replace_catalog(
    conn: apsw.Connection, catalog: CatalogInput, *, model: EmbeddingModel | None = None
) -> LoadSummary:
    """Make the catalog tables equal to `catalog`, in one transaction, touching only changes,
    and embed the tools `model` (default: the catalog's model) has no vector for yet."""
    model = model if model is not None else catalog_model()
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
        embedding = embed_catalog(conn, model)
        count_catalog_tokens(conn, catalog.definitions)

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
            conn.execute(RELEASE_ACCEPTED_QUARANTINE)
    return LoadSummary(
        per_profile, added, changed, removed, catalog.notes, embedding.embedded, embedding.examples_embedded
    )


def load_catalog(
    conn: apsw.Connection,
    *,
    seed_dir: Path | None,
    user_files: list[Path],
    user_seed_dir: Path | None = None,
    disabled: Collection[str] = (),
    strict_user_files: bool = False,
    model: EmbeddingModel | None = None,
) -> LoadSummary:
    """Validate every input, then replace the catalog; nothing is written on error.

    seed_dir: the shipped seeds (strict). user_seed_dir: the seeds `import`, `add` and
    `harvest` wrote for the user (lenient; a server's seed there replaces the shipped one).
    user_files: JSON Lines catalogs (lenient unless strict_user_files). Servers named in
    `disabled` (an `enabled = false` in a servers file) are left out. model: what embeds
    the tools (default: the catalog's model, router/catalog/embeddings.py)."""
    notes = LoadNotes()
    seeds = read_seed_dir(seed_dir) if seed_dir is not None else []
    user_seeds = []
    if user_seed_dir is not None and user_seed_dir.is_dir():
        user_seeds = read_seed_dir(user_seed_dir, lenient=True, notes=notes)
    chosen = seeds_by_server(seeds, user_seeds, notes)
    for seed, origin in chosen:
        if seed.server in disabled:
            notes.lines.append(f"{origin}: server {seed.server!r} is disabled (enabled = false): left out")
    chosen = [(seed, origin) for seed, origin in chosen if seed.server not in disabled]
    user_catalogs = [
        (read_user_catalog(path, strict=strict_user_files, notes=notes), str(path)) for path in user_files
    ]
    lenient = {origin for _, origin in user_seeds}
    if not strict_user_files:
        lenient |= {str(path) for path in user_files}
    return replace_catalog(
        conn, build_catalog_input(chosen, user_catalogs, lenient_origins=lenient, notes=notes), model=model
    )
