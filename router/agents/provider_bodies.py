"""Ready request bodies for Anthropic's Messages API and OpenAI's Chat Completions API.

Both put the frozen prefix first and take the tools from the same RFC 8785 bytes layer 1
shows the model, so the tool definitions a provider caches are those bytes.
Anthropic caches tools + system up to each `cache_control` marker: one marker ends layer 1
and one ends layer 2, so a role switch still hits the cache up to the second. OpenAI
caches the longest common prefix automatically; `prompt_cache_key` (the frozen prefix's hash,
the same for every role) routes all roles to the same cache.
"""

from typing import Any

from router.agents.prefix import AssembledPrompt, canonical_tools

DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-5"
DEFAULT_OPENAI_MODEL = "gpt-4.1"
DEFAULT_USER_MESSAGE = "Begin: follow your task brief."
CACHE_CONTROL = {"type": "ephemeral"}


def anthropic_tools() -> list[dict[str, Any]]:
    return [
        {"name": t["name"], "description": t["description"], "input_schema": t["inputSchema"]}
        for t in canonical_tools()
    ]


def openai_tools() -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t["description"],
                "parameters": t["inputSchema"],
            },
        }
        for t in canonical_tools()
    ]


def anthropic_body(
    prompt: AssembledPrompt, *, model: str, user_message: str, max_tokens: int
) -> dict[str, Any]:
    layer1, layer2, layer3, layer4 = prompt.layers
    return {
        "model": model,
        "max_tokens": max_tokens,
        "tools": anthropic_tools(),
        "system": [
            {"type": "text", "text": layer1, "cache_control": dict(CACHE_CONTROL)},
            {"type": "text", "text": layer2, "cache_control": dict(CACHE_CONTROL)},
            {"type": "text", "text": layer3 + layer4},
        ],
        "messages": [{"role": "user", "content": user_message}],
    }


def openai_body(prompt: AssembledPrompt, *, model: str, user_message: str) -> dict[str, Any]:
    return {
        "model": model,
        "prompt_cache_key": prompt.as_json()["frozenPrefixHash"],
        "tools": openai_tools(),
        "messages": [
            {"role": "system", "content": prompt.system_prompt},
            {"role": "user", "content": user_message},
        ],
    }
