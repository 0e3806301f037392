"""Catalog search: model-written text → a safe, bounded FTS5 query → ranked hits.

score = 3.0 × trigger match + 10.0 × BM25 / the query's best BM25 + 2.0 × boost match
        + W × cosine(query, tool) (SEMANTIC_WEIGHT)

The query text is never handed to FTS5 as syntax: it is split into words by the index's own
tokenizer (router/catalog/query_words.py) and each word is quoted, so quotes, '*', ':', NEAR,
'-', parentheses and the like are only words.

FTS5 selects the candidates the match plan allows (router/catalog/match_plan.py: bounded
however common the words) and BM25 scores them (POOL_SQL_*: FTS5's own bm25() when they are
few, router_bm25 otherwise); the best POOL_MARGIN beyond `limit` (NO_PHRASE_POOL_MARGIN when
the query holds no trigger or boost phrase of the catalog, router/catalog/phrases.py) get
their trigger and boost parts from tool_phrases (an index seek per candidate, however many
tools share a phrase) and what a hit shows (HITS_SQL). The query's nearest tools by the local
semantic model (router/catalog/semantic_index.py) join those candidates, so a tool that
shares no word with the query can still be found, and every candidate gets its cosine. The final order puts a tool the whole
query names first (router/catalog/exact_names.py), then the score, a tool that cannot be
called now (quarantined, its server unavailable here, or its breaker open) demoted by
UNAVAILABLE_PENALTY, then the name.
"""

import json
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass

import apsw

from router.catalog import bm25, exact_names, quarantine
from router.catalog.match_plan import (
    MAX_BUILTIN_ROWS,
    MAX_SCANNED_ROWS,
    MatchPlan,
    plan,
    term_stats,
)
from router.catalog.phrases import matched_phrases
from router.catalog.query_words import query_words
from router.clock import unix_now
from router.db import PerConnection
from router.errors import QueryError
from router.facade.breaker import OPEN_SECONDS

MIN_LIMIT, MAX_LIMIT, DEFAULT_LIMIT = 1, 50, 10

# The score's weights. BM25 counts as a share of the query's best BM25 (0-1): raw BM25 grows
# with the catalog (IDFs) and with the query's length, a cosine does not, so only the share
# lets SEMANTIC_WEIGHT mean the same for every catalog and query. BM25_WEIGHT gives the best
# match the BM25 of a typical query's best match (median on the development sets: 9 to 30),
# so a trigger and a boost keep the weight they had against it. A trigger phrase is a
# hand-written promise that the tool is what such a query wants, so it outweighs most lexical
# evidence; a boost keyword is weaker (a single word, often shared by neighbours); BM25 and
# the cosine order everything else.
TRIGGER_WEIGHT = 3.0
BM25_WEIGHT = 10.0
BOOST_WEIGHT = 2.0
# W: the cosine between the query's and the tool's vectors (router/catalog/embeddings.py)
# against the BM25 share. Tuned on the development sets only (bench/quality.py). A negative
# cosine counts as 0: texts with nothing in common land anywhere near 0 with a static model,
# and a word match must not be outweighed by that noise.
SEMANTIC_WEIGHT = 25.0
# The query's nearest tools that join the lexical candidates beyond `limit`, and the cosine
# one needs to: a neighbour below it shares too little meaning to be offered on that alone.
# Tuned for the shipped model (tokenlearn on the corpus's 120k summaries, 192-d) on the
# development sets' macro recall@5 / nDCG@10 (words alone 0.681 / 0.631): W 15 0.712 / 0.664,
# 20 0.711 / 0.666, 25 0.715 / 0.666, 30 0.717 / 0.665 (with 60k texts: 10 0.709 / 0.659, 35 as
# 25-30); 25 ties 30 on LiveMCPBench's recall@10 (0.448; 0.440 at W 15; plain FTS5 0.432).
# The floor at W 25: 0.2, 0.22 and 0.25 tied (0.715), 0.3 lost 0.002, 0.35 0.005. 0.22, between
# two pairs this model scores close together: "add two numbers" and get-sum's "Sum of a and b."
# at 0.24 (must be found), a made-up word whose WordPiece pieces recur in an unrelated tool at
# 0.20 ("zorbles" and "Frobnicate a widget with quuxes": must not be); unrelated English pairs
# mostly below 0.1. 5-40 neighbours tied.
SEMANTIC_MARGIN = 10
SEMANTIC_MIN_COSINE = 0.22
# Cosines are rounded to this many decimals: int8 vectors give them to about ±0.005, so a
# smaller difference is no evidence, and two tools that differ only by it tie (by name).
COSINE_DECIMALS = 2

# BM25 column weights, in tools_fts column order. A word of the tool's name is the strongest
# lexical evidence (names are short and chosen with care); the description is the baseline;
# argument text is long and shared by many tools (path, id, limit), so it counts half; trigger
# and boost words count like description words here, and their exact-phrase matches add the
# separate trigger and boost parts. Tuned on the development sets only (bench/quality.py).
NAME_WORDS_WEIGHT = 3.0
DESCRIPTION_WEIGHT = 1.0
ARG_TEXT_WEIGHT = 0.5
TRIGGERS_WEIGHT = 1.0
BOOST_WORDS_WEIGHT = 1.0
COLUMN_WEIGHTS = (NAME_WORDS_WEIGHT, DESCRIPTION_WEIGHT, ARG_TEXT_WEIGHT, TRIGGERS_WEIGHT, BOOST_WORDS_WEIGHT)

# A tool that cannot be called now ranks as if its score were this much lower: a callable
# tool that fits nearly as well goes first, but a clearly better match (the only tool that
# does the job usually wins by far more) stays ahead. A trigger's worth.
UNAVAILABLE_PENALTY = 3.0

# Candidates ranked by BM25 beyond `limit` that also get their trigger and boost parts, so a
# phrase match can lift a tool from below the cut.
POOL_MARGIN = 15
# Without a phrase of the catalog in the query nothing lifts a candidate past BM25's order:
# the margin then only refills the page when unavailable tools are demoted.
NO_PHRASE_POOL_MARGIN = 5

_POOL_TEMPLATE = """
SELECT id, bm25 FROM (
    SELECT rowid AS id, {score} AS bm25
    FROM tools_fts
    WHERE tools_fts MATCH :match
      AND (:unfiltered OR EXISTS (
            SELECT 1 FROM v_search f WHERE f.id = tools_fts.rowid
            AND (:profile IS NULL OR f.profile = :profile)
            AND (:may_call_mutating OR f.mutating = 0)
            AND f.server NOT IN (SELECT value FROM json_each(:hidden))))
    LIMIT :scan_cap)
ORDER BY bm25 DESC, id
LIMIT :pool
"""
# The candidates, scored: FTS5's own bm25() (negated: larger is better; the plan's share of
# it) when the plan lets it score the match, else router_bm25 with the IDFs passed in,
# scoring only the plan's words. The inner LIMIT caps the rows scored, whichever they are:
# the plan keeps FTS5's bm25() to matches of at most MAX_BUILTIN_ROWS rows, so it ranks them
# all.
POOL_SQL_FTS5_BM25 = _POOL_TEMPLATE.format(
    score="-:share * bm25(tools_fts, :w_name, :w_description, :w_args, :w_triggers, :w_boost)"
)
POOL_SQL_ROUTER_BM25 = _POOL_TEMPLATE.format(score=f"{bm25.FUNCTION_NAME}(tools_fts, :config)")

# A tool the whole query names, scored alone when BM25 did not bring it into the pool.
NAMED_BM25_SQL = f"""
SELECT {bm25.FUNCTION_NAME}(tools_fts, :config) FROM tools_fts WHERE tools_fts MATCH :match AND rowid = :id
"""

# What a hit shows and what ranks it, for the pooled candidates: the trigger and boost
# phrases of the query each one has (one index seek per candidate for both kinds, a bit
# each: TRIGGER_BIT, BOOST_BIT; left out when the query holds no phrase of the catalog), its
# server's reason to be unavailable here, its breaker, and its quarantine. The reason is a
# key lookup (json_extract; server names never hold a quote): a json_each scan of the
# mapping per candidate cost 0.18 ms a search with 135 unavailable servers, the lookup 0.06 ms.
_HITS_TEMPLATE = """
SELECT v.id, v.name, v.profile, v.summary, {phrase_bits},
       json_extract(:unavailable, '$."' || v.server || '"'),
       coalesce(v.breaker_state = 'open' AND v.breaker_opened_at + :breaker_open_s > :now, 0),
       v.breaker_opened_at, v.quarantined_fields
FROM json_each(:ids) c
CROSS JOIN v_search v ON v.id = c.value
WHERE (:profile IS NULL OR v.profile = :profile)
  AND (:may_call_mutating OR v.mutating = 0)
  AND v.server NOT IN (SELECT value FROM json_each(:hidden))
"""
TRIGGER_BIT, BOOST_BIT = 1, 2
HITS_SQL = _HITS_TEMPLATE.format(
    phrase_bits=f"""coalesce((SELECT max(p.kind = 'trigger') * {TRIGGER_BIT} | max(p.kind = 'boost') * {BOOST_BIT}
         FROM tool_phrases p
         WHERE p.tool_id = v.id AND p.phrase IN (SELECT value FROM json_each(:phrases))), 0)"""
)
HITS_SQL_NO_PHRASES = _HITS_TEMPLATE.format(phrase_bits="0")


@dataclass(frozen=True)
class Explain:
    """The parts of a hit's score; they add up to the score."""

    trigger: float
    bm25: float
    boost: float
    exact_name: bool = False
    semantic: float = 0.0


@dataclass(frozen=True)
class SearchHit:
    name: str
    profile: str
    summary: str
    score: float
    available: bool = True
    unavailable_reason: str | None = None
    explain: Explain | None = None

    def to_dict(self) -> dict:
        """JSON-ready; `explain` only when it was asked for, the reason only when unavailable."""
        out = asdict(self)
        if self.explain is None:
            del out["explain"]
        if self.unavailable_reason is None:
            del out["unavailable_reason"]
        return out


def check_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not MIN_LIMIT <= limit <= MAX_LIMIT:
        raise QueryError(f"limit must be an integer from {MIN_LIMIT} to {MAX_LIMIT}, got {limit!r}")
    return limit


class _RouterBm25:
    """router_bm25 registered on a connection, once."""

    def __init__(self, conn: apsw.Connection):
        bm25.register(conn)


_router_bm25 = PerConnection(_RouterBm25)


def _scored_pool(
    conn: apsw.Connection, match_plan: MatchPlan, config: str, size: int, filters: dict
) -> dict[int, float]:
    """The best `size` candidates (tool id → BM25 part), best first."""
    builtin = match_plan.builtin_share is not None
    ranked = conn.execute(
        POOL_SQL_FTS5_BM25 if builtin else POOL_SQL_ROUTER_BM25,
        {
            "match": match_plan.match,
            "config": config,
            "scan_cap": MAX_BUILTIN_ROWS if builtin else MAX_SCANNED_ROWS,
            "pool": size,
            "share": match_plan.builtin_share,
            "w_name": NAME_WORDS_WEIGHT,
            "w_description": DESCRIPTION_WEIGHT,
            "w_args": ARG_TEXT_WEIGHT,
            "w_triggers": TRIGGERS_WEIGHT,
            "w_boost": BOOST_WORDS_WEIGHT,
            **filters,
        },
    )
    return dict(ranked.fetchall())  # type: ignore[arg-type]


def _semantic_candidates(
    conn: apsw.Connection,
    query: str,
    version: int,
    limit: int,
    filters: dict,
    pool: dict[int, float],
    hidden_servers: Collection[str],
) -> tuple[dict[int, float], float]:
    """Each candidate's cosine with the query, after adding the query's nearest tools to
    `pool` (at BM25 0), and the weight of a cosine; nothing when there is no model or the
    catalog has no vectors for it."""
    # imported here, not with the module: numpy and the model are a search's, and a command
    # that only imports this module (inspect, eval's arguments) must not pay their start-up
    from router.catalog.embeddings import catalog_model
    from router.catalog.semantic_index import semantic_index

    model = catalog_model()
    if model is None:
        return {}, 0.0
    index = semantic_index(conn).refresh(model, version)
    if not len(index):
        return {}, 0.0
    # a model may carry its own weight and floor (the transformer's cosines spread otherwise
    # than the static model's, router/semantic/onnx_model.py); the static model uses these
    weight = getattr(model, "semantic_weight", SEMANTIC_WEIGHT)
    min_cosine = getattr(model, "semantic_min_cosine", SEMANTIC_MIN_COSINE)
    vector = model.encode([query])[0]
    neighbours = index.nearest(
        vector,
        limit + SEMANTIC_MARGIN,
        profile=filters["profile"],
        may_call_mutating=filters["may_call_mutating"],
        min_cosine=min_cosine,
        hidden_servers=hidden_servers,
    )
    cosines = index.cosines(vector, [tool_id for tool_id in pool if tool_id not in neighbours])
    for tool_id in neighbours:
        pool.setdefault(tool_id, 0.0)
    return cosines | neighbours, weight


def search(
    conn: apsw.Connection,
    query: str,
    *,
    profile: str | None = None,
    limit: int = DEFAULT_LIMIT,
    may_call_mutating: bool = True,
    now: float | None = None,
    explain: bool = False,
    # the breaker's window: callers that read the servers config pass its breaker_open_s
    breaker_open_s: float = OPEN_SECONDS,
    unavailable: Mapping[str, str] | None = None,
    hidden_servers: Collection[str] = (),
    callable_limit: bool = False,
    semantic: bool = True,
) -> list[SearchHit]:
    """The best `limit` tools for `query`, best first (ties by name).

    may_call_mutating=False hides tools that mutate state (the caller's role may not call
    them). A tool whose breaker opened less than `breaker_open_s` before `now` (unix
    seconds, default: the clock), whose server is a key of `unavailable` (server name →
    why it cannot be called here), or that is quarantined (router/catalog/quarantine.py)
    comes back with available=False and the reason, ranked UNAVAILABLE_PENALTY lower. The
    tools of `hidden_servers` are never hits (the user's [search] settings). callable_limit
    counts only callable hits toward `limit` (the agent's page, router/facade/search_page.py):
    the uncallable ones ranked among them come too, as many as the scored pool holds.
    semantic=False ranks by the words alone (as does a catalog the model has not embedded).
    """
    words = query_words(conn, query)
    limit = check_limit(limit)
    _router_bm25(conn)
    version = term_stats(conn).refresh()
    phrases = matched_phrases(conn, query, version)
    match_plan: MatchPlan = plan(conn, words, phrases.conditions, refreshed=True)
    now_s = unix_now() if now is None else float(now)
    config = bm25.scoring_config(match_plan.skip, COLUMN_WEIGHTS, list(match_plan.idfs))
    filters = {
        "profile": profile,
        "may_call_mutating": bool(may_call_mutating),
        "hidden": json.dumps(sorted(hidden_servers), ensure_ascii=False),
        "unfiltered": profile is None and bool(may_call_mutating) and not hidden_servers,
    }
    pool_size = limit + (POOL_MARGIN if phrases.texts else NO_PHRASE_POOL_MARGIN)
    pool = _scored_pool(conn, match_plan, config, pool_size, filters)
    named = exact_names.exact_name_ids(conn, query)
    for tool_id in named:
        if tool_id not in pool:
            row = conn.execute(NAMED_BM25_SQL, {"config": config, "match": match_plan.match, "id": tool_id})
            pool[tool_id] = next((score for (score,) in row), 0.0)
    best_bm25 = max(pool.values(), default=0.0)
    cosines, semantic_weight = (
        _semantic_candidates(conn, query, version, limit, filters, pool, hidden_servers)
        if semantic
        else ({}, 0.0)
    )
    if not pool:
        return []
    rows = conn.execute(
        HITS_SQL if phrases.texts else HITS_SQL_NO_PHRASES,
        {
            "ids": json.dumps(list(pool)),
            "phrases": json.dumps(phrases.texts, ensure_ascii=False),
            "unavailable": json.dumps(dict(unavailable or {}), ensure_ascii=False),
            "now": now_s,
            "breaker_open_s": float(breaker_open_s),
            **filters,
        },
    )
    ranked = []
    for tool_id, name, hit_profile, summary, phrase_bits, reason, breaker_open, opened_at, changed in rows:
        trigger, boost = bool(phrase_bits & TRIGGER_BIT), bool(phrase_bits & BOOST_BIT)
        if changed is not None:  # its server lists another definition: the strongest reason
            reason = quarantine.reason(changed)
        elif reason is None and breaker_open:
            retry = max(0, round(opened_at + breaker_open_s - now_s))
            reason = f"circuit breaker open after repeated failures; retry in about {retry} s"
        parts = Explain(
            TRIGGER_WEIGHT * trigger,
            BM25_WEIGHT * pool[tool_id] / best_bm25 if best_bm25 > 0 else 0.0,
            BOOST_WEIGHT * boost,
            tool_id in named,
            semantic_weight * max(0.0, round(cosines.get(tool_id, 0.0), COSINE_DECIMALS)),
        )
        score = parts.trigger + parts.bm25 + parts.boost + parts.semantic
        rank_score = score - (UNAVAILABLE_PENALTY if reason is not None else 0.0)
        ranked.append(
            ((not parts.exact_name, -rank_score, name), (name, hit_profile, summary, score, reason, parts))
        )
    ranked.sort(key=lambda pair: pair[0])
    return [
        SearchHit(name, hit_profile, summary, score, reason is None, reason, parts if explain else None)
        for _, (name, hit_profile, summary, score, reason, parts) in _cut(ranked, limit, callable_limit)
    ]


def _cut(ranked: list, limit: int, callable_limit: bool) -> list:
    """The first `limit` of the ranked pool; with callable_limit, as far down it as holds
    `limit` callable ones (those that cannot be called ranked among them come along)."""
    if not callable_limit:
        return ranked[:limit]
    callable_seen = 0
    for end, (_, (*_, reason, _parts)) in enumerate(ranked, start=1):
        callable_seen += reason is None
        if callable_seen == limit:
            return ranked[:end]
    return ranked
