"""A request that changes a file it names by its path (router/catalog/request_objects.py), and
the fit gate's rule 7 on the real seeded catalog: a memory's delete is no way to delete a
file, nor is reading it."""

import pytest

from router.catalog.request_intent import action_word
from router.catalog.request_objects import (
    changes_a_named_path,
    names_a_path,
    removes_a_named_path,
    takes_a_path,
)
from router.catalog.search import search
from tests.test_fit_gate import page_for, seeded  # noqa: F401 (a fixture)
from tests.test_search_page import default_install


@pytest.mark.parametrize(
    "query, changes, removes",
    [
        ("delete tmp/debug.log, we don't need it anymore", True, True),
        ("please remove the build/ folder", True, True),
        ("rm old_backup.zip", True, True),
        ("rename old.py to new.py", True, False),
        ("move notes.md into docs/", True, False),
        ("remove the build folder", True, True),
        ("nuke every file in the logs directory", True, True),
        # a verb that belongs to one kind of thing decides on its own
        ("remember that the api docs live in docs/api.md", False, False),
        # no path named: the object may be anything
        ("delete the old-experiment branch", False, False),
        ("delete everything you know about Bob", False, False),
        # a link is no file
        ("remove https://example.com/page from the list", False, False),
        ("show me tmp/debug.log", False, False),
    ],
)
def test_which_requests_change_a_file_they_name(query, changes, removes):
    verb = action_word(query)
    assert changes_a_named_path(query, verb) is changes
    assert removes_a_named_path(query, verb) is removes


def test_which_arguments_take_a_path():
    assert takes_a_path("path\ncontent")
    assert takes_a_path("repo path\nfiles")
    assert takes_a_path("source\ndestination")
    assert not takes_a_path("entity names An array of entity names to delete")
    assert not takes_a_path("")
    # the repository a tool works in is where, not what: git's reset takes no file
    assert not takes_a_path("repo path")
    assert not takes_a_path(
        "repo path The path to the Git repository.\nbranch type Whether to list local branches"
    )
    # a word that names a path only as an argument's whole name
    assert not takes_a_path("source timezone Source IANA timezone name (e.g., 'America/New_York')")


def test_a_tool_that_only_works_in_the_repository_is_no_step_for_a_named_file(seeded):  # noqa: F811
    # git's reset is close to "we don't need it anymore" but cannot remove tmp/cache.json, and
    # git's log shares a word with logs/server.log but reads no file
    unavailable = default_install(seeded)
    assert page_for(seeded, "nuke tmp/cache.json, we don't need it anymore", unavailable)["tools"] == []
    page = page_for(seeded, "just the first 40 lines of logs/server.log", unavailable)
    assert [tool["name"] for tool in page["tools"]][:1] == ["read_text_file"], page


def test_a_tool_that_cannot_act_on_the_named_file_is_not_on_its_page(seeded):  # noqa: F811
    unavailable = default_install(seeded)
    for query, loose in {
        "delete old_backup.zip": "delete_entities",
        "delete the file notes.txt": "read_text_file",
    }.items():
        hits = search(seeded, query, limit=10, unavailable=unavailable, callable_limit=True, evidence=True)
        missed = {hit.name for hit in hits if hit.evidence.misses_the_path}
        assert loose in missed, query  # the ranking had it
        page = page_for(seeded, query, unavailable)
        assert not {tool["name"] for tool in page["tools"]} & missed, (query, page["tools"])
    # a tool that takes the path keeps its place
    page = page_for(seeded, "rename old.py to new.py", unavailable)
    assert page["tools"][0]["name"] == "move_file"


def test_which_requests_name_a_path():
    assert names_a_path("peek at the last 50 lines of logs/server.log")
    assert names_a_path("what does .env.example contain")
    assert not names_a_path("grab https://example.com/a/b.html")
    assert not names_a_path("show the device logs")


def test_an_uncallable_tool_that_takes_no_path_does_not_outdo_a_file_reader_for_a_named_file(
    seeded,  # noqa: F811
    monkeypatch,
):
    # a phone's log reader asks for logs in words closer to "peek at the last 50 lines" than
    # the file reader's examples do, but it cannot read logs/server.log
    query = "peek at the last 50 lines of logs/server.log"
    unavailable = default_install(seeded)
    hits = {hit.name: hit for hit in search(seeded, query, limit=10, unavailable=unavailable, evidence=True)}
    assert hits["adb_get_logcat"].evidence.ignores_the_path
    assert not hits["read_text_file"].evidence.ignores_the_path
    assert "read_text_file" in [tool["name"] for tool in page_for(seeded, query, unavailable)["tools"]]
    # without the path rule, rule 5 takes the reader off the page
    monkeypatch.setattr("router.catalog.search.names_a_path", lambda query: False)
    assert "read_text_file" not in [tool["name"] for tool in page_for(seeded, query, unavailable)["tools"]]
