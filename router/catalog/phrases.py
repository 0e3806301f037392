"""The catalog's trigger phrases and boost keywords that a query contains.

A phrase is found whole and in order in the query (case and edge punctuation ignored): the
query's word n-grams, up to the catalog's longest phrase, are looked up among the phrases of
tool_phrases (schema.sql). A catalog with at most MAX_CACHED_PHRASE_ROWS rows there keeps
them in memory, each phrase with the tools that have it, until the catalog changes: the
lookup is then a dictionary probe per n-gram, and a candidate's trigger and boost parts a set
membership, with no statement at all. A larger catalog is looked up with one index seek per
n-gram and kind, however many tools share a phrase, and its candidates' parts with one
statement (router/catalog/hit_rows.py).
"""

import json
import string
from collections.abc import Collection
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
# tool_phrases rows kept in memory per connection (≈50 bytes each, 25 MB at most): the seeds
# have 1,211, bench/synthetic.py's 100,000-tool catalog 200,000; a larger one is looked up in SQL.
MAX_CACHED_PHRASE_ROWS = 500_000

# Each phrase of the catalog with its kind and tool; at most :limit rows.
PHRASE_TOOLS_SQL = """
SELECT phrase, kind, tool_id FROM tool_phrases LIMIT :limit
"""
MATCHED_PHRASES_SQL = """
SELECT g.value, k.kind
FROM json_each(:ngrams) g
JOIN (SELECT 'trigger' AS kind UNION ALL SELECT 'boost') k
WHERE EXISTS (SELECT 1 FROM tool_phrases t WHERE t.phrase = g.value AND t.kind = k.kind)
"""
# The trigger and boost phrases of the query each candidate has (a catalog too large to keep
# its phrases in memory).
CANDIDATE_PHRASE_KINDS_SQL = """
SELECT tool_id, max(kind = 'trigger'), max(kind = 'boost') FROM tool_phrases
WHERE phrase IN (SELECT value FROM json_each(:phrases))
  AND tool_id IN (SELECT value FROM json_each(:ids))
GROUP BY tool_id
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
    # kind → the tools of each phrase found of that kind, when the catalog's phrases are in
    # memory; None: look the candidates up in tool_phrases
    tools: dict[str, list[frozenset[int]]] | None = None

    def parts(self, conn: apsw.Connection, tool_ids: Collection[int]) -> dict[int, tuple[bool, bool]]:
        """Tool id → (has a trigger phrase of the query, has a boost keyword of it), for these
        tools: set lookups when the catalog's phrases are in memory, else one statement."""
        if not self.texts or not tool_ids:
            return {}
        if self.tools is None:
            found = conn.execute(
                CANDIDATE_PHRASE_KINDS_SQL,
                {"phrases": json.dumps(self.texts, ensure_ascii=False), "ids": json.dumps(list(tool_ids))},
            )
            return {int(tool_id): (bool(trigger), bool(boost)) for tool_id, trigger, boost in found}
        triggers, boosts = self.tools.get("trigger", ()), self.tools.get("boost", ())
        return {
            tool_id: (any(tool_id in tools for tools in triggers), any(tool_id in tools for tools in boosts))
            for tool_id in tool_ids
        }


class CatalogPhrases:
    """Per connection: the catalog's longest phrase and, when they fit, its phrases with their
    kinds and tools, read again when the catalog version changes."""

    def __init__(self, conn: apsw.Connection):
        self._conn = conn
        self._version: int | None = None
        self.longest = 0
        # phrase → kind → the tools that have it
        self.tools: dict[str, dict[str, frozenset[int]]] | None = None

    def refresh(self, version: int | None) -> None:
        if version == self._version:
            return
        self._version = version
        self.longest = scalar(self._conn, LONGEST_PHRASE_SQL)
        rows = self._conn.execute(PHRASE_TOOLS_SQL, {"limit": MAX_CACHED_PHRASE_ROWS + 1}).fetchall()
        if len(rows) > MAX_CACHED_PHRASE_ROWS:
            self.tools = None
            return
        tools: dict[str, dict[str, set[int]]] = {}
        for phrase, kind, tool_id in rows:
            tools.setdefault(str(phrase), {}).setdefault(str(kind), set()).add(int(tool_id))  # type: ignore[arg-type]
        self.tools = {
            phrase: {kind: frozenset(ids) for kind, ids in kinds.items()} for phrase, kinds in tools.items()
        }


_catalog_phrases = PerConnection(CatalogPhrases)


def matched_phrases(conn: apsw.Connection, query: str, version: int | None) -> MatchedPhrases:
    """The catalog's phrases found whole in the query, at catalog version `version`."""
    catalog = _catalog_phrases(conn)
    catalog.refresh(version)
    grams = phrase_ngrams(query, catalog.longest)
    if not grams:
        return MatchedPhrases([], [])
    found: list[tuple[str, str]]
    tools: dict[str, list[frozenset[int]]] | None = None
    if catalog.tools is not None:
        found, tools = [], {}
        for gram in grams:
            for kind, ids in catalog.tools.get(gram, {}).items():
                found.append((gram, kind))
                tools.setdefault(kind, []).append(ids)
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
    return MatchedPhrases(sorted({phrase for phrase, _ in found}), conditions, tools)
