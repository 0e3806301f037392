"""Pydantic types at the catalog's edges: seed files and user catalog lines.

A tool is what MCP `tools/list` gives (name, description, inputSchema, annotations, ...)
plus the router's own fields (`triggers`, `boost`, `examples`: requests in everyday words that
the tool answers, and `router`: a reviewed read-only classification for a tool whose server
says nothing).

Two modes. Seeds are strict: every problem is an error naming its field. User catalogs,
imports and harvests are lenient (validation context {"lenient": True}): what MCP accepts is
accepted, and a schema no JSON Schema draft accepts is kept with its args unchecked and a
warning (CatalogTool.warnings) instead of refusing the tool.
"""

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from router.catalog import schema_drafts

# MCP's tool-name rule (spec 2025-11-25): 1-128 of ASCII letters, digits, '_', '-', '.'.
TOOL_NAME_PATTERN = r"^[A-Za-z0-9_.\-]{1,128}$"
SERVER_NAME_PATTERN = r"^[A-Za-z0-9_.\-]{1,64}$"
PROFILE_NAME_PATTERN = r"^[a-z0-9][a-z0-9_\-]{0,31}$"
MAX_TRIGGER_CHARS = 80
MAX_BOOST_CHARS = 40
# Examples are short requests in everyday words, each embedded and indexed: a handful per tool
# says how people ask for it (more only adds near-duplicates to embed and score), and a request
# longer than a sentence or two is a task description, not an example of asking.
MAX_EXAMPLES = 12
MAX_EXAMPLE_CHARS = 160
# A server's not-for requests name the jobs next to its own that it leaves to others (a local
# git server: push, pull requests, merges, ...): a few per job it could be mistaken for.
MAX_NOT_FOR = 24
# the fields of a seed's tool that are the router's own, not the server's (in the order a
# harvest writes them back after the server's own fields)
ROUTER_FIELDS = ("triggers", "boost", "examples", "router")

ReadOnlySource = Literal["server", "router-review", "default-mutating"]


def _lenient(info: ValidationInfo) -> bool:
    return bool(info.context and info.context.get("lenient"))


class ToolAnnotations(BaseModel):
    """MCP tool annotations; only the hints the router reads are typed."""

    model_config = ConfigDict(extra="allow")

    title: str | None = None
    readOnlyHint: bool | None = None
    destructiveHint: bool | None = None
    idempotentHint: bool | None = None
    openWorldHint: bool | None = None


class RouterReview(BaseModel):
    """A person's reading of a tool whose server gives no readOnlyHint: does it only read?"""

    model_config = ConfigDict(extra="forbid")

    readOnly: bool
    # why: what the tool does, in a few words (the review a later reader can check)
    reviewed: str = Field(min_length=1)


class CatalogTool(BaseModel):
    """One backend tool as MCP lists it, plus trigger phrases and boost keywords."""

    # Fields MCP may add to a tool that the router keeps but does not interpret are
    # listed explicitly; anything else is a typo and is refused.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str = Field(pattern=TOOL_NAME_PATTERN)
    title: str | None = None
    # optional in MCP; a seed must still describe its tools (search reads the description)
    description: str | None = Field(default=None, min_length=1, validate_default=True)
    inputSchema: dict[str, Any]
    outputSchema: dict[str, Any] | None = None
    annotations: ToolAnnotations | None = None
    icons: list[Any] | None = None
    execution: dict[str, Any] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    triggers: list[str] = Field(default_factory=list)
    boost: list[str] = Field(default_factory=list)
    examples: list[str] = Field(default_factory=list)
    router: RouterReview | None = None

    # what a lenient load let through, for the load's report
    _warnings: list[str] = PrivateAttr(default_factory=list)
    _arg_validator: str = PrivateAttr(default=schema_drafts.DEFAULT_DRAFT)

    # MCP requires both to be JSON Schemas of an object: the arguments, and the
    # structuredContent a call returns. A broken one is refused at load (seeds), or kept
    # with a warning (lenient), never met by a model unannounced.
    @field_validator("inputSchema", "outputSchema")
    @classmethod
    def _schema_is_object_json_schema(
        cls, schema: dict[str, Any] | None, info: ValidationInfo
    ) -> dict[str, Any] | None:
        if schema is None or _lenient(info):
            return schema
        _, problem = _checked_schema(schema)
        if problem is not None:
            raise ValueError(problem)
        return schema

    @field_validator("description")
    @classmethod
    def _seeds_describe_their_tools(cls, description: str | None, info: ValidationInfo) -> str | None:
        if description is None and not _lenient(info):
            raise ValueError("a seeded tool needs a description (search reads it)")
        return description

    @model_validator(mode="after")
    def _drafts_and_warnings(self, info: ValidationInfo) -> "CatalogTool":
        self._arg_validator, problem = _checked_schema(self.inputSchema)
        if problem is not None:
            self._warnings.append(f"inputSchema {problem}: loaded with its arguments unchecked")
        if self.outputSchema is not None:
            _, problem = _checked_schema(self.outputSchema)
            if problem is not None:
                self._warnings.append(f"outputSchema {problem}: kept as the server gives it")
        return self

    @field_validator("triggers")
    @classmethod
    def _triggers_are_short_phrases(cls, triggers: list[str]) -> list[str]:
        return _clean_phrases(triggers, MAX_TRIGGER_CHARS, "trigger")

    @field_validator("boost")
    @classmethod
    def _boost_are_keywords(cls, boost: list[str]) -> list[str]:
        return _clean_phrases(boost, MAX_BOOST_CHARS, "boost keyword")

    @field_validator("examples")
    @classmethod
    def _examples_are_a_few_short_requests(cls, examples: list[str]) -> list[str]:
        return _few_short_requests(examples, MAX_EXAMPLES, "example", "tool")

    @property
    def read_only_source(self) -> ReadOnlySource:
        """Who decides whether the tool only reads: the server's own annotation wins, then
        the router's review; with neither it is treated as mutating (fail-closed)."""
        if self.annotations is not None and self.annotations.readOnlyHint is not None:
            return "server"
        if self.router is not None:
            return "router-review"
        return "default-mutating"

    @property
    def read_only(self) -> bool:
        source = self.read_only_source
        if source == "server":
            return self.annotations is not None and self.annotations.readOnlyHint is True
        if source == "router-review":
            return self.router is not None and self.router.readOnly
        return False

    @property
    def arg_validator(self) -> str:
        """The draft key call arguments are checked under (schema_drafts), or 'unchecked'."""
        return self._arg_validator

    @property
    def warnings(self) -> list[str]:
        return list(self._warnings)

    def mcp_definition(self) -> dict[str, Any]:
        """The tool as the backend lists it (router fields removed)."""
        return self.model_dump(by_alias=True, exclude_none=True, exclude=set(ROUTER_FIELDS))


def _checked_schema(schema: dict[str, Any]) -> tuple[str, str | None]:
    """(the draft its arguments are checked under, None), else (UNCHECKED, what is wrong)."""
    if schema.get("type") != "object":
        return schema_drafts.UNCHECKED, 'must be a JSON Schema with "type": "object"'
    return schema_drafts.check(schema)


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


def _few_short_requests(requests: list[str], most: int, what: str, per: str) -> list[str]:
    """At most `most` distinct requests (examples, not-for requests), each short and not empty."""
    if len(requests) > most:
        raise ValueError(f"{len(requests)} {what}s; at most {most} per {per}")
    return _distinct(_clean_phrases(requests, MAX_EXAMPLE_CHARS, what), what)


def _distinct(phrases: list[str], what: str) -> list[str]:
    repeated = sorted({p for p in phrases if phrases.count(p) > 1})
    if repeated:
        raise ValueError(f"{what} {repeated[0][:20]!r}... is given twice")
    return phrases


class SeedHeader(BaseModel):
    """seeds/<server>.json without its tools: what a lenient read validates first."""

    model_config = ConfigDict(extra="forbid")

    server: str = Field(pattern=SERVER_NAME_PATTERN)
    profile: str = Field(pattern=PROFILE_NAME_PATTERN)
    # where the tool list came from: package, version, and how it was read
    source: str = Field(min_length=1)
    # prepended to each backend name to form the catalog name, for servers whose tool
    # names collide with another server's
    toolPrefix: str = Field(default="", pattern=r"^[A-Za-z0-9_.\-]{0,32}$")
    # requests, in everyday words, that look like a job of this server's tools but that none
    # of them does: the page offers none of its tools for a request closer to one of these
    # than to any of its tools' examples (router/catalog/fit_gate.py rule 8)
    not_for: list[str] = Field(default_factory=list)

    @field_validator("not_for")
    @classmethod
    def _not_for_are_short_requests(cls, not_for: list[str]) -> list[str]:
        return _few_short_requests(not_for, MAX_NOT_FOR, "not-for request", "server")


class SeedFile(SeedHeader):
    """seeds/<server>.json: one backend server and its tools."""

    tools: list[CatalogTool] = Field(min_length=1)


class UserCatalogLine(CatalogTool):
    """One line of a user's JSON Lines catalog: a tool, optionally with server and profile."""

    server: str | None = Field(default=None, pattern=SERVER_NAME_PATTERN)
    profile: str | None = Field(default=None, pattern=PROFILE_NAME_PATTERN)

    def mcp_definition(self) -> dict[str, Any]:
        """Without the line's server and profile: where a tool is filed is not part of what
        the backend lists (a rug-pull check compares the two)."""
        definition = super().mcp_definition()
        definition.pop("server", None)
        definition.pop("profile", None)
        return definition
