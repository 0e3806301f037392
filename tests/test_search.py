"""Search ranking: safe queries, the score formula and its explanation, filters, determinism."""

import json

import pytest

from router.catalog import match_plan
from router.catalog.load import load_catalog
from router.catalog.phrases import phrase_ngrams
from router.catalog.query_words import MAX_QUERY_CHARS
from router.catalog.search import ACTION_WEIGHT, BOOST_WEIGHT, TRIGGER_WEIGHT, search
from router.errors import QueryError
from router.facade.breaker import OPEN_SECONDS as DEFAULT_BREAKER_OPEN_S


def tool(name, description, *, profile="ops", read_only=True, triggers=(), boost=(), args=None):
    return {
        "name": name,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": args or {"path": {"type": "string", "description": "Where to act."}},
        },
        "annotations": {"readOnlyHint": read_only},
        "profile": profile,
        "server": f"{profile}-server",
        "triggers": list(triggers),
        "boost": list(boost),
    }


SMALL_CATALOG = [
    # bag-of-words identical queries ('rotate logs now' / 'logs rotate now') give every tool
    # the same BM25; only archive_old_logs has the trigger phrase 'rotate logs'
    tool("archive_old_logs", "Archive old log files to cold storage.", triggers=["rotate logs"]),
    tool("logrotate_run", "Rotate logs: rotate the log files now and rotate logs daily."),
    # 'log rotation' as a two-word boost keyword, same word-order trick
    tool("cleanup_rotation", "Clean up files left after each run.", boost=["log rotation"]),
    tool("rotation_policy", "Show the log rotation policy and the rotation schedule for log files."),
    tool("delete_files", "Delete files from the disk.", read_only=False),
    tool("list_files", "List files in a directory."),
    tool("twin_b", "Measure the quantum flux capacitor."),
    tool("twin_a", "Measure the quantum flux capacitor."),
    tool("adb_install_apk", "Install an APK on a device.", profile="android"),
    tool("listPullRequests", "Pull requests of a repository.", profile="dev"),
    # unrelated tools, so that no word above is in half the catalog (such words carry no
    # BM25 weight and are left out of the match; see the pruning tests below)
    tool("convert_units", "Convert a temperature between Celsius and Fahrenheit."),
    tool("send_email", "Send an email message to a recipient."),
    tool("play_song", "Play a song on the speaker."),
    tool("book_table", "Reserve a restaurant table for dinner."),
    tool("weather_now", "Current weather conditions for a city."),
    tool("translate_text", "Translate text into another language."),
]


@pytest.fixture
def small(conn, tmp_path):
    path = tmp_path / "small.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in SMALL_CATALOG))
    load_catalog(conn, seed_dir=None, user_files=[path])
    return conn


def by_name(hits):
    return {hit.name: hit for hit in hits}


# --- safe queries -------------------------------------------------------------------------

HOSTILE_QUERIES = [
    'files" OR "x',
    '"unbalanced',
    "list*",
    "* files",
    "path:files",
    "name_words:list",
    "NEAR(list files, 2)",
    "list NEAR files",
    "-files",
    "list - files",
    "NOT files AND OR",
    "(list files",
    "list) files(",
    "{path description}: files",
    "^list",
    "list + files",
    "files'; DROP TABLE tools; --",
    "\x00list\x00files",
    "列出文件 files",
    "écrire les fichiers",
    "emoji 🚀 files",
    "a" * 10_000,
    ("list files " * 1000)[:10_000],
    "\\\" \\' `files`",
]


@pytest.mark.parametrize("query", HOSTILE_QUERIES, ids=range(len(HOSTILE_QUERIES)))
def test_hostile_queries_never_reach_fts5_as_syntax(small, query):
    hits = search(small, query, limit=50)
    # the words still count as words: each query that names 'files' finds a files tool, with a
    # positive score (a query of no catalog words may find nothing, which is right too)
    if "files" in query and "DROP" not in query:
        assert {"list_files", "delete_files"} & set(by_name(hits))
        assert min(hit.score for hit in hits) > 0
    assert small.execute("SELECT count(*) FROM tools").fetchone()[0] == len(SMALL_CATALOG)


@pytest.mark.parametrize("query", ["", "   \n\t", "*", "!!! ??? ***", "-- () :: **"])
def test_empty_or_wordless_query_is_a_query_error(small, query):
    with pytest.raises(QueryError, match="query"):
        search(small, query)


def test_overlong_query_is_a_query_error(small):
    with pytest.raises(QueryError, match="characters"):
        search(small, "files " * 5000)
    # measured as sent, not as read: a link the words read as "url" does not shorten it
    with pytest.raises(QueryError, match="characters"):
        search(small, "list files at https://example.com/" + "a" * MAX_QUERY_CHARS)


@pytest.mark.parametrize("query", [None, 42, b"list files"])
def test_a_query_that_is_no_text_is_a_query_error(small, query):
    with pytest.raises(QueryError, match="query is empty"):
        search(small, query)


@pytest.mark.parametrize("limit", [0, -1, 51, 1000, True, "5", 2.0, None])
def test_limit_outside_1_to_50_is_a_query_error(small, limit):
    with pytest.raises(QueryError, match="limit must be an integer from 1 to 50"):
        search(small, "files", limit=limit)


@pytest.mark.parametrize("limit", [1, 50])
def test_limits_at_the_bounds_are_accepted(small, limit):
    # 'files' is in six tools' text
    assert len(search(small, "files", limit=limit)) == min(limit, 6)


# --- the score formula --------------------------------------------------------------------


def test_explain_parts_add_up_to_the_score(small):
    for query in ["rotate logs now", "log rotation for files", "install an apk", "list files"]:
        hits = search(small, query, limit=50, explain=True)
        assert hits
        for hit in hits:
            e = hit.explain
            parts = e.trigger + e.bm25 + e.boost + e.semantic + e.action
            assert hit.score == pytest.approx(parts, abs=1e-9)
            assert e.trigger in (0.0, TRIGGER_WEIGHT)
            assert e.boost in (0.0, BOOST_WEIGHT)
            assert e.action in (0.0, ACTION_WEIGHT)


def test_without_explain_no_parts_are_returned(small):
    hit = search(small, "list files")[0]
    assert hit.explain is None and "explain" not in hit.to_dict()


def test_a_trigger_phrase_in_the_query_adds_the_trigger_weight_and_changes_the_order(small):
    # the words' parts alone: the semantic part (tests/test_search_semantic.py) would differ
    # between the two word orders too
    with_phrase = by_name(search(small, "rotate logs now", explain=True, semantic=False))
    scrambled = by_name(search(small, "logs rotate now", explain=True, semantic=False))
    archive, logrotate = "archive_old_logs", "logrotate_run"
    # same words → same BM25 part for every tool
    for name in scrambled:
        assert with_phrase[name].explain.bm25 == pytest.approx(scrambled[name].explain.bm25)
    # without the phrase the tool that says 'rotate logs' most wins on BM25 alone...
    assert scrambled[logrotate].score > scrambled[archive].score
    assert scrambled[archive].explain.trigger == 0
    # ...with it, the trigger's 3.0 lifts archive_old_logs above it (and the query now leads
    # with the verb its trigger leads with: the action's part, router/catalog/request_actions.py)
    assert with_phrase[archive].explain.trigger == TRIGGER_WEIGHT
    assert with_phrase[archive].explain.action == ACTION_WEIGHT and scrambled[archive].explain.action == 0
    assert with_phrase[archive].score == pytest.approx(
        scrambled[archive].score + TRIGGER_WEIGHT + ACTION_WEIGHT
    )
    assert with_phrase[archive].score > with_phrase[logrotate].score
    assert with_phrase[logrotate].explain.trigger == 0


def test_query_ngrams_stop_at_the_longest_phrase_in_the_catalog():
    assert phrase_ngrams("a b c", 2) == ["a", "a b", "b", "b c", "c"]
    assert phrase_ngrams("a b c", 0) == []


def test_part_of_a_trigger_phrase_is_not_a_trigger_match(small):
    hits = by_name(search(small, "rotate", explain=True))
    assert hits["archive_old_logs"].explain.trigger == 0


def test_a_boost_keyword_in_the_query_adds_the_boost_weight_and_changes_the_order(small):
    with_keyword = by_name(search(small, "log rotation please", explain=True, semantic=False))
    scrambled = by_name(search(small, "rotation log please", explain=True, semantic=False))
    boosted, plain = "cleanup_rotation", "rotation_policy"
    assert scrambled[plain].score > scrambled[boosted].score
    assert scrambled[boosted].explain.boost == 0
    assert with_keyword[boosted].explain.boost == BOOST_WEIGHT
    assert with_keyword[boosted].score == pytest.approx(scrambled[boosted].score + BOOST_WEIGHT)
    assert with_keyword[boosted].score > with_keyword[plain].score


def test_trigger_matching_ignores_case_and_edge_punctuation(small):
    hits = by_name(search(small, "Please ROTATE LOGS!", explain=True))
    assert hits["archive_old_logs"].explain.trigger == TRIGGER_WEIGHT


def test_changed_triggers_are_searched_after_a_reload(small, tmp_path):
    changed = [dict(t) for t in SMALL_CATALOG]
    # the longest phrase grows from 2 words to 3: the n-grams looked up must grow with it
    assert by_name(search(small, "rotate logs", explain=True))["archive_old_logs"].explain.trigger
    changed[0]["triggers"] = ["shelve old logs"]
    path = tmp_path / "changed.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in changed))
    load_catalog(small, seed_dir=None, user_files=[path])
    assert by_name(search(small, "rotate logs", explain=True))["archive_old_logs"].explain.trigger == 0
    hit = search(small, "please shelve old logs", explain=True)[0]
    assert hit.name == "archive_old_logs" and hit.explain.trigger == TRIGGER_WEIGHT


def test_tool_names_are_split_into_words(small):
    assert search(small, "pull requests")[0].name == "listPullRequests"
    assert search(small, "install apk")[0].name == "adb_install_apk"


def test_stemming_finds_other_forms_of_a_word(small):
    assert search(small, "installing APKs")[0].name == "adb_install_apk"


# --- filters and availability --------------------------------------------------------------


def test_profile_filter_keeps_only_that_profile(small):
    assert {hit.profile for hit in search(small, "files apk pull requests", limit=50)} == {
        "ops",
        "android",
        "dev",
    }
    hits = search(small, "files apk pull requests", profile="android", limit=50)
    assert [hit.name for hit in hits] == ["adb_install_apk"]
    # a profile the catalog does not have is a mistake said with the ones it has, not an empty list
    with pytest.raises(
        QueryError, match="unknown profile 'no-such-profile'; the catalog's profiles are: android, dev, ops"
    ):
        search(small, "files", profile="no-such-profile")


def test_roles_that_may_not_mutate_do_not_see_mutating_tools(small):
    assert "delete_files" in by_name(search(small, "delete files", limit=50))
    hits = search(small, "delete files", limit=50, may_call_mutating=False)
    assert "delete_files" not in by_name(hits)
    assert "list_files" in by_name(hits)


def test_a_tool_whose_breaker_is_open_is_shown_unavailable_for_the_open_window(small):
    opened_at = 1_000_000.0
    small.execute(
        "INSERT INTO breaker(tool, state, consecutive_failures, opened_at, updated_at) "
        "VALUES ('list_files', 'open', 3, :at, '2026-11-29T20:00:00Z')",
        {"at": opened_at},
    )
    during = by_name(search(small, "list files", now=opened_at + DEFAULT_BREAKER_OPEN_S - 1))
    after = by_name(search(small, "list files", now=opened_at + DEFAULT_BREAKER_OPEN_S + 1))
    assert during["list_files"].available is False
    assert during["delete_files"].available is True
    assert after["list_files"].available is True
    small.execute("UPDATE breaker SET state = 'half_open' WHERE tool = 'list_files'")
    assert by_name(search(small, "list files", now=opened_at + 1))["list_files"].available is True


# --- determinism --------------------------------------------------------------------------


def test_ties_are_broken_by_name_and_results_repeat(small):
    # the twins differ by a letter of their names, which the semantic part sees
    hits = search(small, "quantum flux capacitor", explain=True, semantic=False)
    assert [hit.name for hit in hits] == ["twin_a", "twin_b"]
    assert hits[0].score == hits[1].score
    runs = {tuple((h.name, h.score) for h in search(small, "log files rotation")) for _ in range(5)}
    assert len(runs) == 1


def test_hits_never_carry_schemas(small):
    hit = search(small, "list files")[0].to_dict()
    assert set(hit) == {"name", "profile", "summary", "score", "available"}


# --- large catalogs: what the match plan scores -------------------------------------------


@pytest.fixture
def reports(conn, tmp_path):
    """'report' in 4 of 6 tools (no BM25 weight), 'alpha' in 2, 'beta' in 1."""
    tools = [
        tool("r1", "Make a report about alpha."),
        tool("r2", "Make a report about alpha and beta."),
        tool("r3", "Print a report."),
        tool("r4", "Mail the report."),
        tool("x1", "Play a song."),
        tool("x2", "Water the plants."),
    ]
    path = tmp_path / "reports.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in tools))
    load_catalog(conn, seed_dir=None, user_files=[path])
    return conn


def scored_words(conn, query):
    from router.catalog.query_words import query_words

    return [w.text for w in match_plan.plan(conn, query_words(conn, query), []).scored]


def test_words_in_half_the_catalog_are_left_out_of_the_score(reports):
    assert scored_words(reports, "report alpha beta") == ["alpha", "beta"]
    # ...unless nothing else in the query is in the catalog
    assert scored_words(reports, "report zzz") == ["report"]
    assert {hit.name for hit in search(reports, "report please", semantic=False)} == {"r1", "r2", "r3", "r4"}
    assert [hit.name for hit in search(reports, "report beta", semantic=False)] == ["r2"]


def test_term_statistics_follow_catalog_changes(small, tmp_path):
    before = search(small, "capacitor")
    path = tmp_path / "more.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in SMALL_CATALOG[:6]))
    load_catalog(small, seed_dir=None, user_files=[path])
    assert before and search(small, "capacitor") == []


def test_the_sqlite3_shell_reads_the_search_objects(small, db_path):
    """v_search, the phrase index and the term statistics are readable by the shell people
    have (Debian 12's sqlite3 3.40, older than apsw's SQLite)."""
    import subprocess

    result = subprocess.run(
        [
            "sqlite3",
            str(db_path),
            "SELECT name || '|' || profile FROM v_search WHERE name = 'adb_install_apk';"
            "SELECT phrase || '|' || kind FROM tool_phrases ORDER BY phrase;"
            "SELECT doc FROM tools_fts_terms WHERE term = 'file';",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert result.stdout.splitlines() == [
        "adb_install_apk|android",
        "log rotation|boost",
        "rotate logs|trigger",
        "6",
    ]


def test_a_long_query_keeps_its_rarest_words(small, monkeypatch):
    # 40 words the catalog does not hold, then the two that matter
    filler = " ".join(f"zzword{i}" for i in range(40))
    assert search(small, f"{filler} install apk")[0].name == "adb_install_apk"
    monkeypatch.setattr(match_plan, "MAX_SCORED_WORDS", 1)
    assert scored_words(small, "files apk") == ["apk"]
