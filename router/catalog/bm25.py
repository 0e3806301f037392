"""BM25 as FTS5's own bm25() computes it, with each word's IDF handed in.

FTS5's bm25() counts, on every query, every row holding each phrase of the MATCH to get its
IDF (about 27 ns a row here): a word in 20,000 tools of a 100,000-tool catalog costs 0.6 ms
before a single row is scored, however few rows the MATCH selects. The router already knows
each word's document count (the fts5vocab table, cached per catalog version), so this
auxiliary function takes the IDFs as an argument and only scores the rows the MATCH selects.

It also scores only the phrases it is told to: search restricts a large catalog's candidates
with a leading group of phrases (`(G) AND (w1 OR w2 ...)`, router/catalog/match_plan.py),
and those repeat query words that must not count twice.

Formula (fts5_aux.c, fts5Bm25Function), per scored phrase i:
    idf_i * f_i * (k1 + 1) / (f_i + k1 * (1 - b + b * D / avgdl))
where f_i is the sum of the column weights of the phrase's hits in the row, D the row's
tokens in all columns and avgdl the catalog's mean; k1 = 1.2, b = 0.75. Larger is better
here (FTS5's bm25() returns the negative).
"""

import json
import math

import apsw

FUNCTION_NAME = "router_bm25"
K1 = 1.2
B = 0.75
# FTS5's floor for the IDF of a word in half the rows or more
MIN_IDF = 1e-6


def idf(rows: int, docs: int) -> float:
    """FTS5's IDF for a phrase found in `docs` of `rows` rows."""
    value = math.log((rows - docs + 0.5) / (docs + 0.5)) if rows else 0.0
    return value if value > 0.0 else MIN_IDF


def scoring_config(skip: int, weights: tuple[float, ...], idfs: list[float]) -> str:
    """The one argument router_bm25 takes: phrases to skip, column weights, IDFs in order."""
    return json.dumps([skip, list(weights), idfs])


def router_bm25(api: apsw.FTS5ExtensionApi, config: str) -> float:
    state = api.aux_data
    if state is None:  # first row of this query: parse the config once
        skip, weights, idfs = json.loads(config)
        rows = api.row_count
        avgdl = api.column_total_size(-1) / rows if rows else 1.0
        phrases = range(skip, min(api.phrase_count, skip + len(idfs)))
        state = api.aux_data = (
            [(phrase, idfs[phrase - skip] * (K1 + 1)) for phrase in phrases],
            tuple(weights),
            K1 * (1 - B),
            K1 * B / avgdl,
        )
    scored, weights, norm_fixed, norm_per_token = state
    norm = norm_fixed + norm_per_token * api.column_size(-1)
    locations = api.phrase_locations
    score = 0.0
    for phrase, idf_k1 in scored:
        frequency = 0.0
        column = 0
        for offsets in locations(phrase):
            if offsets:
                frequency += weights[column] * len(offsets)
            column += 1
        if frequency:
            score += idf_k1 * frequency / (frequency + norm)
    return score


def register(conn: apsw.Connection) -> None:
    conn.register_fts5_function(FUNCTION_NAME, router_bm25)  # type: ignore[arg-type]
