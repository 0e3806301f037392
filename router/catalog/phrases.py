"""The catalog's trigger phrases and boost keywords that a query contains.

A phrase is found whole and in order in the query (case and edge punctuation ignored): the
query's word n-grams, up to the catalog's longest phrase, are looked up among the phrases of
tool_phrases (schema.sql). A catalog with at most MAX_CACHED_PHRASES distinct phrases keeps
them in memory, each with how many tools have it (capped), until the catalog changes: the
lookup is then a dictionary probe per n-gram, with no statement at all. A larger catalog is
looked up with one index seek per n-gram and kind, however many tools share a phrase.
"""

import json
import string
from dataclasses import dataclass

import apsw

from router.catalog.match_plan import Condition
from router.db import PerConnection, scalar
from router.fts import fts_string

# Trigger phrases and boost keywords are found by looking up the query's word n-grams up to
# this length (a trigger is at most 80 characters: in practice 1-6 words).
MAX_PHRASE_WORDS = 8
MAX_PHRASE_SOURCE_WORDS = 64
_PHRASE_EDGE_PUNCTUATION = string.punctuation + "‘’“”–—…"
# Distinct (phrase, kind) pairs kept in memory per connection (≈100 bytes each): every
# hand-written seed catalog and most real ones fit; a registry-sized catalog is looked up in SQL.
MAX_CACHED_PHRASES = 100_000

# Each (phrase, kind) of the catalog; at most :limit rows.
PHRASE_KINDS_SQL = """
SELECT DISTINCT phrase, kind FROM tool_phrases LIMIT :limit
"""
MATCHED_PHRASES_SQL = """
SELECT g.value, k.kind
FROM json_each(:ngrams) g
JOIN (SELECT 'trigger' AS kind UNION ALL SELECT 'boost') k
WHERE EXISTS (SELECT 1 FROM tool_phrases t WHERE t.phrase = g.value AND t.kind = k.kind)
"""
LONGEST_PHRASE_SQL = """
SELECT coalesce(max(length(phrase) - length(replace(phrase, ' ', '')) + 1), 0) FROM tool_phrases
"""
COLUMN = {"trigger": "triggers", "boost": "boost"}


def phrase_ngrams(text: str, max_words: int = MAX_PHRASE_WORDS) -> list[str]:
    """Every run of 1..max_words consecutive words, normalized like tool_phrases."""
    max_words = min(max_words, MAX_PHRASE_WORDS)
    if max_words < 1:
        return []
    words = []
    for raw in text.split()[:MAX_PHRASE_SOURCE_WORDS]:
        word = raw.strip(_PHRASE_EDGE_PUNCTUATION).lower()
        if word:
            words.append(word)
    grams = {
        " ".join(words[start : start + size])
        for start in range(len(words))
        for size in range(1, min(max_words, len(words) - start) + 1)
    }
    return sorted(grams)


@dataclass(frozen=True)
class MatchedPhrases:
    texts: list[str]  # every phrase found, for the per-candidate trigger/boost parts
    conditions: list[Condition]  # the multi-word ones, as candidate conditions on their column


class CatalogPhrases:
    """Per connection: the catalog's longest phrase and, when they fit, its phrases with their
    kinds, read again when the catalog version changes."""

    def __init__(self, conn: apsw.Connection):
        self._conn = conn
        self._version: int | None = None
        self.longest = 0
        self.kinds: dict[str, list[str]] | None = None

    def refresh(self, version: int | None) -> None:
        if version == self._version:
            return
        self._version = version
        self.longest = scalar(self._conn, LONGEST_PHRASE_SQL)
        rows = self._conn.execute(PHRASE_KINDS_SQL, {"limit": MAX_CACHED_PHRASES + 1}).fetchall()
        if len(rows) > MAX_CACHED_PHRASES:
            self.kinds = None
            return
        kinds: dict[str, list[str]] = {}
        for phrase, kind in rows:
            kinds.setdefault(str(phrase), []).append(str(kind))
        self.kinds = kinds


_catalog_phrases = PerConnection(CatalogPhrases)


def matched_phrases(conn: apsw.Connection, query: str, version: int | None) -> MatchedPhrases:
    """The catalog's phrases found whole in the query, at catalog version `version`."""
    catalog = _catalog_phrases(conn)
    catalog.refresh(version)
    grams = phrase_ngrams(query, catalog.longest)
    if not grams:
        return MatchedPhrases([], [])
    found: list[tuple[str, str]]
    if catalog.kinds is not None:
        found = [(gram, kind) for gram in grams for kind in catalog.kinds.get(gram, ())]
    else:
        rows = conn.execute(MATCHED_PHRASES_SQL, {"ngrams": json.dumps(grams, ensure_ascii=False)})
        found = [(str(phrase), str(kind)) for phrase, kind in rows]
    # A one-word phrase selects no row its word does not (the word is in the query too), so
    # only phrases of several words are conditions of their own.
    conditions = [
        Condition(f"{{{COLUMN[kind]}}} : {fts_string(phrase)}", frozenset(phrase.split()))
        for phrase, kind in found
        if " " in phrase
    ]
    return MatchedPhrases(sorted({phrase for phrase, _ in found}), conditions)
