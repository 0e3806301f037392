"""Catalog search: model-written text → a safe FTS5 query → ranked hits.

score = 3.0 × trigger match + 1.0 × BM25 + 2.0 × boost match, computed by one SQL statement
(SEARCH_SQL) over v_search, tools_fts and tool_phrases (all in schema.sql).

The query text is never handed to FTS5 as syntax: it is split into words here and each word
is quoted, so quotes, '*', ':', NEAR, '-', parentheses and the like are only words.

Speed: FTS5 scores every row a MATCH selects (≈0.5-1 µs a row on this machine), so on large
catalogs the match set, not the catalog, sets the cost. Each query word's document count is
looked up first (cached until the catalog changes). Words in half the catalog or more are
left out (BM25 gives them no weight); when the rest would still select more than
MAX_MATCHED_ROWS rows, only the rarest words that fit are kept, and if even the rarest word
is that common the words are ANDed. Catalogs of a few thousand tools with agent-length
queries rarely reach the budget.
"""

import json
import re
import string
from dataclasses import asdict, dataclass

import apsw

from router.clock import unix_now
from router.db import PerConnection, catalog_version, scalar
from router.errors import QueryError

# the breaker owns its window; search only reads the rows it writes
from router.facade.breaker import OPEN_SECONDS as BREAKER_OPEN_SECONDS
from router.fts import fts_or_query, fts_string

# What a query may be: the meta-tool's own limits (router/facade/definitions.py shows them).
MAX_QUERY_CHARS = 16_384
MIN_LIMIT, MAX_LIMIT, DEFAULT_LIMIT = 1, 50, 10

# The score's weights. A trigger phrase is a hand-written promise that the tool is what such
# a query wants, so it outweighs any lexical evidence; a boost keyword is weaker (a single
# word, often shared by neighbours); BM25 orders everything else. Typical BM25 parts here are
# 2-15, so one trigger lifts a tool past near-misses without burying strong name matches.
TRIGGER_WEIGHT = 3.0
BM25_WEIGHT = 1.0
BOOST_WEIGHT = 2.0

# BM25 column weights, in tools_fts column order. A word of the tool's name is the strongest
# lexical evidence (names are short and chosen with care); the description is the baseline;
# argument text is long and shared by many tools (path, id, limit), so it counts half; trigger
# and boost words count like description words here, and their exact-phrase matches add the
# separate trigger and boost parts. Tuned on the BFCL set and the seeded set (bench/).
NAME_WORDS_WEIGHT = 3.0
DESCRIPTION_WEIGHT = 1.0
ARG_TEXT_WEIGHT = 0.5
TRIGGERS_WEIGHT = 1.0
BOOST_WORDS_WEIGHT = 1.0

# A long query (a pasted paragraph) is read up to MAX_QUERY_WORDS distinct words, and the
# MAX_QUERY_TERMS rarest of those found in the catalog are matched: rare words carry the
# weight, and more phrases add cost, not precision.
MAX_QUERY_WORDS = 128
MAX_QUERY_TERMS = 32
# Trigger phrases and boost keywords are found by looking up the query's word n-grams up to
# this length (a trigger is at most 80 characters: in practice 1-6 words).
MAX_PHRASE_WORDS = 8
MAX_PHRASE_SOURCE_WORDS = 64
# The most rows one query may make FTS5 score (≈0.3-0.6 ms); see the module docstring. 600
# keeps BFCL's long questions (1,437 tools) nearly unpruned: 300 cost 0.02 nDCG@10 there.
MAX_MATCHED_ROWS = 600
# Rows carried from the FTS5 ranking into the final ordering beyond `limit`, so that ties at
# the cut are broken by name over the whole tie, not by rowid.
CANDIDATE_MARGIN = 10

_WORD = re.compile(r"\w+", re.UNICODE)
# What tool_phrases strips from a phrase's ends (schema.sql, v_tool_phrase_source).
_PHRASE_EDGE_PUNCTUATION = string.punctuation + "‘’“”–—…"

SEARCH_SQL = """
SELECT v.name, v.profile, v.summary,
       p.trigger_part + p.bm25_part + p.boost_part AS score,
       NOT (coalesce(v.breaker_state = 'open', 0)
            AND coalesce(v.breaker_opened_at + :breaker_open_seconds > :now, 0)) AS available,
       p.trigger_part, p.bm25_part, p.boost_part
FROM (
    -- one row per candidate with its score parts
    SELECT id,
           :trigger_weight * max(trigger_match) AS trigger_part,
           -- a phrase hit outside the FTS5 top rows gets its own BM25 (a rowid seek)
           :bm25_weight * coalesce(
               max(bm25),
               (SELECT -bm25(tools_fts, :w_name, :w_description, :w_args, :w_triggers, :w_boost)
                FROM tools_fts WHERE tools_fts MATCH :match AND rowid = id),
               0.0) AS bm25_part,
           :boost_weight * max(boost_match) AS boost_part
    FROM (
        -- candidates: the FTS5 top rows the caller may see...
        SELECT * FROM (
            SELECT rowid AS id,
                   -bm25(tools_fts, :w_name, :w_description, :w_args, :w_triggers, :w_boost) AS bm25,
                   0 AS trigger_match, 0 AS boost_match
            FROM tools_fts
            WHERE tools_fts MATCH :match
              AND (:unfiltered OR EXISTS (
                    SELECT 1 FROM v_search f WHERE f.id = tools_fts.rowid
                    AND (:profile IS NULL OR f.profile = :profile)
                    AND (:may_call_mutating OR f.mutating = 0)))
            ORDER BY bm25 DESC
            LIMIT :candidates)
        UNION ALL
        -- ...and every tool with a trigger phrase or boost keyword in the query
        SELECT tool_id, NULL, kind = 'trigger', kind = 'boost'
        FROM tool_phrases
        WHERE phrase IN (SELECT value FROM json_each(:ngrams))
    )
    GROUP BY id
) p
CROSS JOIN v_search v ON v.id = p.id
WHERE (:profile IS NULL OR v.profile = :profile)
  AND (:may_call_mutating OR v.mutating = 0)
ORDER BY score DESC, v.name
LIMIT :limit
"""

COUNT_TOOLS_SQL = "SELECT count(*) FROM tools"

# Words in the catalog's longest trigger phrase or boost keyword: no longer n-gram can match
# (0 for a catalog without any, which then skips the lookup's n-grams altogether).
LONGEST_PHRASE_SQL = """
SELECT coalesce(max(length(phrase) - length(replace(phrase, ' ', '')) + 1), 0) FROM tool_phrases
"""

TERM_DOCS_SQL = """
SELECT term, doc FROM tools_fts_terms WHERE term IN (SELECT value FROM json_each(:terms))
"""


@dataclass(frozen=True)
class Explain:
    """The parts of a hit's score; they add up to the score."""

    trigger: float
    bm25: float
    boost: float


@dataclass(frozen=True)
class SearchHit:
    name: str
    profile: str
    summary: str
    score: float
    available: bool = True
    explain: Explain | None = None

    def to_dict(self) -> dict:
        """JSON-ready; `explain` only when it was asked for."""
        out = asdict(self)
        if self.explain is None:
            del out["explain"]
        return out


@dataclass(frozen=True)
class Term:
    word: str  # as the query spells it (lower-cased): what the MATCH quotes
    stem: str  # as FTS5 indexes it: what the document count is looked up by


def check_query(text: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise QueryError("query is empty: describe the task in a few words")
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"query is {len(text)} characters; at most {MAX_QUERY_CHARS} are accepted")
    return text


def query_terms(text: str) -> list[str]:
    """Distinct lower-case word tokens of the query, in order, at most MAX_QUERY_WORDS."""
    terms: list[str] = []
    for token in _WORD.findall(check_query(text).lower()):
        token = token.strip("_")
        if token and token not in terms:
            terms.append(token)
        if len(terms) == MAX_QUERY_WORDS:
            break
    if not terms:
        raise QueryError("query has no words to search for (only punctuation or symbols)")
    return terms


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


def check_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not MIN_LIMIT <= limit <= MAX_LIMIT:
        raise QueryError(f"limit must be an integer from {MIN_LIMIT} to {MAX_LIMIT}, got {limit!r}")
    return limit


class _TermStats:
    """Rows in the catalog and documents per indexed term, cached per connection until the
    database changes."""

    def __init__(self, conn: apsw.Connection):
        self._conn = conn
        self._stemmer = conn.fts5_tokenizer("porter", ["unicode61", "remove_diacritics", "2"])
        self._version: int | None = None
        self._docs: dict[str, int] = {}
        self.rows = 0
        self.longest_phrase = 0

    def stem(self, word: str) -> str:
        tokens = self._stemmer(
            word.encode("utf-8"),
            apsw.FTS5_TOKENIZE_QUERY,
            None,
            include_offsets=False,
            include_colocated=False,
        )
        # a word unicode61 splits further ('l'été') is one FTS5 phrase; its rarest part
        # bounds the rows it matches, and the first part is as good a key as any
        first = next(iter(tokens), None)
        return first if isinstance(first, str) else word

    def refresh(self) -> None:
        version = catalog_version(self._conn)
        if version != self._version:
            self._version, self._docs = version, {}
            self.rows = scalar(self._conn, COUNT_TOOLS_SQL)
            self.longest_phrase = scalar(self._conn, LONGEST_PHRASE_SQL)

    def docs(self, stems: list[str]) -> dict[str, int]:
        self.refresh()
        missing = [s for s in stems if s not in self._docs]
        if missing:
            found = dict(self._conn.execute(TERM_DOCS_SQL, {"terms": json.dumps(missing)}))
            for stem in missing:
                self._docs[stem] = found.get(stem, 0)
        return {s: self._docs[s] for s in stems}


_term_stats = PerConnection(_TermStats)


def match_expression(conn: apsw.Connection, words: list[str]) -> str:
    """The FTS5 MATCH for these words, within the MAX_MATCHED_ROWS budget."""
    stats = _term_stats(conn)
    terms = [Term(word, stats.stem(word)) for word in words]
    docs = stats.docs(sorted({t.stem for t in terms}))
    # Words in at least half the rows ('the', 'for', 'file' in a file catalog) have no weight
    # in FTS5's BM25 (their IDF is clamped to 1e-6): matching them only adds rows to score
    # and phrases to look up, and leaves the order of the other hits as it was. They are
    # kept when nothing else in the query is in the catalog, so such a query still finds them.
    weighty = [t for t in terms if 2 * docs[t.stem] < stats.rows]
    if not any(docs[t.stem] for t in weighty):
        weighty = terms
    if len(weighty) > MAX_QUERY_TERMS:
        rarest = sorted((t for t in weighty if docs[t.stem]), key=lambda t: (docs[t.stem], t.word))
        keep = set(rarest[:MAX_QUERY_TERMS]) or set(weighty[:MAX_QUERY_TERMS])
        weighty = [t for t in weighty if t in keep]
    if sum(docs[t.stem] for t in weighty) <= MAX_MATCHED_ROWS:
        return fts_or_query([t.word for t in weighty])
    # Still over: keep the rarest words that fit the budget (the most weight per row).
    kept, budget = [], MAX_MATCHED_ROWS
    for term in sorted(weighty, key=lambda t: (docs[t.stem], t.word)):
        if docs[term.stem] > budget:
            break
        kept.append(term)
        budget -= docs[term.stem]
    if kept:  # keep the query's own word order: the expression reads naturally in --explain
        return fts_or_query([t.word for t in weighty if t in kept])
    return " AND ".join(fts_string(t.word) for t in weighty)


def search(
    conn: apsw.Connection,
    query: str,
    *,
    profile: str | None = None,
    limit: int = 10,
    may_call_mutating: bool = True,
    now: float | None = None,
    explain: bool = False,
) -> list[SearchHit]:
    """The best `limit` tools for `query`, best first (ties by name).

    may_call_mutating=False hides tools that mutate state (the caller's role may not call
    them); a tool whose breaker opened less than BREAKER_OPEN_SECONDS before `now` (unix
    seconds, default: the clock) is returned with available=False.
    """
    words = query_terms(query)
    limit = check_limit(limit)
    rows = conn.execute(
        SEARCH_SQL,
        {
            "match": match_expression(conn, words),
            "ngrams": json.dumps(phrase_ngrams(query, _term_stats(conn).longest_phrase), ensure_ascii=False),
            "profile": profile,
            "may_call_mutating": bool(may_call_mutating),
            "unfiltered": profile is None and bool(may_call_mutating),
            "now": unix_now() if now is None else float(now),
            "breaker_open_seconds": BREAKER_OPEN_SECONDS,
            "trigger_weight": TRIGGER_WEIGHT,
            "bm25_weight": BM25_WEIGHT,
            "boost_weight": BOOST_WEIGHT,
            "w_name": NAME_WORDS_WEIGHT,
            "w_description": DESCRIPTION_WEIGHT,
            "w_args": ARG_TEXT_WEIGHT,
            "w_triggers": TRIGGERS_WEIGHT,
            "w_boost": BOOST_WORDS_WEIGHT,
            "candidates": limit + CANDIDATE_MARGIN,
            "limit": limit,
        },
    )
    return [
        SearchHit(
            name,
            hit_profile,
            summary,
            score,
            bool(available),
            Explain(trigger_part, bm25_part, boost_part) if explain else None,
        )
        for name, hit_profile, summary, score, available, trigger_part, bm25_part, boost_part in rows
    ]
