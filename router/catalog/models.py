"""Pydantic types at the catalog's edges: seed files and user catalog lines.

A tool is what MCP `tools/list` gives (name, description, inputSchema, annotations, ...)
plus the router's own fields (`triggers`, `boost`).
"""

from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict, Field, field_validator

# MCP's tool-name rule (spec 2025-11-25): 1-128 of ASCII letters, digits, '_', '-', '.'.
TOOL_NAME_PATTERN = r"^[A-Za-z0-9_.\-]{1,128}$"
SERVER_NAME_PATTERN = r"^[A-Za-z0-9_.\-]{1,64}$"
PROFILE_NAME_PATTERN = r"^[a-z0-9][a-z0-9_\-]{0,31}$"
MAX_TRIGGER_CHARS = 80
MAX_BOOST_CHARS = 40


class ToolAnnotations(BaseModel):
    """MCP tool annotations; only the hints the router reads are typed."""

    model_config = ConfigDict(extra="allow")

    title: str | None = None
    readOnlyHint: bool | None = None
    destructiveHint: bool | None = None
    idempotentHint: bool | None = None
    openWorldHint: bool | None = None


class CatalogTool(BaseModel):
    """One backend tool as MCP lists it, plus trigger phrases and boost keywords."""

    # Fields MCP may add to a tool that the router keeps but does not interpret are
    # listed explicitly; anything else is a typo and is refused.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str = Field(pattern=TOOL_NAME_PATTERN)
    title: str | None = None
    description: str = Field(min_length=1)
    inputSchema: dict[str, Any]
    outputSchema: dict[str, Any] | None = None
    annotations: ToolAnnotations | None = None
    icons: list[Any] | None = None
    execution: dict[str, Any] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    triggers: list[str] = Field(default_factory=list)
    boost: list[str] = Field(default_factory=list)

    # MCP requires both to be JSON Schemas of an object: the arguments, and the
    # structuredContent a call returns. A broken one is refused at load, not met by a model.
    @field_validator("inputSchema", "outputSchema")
    @classmethod
    def _schema_is_object_json_schema(cls, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if schema is None:
            return None
        if schema.get("type") != "object":
            raise ValueError('must be a JSON Schema with "type": "object"')
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            where = "/".join(str(p) for p in exc.path) or "(root)"
            raise ValueError(f"not a valid JSON Schema at {where}: {exc.message}") from None
        return schema

    @field_validator("triggers")
    @classmethod
    def _triggers_are_short_phrases(cls, triggers: list[str]) -> list[str]:
        return _clean_phrases(triggers, MAX_TRIGGER_CHARS, "trigger")

    @field_validator("boost")
    @classmethod
    def _boost_are_keywords(cls, boost: list[str]) -> list[str]:
        return _clean_phrases(boost, MAX_BOOST_CHARS, "boost keyword")

    @property
    def read_only(self) -> bool:
        return bool(self.annotations and self.annotations.readOnlyHint is True)

    def mcp_definition(self) -> dict[str, Any]:
        """The tool as the backend lists it (router fields removed)."""
        return self.model_dump(by_alias=True, exclude_none=True, exclude={"triggers", "boost"})


def _clean_phrases(values: list[str], max_chars: int, what: str) -> list[str]:
    cleaned = []
    for value in values:
        phrase = " ".join(value.split())
        if not phrase:
            raise ValueError(f"empty {what}")
        if len(phrase) > max_chars:
            raise ValueError(f"{what} {phrase[:20]!r}... is longer than {max_chars} characters")
        cleaned.append(phrase)
    return cleaned


class SeedFile(BaseModel):
    """seeds/<server>.json: one backend server and its tools."""

    model_config = ConfigDict(extra="forbid")

    server: str = Field(pattern=SERVER_NAME_PATTERN)
    profile: str = Field(pattern=PROFILE_NAME_PATTERN)
    # where the tool list came from: package, version, and how it was read
    source: str = Field(min_length=1)
    # prepended to each backend name to form the catalog name, for servers whose tool
    # names collide with another server's
    toolPrefix: str = Field(default="", pattern=r"^[A-Za-z0-9_.\-]{0,32}$")
    tools: list[CatalogTool] = Field(min_length=1)


class UserCatalogLine(CatalogTool):
    """One line of a user's JSON Lines catalog: a tool, optionally with server and profile."""

    server: str | None = Field(default=None, pattern=SERVER_NAME_PATTERN)
    profile: str | None = Field(default=None, pattern=PROFILE_NAME_PATTERN)
