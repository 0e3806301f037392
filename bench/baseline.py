"""The plain BM25 baseline: rank-bm25's BM25Okapi over each tool's name + description.

Deliberately plain, as most tool routers start: lower-cased word tokens, no stemming, no
splitting of identifiers, no argument text, triggers or boosts.
"""

import re

import numpy as np
from rank_bm25 import BM25Okapi

_WORD = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class Bm25Baseline:
    def __init__(self, tools: list[tuple[str, str]]):
        """tools: (name, description) pairs."""
        tools = sorted(tools)  # index order = name order, so a stable sort breaks ties by name
        self.names = [name for name, _ in tools]
        self.index = BM25Okapi([tokens(f"{name} {description}") for name, description in tools])

    def rank(self, query: str, k: int = 10) -> list[str]:
        scores = self.index.get_scores(tokens(query))
        best = np.argsort(-scores, kind="stable")[:k]
        # tools with no matching word are left out, as FTS5 leaves them out
        return [self.names[i] for i in best if scores[i] > 0]
