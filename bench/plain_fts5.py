"""The "plain, well-configured FTS5" baseline of issue 13: what a careful engineer gets from
SQLite alone, measured in the same run as the router on the same catalog and queries.

One FTS5 table (porter, unicode61, diacritics removed) over the tool's name split into words,
its description and its argument text, ranked by bm25() with weights 3 / 1 / 0.5; the query's
words, English stop words removed (the same `stop-words` list the router reads), all OR-ed.
No triggers, boosts, document-frequency rule, candidate bounds or exact-name rule.
"""

import re

import apsw

from router.catalog.query_words import stop_words
from router.catalog.tool_text import arg_text, name_words
from router.fts import fts_or_query

SCHEMA = """
CREATE VIRTUAL TABLE docs USING fts5(
    name, name_words, description, arg_text, tokenize='porter unicode61 remove_diacritics 2')
"""
SEARCH_SQL = """
SELECT name FROM docs WHERE docs MATCH :match ORDER BY bm25(docs, 0.0, 3.0, 1.0, 0.5), name LIMIT :k
"""
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


class PlainFts5:
    def __init__(self, tools: list[dict]):
        """tools: MCP tool objects (name, description, inputSchema)."""
        self.conn = apsw.Connection(":memory:")
        self.conn.execute(SCHEMA)
        with self.conn:
            self.conn.executemany(
                "INSERT INTO docs VALUES (?, ?, ?, ?)",
                [
                    (
                        t["name"],
                        name_words(t["name"]),
                        t.get("description") or "",
                        arg_text(t.get("inputSchema") or {}),
                    )
                    for t in tools
                ],
            )
        # the name column is only carried for the result (weight 0); it must not match
        self.stops = stop_words()

    def match_expression(self, query: str) -> str | None:
        """The query's words, stop words out, OR-ed over the text columns; None if none is left."""
        words = [w for w in dict.fromkeys(_WORD.findall(query.lower())) if w not in self.stops]
        if not words:
            return None
        return "{name_words description arg_text} : (" + fts_or_query(words) + ")"

    def rank(self, query: str, k: int = 10) -> list[str]:
        match = self.match_expression(query)
        if match is None:
            return []
        return [row[0] for row in self.conn.execute(SEARCH_SQL, {"match": match, "k": k})]
