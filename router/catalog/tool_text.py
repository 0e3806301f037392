"""Searchable text derived from a tool definition: name words, argument text, summary."""

import re
from typing import Any

# A page of 10 search hits must stay under 400 tokens (cl100k): with names and profiles, 100
# characters of summary is what fits (tests/test_search_cli.py checks the worst page).
SUMMARY_MAX_CHARS = 100
# How deep into nested object schemas argument names are collected.
ARG_TEXT_MAX_DEPTH = 2

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NAME_SEPARATORS = re.compile(r"[_\-./:\s]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def split_identifier(identifier: str) -> list[str]:
    """'adb_install_apk' → adb install apk; 'listPullRequests' → list pull requests."""
    words: list[str] = []
    for part in _NAME_SEPARATORS.split(identifier):
        words.extend(w.lower() for w in _CAMEL_BOUNDARY.split(part) if w)
    return words


def name_words(name: str) -> str:
    return " ".join(split_identifier(name))


def arg_text(input_schema: dict[str, Any]) -> str:
    """Argument names (split into words) and their descriptions, nested objects included."""
    lines: list[str] = []
    _collect_args(input_schema, 0, lines)
    return "\n".join(lines)


def _collect_args(schema: Any, depth: int, lines: list[str]) -> None:
    if not isinstance(schema, dict) or depth > ARG_TEXT_MAX_DEPTH:
        return
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for arg_name, arg_schema in properties.items():
            description = arg_schema.get("description", "") if isinstance(arg_schema, dict) else ""
            lines.append(f"{' '.join(split_identifier(arg_name))} {description}".strip())
            _collect_args(arg_schema, depth + 1, lines)
    items = schema.get("items")
    if isinstance(items, dict):
        _collect_args(items, depth + 1, lines)


def first_sentence(description: str) -> str:
    """The first sentence of the first paragraph, whitespace folded."""
    first_paragraph = description.strip().split("\n\n", 1)[0]
    return _SENTENCE_END.split(" ".join(first_paragraph.split()), 1)[0]


def summary(description: str) -> str:
    """The first sentence (or line), whitespace folded, at most SUMMARY_MAX_CHARS."""
    text = first_sentence(description)
    if len(text) <= SUMMARY_MAX_CHARS:
        return text
    cut = text[: SUMMARY_MAX_CHARS - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"


def deprecated_summary(description: str, note: str) -> str:
    """The summary of a deprecated tool: its first sentence, led by `note` when that sentence
    does not say "deprecated" itself (the page must say it, and the cut must keep it)."""
    text = first_sentence(description)
    if "deprecated" not in text.lower():
        text = f"{note}: {text}" if text else note
    return summary(text)


def embedding_text(name_words: str, description: str) -> str:
    """What the semantic model embeds for a tool: its name in words, then what it does (the
    argument text would drown both in shared words such as path, id and limit)."""
    return f"{name_words}: {description}" if description else name_words
