"""The catalog's trigger phrases and boost keywords that a query contains.

A phrase is found whole and in order in the query (case and edge punctuation ignored): the
query's word n-grams, up to the catalog's longest phrase, are looked up among the phrases of
tool_phrases (schema.sql). A catalog with at most MAX_CACHED_PHRASE_ROWS rows there keeps
them in memory, each phrase with the tools that have it, until the catalog changes: the
lookup is then a dictionary probe per n-gram that starts with a phrase's first word, and the
candidates' trigger and boost parts set intersections, with no statement at all. A larger
catalog is looked up with one index seek per n-gram and kind, however many tools share a
phrase, and its candidates' parts with one statement.
"""

import json
import string
from collections.abc import Collection
from dataclasses import dataclass

import apsw

from router.catalog.match_plan import Condition
from router.db import PerConnection, catalog_version, scalar
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


def phrase_words(text: str) -> list[str]:
    """The text's words as tool_phrases holds them: lower case, edge punctuation stripped."""
    words = []
    for raw in text.split()[:MAX_PHRASE_SOURCE_WORDS]:
        word = raw.strip(_PHRASE_EDGE_PUNCTUATION).lower()
        if word:
            words.append(word)
    return words


def phrase_ngrams(text: str, max_words: int = MAX_PHRASE_WORDS) -> list[str]:
    """Every run of 1..max_words consecutive words, normalized like tool_phrases."""
    max_words = min(max_words, MAX_PHRASE_WORDS)
    if max_words < 1:
        return []
    words = phrase_words(text)
    grams = {
        " ".join(words[start : start + size])
        for start in range(len(words))
        for size in range(1, min(max_words, len(words) - start) + 1)
    }
    return sorted(grams)


def _starting_ngrams(words: list[str], longest_from: dict[str, int]) -> list[str]:
    """The runs of `words` that may be a phrase: those starting with a phrase's first word,
    up to the longest phrase starting with it (what phrase_ngrams gives, less what no phrase
    can be), sorted."""
    grams = set()
    for start, word in enumerate(words):
        longest = longest_from.get(word, 0)
        for size in range(1, min(longest, MAX_PHRASE_WORDS, len(words) - start) + 1):
            grams.add(" ".join(words[start : start + size]))
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
        # per phrase, its tools among the candidates: a set intersection walks the smaller
        # side, so a phrase thousands of tools share costs no more than the candidates
        candidates = set(tool_ids)
        triggers = set().union(*(candidates & tools for tools in self.tools.get("trigger", ())))
        boosts = set().union(*(candidates & tools for tools in self.tools.get("boost", ())))
        return {tool_id: (tool_id in triggers, tool_id in boosts) for tool_id in tool_ids}


class CatalogPhrases:
    """Per connection: the catalog's longest phrase and, when they fit, its phrases with their
    kinds and tools, read again when the catalog version changes."""

    def __init__(self, conn: apsw.Connection):
        self._conn = conn
        self._version: int | None = None
        self.longest = 0
        # phrase → kind → the tools that have it
        self.tools: dict[str, dict[str, frozenset[int]]] | None = None
        # with `tools`: a phrase's first word → the most words of a phrase starting with it,
        # so a query's runs that no phrase can be are never built
        self.longest_from: dict[str, int] = {}

    def refresh(self, version: int | None) -> None:
        """Reload when the catalog version (read here when None) changed since the last load."""
        version = catalog_version(self._conn) if version is None else version
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
        self.longest_from = {}
        for phrase in self.tools:
            first, *rest = phrase.split(" ")
            self.longest_from[first] = max(self.longest_from.get(first, 0), len(rest) + 1)


_catalog_phrases = PerConnection(CatalogPhrases)


def matched_phrases(conn: apsw.Connection, query: str, version: int | None) -> MatchedPhrases:
    """The catalog's phrases found whole in the query, at catalog version `version`."""
    catalog = _catalog_phrases(conn)
    catalog.refresh(version)
    found: list[tuple[str, str]] = []
    tools: dict[str, list[frozenset[int]]] | None = None
    if catalog.tools is not None:
        tools = {}
        for gram in _starting_ngrams(phrase_words(query), catalog.longest_from):
            for kind, ids in catalog.tools.get(gram, {}).items():
                found.append((gram, kind))
                tools.setdefault(kind, []).append(ids)
    else:
        grams = phrase_ngrams(query, catalog.longest)
        if grams:
            rows = conn.execute(MATCHED_PHRASES_SQL, {"ngrams": json.dumps(grams, ensure_ascii=False)})
            found = [(str(phrase), str(kind)) for phrase, kind in rows]
    if not found:
        return MatchedPhrases([], [])
    # A one-word phrase selects no row its word does not (the word is in the query too), so
    # only phrases of several words are conditions of their own.
    conditions = [
        Condition(f"{{{COLUMN[kind]}}} : {fts_string(phrase)}", frozenset(phrase.split()))
        for phrase, kind in found
        if " " in phrase
    ]
    return MatchedPhrases(sorted({phrase for phrase, _ in found}), conditions, tools)
