"""Catalog search: model-written text → a safe FTS5 query → ranked hits.

The query text is never handed to FTS5 as syntax: it is split into word tokens here and each
token is quoted, so quotes, '*', ':', NEAR, '-', parentheses and the like are only words.
"""

import re
from dataclasses import dataclass

import apsw

from router.db import query_dicts
from router.errors import QueryError
from router.metatools import MAX_LIMIT, MAX_QUERY_CHARS, MIN_LIMIT

# Only the first terms of a long query are used: more adds cost, not precision.
MAX_QUERY_TERMS = 32
_WORD = re.compile(r"\w+", re.UNICODE)

SEARCH_SQL = """
SELECT t.name, s.profile, t.summary, -bm25(tools_fts) AS score
FROM tools_fts
JOIN tools t ON t.id = tools_fts.rowid
JOIN servers s ON s.name = t.server
WHERE tools_fts MATCH :match AND (:profile IS NULL OR s.profile = :profile)
ORDER BY score DESC, t.name
LIMIT :limit
"""


@dataclass(frozen=True)
class SearchHit:
    name: str
    profile: str
    summary: str
    score: float


def query_terms(text: str) -> list[str]:
    """Distinct lower-case word tokens of the query, in order, at most MAX_QUERY_TERMS."""
    if not isinstance(text, str) or not text.strip():
        raise QueryError("query is empty: describe the task in a few words")
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(
            f"query is {len(text)} characters; at most {MAX_QUERY_CHARS} are accepted"
        )
    terms: list[str] = []
    for token in _WORD.findall(text.lower()):
        token = token.strip("_")
        if token and token not in terms:
            terms.append(token)
        if len(terms) == MAX_QUERY_TERMS:
            break
    if not terms:
        raise QueryError("query has no words to search for (only punctuation or symbols)")
    return terms


def fts_or_query(terms: list[str]) -> str:
    """Each term as an FTS5 string literal ("..." with quotes doubled), joined by OR."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def check_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not MIN_LIMIT <= limit <= MAX_LIMIT:
        raise QueryError(f"limit must be an integer from {MIN_LIMIT} to {MAX_LIMIT}, got {limit!r}")
    return limit


def search(
    conn: apsw.Connection, query: str, *, profile: str | None = None, limit: int = 10
) -> list[SearchHit]:
    terms = query_terms(query)
    rows = query_dicts(
        conn,
        SEARCH_SQL,
        {"match": fts_or_query(terms), "profile": profile, "limit": check_limit(limit)},
    )
    return [SearchHit(**row) for row in rows]
