"""FTS5's postings in memory, per catalog version: BM25 as FTS5's bm25() computes it, for every
row a query's words select, in numpy.

FTS5 stays the index: it tokenizes and stems the tool text, and its postings (the
tools_fts_instances vocabulary table), document lengths (tools_fts_docsize) and term counts
are what this module reads. What moves out of SQL is the scoring. Through FTS5 every row a
MATCH selects costs an auxiliary-function call (≈0.3 µs in C, 2-3 µs in Python), so a
large catalog's common words forced a restricted candidate set; here a word's postings are
read once per catalog version (≈1 µs a row, the first time a word is searched) and every
later search scores them as arrays, so every candidate is ranked, however many there are.

Formula (fts5_aux.c, fts5Bm25Function), per scored word i:
    idf_i * f_i * (k1 + 1) / (f_i + k1 * (1 - b + b * D / avgdl))
where f_i is the sum of the column weights of the word's hits in the row, D the row's tokens
in all columns and avgdl the catalog's mean; k1 = 1.2, b = 0.75. Larger is better here
(FTS5's bm25() returns the negative). tests/test_lexical_index.py holds it to FTS5's bm25().
"""

from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import apsw
import numpy as np

from router.catalog.filter_columns import FilterColumns
from router.catalog.search_filters import Filters
from router.db import PerConnection, catalog_version

K1 = 1.2
B = 0.75
# Postings kept in memory per connection (12 bytes each: the row's position, and its BM25 over
# the IDF as a float32: 7 significant digits, where a cosine counts with 2), at most 192 MB;
# bench/synthetic.py's 100,000-tool catalog has 6.4 million in all, its 250,000-tool one 16
# million, and a process holds only the words it has searched. Past the bound the words
# searched longest ago are dropped, and read again when searched.
MAX_CACHED_POSTINGS = 16_000_000

NO_ROWS = np.zeros(0, np.intp)
NO_ROWS.setflags(write=False)
# tools_fts's columns, in order (schema.sql)
COLUMNS = ("name_words", "description", "arg_text", "triggers", "boost", "examples")

# Every row of the index, in rowid order, with its length (varints, one per column) and what
# the search filters read.
ROWS_SQL = """
SELECT d.id, d.sz, t.mutating, (SELECT s.profile FROM servers s WHERE s.name = t.server), t.server
FROM tools_fts_docsize d JOIN tools t ON t.id = d.id
ORDER BY d.id
"""
# One word's hits, in row order: each hit's row and column number. Two lists of numbers, not
# a row per hit: a common word's thousands of hits are then parsed in C.
POSTINGS_SQL = f"""
SELECT group_concat(doc), group_concat(CASE col {" ".join(f"WHEN '{c}' THEN {n}" for n, c in enumerate(COLUMNS))} END)
FROM tools_fts_instances WHERE term = :term
"""


@dataclass(frozen=True)
class Postings:
    # positions in the index, ascending; intp, numpy's own index type: an int32 index array is
    # converted at every indexing, which cost more than the indexing on a search's words
    rows: np.ndarray
    # each row's BM25 for this word divided by the word's IDF: f * (k1 + 1) / (f + k1 * (1 - b
    # + b * D / avgdl)), f the column-weighted hits; it depends on the catalog alone, so a
    # query only multiplies it by the IDF
    per_idf: np.ndarray


@dataclass(frozen=True)
class Ranking:
    """One query's candidates: the best of them, and the BM25 of the tools asked for by id."""

    pool: dict[int, float]  # the best candidates, tool id → BM25, best first, ties by id
    asked: dict[int, float]  # tool id → BM25 (0 for a tool that is not a candidate)


class LexicalIndex:
    """One catalog version's rows and the postings of the words searched so far."""

    def __init__(self, conn: apsw.Connection):
        self._conn = conn
        self.version: int | None = None
        self.weights: tuple[float, ...] = ()
        self._weight_of_column = np.zeros(len(COLUMNS), np.float64)
        self.ids = np.zeros(0, np.int64)
        self._norms = np.zeros(0, np.float64)
        self._columns = FilterColumns((), (), ())
        self._postings: OrderedDict[str, Postings] = OrderedDict()
        self._cached = 0
        # one search's selection and scores, a slot per row, kept between searches and
        # cleared where the search wrote: allocating and zeroing them per search cost more
        # than the scoring on a large catalog (2 MB at 250,000 rows)
        self._selected = np.zeros(0, bool)
        self._scores = np.zeros(0, np.float64)

    def refresh(self, version: int | None, weights: Sequence[float]) -> "LexicalIndex":
        """Reload the rows when the catalog (or the column weights) changed since the last load."""
        version = catalog_version(self._conn) if version is None else version
        weights = tuple(float(w) for w in weights)
        if version == self.version and weights == self.weights:
            return self
        rows = self._conn.execute(ROWS_SQL).fetchall()
        ids, sizes, mutating, profiles, servers = zip(*rows) if rows else ((),) * 5
        self.ids = np.array(ids, np.int64)
        lengths = row_lengths(list(sizes))
        average = float(lengths.mean()) if len(lengths) else 1.0
        self._norms = K1 * (1 - B) + K1 * B * lengths / (average or 1.0)
        self._columns = FilterColumns(mutating, profiles, servers)
        self.weights, self._weight_of_column = weights, np.array(weights, np.float64)
        self._postings.clear()
        self._cached = 0
        self._selected = np.zeros(len(self.ids), bool)
        self._scores = np.zeros(len(self.ids), np.float64)
        self.version = version
        return self

    def __len__(self) -> int:
        return len(self.ids)

    def postings(self, term: str) -> Postings:
        """The rows holding `term` (an indexed, stemmed token), read once per catalog version."""
        found = self._postings.get(term)
        if found is not None:
            self._postings.move_to_end(term)
            return found
        docs, columns = self._conn.execute(POSTINGS_SQL, {"term": term}).fetchone()  # type: ignore[misc]
        if docs is None:
            found = Postings(NO_ROWS, np.zeros(0, np.float32))
        else:
            hit_docs = np.array(str(docs).split(","), np.int64)
            hit_weights = self._weight_of_column[np.array(str(columns).split(","), np.int64)]
            # hits come row by row: each row's first hit starts its run
            starts = np.flatnonzero(np.r_[True, hit_docs[1:] != hit_docs[:-1]])
            rows = np.searchsorted(self.ids, hit_docs[starts])
            frequency = np.add.reduceat(hit_weights, starts)
            found = Postings(
                rows, (frequency * (K1 + 1) / (frequency + self._norms[rows])).astype(np.float32)
            )
        self._postings[term] = found
        self._cached += len(found.rows)
        while self._cached > MAX_CACHED_POSTINGS and len(self._postings) > 1:
            _, dropped = self._postings.popitem(last=False)
            self._cached -= len(dropped.rows)
        return found

    def positions(self, tool_ids: Collection[int]) -> np.ndarray:
        """The index positions of these tool ids (those in the index)."""
        if not tool_ids:  # a search's usual phrase rows: none
            return NO_ROWS
        wanted = np.array(sorted(tool_ids), np.int64)
        at = np.searchsorted(self.ids, wanted)
        inside = at < len(self.ids)
        at, wanted = at[inside], wanted[inside]
        return at[self.ids[at] == wanted]

    def coverage(self, terms: Sequence[tuple[str, float]], tool_ids: Collection[int]) -> dict[int, float]:
        """Each tool's share (0-1) of the IDF of `terms` (term, IDF) that its row holds: how much
        of what the query says the tool's text says too, whatever the other tools hold (BM25's
        share of the best is relative to them)."""
        total = sum(idf for _, idf in terms)
        at = self.positions(tool_ids)
        held = np.zeros(len(at), np.float64)
        if total > 0:
            for term, idf in terms:
                rows = self.postings(term).rows  # ascending: a binary search per tool, not a scan
                if not len(rows):
                    continue
                found = np.searchsorted(rows, at)
                held += idf * ((found < len(rows)) & (rows[np.minimum(found, len(rows) - 1)] == at))
            held /= total
        return dict(zip(self.ids[at].tolist(), held.tolist()))

    def ranked(
        self,
        selectors: Sequence[str],
        scored: Sequence[tuple[str, float]],
        also: np.ndarray,
        size: int,
        filters: Filters,
        asked: Collection[int] = (),
    ) -> Ranking:
        """The rows holding a selector word, and those at positions `also`, that pass the
        filters, each scored on the `scored` words (term, IDF); the best `size` of them, and
        the BM25 of the tool ids `asked` (a tool the query names, whether it ranks or not)."""
        selected, scores = self._selected, self._scores
        selected_rows = None
        try:
            for term in selectors:
                selected[self.postings(term).rows] = True
            if len(also):
                selected[also] = True
            selected_rows = np.flatnonzero(selected)
            return self._ranked(selected_rows, scored, set(selectors), size, filters, asked)
        finally:  # every slot back to empty for the next search, whatever happened
            if selected_rows is None:
                selected[:], scores[:] = False, 0.0
            else:
                selected[selected_rows], scores[selected_rows] = False, 0.0

    def _ranked(
        self,
        selected_rows: np.ndarray,
        scored: Sequence[tuple[str, float]],
        selector_terms: set[str],
        size: int,
        filters: Filters,
        asked: Collection[int],
    ) -> Ranking:
        selected, scores = self._selected, self._scores
        candidates = selected_rows
        if filters.restricts:
            candidates = selected_rows[self._columns.allowed(selected_rows, filters)]
        if not len(candidates):
            return Ranking({}, {tool_id: 0.0 for tool_id in asked})
        for term, word_idf in scored:
            found = self.postings(term)
            if term in selector_terms:  # every row holding it is a candidate
                scores[found.rows] += word_idf * found.per_idf
            else:  # a stop word counts only in the rows the selectors chose
                hit = selected[found.rows]
                scores[found.rows[hit]] += word_idf * found.per_idf[hit]
        asked_scores = {tool_id: 0.0 for tool_id in asked}
        for at in self.positions(asked):
            asked_scores[int(self.ids[at])] = float(scores[at])
        candidate_scores = scores[candidates]
        if len(candidates) > size:
            # the size-th best score, and every candidate reaching it: ties at the cut compete by id
            cut = np.partition(candidate_scores, len(candidates) - size)[len(candidates) - size]
            kept = np.flatnonzero(candidate_scores >= cut)
            candidates, candidate_scores = candidates[kept], candidate_scores[kept]
        ids = self.ids[candidates]
        order = np.lexsort((ids, -candidate_scores))[:size]
        return Ranking(dict(zip(ids[order].tolist(), candidate_scores[order].tolist())), asked_scores)


def row_lengths(sizes: list[bytes]) -> np.ndarray:
    """Each row's tokens in all columns, from FTS5's docsize blobs (one SQLite varint per
    column: 7 bits a byte, high bit set on every byte but a number's last), in one pass."""
    if not sizes:
        return np.zeros(0, np.float64)
    data = np.frombuffer(b"".join(sizes), np.uint8)
    row_of_byte = np.repeat(np.arange(len(sizes)), [len(s) for s in sizes])
    last = np.flatnonzero(data < 0x80)  # each number's last byte
    # a byte's place in its number, counted from the last byte: 7 bits a place
    end_of_byte = last[np.searchsorted(last, np.arange(len(data)))]
    places = end_of_byte - np.arange(len(data))
    values = (data & 0x7F).astype(np.float64) * np.power(128.0, places)
    return np.bincount(row_of_byte, weights=values, minlength=len(sizes))


lexical_index = PerConnection(LexicalIndex)
