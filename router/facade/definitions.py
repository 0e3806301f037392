"""The three meta-tools' definitions: the only tools a client ever sees.

These bytes must never change with role, profile, catalog or backend state (the provider's
prompt cache depends on it), so they are built once from pydantic argument models and frozen.
"""

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from router.catalog.search import DEFAULT_LIMIT

SEARCH_TOOLS = "mcp_search_tools"
INSPECT_SCHEMA = "mcp_inspect_schema"
CALL_TOOL = "mcp_call_tool"


# Arguments are taken as JSON gives them: `limit: true` or `"5"` is refused, not coerced.
# Strictness is a validation setting only: the published inputSchema bytes do not change.
STRICT = ConfigDict(extra="forbid", strict=True)


class SearchToolsArgs(BaseModel):
    model_config = STRICT

    query: str = Field(description="What you want to do, in plain words.")
    profile: str | SkipJsonSchema[None] = Field(
        default=None, description="Only this profile: core, appsec, android, game, research."
    )
    limit: int = Field(default=DEFAULT_LIMIT, description="Hits to return, 1-50.")


class InspectSchemaArgs(BaseModel):
    model_config = STRICT

    toolName: str = Field(description="A name from mcp_search_tools.")


class CallToolArgs(BaseModel):
    model_config = STRICT

    toolName: str = Field(description="A name from mcp_search_tools.")
    args: dict[str, Any] = Field(
        default_factory=dict, description="Arguments matching the tool's inputSchema."
    )


@dataclass(frozen=True)
class MetaTool:
    name: str
    description: str
    args_model: type[BaseModel]
    read_only: bool

    def definition(self) -> dict[str, Any]:
        """The MCP tool object: name, description, inputSchema, annotations."""
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": _compact_schema(self.args_model.model_json_schema()),
            # readOnlyHint alone: MCP's defaults (destructive, open-world) already describe
            # mcp_call_tool honestly, and every extra key costs tokens in every prompt.
            "annotations": {"readOnlyHint": self.read_only},
        }


# Keys pydantic generates that cost tokens in every prompt and tell a model nothing:
# titles, a null default, and additionalProperties (the server refuses unknown arguments anyway).
_NOISE_KEYS = frozenset({"title", "additionalProperties"})


def _compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    schema = {k: v for k, v in schema.items() if k not in _NOISE_KEYS}
    schema["properties"] = {
        name: {k: v for k, v in prop.items() if k not in _NOISE_KEYS and not (k == "default" and v is None)}
        for name, prop in schema.get("properties", {}).items()
    }
    return schema


META_TOOLS: tuple[MetaTool, ...] = (
    MetaTool(
        SEARCH_TOOLS,
        "Step 1. Find callable backend tools for a task, best first (name, profile, summary, "
        "call signature); unavailable: better matches not callable here, and why.",
        SearchToolsArgs,
        read_only=True,
    ),
    MetaTool(
        INSPECT_SCHEMA,
        "Step 2, when unsure: one tool's full inputSchema.",
        InspectSchemaArgs,
        read_only=True,
    ),
    MetaTool(
        CALL_TOOL,
        "Step 3. Call a backend tool with args matching its inputSchema; returns its result.",
        CallToolArgs,
        read_only=False,
    ),
)


def meta_tool_definitions() -> list[dict[str, Any]]:
    """The three definitions, sorted by name."""
    return sorted((tool.definition() for tool in META_TOOLS), key=lambda d: d["name"])
