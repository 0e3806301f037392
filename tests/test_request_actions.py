"""The request's action (router/catalog/request_actions.py) on the real seeded catalog: the
verb a request leads with, the tools asked for with it (their examples and triggers lead with
it) ranking higher and fitting a change on a looser cosine, and a verb of change no tool's text
holds leaving no tool of known behaviour on the page."""

import pytest

from router.catalog.fit_gate import MIN_COSINE_TO_CHANGE, fitting
from router.catalog.match_plan import term_stats
from router.catalog.request_actions import action_stem, asked_with, asks_unnamed_change, in_plain_words
from router.catalog.request_intent import action_word, action_words, asks_only_to_read
from router.catalog.search import ACTION_WEIGHT, search
from router.facade.search_page import NOTHING_FITS
from tests.test_search_page import default_install, default_page


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    from router.catalog.load import load_catalog
    from router.db import connect
    from router.paths import SEEDS_DIR

    conn = connect(tmp_path_factory.mktemp("actions") / "seeded.db")
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    yield conn
    conn.close()


def tool_id(conn, name: str) -> int:
    return int(conn.execute("SELECT id FROM tools WHERE name = ?", (name,)).fetchone()[0])


@pytest.mark.parametrize(
    "text, word",
    [
        ("remember that my editor is neovim", "remember"),
        ("could you please run my game", "run"),
        ("Push my commits", "push"),
        ("show me the log", None),  # a reading opening: every reading tool shares it
        ("find every .proto file under the api dir", "find"),  # one that says how to look
        ("what's left to commit", None),
        ("if it's 3pm in Tokyo, what time is it in Paris", None),  # a function word
        ("", None),
        # a request that opens with its object says what to do at its close
        ("that note about marco is stale, drop it", "drop"),
        ("jenkins no longer needs the mirror, drop that link", "drop"),
        ("the release branch, pls delete it", "delete"),
        ("that note about bob is stale, drop it (keep bob tho)", "drop"),  # an aside after the close
        ("show the diff, then commit it", None),  # it opens with a reading, its first step
        ("remember that X, link them", "remember"),  # it opens with its verb
        # a program's name, then the verb of change it runs
        ("git rebase -i the last 3 commits and squash them", "rebase"),
        ("npm install left-pad", "install"),
        ("git blame src/app.ts", "git"),  # no verb of change after it: the name is all there is
        ("the build failed, why", None),  # a function word first: no program's name
    ],
)
def test_the_action_is_the_verb_a_request_leads_with(text, word):
    assert action_word(text) == word


def test_a_request_that_seeks_finds_the_tool_asked_for_so(seeded):
    # the file search is asked for with "find" ("find all the .tsx files"), the listers are not
    page = default_page(seeded, "find every .proto file under the api dir")
    assert [tool["name"] for tool in page["tools"]][:1] == ["search_files"], page


def test_a_long_run_of_spaces_or_brackets_is_read_once():
    # the aside after a closing imperative once started at every space of a run before it:
    # seconds at this length, where each reading takes milliseconds
    import time

    for text in (" " * 200_000, "a (" + " " * 200_000, "() " * 70_000, "drop it" + " " * 200_000 + "x"):
        started = time.perf_counter()
        action_word(text)
        assert time.perf_counter() - started < 1.0, text[:8]
    # so did the break between a request's clauses, read to tell a request that only reads
    started = time.perf_counter()
    asks_only_to_read("show" + " " * 200_000 + "x")
    assert time.perf_counter() - started < 1.0


def test_a_change_said_at_the_close_finds_its_tool(seeded):
    for query in (
        "the note saying sam is on leave until monday is out of date, drop it",
        "that note about bob being on vacation is stale, drop it (keep bob tho)",
    ):
        page = default_page(seeded, query)
        assert [tool["name"] for tool in page["tools"]][:1] == ["delete_observations"], (query, page)


def test_a_tool_is_asked_for_with_the_verbs_its_examples_and_triggers_lead_with(seeded):
    version = term_stats(seeded).refresh()
    run, stop = tool_id(seeded, "godot_run_project"), tool_id(seeded, "godot_stop_project")
    both = [run, stop]
    assert asked_with(seeded).asked_for(version, action_stem(seeded, "run my game"), both) == {run}
    assert asked_with(seeded).asked_for(version, action_stem(seeded, "stop the game"), both) == {stop}
    # stemmed as the index stems: "remembering" is asked like "remember"
    remember = action_stem(seeded, "remembering my settings")
    assert tool_id(seeded, "create_entities") in asked_with(seeded).asked_for(
        version, remember, [tool_id(seeded, "create_entities")]
    )


def test_a_line_that_names_a_program_and_its_verb_is_asked_with_either(seeded):
    assert action_words("git add") == ("add", "git")
    assert action_words("git log") == ("git",)
    assert action_words("show me the log") == ()
    version = term_stats(seeded).refresh()
    add = tool_id(seeded, "git_add")  # its trigger: "git add"
    for query in ("git add src/app.py", "git whatever"):
        assert asked_with(seeded).asked_for(version, action_stem(seeded, query), [add]) == {add}, query


def test_every_verb_of_doing_away_with_a_thing_is_one_action(seeded):
    version = term_stats(seeded).refresh()
    delete = tool_id(seeded, "delete_entities")  # asked for with "forget", "remove", "delete", "erase"
    for query in ("drop the legacy-cron entity", "nuke the legacy-cron entity", "wipe bob from memory"):
        assert asked_with(seeded).asked_for(version, action_stem(seeded, query), [delete]) == {delete}, query
    # "nuke" is named wherever "delete" is: no change nothing names
    assert not asks_unnamed_change(seeded, "nuke the legacy-cron entity")
    assert asked_with(seeded).asked_for(version, action_stem(seeded, "create the entity"), [delete]) == set()


def test_a_slang_verb_of_removal_is_read_in_plain_words_too(seeded):
    assert in_plain_words("nuke the feat/old-onboarding branch") == "delete the feat/old-onboarding branch"
    assert in_plain_words("pls Wipe bob from memory") == "pls delete bob from memory"
    assert in_plain_words("delete the branch") == "delete the branch"
    assert in_plain_words("show me the branches") == "show me the branches"
    # git's not-for request "delete a branch" is found for the slang: no git tool is offered
    page = default_page(seeded, "nuke the old-onboarding branch")
    assert page == {"tools": [], "note": NOTHING_FITS}, page


def test_the_tool_asked_for_with_the_request_s_verb_ranks_above_its_opposite(seeded):
    hits = {hit.name: hit for hit in search(seeded, "run my godot game", explain=True)}
    assert hits["godot_run_project"].explain.action == ACTION_WEIGHT
    assert hits["godot_stop_project"].explain.action == 0
    assert hits["godot_run_project"].score > hits["godot_stop_project"].score
    for hit in hits.values():
        e = hit.explain
        assert hit.score == pytest.approx(e.trigger + e.bm25 + e.boost + e.semantic + e.action)


def test_a_change_asked_for_with_the_request_s_verb_fits_on_a_looser_cosine(seeded):
    # (without "that", whose fact the request's readings leave out, router/catalog/request_payload.py)
    query = "remember Carol prefers short meetings"
    hits = search(seeded, query, evidence=True)
    entities = next(hit for hit in hits if hit.name == "create_entities")
    assert entities.evidence.changes_things and entities.evidence.asked_with_action
    assert entities.evidence.cosine < MIN_COSINE_TO_CHANGE  # below what a loose change needs
    assert fitting(query, hits)[0].name == "create_entities"


def test_a_request_for_a_change_no_tool_names_gets_no_tool_of_known_behaviour(seeded):
    unavailable = default_install(seeded)
    term_stats(seeded).refresh()
    for query in (
        "push my commits to the remote",
        "merge the feature branch into main",
        "rebase onto main",
        "git rebase -i the last 3 commits and squash them",
    ):
        assert asks_unnamed_change(seeded, query), query
        hits = search(seeded, query, unavailable=unavailable, callable_limit=True, evidence=True)
        assert any(hit.name.startswith("git_") for hit in hits), query  # the loose matches
        assert default_page(seeded, query) == {"tools": [], "note": NOTHING_FITS}, query
    # a reminder is a change nothing here makes: a file's details are no near miss for it
    for query in ("remind me in 20 min to check the deploy", "set a reminder for 4pm to deploy the hotfix"):
        assert asks_unnamed_change(seeded, query), query
        assert default_page(seeded, query) == {"tools": [], "note": NOTHING_FITS}, query
    # a verb the catalog holds, or a request that leads with none, is judged as before
    assert not asks_unnamed_change(seeded, "commit my staged changes")
    assert not asks_unnamed_change(seeded, "what did I push yesterday")


def test_explain_shows_the_action_s_part_when_there_is_one(seeded_db, capsys):
    from router.cli import main

    assert main(["search", "--db", str(seeded_db), "--all", "--explain", "run my godot game"]) == 0
    shown = capsys.readouterr().out
    run = shown[shown.index("godot_run_project") :]
    assert f"+ action {ACTION_WEIGHT:.2f}" in run.splitlines()[2]
    stop = shown[shown.index("godot_stop_project") :]
    assert "+ action" not in stop.splitlines()[2]
