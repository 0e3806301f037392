"""Catalog search: model-written text → a safe, bounded FTS5 query → ranked hits.

score = 3.0 × trigger match + 10.0 × BM25 / the query's best BM25 + 2.0 × boost match
        + W × cosine(query, tool) (SEMANTIC_WEIGHT)

The query is split into words by the index's own tokenizer (router/catalog/query_words.py),
so a word's postings and document count are the index's own; the only FTS5 syntax search
builds is quoted strings (a phrase of stop words only, PHRASE_ROWS_SQL), so quotes, '*',
':', NEAR, '-', parentheses and the like are only words.

The match plan (router/catalog/match_plan.py) says which words select candidates and which
are scored; every candidate is scored by BM25 in memory from FTS5's postings
(router/catalog/lexical_index.py). The best POOL_MARGIN beyond `limit` get their trigger and
boost parts (router/catalog/phrases.py) from tool_phrases and what a hit shows
(router/catalog/hit_rows.py). The query's nearest tools by the
local semantic model (router/catalog/semantic_index.py) join those candidates, so a tool that
shares no word with the query can still be found, and every candidate gets its cosine. The
final order puts a tool the whole query names first (router/catalog/exact_names.py), then the
score, a tool that cannot be called now (quarantined, its server unavailable here, or its
breaker open) demoted by UNAVAILABLE_PENALTY, then the name.
"""

from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import apsw

from router.catalog import exact_names, quarantine
from router.catalog.hit_rows import ChangingState, ToolRow, changing_state, tool_rows
from router.catalog.match_plan import MatchPlan, plan, term_stats
from router.catalog.opposite_actions import names_the_opposite, says_it_exists
from router.catalog.phrases import matched_phrases
from router.catalog.query_words import Word, check_query, query_words
from router.catalog.request_actions import action_stem, asked_with, asks_unnamed_change, in_plain_words
from router.catalog.request_intent import action_word, asks_only_to_read
from router.catalog.request_objects import changes_a_named_path, names_a_path, removes_a_named_path
from router.catalog.request_payload import LINK, without_fact, without_payload, without_topic
from router.catalog.search_filters import Filters
from router.catalog.server_names import server_names
from router.clock import unix_now
from router.errors import QueryError
from router.facade.breaker import OPEN_SECONDS

if TYPE_CHECKING:
    from router.catalog.lexical_index import Ranking
    from router.catalog.semantic_index import ExampleCosines, NotForMatch, SemanticIndex

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
# against the BM25 share; re-tuned per model on the development sets (docs/research.md). A
# negative cosine counts as 0: unrelated texts land near 0, and that noise must not outweigh words.
SEMANTIC_WEIGHT = 35.0
# The query's nearest tools that join the lexical candidates beyond `limit`, and the cosine
# one needs to (SEMANTIC_MIN_COSINE): below it a neighbour shares too little meaning to be
# offered on that alone (docs/research.md, neighbour floor and count).
SEMANTIC_MARGIN = 10
SEMANTIC_MIN_COSINE = 0.22
# A tool's examples' match (router/catalog/semantic_index.py) counts at this share against its
# own vector's cosine: requests that share their object words ("run my game", "stop the running
# game") are closer to each other for a static model than either is to its tool's description,
# so an example must be clearly closer to win (bench/page_quality.py, development requests).
EXAMPLE_COSINE_FACTOR = 0.85
# Cosines are rounded to this many decimals: int8 vectors give them to about ±0.005, so a
# smaller difference is no evidence, and two tools that differ only by it tie (by name).
COSINE_DECIMALS = 2

# BM25 column weights, in tools_fts column order. A name word is the strongest lexical
# evidence; argument text is long and shared (path, id, limit), so it counts half; trigger,
# boost and example words count like description words (their phrases and vectors add their
# own parts). Chosen on the development sets only (docs/search.md, bench/quality.py).
NAME_WORDS_WEIGHT = 3.0
DESCRIPTION_WEIGHT = 1.0
ARG_TEXT_WEIGHT = 0.5
TRIGGERS_WEIGHT = 1.0
BOOST_WORDS_WEIGHT = 1.0
EXAMPLES_WEIGHT = 1.0
COLUMN_WEIGHTS = (
    NAME_WORDS_WEIGHT,
    DESCRIPTION_WEIGHT,
    ARG_TEXT_WEIGHT,
    TRIGGERS_WEIGHT,
    BOOST_WORDS_WEIGHT,
    EXAMPLES_WEIGHT,
)

# Two tools whose own vectors (their descriptions) are this alike do the same job: a directory
# lister beside radare2's file lister (docs/research.md, the seventh round).
SAME_JOB_COSINE = 0.75

# A tool one of whose examples or trigger phrases leads with the request's verb (it is asked
# for with the request's action, router/catalog/request_actions.py) ranks this much higher: of
# "run my game" and "stop the running game", the verb says which, where a static model's vector
# is mostly the words they share. A boost keyword's worth (a single word, as a boost is).
ACTION_WEIGHT = 2.0

# A tool that cannot be called now ranks as if its score were this much lower: a callable
# tool that fits nearly as well goes first, but a clearly better match (the only tool that
# does the job usually wins by far more) stays ahead. A trigger's worth.
UNAVAILABLE_PENALTY = 3.0
# A tool whose own text says it is deprecated (router/catalog/deprecation.py) ranks as if its
# score were this much lower, and below the tool it names instead whenever that one is ranked:
# its server keeps it for old clients, and a new call should go to the replacement.
DEPRECATED_PENALTY = 3.0

# Candidates ranked by BM25 beyond `limit` that also get their trigger, boost and cosine parts,
# so a phrase or the meaning can lift a tool from just below the cut that the nearest
# neighbours alone would miss (docs/research.md, the lexical pool).
POOL_MARGIN = 30

# The rows a trigger or boost phrase of stop words only selects (router/catalog/match_plan.py):
# candidates of their own, found by FTS5's phrase match on the phrase's column.
PHRASE_ROWS_SQL = "SELECT rowid FROM tools_fts WHERE tools_fts MATCH :match"
# A candidate with neither a trigger phrase nor a boost keyword of the query
NO_PHRASE_PARTS = (False, False)


@dataclass(frozen=True)
class Explain:
    """The parts of a hit's score; they add up to the score. via_example: the semantic part
    is the cosine of one of the tool's example requests (better than its own vector's).
    action: ACTION_WEIGHT when the tool is asked for with the request's leading verb."""

    trigger: float
    bm25: float
    boost: float
    exact_name: bool = False
    semantic: float = 0.0
    via_example: bool = False
    action: float = 0.0


@dataclass(frozen=True)
class Evidence:
    """What a hit's fit is judged on (router/catalog/fit_gate.py), beside its score: raw
    measures that do not depend on the other hits, where the score's BM25 share does."""

    cosine: float  # the best of the tool's own and its examples' cosines, rounded
    example_cosine: float  # its best example's (0 without examples)
    coverage: float  # the share of the query's words' IDF the tool's text holds (0-1)
    trigger: bool
    boost: bool
    exact_name: bool
    # its server or a review says it changes state (ToolRow.changes_things)
    changes_things: bool
    deprecated: bool = False
    replaced_by: str | None = None
    # whether the cosines were measured (False: no model, or a catalog it has not embedded)
    semantic: bool = True
    # one of its examples or triggers leads with the request's leading verb
    # (router/catalog/request_actions.py): it is asked for with the request's action
    asked_with_action: bool = False
    # the request leads with a verb of change no tool's text holds (the same for every hit)
    unnamed_change: bool = False
    # its server or a review says it only reads (ToolRow.only_reads)
    only_reads: bool = False
    # its name holds the reverse of the request's leading verb (router/catalog/opposite_actions.py)
    opposite_action: bool = False
    # the request asks to change a file it names by path, and this tool, which changes things,
    # takes none; or asks to do away with it, and this tool only reads
    # (router/catalog/request_objects.py)
    misses_the_path: bool = False
    # its server's not-for requests (servers.not_for): the request's best cosine with them and
    # with the server's tools (own vectors and examples); 0 and 0 when it has none
    not_for_cosine: float = 0.0
    server_cosine: float = 0.0
    # the request names a file or folder by its path and this tool takes none
    # (router/catalog/request_objects.py): it cannot be doing what is asked of that file
    ignores_the_path: bool = False
    # the other hits whose descriptions are nearly its own (SAME_JOB_COSINE): they do its job
    same_job: frozenset[str] = frozenset()
    # the request names its server (router/catalog/server_names.py: "it's loaded in r2")
    server_named: bool = False


@dataclass(frozen=True)
class SearchHit:
    name: str
    profile: str
    summary: str
    score: float
    available: bool = True
    unavailable_reason: str | None = None
    explain: Explain | None = None
    # the tool's server, for grouping what cannot be called by server (not in to_dict)
    server: str = ""
    # what the page's fit gate reads (not in to_dict)
    evidence: Evidence | None = None

    def to_dict(self) -> dict:
        """JSON-ready; `explain` only when it was asked for, the reason only when unavailable."""
        out = asdict(self)
        del out["server"], out["evidence"]
        if self.explain is None:
            del out["explain"]
        if self.unavailable_reason is None:
            del out["unavailable_reason"]
        return out


PROFILE_NAMES_SQL = "SELECT name FROM profiles ORDER BY name"


def check_profile(conn: apsw.Connection, profile: str | None) -> None:
    """A profile the catalog does not have is a mistake to say, not a search that finds
    nothing (an empty catalog has none: its own answer says so)."""
    if profile is None:
        return
    names = [str(name) for (name,) in conn.execute(PROFILE_NAMES_SQL)]
    if names and profile not in names:
        raise QueryError(f"unknown profile {profile!r}; the catalog's profiles are: {', '.join(names)}")


def check_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not MIN_LIMIT <= limit <= MAX_LIMIT:
        raise QueryError(f"limit must be an integer from {MIN_LIMIT} to {MAX_LIMIT}, got {limit!r}")
    return limit


def _lexical_ranking(
    conn: apsw.Connection,
    version: int,
    match_plan: MatchPlan,
    size: int,
    filters: Filters,
    named: Collection[int] = (),
) -> "Ranking":
    """Every candidate the plan selects that the filters let through, scored by BM25 in
    memory; the best `size` of them, and the BM25 of the `named` tools."""
    # imported here, not with the module: numpy is a search's, and a command that only
    # imports this module (inspect, eval's arguments) must not pay its start-up
    from router.catalog.lexical_index import lexical_index

    index = lexical_index(conn).refresh(version, COLUMN_WEIGHTS)
    phrase_rows: list[int] = []
    if match_plan.phrase_conditions:
        match = " OR ".join(match_plan.phrase_conditions)
        phrase_rows = [tool_id for (tool_id,) in conn.execute(PHRASE_ROWS_SQL, {"match": match})]
    return index.ranked(
        [w.stem for w in match_plan.selectors],
        list(zip((w.stem for w in match_plan.scored), match_plan.idfs)),
        index.positions(phrase_rows),
        size,
        filters,
        named,
    )


@dataclass(frozen=True)
class SemanticParts:
    """A query's cosines: each candidate's best (its own vector or an example's), the best
    example's of the tools that have examples, and the weight of a cosine in the score."""

    cosines: dict[int, float]
    examples: "ExampleCosines | None"
    weight: float
    # per server with not-for requests: how the query matches them and the server's tools
    not_for: "Mapping[str, NotForMatch]" = field(default_factory=dict)
    # the index the cosines came from (None without a model)
    index: "SemanticIndex | None" = None

    def example(self, tool_id: int) -> float:
        """The tool's best example cosine (0 without examples)."""
        return 0.0 if self.examples is None else self.examples.of(tool_id)


NO_SEMANTIC = SemanticParts({}, None, 0.0)


def _semantic_candidates(
    conn: apsw.Connection,
    query: str,
    version: int,
    limit: int,
    filters: Filters,
    pool: dict[int, float],
) -> SemanticParts:
    """Each candidate's cosine with the query, after adding the query's nearest tools to
    `pool` (at BM25 0), and the weight of a cosine; nothing when there is no model or the
    catalog has no vectors for it."""
    # imported here, not with the module: numpy and the model are a search's, and a command
    # that only imports this module (inspect, eval's arguments) must not pay their start-up
    from router.catalog.embeddings import catalog_model
    from router.catalog.semantic_index import semantic_index

    model = catalog_model()
    if model is None:
        return NO_SEMANTIC
    index = semantic_index(conn).refresh(model, version)
    if not len(index):
        return NO_SEMANTIC
    # a model may carry its own weight and floor (the transformer's cosines spread otherwise
    # than the static model's, router/semantic/onnx_model.py); the static model uses these
    weight = getattr(model, "semantic_weight", SEMANTIC_WEIGHT)
    min_cosine = getattr(model, "semantic_min_cosine", SEMANTIC_MIN_COSINE)
    vector = model.encode([query])[0]
    # the query is matched with the examples as written and, read without its payload (and
    # then without its topic), with the examples read so too (router/catalog/request_payload.py);
    # a catalog without examples (most large ones) is spared the readings
    reading = without_payload(query) if index.has_examples else query
    asked = without_topic(reading)
    plain = in_plain_words(asked)  # the verb as the action it names (request_actions.py)
    distinct = [text for text in dict.fromkeys((reading, asked, plain)) if text and text != query]
    readings = list(model.encode(distinct)) if distinct else []
    examples = index.example_cosines(vector, *readings)
    neighbours = index.nearest(
        vector,
        limit + SEMANTIC_MARGIN,
        filters=filters,
        min_cosine=min_cosine,
        examples=examples,
        example_weight=EXAMPLE_COSINE_FACTOR,
    )
    # the neighbours' cosines already count their examples; the other candidates' are their own
    cosines = index.cosines(vector, [tool_id for tool_id in pool if tool_id not in neighbours])
    if examples.at:
        for tool_id, cosine in cosines.items():
            cosines[tool_id] = max(cosine, EXAMPLE_COSINE_FACTOR * examples.of(tool_id))
    for tool_id in neighbours:
        pool.setdefault(tool_id, 0.0)
    not_for = index.not_for_matches(vector, *readings, reads_only=asks_only_to_read(query))
    return SemanticParts(cosines | neighbours, examples, weight, not_for, index)


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
    evidence: bool = False,
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
    evidence=True gives each hit the Evidence the page's fit gate reads (router/catalog/fit_gate.py).
    """
    words = _lexical_words(conn, query)
    limit = check_limit(limit)
    check_profile(conn, profile)
    version = term_stats(conn).refresh()
    phrases = matched_phrases(conn, query, version)
    match_plan: MatchPlan = plan(conn, words, phrases.conditions, refreshed=True)
    now_s = unix_now() if now is None else float(now)
    filters = Filters(profile, bool(may_call_mutating), frozenset(hidden_servers))
    pool_size = limit + POOL_MARGIN
    named = exact_names.exact_name_ids(conn, query)
    ranking = _lexical_ranking(conn, version, match_plan, pool_size, filters, named)
    pool = dict(ranking.pool)
    for tool_id in named:
        if tool_id not in pool:
            pool[tool_id] = ranking.asked[tool_id]
    best_bm25 = max(pool.values(), default=0.0)
    semantic_parts = (
        _semantic_candidates(conn, query, version, limit, filters, pool) if semantic else NO_SEMANTIC
    )
    cosines, semantic_weight = semantic_parts.cosines, semantic_parts.weight
    if not pool:
        return []
    rows = tool_rows(conn).rows(version, pool)
    if filters.restricts:  # a tool the query names, or a semantic neighbour, passes them too
        rows = {
            tool_id: row
            for tool_id, row in rows.items()
            if filters.allow(row.profile, row.mutating, row.server)
        }
    state = changing_state(conn, rows.values())
    phrase_parts = phrases.parts(conn, rows)
    unavailable = unavailable or {}
    # the usual search: no open breaker, no quarantine, every server here; nothing to ask per tool
    may_be_unavailable = bool(unavailable) or not state.empty
    ranked = []
    any_deprecated = False
    # a catalog without examples (most large ones) asks nothing of them per candidate
    example_of = (
        semantic_parts.examples.of if semantic_parts.examples and semantic_parts.examples.at else None
    )
    # the request's action, and the candidates asked for with it (router/catalog/request_actions.py)
    action = action_stem(conn, query)
    asked_for = asked_with(conn).asked_for(version, action, rows) if action is not None else set()
    for tool_id, row in rows.items():
        trigger, boost = phrase_parts.get(tool_id, NO_PHRASE_PARTS)
        reason = (
            _unavailable_reason(row, state, unavailable, now_s, breaker_open_s)
            if may_be_unavailable
            else None
        )
        cosine = max(0.0, round(cosines.get(tool_id, 0.0), COSINE_DECIMALS))
        example = example_of(tool_id) if example_of is not None else 0.0
        # Explain's fields, as a tuple: only the hits returned become an Explain
        parts = (
            TRIGGER_WEIGHT * trigger,
            BM25_WEIGHT * pool[tool_id] / best_bm25 if best_bm25 > 0 else 0.0,
            BOOST_WEIGHT * boost,
            tool_id in named,
            semantic_weight * cosine,
            example > 0 and round(EXAMPLE_COSINE_FACTOR * example, COSINE_DECIMALS) >= cosine,
            ACTION_WEIGHT * (tool_id in asked_for),
        )
        score = parts[0] + parts[1] + parts[2] + parts[4] + parts[6]
        rank_score = score - (UNAVAILABLE_PENALTY if reason is not None else 0.0)
        if row.deprecated:
            rank_score -= DEPRECATED_PENALTY
            any_deprecated = True
        ranked.append(((not parts[3], -rank_score, row.name), (tool_id, row, score, reason, parts, cosine)))
    ranked.sort(key=lambda pair: pair[0])
    if any_deprecated:
        ranked = _below_replacements(ranked)
    kept = [entry for _, entry in _cut(ranked, limit, callable_limit)]
    # what the gate reads, for the hits returned only, when asked for
    coverage = _coverage(conn, version, match_plan, [entry[0] for entry in kept]) if evidence else {}
    unnamed_change = evidence and asks_unnamed_change(conn, query)
    request_verb = action_word(query) if evidence else None
    exists = evidence and says_it_exists(query)
    changes_a_path = evidence and changes_a_named_path(query, request_verb)
    removes_a_path = changes_a_path and removes_a_named_path(query, request_verb)
    path_named = evidence and names_a_path(query)
    same_job = (
        semantic_parts.index.alike([entry[0] for entry in kept], SAME_JOB_COSINE)
        if evidence and semantic_parts.index is not None
        else {}
    )
    name_of = {entry[0]: entry[1].name for entry in kept}
    named_servers = server_names(conn).refresh(version).named(query) if evidence else set()
    return [
        SearchHit(
            row.name,
            row.profile,
            row.summary,
            score,
            reason is None,
            reason,
            Explain(*parts) if explain else None,
            row.server,
            None
            if not evidence
            else Evidence(
                cosine,
                max(0.0, round(semantic_parts.example(tool_id), COSINE_DECIMALS)),
                coverage.get(tool_id, 0.0),
                parts[0] > 0,
                parts[2] > 0,
                parts[3],
                row.changes_things,
                row.deprecated,
                row.replaced_by,
                semantic_weight > 0,
                parts[6] > 0,
                unnamed_change,
                row.only_reads,
                names_the_opposite(request_verb, row.name_words, exists),
                (changes_a_path and row.changes_things and not row.takes_a_path)
                or (removes_a_path and row.only_reads),
                *_not_for(semantic_parts, row.server),
                path_named and not row.takes_a_path,
                frozenset(name_of[other] for other in same_job.get(tool_id, ())),
                row.server in named_servers,
            ),
        )
        for tool_id, row, score, reason, parts, cosine in kept
    ]


def _not_for(semantic_parts: SemanticParts, server: str) -> tuple[float, float]:
    """Evidence.not_for_cosine and server_cosine of a tool of `server`."""
    match = semantic_parts.not_for.get(server)
    if match is None:
        return 0.0, 0.0
    return round(match.not_for, COSINE_DECIMALS), round(match.tools, COSINE_DECIMALS)


def _lexical_words(conn: apsw.Connection, query: str) -> list[Word]:
    """The words the lexical part matches: a link read as "url" (its words name a site, not the
    job: "status" in status.stripe.com is no git status), and without the fact a request gives
    to keep (router/catalog/request_payload.py), whose words are what to keep, not the tool to
    keep it with ("remember that jonas owns billing" is no search for billing). A topic ("...
    about X") stays: cut, it lost more than it won on the development sets. The query is checked
    as given, before it is read so (a long link must not shorten a query past its bound)."""
    return query_words(conn, LINK.sub(" url ", without_fact(check_query(query))))


def _coverage(
    conn: apsw.Connection, version: int, match_plan: MatchPlan, tool_ids: list[int]
) -> dict[int, float]:
    """Each tool's share of the IDF of the query's selector words (Evidence.coverage)."""
    from router.catalog.lexical_index import lexical_index  # numpy: a search's (_lexical_ranking)

    selectors = {w.stem for w in match_plan.selectors}
    terms = [(w.stem, idf) for w, idf in zip(match_plan.scored, match_plan.idfs) if w.stem in selectors]
    if not terms:
        return {}
    return lexical_index(conn).refresh(version, COLUMN_WEIGHTS).coverage(terms, tool_ids)


def _below_replacements(ranked: list) -> list:
    """The order with each deprecated tool moved just below the tool it names instead, when
    that one ranks below it (a query naming the deprecated tool exactly keeps it first)."""
    position = {entry[1][1].name: i for i, entry in enumerate(ranked)}
    moves = [
        (entry, position[entry[1][1].replaced_by])
        for i, entry in enumerate(ranked)
        if entry[1][1].deprecated
        and entry[0][0]  # not an exact name
        and position.get(entry[1][1].replaced_by or "", -1) > i
    ]
    if not moves:
        return ranked
    moved = {id(entry) for entry, _ in moves}
    after: dict[int, list] = {}
    for entry, target in moves:
        after.setdefault(target, []).append(entry)
    out = []
    for i, entry in enumerate(ranked):
        if id(entry) not in moved:
            out.append(entry)
        out.extend(after.get(i, ()))
    return out


def _unavailable_reason(
    row: ToolRow, state: ChangingState, unavailable: Mapping[str, str], now_s: float, breaker_open_s: float
) -> str | None:
    """Why the tool cannot be called now, or None."""
    if row.name in state.quarantined:  # its server lists another definition: the strongest reason
        return quarantine.reason(state.quarantined[row.name])
    reason = unavailable.get(row.server)
    opened_at = state.breaker_opened_at(row)
    if reason is None and opened_at is not None and opened_at + breaker_open_s > now_s:
        retry = max(0, round(opened_at + breaker_open_s - now_s))
        reason = f"circuit breaker open after repeated failures; retry in about {retry} s"
    return reason


def _cut(ranked: list, limit: int, callable_limit: bool) -> list:
    """The first `limit` of the ranked pool; with callable_limit, as far down it as holds
    `limit` callable ones (those that cannot be called ranked among them come along)."""
    if not callable_limit:
        return ranked[:limit]
    callable_seen = 0
    for end, (_, (_tool_id, _row, _score, reason, _parts, _cosine)) in enumerate(ranked, start=1):
        callable_seen += reason is None
        if callable_seen == limit:
            return ranked[:end]
    return ranked
