"""A tool's call signature: its name and its arguments with short JSON types, one line an agent
can call from without inspecting the schema first, e.g.

    git_log(repo_path: str, end_timestamp?: str, max_count?: int, start_timestamp?: str)

Required arguments come first, in the order of the schema's `required`, then the optional
ones (marked `?`) in the order of its properties (the catalog stores schemas canonically, so
by name). Types: str, int, num, bool, null, any; `[T]` an array of T; `{a: T, b?: U}` an
object with those properties, `obj` a free-form one; `"x"|"y"` an enum's values (`"x"|…` the
first of a long one); `T|U` a choice (null is left out of a choice: an optional argument may
simply be omitted). The short form keeps only what a call must carry, the required arguments
at every level, with `…` where optional ones were left out: `git_log(repo_path: str, …)`.

Nothing here fills an argument in: the router forwards `args` as given (git's `repo_path`
included, which mcp-server-git confines to the client's workspace), so the signature lists
every argument the tool's inputSchema has.
"""

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import apsw

from router.db import PerConnection, catalog_version

# JSON Schema type → the short name a signature shows.
TYPE_NAMES = {
    "string": "str",
    "integer": "int",
    "number": "num",
    "boolean": "bool",
    "object": "obj",
    "array": "[any]",
    "null": "null",
}
ANY = "any"
# Object properties are spelled out above this nesting level (the arguments are level 1;
# each array, choice or object goes one deeper): deeper ones are `obj`, for
# mcp_inspect_schema to tell. Past MAX_NESTING everything is `any` (a recursive schema ends).
MAX_DEPTH = 3
MAX_NESTING = 8
# An enum lists its values while they stay this short (values and their separators); a
# longer one shows its first ones and `…`, the rest being for mcp_inspect_schema.
MAX_ENUM_CHARS = 48
MAX_ENUM_VALUES = 6
# The full form lists optional arguments only while it stays this short: a tool with dozens
# of them would fill the page with what a first call rarely needs (`…` says there are more).
MAX_FULL_CHARS = 160
# An argument name shown bare; any other is quoted as a JSON string.
_BARE_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$.\-]*")
OMITTED = "…"


@dataclass(frozen=True)
class Signature:
    full: str
    # the required arguments only: what a page shows for a lower hit when it must shrink
    short: str


def signature(name: str, input_schema: Mapping[str, Any]) -> Signature:
    """The tool's signature, full and short (the same when nothing is optional). The full
    form lists the optional arguments while it stays within MAX_FULL_CHARS, then `…`."""
    renderer = _Renderer(input_schema)
    required, optional = renderer.arguments(input_schema)
    short = _call(name, required + ([OMITTED] if optional else []))
    shown = list(required)
    for index, argument in enumerate(optional):
        more = OMITTED if index + 1 < len(optional) else None
        if len(_call(name, [*shown, argument] + ([more] if more else []))) > MAX_FULL_CHARS:
            shown.append(OMITTED)
            break
        shown.append(argument)
    return Signature(_call(name, shown), short)


def _call(name: str, arguments: list[str]) -> str:
    return f"{name}({', '.join(arguments)})"


class _Renderer:
    """Types of one schema, resolving its local $refs (#/$defs/..., #/definitions/...)."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self._root = root

    def arguments(self, schema: Mapping[str, Any]) -> tuple[list[str], list[str]]:
        """The top level's required arguments (with their required members only) and its
        optional ones (spelled out whole), each as `name: type`."""
        schema = self._resolve(schema)
        if not isinstance(schema, Mapping):
            return [], []
        required, optional = self._split(schema)
        properties = schema["properties"] if required or optional else {}
        return (
            [f"{_shown_name(key)}: {self._type(properties[key], 1, True)}" for key in required],
            [f"{_shown_name(key)}?: {self._type(properties[key], 1, False)}" for key in optional],
        )

    @staticmethod
    def _split(schema: Mapping[str, Any]) -> tuple[list[str], list[str]]:
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            return [], []
        required = [key for key in dict.fromkeys(_names(schema.get("required"))) if key in properties]
        return required, [key for key in properties if key not in required]

    def _members(self, schema: Mapping[str, Any], depth: int, required_only: bool) -> str:
        """An object's properties, required first; only those with required_only."""
        required, optional = self._split(schema)
        properties = schema.get("properties") or {}
        parts = [
            f"{_shown_name(key)}: {self._type(properties[key], depth, required_only)}" for key in required
        ]
        if not required_only:
            parts += [f"{_shown_name(key)}?: {self._type(properties[key], depth, False)}" for key in optional]
        return ", ".join(parts)

    def _type(self, schema: Any, depth: int, required_only: bool) -> str:
        schema = self._resolve(schema)
        if not isinstance(schema, Mapping) or depth > MAX_NESTING:
            return ANY  # `true` or a malformed entry: anything goes
        if "const" in schema:
            return _enum([schema["const"]])
        enum = schema.get("enum")
        if isinstance(enum, list) and enum:
            return _enum(enum)
        choices = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(choices, list) and choices:
            return self._choice([self._type(choice, depth + 1, required_only) for choice in choices])
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1:
            return self._type(all_of[0], depth + 1, required_only)
        declared = schema.get("type")
        if isinstance(declared, list):
            return self._choice([self._typed(schema, kind, depth, required_only) for kind in declared])
        if isinstance(declared, str):
            return self._typed(schema, declared, depth, required_only)
        if "properties" in schema:
            return self._typed(schema, "object", depth, required_only)
        if "items" in schema:
            return self._typed(schema, "array", depth, required_only)
        return ANY

    def _typed(self, schema: Mapping[str, Any], kind: Any, depth: int, required_only: bool) -> str:
        if kind == "array" and "items" in schema:
            return f"[{self._type(schema['items'], depth + 1, required_only)}]"
        if kind == "object" and depth < MAX_DEPTH:
            members = self._members(schema, depth + 1, required_only)
            if members:
                return "{" + members + "}"
        return TYPE_NAMES.get(kind, ANY) if isinstance(kind, str) else ANY

    @staticmethod
    def _choice(kinds: list[str]) -> str:
        # null is what leaving an optional argument out already says
        shown = list(dict.fromkeys(kind for kind in kinds if kind != "null")) or ["null"]
        return ANY if ANY in shown else "|".join(shown)

    def _resolve(self, schema: Any) -> Any:
        """A local $ref followed (a few hops: a cycle ends as `any`)."""
        for _ in range(MAX_NESTING):
            if not isinstance(schema, Mapping) or not isinstance(schema.get("$ref"), str):
                return schema
            schema = _pointer(self._root, schema["$ref"])
        return None


def _pointer(root: Mapping[str, Any], ref: str) -> Any:
    if not ref.startswith("#/"):
        return None  # a remote schema: not fetched, shown as `any`
    found: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(found, Mapping) or part not in found:
            return None
        found = found[part]
    return found


def _enum(values: list[Any]) -> str:
    """The enum's values, or as many as fit MAX_ENUM_CHARS and MAX_ENUM_VALUES then `…`
    (the first one always, a caller then having a value that is certainly allowed, unless it is
    itself too long: then its JSON type)."""
    shown: list[str] = []
    for value in values:
        literal = _literal(value)
        if not shown and len(literal) > MAX_ENUM_CHARS:
            return _json_type(value)
        if shown and (
            len(shown) == MAX_ENUM_VALUES or len("|".join([*shown, literal, OMITTED])) > MAX_ENUM_CHARS
        ):
            return "|".join([*shown, OMITTED])
        shown.append(literal)
    return "|".join(shown)


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return TYPE_NAMES["boolean"]
    if isinstance(value, int):
        return TYPE_NAMES["integer"]
    if isinstance(value, float):
        return TYPE_NAMES["number"]
    if isinstance(value, str):
        return TYPE_NAMES["string"]
    return (
        TYPE_NAMES["array"]
        if isinstance(value, list)
        else TYPE_NAMES["object"]
        if isinstance(value, dict)
        else ANY
    )


def _names(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _shown_name(key: str) -> str:
    return key if _BARE_NAME.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def _literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# --- the signatures of a page's hits ------------------------------------------------------

SCHEMAS_SQL = "SELECT name, input_schema FROM tools WHERE name IN (SELECT value FROM json_each(:names))"


class _CatalogSignatures:
    """Signatures by tool name, per connection, until the catalog changes: a tool's schema
    is read and rendered once, not on every page that shows it."""

    def __init__(self, conn: apsw.Connection) -> None:
        self._conn = conn
        self._version: int | None = None
        self._known: dict[str, Signature] = {}

    def of(self, names: Iterable[str]) -> dict[str, Signature]:
        version = catalog_version(self._conn)
        if version != self._version:
            self._version, self._known = version, {}
        wanted = list(dict.fromkeys(names))
        missing = [name for name in wanted if name not in self._known]
        if missing:
            for name, schema_text in self._conn.execute(SCHEMAS_SQL, {"names": json.dumps(missing)}):
                self._known[str(name)] = signature(str(name), _object(schema_text))
        return {name: self._known[name] for name in wanted if name in self._known}


def _object(schema_text: Any) -> Mapping[str, Any]:
    try:
        schema = json.loads(schema_text)
    except (TypeError, ValueError):
        return {}
    return schema if isinstance(schema, Mapping) else {}


_catalog_signatures = PerConnection(_CatalogSignatures)


def tool_signatures(conn: apsw.Connection, names: Iterable[str]) -> dict[str, Signature]:
    """The signatures of these catalog tools (a name not in the catalog is left out)."""
    return _catalog_signatures(conn).of(names)
