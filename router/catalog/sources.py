"""Reading the catalog's input files: seed directories and JSON Lines user catalogs.

The shipped seeds are strict: the first problem is an error naming file, tool and field, and
nothing is loaded. Everything a user brings (a `catalog --from` file, the seeds `import`,
`add` and `harvest` write into the user seeds directory) is lenient, as MCP is: one bad tool
is skipped and said so, a schema no draft accepts is loaded with its arguments unchecked and
said so, and the rest loads. `--strict` makes a user catalog strict too.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from router.catalog.models import CatalogTool, SeedFile, SeedHeader, UserCatalogLine
from router.errors import SeedError
from router.validation import field_error

LENIENT = {"lenient": True}


@dataclass
class LoadNotes:
    """What a lenient read skipped or let through, one line each, for the load's report."""

    lines: list[str] = field(default_factory=list)

    def skipped(self, where: str, why: str) -> None:
        self.lines.append(f"{where}: skipped: {why}")

    def warn(self, where: str, tool: CatalogTool) -> None:
        self.lines.extend(f"{where}: tool {tool.name!r}: {warning}" for warning in tool.warnings)


# --- seeds ----------------------------------------------------------------------------------


def read_seed_dir(
    seed_dir: Path, *, lenient: bool = False, notes: LoadNotes | None = None
) -> list[tuple[SeedFile, str]]:
    """Every *.json of a seed directory, validated, with the path it came from (sorted)."""
    if not seed_dir.is_dir():
        raise SeedError(f"{seed_dir}: seed directory not found")
    files = sorted(seed_dir.glob("*.json"))
    if not files and not lenient:
        raise SeedError(f"{seed_dir}: no seed files (*.json)")
    seeds = []
    for path in files:
        seed = read_user_seed_file(path, notes or LoadNotes()) if lenient else read_seed_file(path)
        if seed is not None:
            seeds.append((seed, str(path)))
    return seeds


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SeedError(f"{path}: line {exc.lineno} column {exc.colno}: invalid JSON: {exc.msg}") from None


def read_seed_file(path: Path) -> SeedFile:
    """One shipped seed file, strictly: the first problem is an error."""
    raw = _read_json(path)
    try:
        return SeedFile.model_validate(raw)
    except ValidationError as exc:
        raise SeedError(f"{path}: {describe_validation_error(exc, raw)}") from None


def read_user_seed_file(path: Path, notes: LoadNotes) -> SeedFile | None:
    """One seed of the user's, leniently: a bad tool is skipped (noted); a file none of whose
    tools load, or that is not a seed at all, is skipped whole (noted)."""
    try:
        raw = _read_json(path)
    except SeedError as exc:
        notes.skipped(str(path), str(exc).removeprefix(f"{path}: "))
        return None
    return _read_seed_leniently(path, raw, notes)


def _read_seed_leniently(path: Path, raw: Any, notes: LoadNotes) -> SeedFile | None:
    if not isinstance(raw, dict):
        notes.skipped(str(path), "not a JSON object")
        return None
    try:
        header = SeedHeader.model_validate({k: v for k, v in raw.items() if k != "tools"})
    except ValidationError as exc:
        notes.skipped(str(path), describe_validation_error(exc, raw))
        return None
    raw_tools = raw.get("tools")
    tools = []
    for index, raw_tool in enumerate(raw_tools if isinstance(raw_tools, list) else []):
        where = f"{path}: tools[{index}]"
        try:
            tool = CatalogTool.model_validate(raw_tool, context=LENIENT)
        except ValidationError as exc:
            notes.skipped(where, describe_validation_error(exc, raw_tool))
            continue
        notes.warn(str(path), tool)
        tools.append(tool)
    if not tools:
        notes.skipped(str(path), "no loadable tools")
        return None
    return SeedFile.model_construct(**header.model_dump(), tools=tools)


def seeds_by_server(
    shipped: list[tuple[SeedFile, str]], user: list[tuple[SeedFile, str]], notes: LoadNotes
) -> list[tuple[SeedFile, str]]:
    """The user's seed of a server replaces the shipped one (as its servers file layer does).
    Shipped seeds come first: a user's tool whose name is taken is the one skipped."""
    chosen = {seed.server: (seed, origin) for seed, origin in shipped}
    for seed, origin in user:
        replaced = chosen.pop(seed.server, None)
        if replaced is not None:
            notes.lines.append(f"{origin}: replaces the shipped seed {replaced[1]} of server {seed.server!r}")
    users = sorted(user, key=lambda pair: pair[0].server)
    return [chosen[name] for name in sorted(chosen)] + users


# --- user catalogs --------------------------------------------------------------------------


def read_user_catalog(
    path: Path, *, strict: bool = False, notes: LoadNotes | None = None
) -> list[UserCatalogLine]:
    """A JSON Lines file of MCP tool objects; blank lines are skipped. Lines are split on
    '\\n' only: U+2028, U+2029 and U+0085 are legal inside a JSON string."""
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except FileNotFoundError:
        raise SeedError(f"{path}: file not found") from None
    notes = notes if notes is not None else LoadNotes()
    context = None if strict else LENIENT
    tools = []
    for line_number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}: line {line_number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            if strict:
                raise SeedError(f"{where}: invalid JSON: {exc.msg}") from None
            notes.skipped(where, f"invalid JSON: {exc.msg}")
            continue
        try:
            tool = UserCatalogLine.model_validate(raw, context=context)
        except ValidationError as exc:
            detail = describe_validation_error(exc, raw)
            if strict:
                raise SeedError(f"{where}: {detail}") from None
            notes.skipped(where, detail)
            continue
        notes.warn(where, tool)
        tools.append(tool)
    if not tools:
        raise SeedError(
            f"{path}: no loadable tools in file" + (f" ({len(notes.lines)} skipped)" if notes.lines else "")
        )
    return tools


# --- error messages -------------------------------------------------------------------------


def describe_validation_error(exc: ValidationError, raw: object) -> str:
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
