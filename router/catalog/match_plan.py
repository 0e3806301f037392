"""Which rows a query's MATCH selects and which of its words are scored, so that the work per
query is bounded however large the catalog and however common its words.

FTS5 scores every row a MATCH selects, so the rows selected set the cost. Three cases:

- Few rows, nothing but selectors to score: the selector words OR-ed, ranked by FTS5's own
  bm25() (C, ≈0.3 µs a row): `builtin_share` 1.0.
- Few rows in a catalog of at most MAX_FULLY_RANKED_TOOLS, stop words or phrases in the
  query: `(S) AND (w1 OR w2 ...)`, S the selectors OR-ed. FTS5's bm25() ranks every candidate
  with each selector counted twice (it is a phrase of S and of the OR), so half its value is
  BM25 with the stop words at half their IDF (STOP_WORD_IDF_FACTOR): `builtin_share` 0.5.
- Otherwise `(G) AND (w1 OR w2 ...)`. The restriction G decides which rows are candidates
  (only selectors and matched trigger/boost phrases, never stop words alone); the OR after
  it positions every scored word on each candidate, and router_bm25
  (router/catalog/bm25.py) scores those words only, with the IDFs passed in. When the
  conditions' rows exceed MAX_WHOLE_ROWS, G keeps the rarest conditions whole (their rows
  fit half the budget) and asks the common ones to co-occur: any 1, then any 2, ... of them,
  the first level whose rows (counted with a LIMIT, a cheap boolean pass) fit
  MAX_CANDIDATE_ROWS. A tool that shares only one common word with the query is then not a
  candidate, and one that shares most of its words is: in a catalog of many near-duplicate
  servers, the words the right tool has and its neighbours lack are what tells them apart.
  Whatever G ends up as, the scoring pass reads at most MAX_SCANNED_ROWS rows.
"""

import itertools
import json
from dataclasses import dataclass

import apsw

from router.catalog.bm25 import idf
from router.catalog.query_words import Word
from router.db import PerConnection, catalog_size, catalog_version, scalar
from router.fts import fts_or_query, fts_string

# Rows FTS5's bm25() may rank in one query (≈0.3 µs a row, IDF counting included) before the
# restricted plan, whose candidates router_bm25 scores at ≈2-3 µs a row, is cheaper.
MAX_BUILTIN_ROWS = 1_500
# Catalogs of at most this many tools rank every candidate of a query with stop words or
# phrases when FTS5's bm25() may (MAX_BUILTIN_ROWS, ≈0.5-0.8 ms): there the restriction's
# co-occurrence levels cost recall (ToolBench's 2,479 RapidAPI endpoints: 0.015 recall@5) and
# save little. Larger catalogs keep the restricted plan, whose cost does not grow with the
# words' rows: on the 10,000-tool synthetic catalog ranking every candidate took the median
# search from 0.61 to 0.80 ms.
MAX_FULLY_RANKED_TOOLS = 5_000
# Postings FTS5's bm25() may count for its IDFs in one query (≈27 ns each: it reads every row
# holding each phrase of the MATCH, however few rows the MATCH selects).
MAX_BUILTIN_COUNTED_ROWS = 20_000
# Candidate rows the co-occurrence restriction aims for (≈0.2 ms of router_bm25).
MAX_CANDIDATE_ROWS = 64
# Selector rows scored whole, without asking common words to co-occur: a small catalog's
# queries are ranked over every tool that has one of their words (≈0.8 ms at most).
MAX_WHOLE_ROWS = 256
# A hard cap on the rows one query scores, whatever the restriction selects.
MAX_SCANNED_ROWS = 256
# Words scored per query: a pasted paragraph keeps its highest-IDF words.
MAX_SCORED_WORDS = 32
# A stop word that is scored (never a selector when the query has other words) counts at
# half its IDF: the library's list holds conversational words (me, please, can) that only add
# noise, and tool verbs (open, show, find) that still say what the tool does. Chosen on the
# tuning sets (seeded, BFCL), where 0.5 and 1.0 tie; the held-out sets were not consulted.
# FTS5's bm25() gives exactly this weight when the selectors are in its MATCH twice (above):
# tests/test_search_plan.py checks that both paths score alike.
STOP_WORD_IDF_FACTOR = 0.5
# Common conditions combined into co-occurrence levels (C(6, 3) = 20 groups at most).
MAX_COMBINED_CONDITIONS = 6
# Share of the catalog above which a common condition is not combined (IDF below ≈ 1.1).
MAX_COMMON_SHARE = 0.25

TERM_DOCS_SQL = """
SELECT term, doc FROM tools_fts_terms WHERE term IN (SELECT value FROM json_each(:terms))
"""
# A MATCH that selects no row: rows holding a word and not holding it.
NOTHING = '"zqxjkvbw" NOT "zqxjkvbw"'
COUNT_MATCH_SQL = """
SELECT count(*) FROM (SELECT 1 FROM tools_fts WHERE tools_fts MATCH :match LIMIT :cap)
"""


@dataclass(frozen=True)
class Condition:
    """One way a row can become a candidate: a selector word or a matched phrase."""

    expression: str  # FTS5 syntax, built from quoted strings only
    rows: int
    # a trigger or boost phrase's words (lower case), empty for a query word
    words: frozenset[str] = frozenset()


@dataclass(frozen=True)
class MatchPlan:
    match: str
    scored: tuple[Word, ...]
    idfs: tuple[float, ...]
    skip: int  # phrases of the restriction group, ahead of the scored words
    # few rows: the share of FTS5's own bm25() that is the BM25 part (1.0, or 0.5 when the
    # selectors are in the MATCH twice); None: router_bm25 scores the match
    builtin_share: float | None = None


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
    # Selectors: the query's words that are not stop words. A query made only of stop words
    # is matched on them; one with other words never is, even when none of those is in the
    # catalog ("find me a place to eat tonight" in a catalog without restaurants: no hits).
    if any(not w.stop for w in words):
        selectors = [w for w in weighty if not w.stop] or [w for w in present if not w.stop]
    else:
        selectors = weighty
    scored = _rarest(list(dict.fromkeys(weighty + selectors)), docs, MAX_SCORED_WORDS)
    selectors = [w for w in selectors if w in scored]
    if not selectors:  # nothing that may select a row: a MATCH that selects nothing
        return MatchPlan(NOTHING, (), (), 0)
    idfs = tuple(
        idf(rows, docs[w.stem]) * (STOP_WORD_IDF_FACTOR if w not in selectors else 1.0) for w in scored
    )
    everything = fts_or_query([w.text for w in scored])
    conditions = [Condition(fts_string(w.text), docs[w.stem]) for w in selectors] + phrases
    if _few_rows(selectors, scored, phrases, docs):
        if len(selectors) == len(scored) and not phrases:
            return MatchPlan(everything, tuple(scored), idfs, 0, builtin_share=1.0)
        if rows <= MAX_FULLY_RANKED_TOOLS:
            either = fts_or_query([w.text for w in selectors])
            return MatchPlan(
                f"({either}) AND ({everything})", tuple(scored), idfs, len(selectors), builtin_share=0.5
            )
    restriction, phrase_count = _restriction(conn, conditions, rows)
    return MatchPlan(f"({restriction}) AND ({everything})", tuple(scored), idfs, phrase_count)


def _few_rows(
    selectors: list[Word], scored: list[Word], phrases: list[Condition], docs: dict[str, int]
) -> bool:
    """Whether FTS5's bm25() may rank every row the selectors select: few enough rows, few
    enough postings for it to count (each phrase of the MATCH once; the selectors may be
    there twice), and no matched phrase that selects a row none of the selectors does (one
    of stop words only), which the restriction keeps as a candidate."""
    selector_texts = {w.text for w in selectors}
    return (
        sum(docs[w.stem] for w in selectors) <= MAX_BUILTIN_ROWS
        and sum(docs[w.stem] for w in selectors + scored) <= MAX_BUILTIN_COUNTED_ROWS
        and all(c.words & selector_texts for c in phrases)
    )


def _rarest(words: list[Word], docs: dict[str, int], keep: int) -> list[Word]:
    """At most `keep` words, the highest-IDF ones, in the query's order."""
    if len(words) <= keep:
        return words
    kept = set(sorted(words, key=lambda w: (docs[w.stem], w.text))[:keep])
    return [w for w in words if w in kept]


def _restriction(conn: apsw.Connection, conditions: list[Condition], rows: int) -> tuple[str, int]:
    """G and the number of phrases in it (each condition is one phrase)."""
    ordered = sorted(conditions, key=lambda c: (c.rows, c.expression))
    if sum(c.rows for c in ordered) <= MAX_WHOLE_ROWS:
        return " OR ".join(c.expression for c in ordered), len(ordered)
    whole, budget = [], MAX_CANDIDATE_ROWS // 2
    for condition in ordered:
        if condition.rows > budget:
            break
        whole.append(condition)
        budget -= condition.rows
    common = ordered[len(whole) :]
    # a condition in a quarter of the catalog or more tells few tools apart, and ANDing it
    # into every group makes each count read its long doclist: leave it to the scoring
    informative = [c for c in common if c.rows < rows * MAX_COMMON_SHARE]
    common = (informative if len(informative) >= 2 else common)[:MAX_COMBINED_CONDITIONS]
    groups: list[tuple[Condition, ...]] = []
    # any one common condition alone is over the budget (that is why it is common): start
    # at two, unless there is only one
    for level in range(min(2, len(common)), len(common) + 1):
        groups = [(c,) for c in whole] + list(itertools.combinations(common, level))
        # a group selects at most the rows of its rarest condition: when even that bound
        # fits, the level fits without counting
        bound = sum(min(c.rows for c in group) for group in groups)
        if bound <= MAX_CANDIDATE_ROWS or _count(conn, _or_of_ands(groups)) <= MAX_CANDIDATE_ROWS:
            break
    return _or_of_ands(groups), sum(len(g) for g in groups)


def _or_of_ands(groups: list[tuple[Condition, ...]]) -> str:
    return " OR ".join(
        "(" + " AND ".join(c.expression for c in group) + ")" if len(group) > 1 else group[0].expression
        for group in groups
    )


def _count(conn: apsw.Connection, match: str) -> int:
    return scalar(conn, COUNT_MATCH_SQL, {"match": match, "cap": MAX_CANDIDATE_ROWS + 1})
