"""Search on catalogs and queries nobody here wrote: stop words, every candidate ranked by the
BM25 the router computes itself, exact names, and tools that cannot be called here."""

import json

import pytest

from router.catalog import hit_rows, match_plan, phrases
from router.catalog.load import load_catalog
from router.catalog.query_words import query_words
from router.catalog.search import BM25_WEIGHT, UNAVAILABLE_PENALTY, search
from router.catalog.search_filters import Filters
from router.db import connect
from router.errors import QueryError
from router.fts import fts_or_query
from router.paths import SEEDS_DIR


def tool(name, description, *, server="ops", triggers=(), boost=()):
    return {
        "name": name,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "Where."}},
        },
        "annotations": {"readOnlyHint": True},
        "server": server,
        "triggers": list(triggers),
        "boost": list(boost),
    }


def load(conn, tmp_path, tools):
    path = tmp_path / "catalog.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in tools))
    load_catalog(conn, seed_dir=None, user_files=[path])
    return conn


# Near-duplicate servers: every owner's github server has the same tools, every github tool
# has boost 'github', every 'list issues' tool the trigger 'list issues'.
OWNERS = ["acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "wonka"]
VERBS = {"list": "Lists", "get": "Gets", "create": "Creates", "delete": "Deletes"}
NEAR_DUPLICATES = (
    [
        tool(
            f"{owner}_github_{verb}_issues",
            f"{text} issues of the {owner} GitHub organisation.",
            server=f"{owner}_github",
            triggers=[f"{verb} issues"],
            boost=["github"],
        )
        for owner in OWNERS
        for verb, text in VERBS.items()
    ]
    + [
        tool("book_table", "Reserve a restaurant table for dinner tonight."),
        tool("play_song", "Play a song on the speaker."),
        tool("helper_notes", "Can you find me the notes? Please help: shows what you can do."),
    ]
    + [
        # unrelated tools, so that 'github' and 'issues' are in less than half the catalog (a
        # word in half of it or more carries no BM25 weight and is left out)
        tool(f"weather_{city}", f"Current weather conditions in {city}.")
        for city in ("oslo", "lima", "kyiv", "pune", "baku", "doha", "riga", "suva", "apia", "bern")
    ]
    + [
        tool(f"convert_{unit}", f"Convert {unit} into other units.")
        for unit in (
            "metres",
            "grams",
            "litres",
            "kelvin",
            "bytes",
            "joules",
            "pascals",
            "hertz",
            "volts",
            "watts",
            "newtons",
            "moles",
            "lumens",
            "teslas",
            "ohms",
            "farads",
            "henries",
            "sieverts",
            "grays",
            "katals",
            "radians",
            "degrees",
            "knots",
        )
    ]
)


@pytest.fixture
def registry(conn, tmp_path):
    return load(conn, tmp_path, NEAR_DUPLICATES)


@pytest.fixture
def seeded(conn):
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    return conn


# --- stop words -------------------------------------------------------------------------


def test_a_tool_sharing_only_stop_words_with_the_query_is_not_a_candidate(registry):
    # the lexical rule: the semantic part's neighbours are another door (test_search_semantic.py)
    hits = [
        hit.name
        for hit in search(registry, "can you help me find a place to eat tonight", limit=50, semantic=False)
    ]
    # 'tonight' is the one word that is not a stop word, and only book_table has it
    assert hits == ["book_table"]
    assert search(registry, "can you please help me find a parking spot", semantic=False) == []


def test_a_query_of_only_stop_words_still_matches_on_them(registry):
    assert "helper_notes" in {hit.name for hit in search(registry, "can you help me", limit=50)}


def test_stop_words_come_from_the_library_list(registry):
    words = {w.text: w.stop for w in query_words(registry, "Please show me the GitHub issues")}
    assert words == {"please": True, "show": True, "me": True, "the": True, "github": False, "issues": False}


@pytest.mark.parametrize("query", ["\ud800 files", "files \udfff"])
def test_a_lone_surrogate_is_a_query_error(registry, query):
    with pytest.raises(QueryError, match="lone surrogate"):
        search(registry, query)


# --- every candidate ranked -------------------------------------------------------------


def brute_force_ranking(conn, query, limit=10):
    """Every row holding a selector, ranked by FTS5's own bm25() (no trigger or boost phrase in
    these queries): MATCH (selectors) AND (all scored words) counts each selector twice and
    each stop word once, so half its value is BM25 with the stop words at half their IDF, the
    router's score."""
    plan = match_plan.plan(conn, query_words(conn, query), [])
    words = [w.text for w in plan.scored]
    selectors = [w.text for w in plan.selectors]
    share = 1.0 if selectors == words else 0.5
    match = (
        fts_or_query(words) if share == 1.0 else f"({fts_or_query(selectors)}) AND ({fts_or_query(words)})"
    )
    rows = conn.execute(
        "SELECT t.name, -? * bm25(tools_fts, 3.0, 1.0, 0.5, 1.0, 1.0) AS s "
        "FROM tools_fts JOIN tools t ON t.id = tools_fts.rowid "
        "WHERE tools_fts MATCH ? ORDER BY s DESC, t.id LIMIT ?",
        (share, match, limit),
    )
    return [(name, score) for name, score in rows]


@pytest.mark.parametrize(
    "query",
    [
        "can you list the issues of the acme organisation please",  # stop words at half their IDF
        "issues acme organisation",  # selectors only
        "show me what globex has in its issues please",
    ],
)
def test_every_candidate_is_ranked_by_fts5_bm25(registry, query):
    """The in-memory BM25 (router/catalog/lexical_index.py) ranks every row a selector selects
    as FTS5's own bm25() does, and the BM25 part is its share of the best."""
    hits = search(registry, query, explain=True, semantic=False)
    expected = brute_force_ranking(registry, query)
    assert len(hits) == len(expected) > 4
    assert [h.name for h in hits] == [name for name, _ in expected]
    best = expected[0][1]
    for hit, (_, score) in zip(hits, expected):
        assert hit.explain.bm25 == pytest.approx(BM25_WEIGHT * score / best, rel=1e-6)


def test_the_best_candidate_is_found_past_the_first_rows_of_the_match(tmp_path):
    """Every row of the match is ranked, not the first few hundred: a word in 600 of 1,300
    tools, the best of them the last row."""
    tools = [
        tool(f"widget_{i:04}", f"Widget {i} of the frobnicate pipeline, among many others.")
        for i in range(600)
    ]
    tools += [tool(f"gadget_{i:04}", f"Gadget {i}, which does something else entirely.") for i in range(700)]
    tools.append(tool("zeta_frobnicate", "Frobnicate: run the frobnicate step."))
    conn = load(connect(tmp_path / "c.db"), tmp_path, tools)
    assert search(conn, "frobnicate", limit=1, semantic=False)[0].name == "zeta_frobnicate"


def test_a_phrase_of_stop_words_only_selects_rows_of_its_own(registry, tmp_path):
    """A matched phrase that no selector covers can select rows of its own, which ranking the
    selectors' rows would miss: the plan keeps it, and its tool is a candidate."""
    words = query_words(registry, "list issues of acme")
    covered = match_plan.Condition('{triggers} : "list issues"', frozenset({"list", "issues"}))
    uncovered = match_plan.Condition('{triggers} : "of the"', frozenset({"of", "the"}))
    assert match_plan.plan(registry, words, [covered]).phrase_conditions == ()
    assert match_plan.plan(registry, words, [uncovered]).phrase_conditions == ('{triggers} : "of the"',)
    conn = load(
        connect(tmp_path / "p.db"),
        tmp_path,
        [
            *NEAR_DUPLICATES,
            tool("capabilities", "Lists this server's abilities.", triggers=["what can you do"]),
        ],
    )
    hits = search(conn, "what can you do about the weather in oslo", explain=True, semantic=False)
    assert {"weather_oslo", "capabilities"} <= {hit.name for hit in hits}
    assert next(hit for hit in hits if hit.name == "capabilities").explain.trigger > 0


def test_phrases_found_in_memory_and_in_sql_agree(registry, monkeypatch):
    queries = ["hey can you list issues of acme on github please", "create issues", "github", "play a song"]
    cached = [search(registry, q, explain=True) for q in queries]
    # a catalog with more phrases than the cache holds is looked up with SQL on every query
    monkeypatch.setattr(phrases, "MAX_CACHED_PHRASE_ROWS", 0)
    phrases._catalog_phrases(registry).refresh(-1)  # not the catalog's version: read again
    assert phrases._catalog_phrases(registry).tools is None
    assert [search(registry, q, explain=True) for q in queries] == cached
    assert cached[0][0].explain.trigger > 0 and cached[2][0].explain.boost > 0


def test_the_phrases_of_a_query_are_the_same_from_memory_and_sql(seeded, monkeypatch):
    """In memory only the runs starting with a phrase's first word are looked up; they find
    what looking up every run in SQL finds, phrases mid-query and sharing a first word too."""
    import random

    stored = sorted({str(p) for (p,) in seeded.execute("SELECT phrase FROM tool_phrases")})
    assert any(" " in p for p in stored) and len({p.split()[0] for p in stored}) < len(stored)
    rng = random.Random(7)
    queries = [
        " ".join(
            rng.choice(["please", "Now,", "the", "then"]) + " " + p.upper() + "!"
            for p in rng.sample(stored, 3)
        )
        for _ in range(40)
    ]
    ids = [int(i) for (i,) in seeded.execute("SELECT id FROM tools")]

    def found(query):
        matched = phrases.matched_phrases(seeded, query, None)
        # in memory every tool asked for gets its parts, in SQL only those with a phrase
        parts = {tool_id: kinds for tool_id, kinds in matched.parts(seeded, ids).items() if any(kinds)}
        return matched.texts, sorted(c.expression for c in matched.conditions), parts

    in_memory = [found(q) for q in queries]
    assert phrases._catalog_phrases(seeded).tools is not None
    monkeypatch.setattr(phrases, "MAX_CACHED_PHRASE_ROWS", 0)
    phrases._catalog_phrases(seeded).refresh(-1)  # not the catalog's version: read again
    assert phrases._catalog_phrases(seeded).tools is None
    assert [found(q) for q in queries] == in_memory
    assert all(len(texts) >= 3 for texts, _, _ in in_memory)


def test_the_in_memory_bm25_is_fts5_bm25(seeded):
    """The lexical index gives FTS5's own bm25() (to a float32's precision) for every row a
    query's words select."""
    from router.catalog.lexical_index import lexical_index
    from router.catalog.search import COLUMN_WEIGHTS

    index = lexical_index(seeded).refresh(None, COLUMN_WEIGHTS)
    for query in ["install apk device", "git commit log branch", "read file directory", "screenshot"]:
        plan = match_plan.plan(seeded, query_words(seeded, query), [])
        stems = [w.stem for w in plan.scored]
        rows = seeded.execute(
            "SELECT rowid, -bm25(tools_fts, 3.0, 1.0, 0.5, 1.0, 1.0) FROM tools_fts WHERE tools_fts MATCH ?",
            (" OR ".join(f'"{w.text}"' for w in plan.scored),),
        ).fetchall()
        assert len(rows) > 3, query
        asked = [rowid for rowid, _ in rows]
        ranking = index.ranked(stems, list(zip(stems, plan.idfs)), index.positions([]), 50, Filters(), asked)
        for rowid, builtin in rows:
            assert ranking.asked[rowid] == pytest.approx(builtin, rel=1e-6, abs=1e-9), query


# --- exact names ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query, first",
    [
        ("git status", "git_status"),
        ("adb_install_apk", "adb_install_apk"),
        ("adb install_apk", "adb_install_apk"),
        ("ghidra decompile_function", "ghidra_decompile_function"),
        ("ghidra decompile", "ghidra_decompile_function"),
        ("read_graph", "read_graph"),
    ],
)
def test_a_query_naming_a_tool_puts_it_first(seeded, query, first):
    assert search(seeded, query)[0].name == first


def test_an_exact_name_beats_a_stronger_lexical_match(conn, tmp_path):
    load(
        conn,
        tmp_path,
        [
            tool("deploy", "Ship it."),
            tool("deploy_everything", "Deploy, deploy and deploy again: deploy the deploy."),
            tool("x1", "Play a song."),
            tool("x2", "Water the plants."),
        ],
    )
    hits = search(conn, "deploy", explain=True)
    assert [h.name for h in hits] == ["deploy", "deploy_everything"]
    assert hits[0].explain.exact_name and hits[0].score < hits[1].score


# --- tools that cannot be called here ----------------------------------------------------


def test_an_unavailable_server_marks_its_hits_with_the_reason(registry):
    reason = "program 'gh-mcp' not installed: pip install gh-mcp"
    hits = search(registry, "list issues of acme on github", unavailable={"acme_github": reason})
    acme = next(h for h in hits if h.name == "acme_github_list_issues")
    assert acme.available is False and acme.unavailable_reason == reason
    assert acme.to_dict()["unavailable_reason"] == reason
    assert all(h.available for h in hits if not h.name.startswith("acme_"))


def test_a_callable_tool_that_fits_as_well_goes_before_an_uncallable_one(registry):
    query = "list github issues"
    plain = search(registry, query, explain=True)
    first = plain[0]
    server = first.name.rsplit("_github_", 1)[0] + "_github"
    demoted = search(registry, query, unavailable={server: "not installed"})
    assert demoted[0].name != first.name and demoted[0].available
    assert first.name in {h.name for h in demoted}


def test_the_only_tool_that_does_the_job_is_not_buried(registry):
    hits = search(registry, "reserve a restaurant table", unavailable={"ops": "not installed here"})
    assert hits[0].name == "book_table" and hits[0].available is False
    assert hits[0].score - UNAVAILABLE_PENALTY > (hits[1].score if len(hits) > 1 else 0)


def test_the_breaker_window_is_the_callers(registry):
    opened_at = 1_000_000.0
    registry.execute(
        "INSERT INTO breaker(tool, state, consecutive_failures, opened_at, updated_at) "
        "VALUES ('acme_github_list_issues', 'open', 3, :at, '2026-11-29T20:00:00Z')",
        {"at": opened_at},
    )
    query = "list issues of acme on github"

    def acme(**kwargs):
        return next(
            h for h in search(registry, query, now=opened_at + 20, **kwargs) if h.name.startswith("acme_")
        )

    assert acme(breaker_open_s=60.0).available is False
    assert "breaker" in acme(breaker_open_s=60.0).unavailable_reason
    assert acme(breaker_open_s=10.0).available is True


@pytest.mark.parametrize("read_all_up_to", [256, 0])
def test_an_open_server_breaker_marks_every_tool_of_that_server(registry, monkeypatch, read_all_up_to):
    """A backend whose process keeps failing has its own breaker (backend_breaker): search
    marks all its tools, and only while the breaker is open; the same when there are too many
    open breakers to read them all, and only the candidates' are read."""
    monkeypatch.setattr(hit_rows, "MAX_CHANGING_ROWS", read_all_up_to)
    registry.execute(
        "INSERT INTO backend_breaker(server, state, consecutive_failures, opened_at, updated_at) "
        "VALUES ('acme_github', 'open', 3, 1000000.0, '2026-11-29T20:00:00Z'),"
        "       ('globex_github', 'half_open', 3, 1000000.0, '2026-11-29T20:00:00Z')"
    )
    hits = search(registry, "issues of acme and globex on github", limit=50, now=1_000_020.0, semantic=False)
    acme = [h for h in hits if h.name.startswith("acme_")]
    globex = [h for h in hits if h.name.startswith("globex_")]
    assert len(acme) == 4 and all(not h.available and "breaker" in h.unavailable_reason for h in acme)
    assert globex and all(h.available for h in globex)
    later = search(registry, "issues of acme on github", limit=50, now=1_000_000.0 + 3600, semantic=False)
    assert all(h.available for h in later if h.name.startswith("acme_"))


def test_a_breaker_another_process_opens_shows_at_the_next_search(registry, db_path):
    """The open breakers are read again after any write to the file, by another connection
    (the router's, while a CLI search reads) as by this one; without a write, not at all."""
    query, now = "list issues of acme on github", 1_000_020.0

    def acme():
        return next(h for h in search(registry, query, now=now, semantic=False) if h.name.startswith("acme_"))

    statements = []
    registry.exec_trace = lambda _cursor, sql, _bindings: statements.append(sql) or True
    assert acme().available
    assert acme().available
    assert sum(sql == hit_rows.CHANGING_STATE_SQL for sql in statements) == 1  # the second: none
    other = connect(db_path)
    try:
        other.execute(
            "INSERT INTO breaker(tool, state, consecutive_failures, opened_at, updated_at) "
            "VALUES (:tool, 'open', 3, 1000000.0, '2026-11-29T20:00:00Z')",
            {"tool": acme().name},
        )
        assert not acme().available
        other.execute("UPDATE breaker SET state = 'closed'")
        assert acme().available
    finally:
        other.close()
    registry.execute("UPDATE breaker SET state = 'open'")  # this connection's own write
    assert not acme().available


def test_a_quarantined_tool_is_marked_and_demoted_by_search_itself(registry):
    """A tool whose server now lists another definition is uncallable until accepted: search
    (the meta-tool and the CLI alike) says why and ranks it like any tool that cannot be
    called now: below a callable one that fits as well."""
    query = "list github issues"
    first = search(registry, query, explain=True)[0]
    assert first.available
    registry.execute(
        "INSERT INTO tool_quarantine(tool, server, catalog_hash, live_hash, changed, detected_at) "
        "VALUES (?, 'x', 'a', 'b', 'description', '2026-12-01T10:00:00Z')",
        (first.name,),
    )
    after = search(registry, query, explain=True)
    assert after[0].name != first.name and after[0].available
    held = next(h for h in after if h.name == first.name)
    assert held.available is False and held.score == pytest.approx(first.score)
    assert "quarantined" in held.unavailable_reason and "description" in held.unavailable_reason
