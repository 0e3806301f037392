"""Whether a tool says it is deprecated, and which tool of its server it names instead.

Servers keep old tools listed for old clients and say so in the text a model reads
(filesystem's read_file: "DEPRECATED: Use read_text_file instead."), so the router reads it
there too: a deprecated tool ranks below its replacement (router/catalog/search.py), and its
summary keeps the word (tool_text.summary cuts at the first sentence, which may not hold it).

Only the tool deprecating itself counts: an argument described as deprecated ("`limit` is
deprecated, use `max`") says nothing about the tool, so the lower-case word anywhere is not
enough; the word in capitals, at the start, in parentheses, in the title, or in "this tool is
deprecated" is.
"""

import re
from collections.abc import Collection

# Each a way a tool's own text says the tool itself is deprecated.
_DEPRECATED_IN_DESCRIPTION = (
    re.compile(r"\bDEPRECATED\b"),
    re.compile(r"^\W*deprecated\b", re.IGNORECASE),
    re.compile(r"\(deprecated\b", re.IGNORECASE),
    re.compile(
        r"\bthis (?:tool|function|endpoint|method|api|command|operation) is (?:now )?deprecated\b",
        re.IGNORECASE,
    ),
)
_DEPRECATED_IN_TITLE = re.compile(r"\bdeprecated\b", re.IGNORECASE)
# "Use read_text_file instead", "use `x` instead", "replaced by x", "superseded by x"
_REPLACEMENT = re.compile(
    r"\buse\s+[`'\"]?([A-Za-z0-9_.\-]+)[`'\"]?(?:\(\))?\s+instead\b"
    r"|\b(?:replaced|superseded)\s+by\s+[`'\"]?([A-Za-z0-9_.\-]+)",
    re.IGNORECASE,
)


def is_deprecated(description: str, title: str | None = None) -> bool:
    if title and _DEPRECATED_IN_TITLE.search(title):
        return True
    return any(pattern.search(description) for pattern in _DEPRECATED_IN_DESCRIPTION)


def named_replacement(description: str, own_name: str, server_tools: Collection[str]) -> str | None:
    """The backend name of the tool of the same server the description names instead of this
    one (None when it names none of them)."""
    for match in _REPLACEMENT.finditer(description):
        name = (match.group(1) or match.group(2)).rstrip(".")
        if name != own_name and name in server_tools:
            return name
    return None


def deprecation_note(replaced_by: str | None) -> str:
    """What a deprecated tool's summary starts with when its first sentence does not say it."""
    return f"DEPRECATED (use {replaced_by})" if replaced_by else "DEPRECATED"
