"""The fit gate (router/catalog/fit_gate.py) on the real seeded catalog and through a real
router over stdio: a request nothing callable fits gets an empty page naming the server that
would, a request nothing at all fits gets an empty page saying so, a request that only asks to
read never gets a tool that changes things as a loose match, and `context-router search`
shows the page mcp_search_tools answers."""

import json
import subprocess
from dataclasses import replace

import pytest

from router.backends.servers import SearchSettings
from router.catalog.fit_gate import (
    ADAPTIVE_CUT,
    MIN_COSINE,
    MIN_COSINE_TO_CHANGE,
    MIN_COSINE_TO_CHANGE_AS_ASKED,
    MIN_COSINE_WITH_WORDS,
    MIN_COVERAGE,
    MIN_COVERAGE_WITHOUT_MODEL,
    STRONG_EXAMPLE_COSINE,
    UNCALLABLE_COSINE_MARGIN,
    fits_alone,
    fitting,
)
from router.catalog.request_intent import asks_only_to_read, one_slip_apart
from router.catalog.search import Evidence, SearchHit, search
from router.facade.search_page import NO_CALLABLE_FIT, NOTHING_FITS, page_for_query
from router.paths import SHIPPED_SERVERS_FILE
from tests.conftest import project_env
from tests.facade_support import CONTEXT_ROUTER, json_of, make_workspace, running_router
from tests.test_search_page import default_install

pytestmark = pytest.mark.anyio

UNCALLABLE_ONLY = {
    "decompile the main function of this binary": "ghidra",
    # a callable tool reads the page or tells the date, but the asked job is another's
    "take a full-page screenshot of https://example.com": "crawl4ai",
    "what's the news today": "searxng",
    "take a screenshot of the phone": "adb",
    "run my godot game project": "godot",
    "search the web for the latest python release": "searxng",
}
NOTHING_IN_THE_CATALOG = [
    "book a flight to Paris for next Tuesday",
    "order two pizzas for delivery",
    # a time in the request is no reason to offer the clock
    "schedule a call with the design team tomorrow at 3pm",
]
# requests that only ask to read or look; the ranking holds tools that change things for each
READ_REQUESTS = [
    "read the contents of README.md",
    "see which lines were changed",
    "what is left to commit",
    "show me the branches",
    "look at the last commit",
    "which files did I change",
    "show me what's in config.py",
]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    from router.catalog.load import load_catalog
    from router.db import connect
    from router.paths import SEEDS_DIR

    conn = connect(tmp_path_factory.mktemp("gate") / "seeded.db")
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    yield conn
    conn.close()


def page_for(conn, query: str, unavailable: dict[str, str]) -> dict:
    return page_for_query(conn, query, limit=10, unavailable=unavailable, settings=SearchSettings())


def test_a_request_only_an_uncallable_server_fits_gets_no_callable_tool_and_that_server_first(seeded):
    unavailable = default_install(seeded)
    for query, server in UNCALLABLE_ONLY.items():
        hits = search(seeded, query, limit=10, unavailable=unavailable, callable_limit=True, evidence=True)
        assert any(hit.available for hit in hits), query  # the ranking had callable filler
        page = page_for(seeded, query, unavailable)
        assert page["tools"] == [], (query, page["tools"])
        assert page["unavailable"][0]["server"] == server, query
        assert page["note"] == NO_CALLABLE_FIT


def test_a_request_nothing_in_the_catalog_fits_gets_an_empty_page_that_says_so(seeded):
    for unavailable in ({}, default_install(seeded)):
        for query in NOTHING_IN_THE_CATALOG:
            assert search(seeded, query, limit=10, unavailable=unavailable), query  # loose matches
            assert page_for(seeded, query, unavailable) == {"tools": [], "note": NOTHING_FITS}, query


def test_a_request_to_archive_a_folder_gets_no_file_tool(seeded):
    # the file tools list and make folders; none archives one (the filesystem's not-for requests)
    page = page_for(seeded, "zip the logs folder into logs.tar.gz", default_install(seeded))
    assert page["tools"] == [], page["tools"]


def test_a_read_request_never_gets_a_tool_that_changes_things_as_a_loose_match(seeded):
    for query in READ_REQUESTS:
        assert asks_only_to_read(query), query
        hits = search(seeded, query, limit=10, unavailable={}, evidence=True)
        changers = [hit for hit in hits if hit.evidence.changes_things]
        assert changers, query  # the ranking offers some
        kept = fitting(query, hits)
        assert kept, query
        for hit in kept:
            evidence = hit.evidence
            assert not evidence.changes_things or evidence.trigger or evidence.exact_name, (query, hit.name)
    # the same loose kind of match is kept when the request asks for a change
    assert "edit_file" in [
        hit.name
        for hit in fitting(
            "fix the typo in README.md", search(seeded, "fix the typo in README.md", evidence=True)
        )
    ]


def test_the_page_is_cut_where_hits_fall_far_below_the_best(seeded):
    for query in ("list git branches", "what time is it in Tokyo", "read a file"):
        hits = search(seeded, query, limit=10, unavailable={}, evidence=True)
        kept = fitting(query, hits)
        best = max(hit.score for hit in hits)
        assert all(hit.score >= ADAPTIVE_CUT * best for hit in kept)
        assert len(kept) < len(hits) and any(hit.score < ADAPTIVE_CUT * best for hit in hits), query


@pytest.mark.parametrize(
    "query, reads",
    [
        ("show me the git status", True),
        ("could you please list the files in src", True),
        ("what's left to commit?", True),
        ("is my working tree clean", True),
        ("how many commits are on main", True),
        ("tell me which branch I am on", True),
        ("find the old logs and delete them", False),
        ("show the diff, then commit it", False),
        ("how do I delete a branch", False),
        ("stage my changes", False),
        ("remember that the user prefers tabs", False),
        ("switch to the develop branch", False),
        ("open README.md", False),
        ("", False),
        # a slip of a reading opening reads like it; a word in its own right does not
        ("wich branch am i on", True),
        ("shwo me the log", True),
        ("lsit the files in src", True),
        ("book me a flight to Lisbon", False),
        ("seed the database", False),
        ("stgae my changes", False),
        # "get" reads, "get rid of" removes
        ("get the readme", True),
        ("get rid of the note that Dana prefers email", False),
    ],
)
def test_which_requests_only_ask_to_read(query, reads):
    assert asks_only_to_read(query) is reads


def test_a_phrasal_verb_leads_with_the_verb_it_means(seeded):
    from router.catalog.request_intent import action_word

    query = "get rid of the note that Dana prefers email, it's outdated"
    assert action_word(query) == "remove"
    assert action_word("getting rid of old_backup.zip") == "remove"
    page = page_for(seeded, query, default_install(seeded))
    assert page["tools"][0]["name"] == "delete_observations"
    # to jot a fact down is to note it (the memory is asked for with "note"), not to write a file
    query = "jot down on the 'payments-api' entry: rate limit is 100 req/min per key"
    assert action_word(query) == "note"
    assert action_word("Write down that the demo is at 3") == "note"
    page = page_for(seeded, query, default_install(seeded))
    assert [tool["name"] for tool in page["tools"]][:1] == ["add_observations"], page


@pytest.mark.parametrize(
    "typed, word, apart",
    [
        ("wich", "which", True),  # a letter missing
        ("whicch", "which", True),  # a letter extra
        ("whoch", "which", True),  # a letter wrong
        ("whcih", "which", True),  # two neighbours swapped
        ("which", "which", False),
        ("wihhc", "which", False),
        ("wh", "which", False),
    ],
)
def test_one_slip_apart(typed, word, apart):
    assert one_slip_apart(typed, word) is apart


@pytest.mark.slow
async def test_mcp_search_tools_and_the_cli_show_the_same_gated_page(seeded_db, tmp_path):
    workspace = make_workspace(tmp_path / "repository")
    queries = [*list(UNCALLABLE_ONLY)[:2], NOTHING_IN_THE_CATALOG[0], "read the contents of README.md"]
    async with running_router(seeded_db, SHIPPED_SERVERS_FILE, workspace) as router:
        pages = [json_of(await router.call_tool("mcp_search_tools", {"query": q})) for q in queries]
    assert pages[0]["tools"] == [] and pages[0]["unavailable"][0]["server"] == "ghidra"
    assert pages[0]["note"] == NO_CALLABLE_FIT
    assert pages[2] == {"tools": [], "note": NOTHING_FITS}
    assert pages[3]["tools"][0]["name"] == "read_text_file"
    for query, page in zip(queries, pages):

        def cli(*extra: str, query: str = query) -> str:
            return subprocess.run(
                [
                    str(CONTEXT_ROUTER),
                    "search",
                    "--db",
                    str(seeded_db),
                    "--servers",
                    str(SHIPPED_SERVERS_FILE),
                ]
                + [query, *extra],
                capture_output=True,
                text=True,
                cwd=workspace,
                env=project_env(),
                check=True,
            ).stdout

        assert json.loads(cli("--page")) == page, query
        shown = cli()
        named = [tool["name"] for tool in page["tools"]]
        named += [name for entry in page.get("unavailable", []) for name in entry["tools"]]
        listed = [line.split()[1] for line in shown.splitlines() if line[:3].strip().rstrip(".").isdigit()]
        assert listed == named, query
        assert ("note" in page) == (page.get("note", "\0") in shown)


def evidence(**given) -> Evidence:
    fields = {
        "cosine": 0.0,
        "example_cosine": 0.0,
        "coverage": 0.0,
        "trigger": False,
        "boost": False,
        "exact_name": False,
        "changes_things": False,
    }
    return Evidence(**(fields | given))


def test_a_hit_fits_on_its_own_evidence_and_a_tool_that_changes_things_needs_more():
    below, above = MIN_COSINE - 0.01, MIN_COSINE + 0.01
    assert not fits_alone(evidence(cosine=below), reads_only=False)
    assert fits_alone(evidence(cosine=above), reads_only=False)
    # a weaker cosine needs the request's words in the tool's text
    assert not fits_alone(
        evidence(cosine=MIN_COSINE_WITH_WORDS, coverage=MIN_COVERAGE - 0.01), reads_only=False
    )
    assert fits_alone(evidence(cosine=MIN_COSINE_WITH_WORDS, coverage=MIN_COVERAGE), reads_only=False)
    # a trigger phrase or the exact name is enough, whatever the cosine
    assert fits_alone(evidence(trigger=True, changes_things=True), reads_only=True)
    assert fits_alone(evidence(exact_name=True, changes_things=True), reads_only=True)
    # a tool that changes things: a higher cosine, and nothing but a strong sign for a read request
    assert not fits_alone(evidence(cosine=MIN_COSINE_TO_CHANGE - 0.01, changes_things=True), reads_only=False)
    assert fits_alone(evidence(cosine=MIN_COSINE_TO_CHANGE, changes_things=True), reads_only=False)
    assert not fits_alone(evidence(cosine=0.99, changes_things=True), reads_only=True)
    assert fits_alone(evidence(example_cosine=STRONG_EXAMPLE_COSINE, changes_things=True), reads_only=True)
    # without a model the words decide
    assert fits_alone(evidence(coverage=MIN_COVERAGE_WITHOUT_MODEL, semantic=False), reads_only=False)
    assert not fits_alone(
        evidence(coverage=MIN_COVERAGE_WITHOUT_MODEL - 0.01, semantic=False), reads_only=False
    )


def test_the_vocabulary_that_tells_a_slip_from_a_word_is_the_shipped_model_s():
    from router.catalog.english_words import VOCABULARY_FILE, english_words
    from router.semantic.static_model import MODEL_DIR

    assert VOCABULARY_FILE == MODEL_DIR / "tokenizer.json"
    words = english_words()
    assert {"book", "seed", "which", "show"} <= words and "wich" not in words and "##s" not in words


def test_a_change_asked_for_with_the_request_s_verb_needs_a_looser_cosine_but_never_for_a_read():
    asked = {"changes_things": True, "asked_with_action": True}
    assert fits_alone(evidence(cosine=MIN_COSINE_TO_CHANGE_AS_ASKED, **asked), reads_only=False)
    assert not fits_alone(evidence(cosine=MIN_COSINE_TO_CHANGE_AS_ASKED - 0.01, **asked), reads_only=False)
    assert not fits_alone(
        evidence(cosine=MIN_COSINE_TO_CHANGE_AS_ASKED, changes_things=True), reads_only=False
    )
    assert not fits_alone(evidence(cosine=0.99, **asked), reads_only=True)


def test_a_change_no_tool_names_keeps_only_strong_signs_and_tools_of_unknown_behaviour():
    def hit(name: str, **given) -> SearchHit:
        return SearchHit(name, "core", "", 10.0, evidence=evidence(unnamed_change=True, **given))

    hits = [
        hit("changes", cosine=0.9, changes_things=True),
        hit("reads", cosine=0.9, only_reads=True),
        hit("unknown", cosine=0.9),
        hit("asked alike", example_cosine=STRONG_EXAMPLE_COSINE, changes_things=True),
    ]
    assert [h.name for h in fitting("push it", hits)] == ["unknown", "asked alike"]
    # without the request's sign every one of them fits
    plain = [
        SearchHit(h.name, "core", "", 10.0, evidence=replace(h.evidence, unnamed_change=False)) for h in hits
    ]
    assert [h.name for h in fitting("push it", plain)] == ["changes", "reads", "unknown", "asked alike"]


def test_a_callable_hit_well_below_the_match_of_an_uncallable_one_that_fits_is_dropped():
    def hit(name: str, score: float, cosine: float, available: bool = True, **given) -> SearchHit:
        return SearchHit(name, "core", "", score, available, evidence=evidence(cosine=cosine, **given))

    elsewhere = hit("elsewhere", 9.5, 0.7, available=False)
    near = hit("near", 10.0, 0.7 - UNCALLABLE_COSINE_MARGIN + 0.01)
    below = hit("below", 9.0, 0.7 - UNCALLABLE_COSINE_MARGIN - 0.01)
    # ranked above it or below, the callable hit it outmatches goes
    assert [h.name for h in fitting("a request", [near, elsewhere, below])] == ["near", "elsewhere"]
    # an uncallable hit that does not fit itself (too loose, or far below the best) says nothing
    loose = replace(elsewhere, evidence=replace(elsewhere.evidence, cosine=MIN_COSINE - 0.01))
    assert [h.name for h in fitting("a request", [near, loose, below])] == ["near", "below"]
    far = replace(elsewhere, score=ADAPTIVE_CUT * near.score - 0.1)
    assert [h.name for h in fitting("a request", [near, far, below])] == ["near", "below"]
    # nor do cosines nobody measured
    words_only = [
        hit(h.name, h.score, 0.0, h.available, semantic=False, coverage=1.0) for h in (near, elsewhere, below)
    ]
    assert len(fitting("a request", words_only)) == 3
    # when both have examples, how people ask for each decides, not the descriptions
    asked_alike = replace(below, evidence=replace(below.evidence, example_cosine=0.6))
    for margin, kept in ((-0.01, ["elsewhere", "below"]), (0.01, ["elsewhere"])):
        asked = replace(
            elsewhere,
            evidence=replace(elsewhere.evidence, example_cosine=0.6 + UNCALLABLE_COSINE_MARGIN + margin),
        )
        assert [h.name for h in fitting("a request", [asked, asked_alike])] == kept
    # the callable hit asked for with the request's verb does what is asked, where the
    # uncallable one only shares its objects; asked with it too, the match decides again
    verb_asked = replace(below, evidence=replace(below.evidence, asked_with_action=True))
    assert [h.name for h in fitting("a request", [elsewhere, verb_asked])] == ["elsewhere", "below"]
    both_asked = replace(elsewhere, evidence=replace(elsewhere.evidence, asked_with_action=True))
    assert [h.name for h in fitting("a request", [both_asked, verb_asked])] == ["elsewhere"]
    # nor does an uncallable hit that does the callable one's job outdo it
    twin = replace(below, evidence=replace(below.evidence, same_job=frozenset({"elsewhere"})))
    assert [h.name for h in fitting("a request", [elsewhere, twin])] == ["elsewhere", "below"]


def test_a_callable_tool_that_does_an_uncallable_one_s_job_stays_beside_it(seeded):
    query = "whats in ./scripts"
    hits = search(seeded, query, unavailable=default_install(seeded), callable_limit=True, evidence=True)
    listing = next(hit for hit in hits if hit.name == "list_directory")
    assert (
        "r2_list_files" in listing.evidence.same_job
    )  # radare2's lister: "Lists files in the specified path"
    assert "r2_list_files" not in next(h for h in hits if h.name == "search_files").evidence.same_job
    page = page_for(seeded, query, default_install(seeded))
    assert [tool["name"] for tool in page["tools"]][:1] == ["list_directory"], page


def test_a_request_s_verb_keeps_its_callable_tool_beside_an_uncallable_one_sharing_its_objects(seeded):
    # radare2's file lister is closer to two paths than git's stage examples are, and its memory
    # maps closer to "from memory" than the memory's delete; neither does what the verb asks
    for query, first in (
        ("stage src/auth/login.ts and src/auth/session.ts", "git_add"),
        ("drop the 'legacy-cron' entity from memory entirely, it's decomissioned", "delete_entities"),
    ):
        page = page_for(seeded, query, default_install(seeded))
        assert [tool["name"] for tool in page["tools"]][:1] == [first], (query, page)


def test_beside_a_hit_asked_for_by_name_other_servers_loose_matches_go():
    def hit(name: str, server: str, available: bool = True, **given) -> SearchHit:
        found = evidence(cosine=0.5, **given)
        return SearchHit(name, "core", "", 10.0, available, server=server, evidence=found)

    loose, other = hit("loose", "a"), hit("other", "b", available=False)
    close = hit("close", "c", example_cosine=STRONG_EXAMPLE_COSINE)
    sibling = hit("sibling", "named's")
    assert [h.name for h in fitting("a request", [loose, other, close])] == ["loose", "other", "close"]
    for sign in ({"trigger": True}, {"exact_name": True}):
        for available in (True, False):
            named_hit = hit("named", "named's", available, **sign)
            kept = fitting("a request", [loose, named_hit, other, sibling, close])
            assert [h.name for h in kept] == ["named", "sibling", "close"], sign
    # another server's uncallable hit that goes so outdoes nothing: "ls src/components" names
    # the directory lister, radare2's file lister is closer to the words and goes
    closer = hit("closer", "b", available=False, example_cosine=0.9 * STRONG_EXAMPLE_COSINE)
    named_hit = hit("named", "named's", trigger=True, example_cosine=0.5)
    assert [h.name for h in fitting("a request", [named_hit, closer])] == ["named"]


def test_ls_and_a_folder_is_the_directory_listing(seeded):
    page = page_for(seeded, "ls src/components", default_install(seeded))
    assert [tool["name"] for tool in page["tools"]] == ["list_directory"], page


def test_a_request_to_google_something_names_the_web_search_and_no_loose_callable_tool(seeded):
    # "google" is a trigger of the web search (an uncallable server here); the memory's search and
    # the phones' device tools matched the rest of the words
    for query in (
        "google what the current node LTS version is",
        "google around: is there a leak in node 22.3?",
    ):
        page = page_for(seeded, query, default_install(seeded))
        assert page["tools"] == [], (query, page["tools"])
        assert page["unavailable"][0]["tools"][0] == "searxng_web_search", query


@pytest.mark.parametrize(
    "verb, name_words, opposite",
    [
        ("remove", ("create", "directory"), True),
        ("delete", ("git", "create", "branch"), True),
        ("stop", ("run", "project"), True),
        ("run", ("stop", "project"), True),
        ("unstage", ("git", "add"), True),
        ("forget", ("remember",), True),
        # the verb's own side, a name with both, a name with neither, a verb without a reverse
        ("remove", ("remove", "directory"), False),
        ("remove", ("add", "remove", "tag"), False),
        ("remove", ("list", "directory"), False),
        ("reset", ("create", "branch"), False),
        (None, ("create", "directory"), False),
    ],
)
def test_a_name_that_holds_the_reverse_of_the_request_s_verb(verb, name_words, opposite):
    from router.catalog.opposite_actions import names_the_opposite

    assert names_the_opposite(verb, name_words) is opposite


@pytest.mark.parametrize(
    "query, exists",
    [
        ("go to the release-2.1 branch, it already exists", True),
        ("switch to the existing develop branch", True),
        ("create the folder if it is not already there", False),
        ("create a branch off main", False),
    ],
)
def test_a_request_about_a_thing_already_there_is_no_request_to_make_it(query, exists):
    from router.catalog.opposite_actions import names_the_opposite, says_it_exists
    from router.catalog.request_intent import action_word

    assert says_it_exists(query) is exists
    making = names_the_opposite(action_word(query), ("git", "create", "branch"), says_it_exists(query))
    assert making is exists


def test_the_reverse_action_never_leads_where_it_loosely_matches(seeded):
    unavailable = default_install(seeded)
    for query, reverse in {
        "remove the build folder": "create_directory",
        "delete the feature/login branch": "git_create_branch",
        "stop the godot game": "godot_run_project",
        "go to the release branch, it already exists": "git_create_branch",
    }.items():
        hits = search(seeded, query, limit=10, unavailable=unavailable, callable_limit=True, evidence=True)
        ranked = {hit.name: hit for hit in hits}
        assert reverse in ranked and ranked[reverse].evidence.opposite_action, query  # a loose match
        page = page_for(seeded, query, unavailable)
        named = [tool["name"] for tool in page["tools"]]
        named += [name for entry in page.get("unavailable", []) for name in entry["tools"]]
        assert reverse not in named, (query, named)
    # the asked action itself stays
    page = page_for(seeded, "stop the godot game", unavailable)
    assert page["unavailable"][0]["tools"][0] == "godot_stop_project"
