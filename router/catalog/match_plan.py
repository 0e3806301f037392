"""Which of a query's words make a tool a candidate and which are scored, with their IDFs.

- Selectors: the query's words that are not stop words, in fewer than half the rows (a word
  in half the rows or more has no BM25 weight: it would only add candidates). A query made
  only of stop words is matched on them; one with other words never is, even when none of
  those is in the catalog ("find me a place to eat tonight" in a catalog without
  restaurants: no hits).
- Scored: the selectors and the query's stop words (at STOP_WORD_IDF_FACTOR of their IDF),
  at most MAX_SCORED_WORDS, the rarest.
- A trigger or boost phrase the query holds selects the rows that have it (its own
  candidates) when none of its words is a selector: one of stop words only.

Every candidate is ranked (router/catalog/lexical_index.py scores them in memory), so no
restriction of common words is needed however large the catalog.
"""

import json
import math
from dataclasses import dataclass

import apsw

from router.catalog.query_words import Word
from router.db import PerConnection, catalog_size, catalog_version

# Words scored per query: a pasted paragraph keeps its highest-IDF words.
MAX_SCORED_WORDS = 32
# A stop word that is scored (never a selector when the query has other words) counts at
# half its IDF: the library's list holds conversational words (me, please, can) that only add
# noise, and tool verbs (open, show, find) that still say what the tool does. Chosen on the
# tuning sets (seeded, BFCL), where 0.5 and 1.0 tie; the held-out sets were not consulted.
STOP_WORD_IDF_FACTOR = 0.5
# FTS5's floor for the IDF of a word in half the rows or more
MIN_IDF = 1e-6

TERM_DOCS_SQL = """
SELECT term, doc FROM tools_fts_terms WHERE term IN (SELECT value FROM json_each(:terms))
"""


@dataclass(frozen=True)
class Condition:
    """A matched trigger or boost phrase as a way a row can become a candidate."""

    expression: str  # FTS5 syntax, built from quoted strings only
    # the phrase's words (lower case)
    words: frozenset[str] = frozenset()


@dataclass(frozen=True)
class MatchPlan:
    selectors: tuple[Word, ...]
    scored: tuple[Word, ...]
    idfs: tuple[float, ...]  # of the scored words, in order
    # the phrases that select rows of their own (FTS5 expressions)
    phrase_conditions: tuple[str, ...] = ()


class TermStats:
    """Rows in the catalog and documents per indexed term, cached per connection until the
    catalog changes."""

    def __init__(self, conn: apsw.Connection):
        self._conn = conn
        self.version: int | None = None
        self._docs: dict[str, int] = {}
        self.rows = 0

    def refresh(self) -> int:
        """Drop what the catalog's last change made stale; the catalog version."""
        version = catalog_version(self._conn)
        if version != self.version:
            self.version, self._docs = version, {}
            self.rows = catalog_size(self._conn)
        return version

    def docs(self, stems: list[str]) -> dict[str, int]:
        """Documents per stem, as of the last refresh."""
        missing = [s for s in stems if s not in self._docs]
        if missing:
            found = dict(self._conn.execute(TERM_DOCS_SQL, {"terms": json.dumps(missing)}))
            for stem in missing:
                self._docs[stem] = found.get(stem, 0)
        return {s: self._docs[s] for s in stems}


term_stats = PerConnection(TermStats)


def idf(rows: int, docs: int) -> float:
    """FTS5's IDF for a word found in `docs` of `rows` rows (fts5_aux.c, fts5Bm25Function)."""
    value = math.log((rows - docs + 0.5) / (docs + 0.5)) if rows else 0.0
    return value if value > 0.0 else MIN_IDF


def plan(
    conn: apsw.Connection, words: list[Word], phrases: list[Condition], *, refreshed: bool = False
) -> MatchPlan:
    """The plan for these words and matched phrases; `refreshed`: the caller has just
    refreshed the term statistics (search does, once per query)."""
    stats = term_stats(conn)
    if not refreshed:
        stats.refresh()
    docs = stats.docs(sorted({w.stem for w in words}))
    rows = stats.rows
    present = [w for w in words if docs[w.stem]]
    # Words in at least half the rows have no BM25 weight: they only add rows to score.
    weighty = [w for w in present if 2 * docs[w.stem] < rows] or present
    if any(not w.stop for w in words):
        selectors = [w for w in weighty if not w.stop] or [w for w in present if not w.stop]
    else:
        selectors = weighty
    scored = _rarest(list(dict.fromkeys(weighty + selectors)), docs, MAX_SCORED_WORDS)
    selectors = [w for w in selectors if w in scored]
    if not selectors:  # nothing that may select a row
        return MatchPlan((), (), ())
    idfs = tuple(
        idf(rows, docs[w.stem]) * (STOP_WORD_IDF_FACTOR if w not in selectors else 1.0) for w in scored
    )
    # a phrase holding a selector selects no row that selector does not
    selector_texts = {w.text for w in selectors}
    own = tuple(c.expression for c in phrases if not c.words & selector_texts)
    return MatchPlan(tuple(selectors), tuple(scored), idfs, own)


def _rarest(words: list[Word], docs: dict[str, int], keep: int) -> list[Word]:
    """At most `keep` words, the highest-IDF ones, in the query's order."""
    if len(words) <= keep:
        return words
    kept = set(sorted(words, key=lambda w: (docs[w.stem], w.text))[:keep])
    return [w for w in words if w in kept]
