"""A request read without its payload (router/catalog/request_payload.py): each kind of payload
becomes the word for its kind or goes, the ask stays; and on the seeded catalog a request
whose names and paths differ from every example's finds the tool its ask matches."""

import pytest

from router.catalog.request_payload import (
    FACT,
    MAX_READ_CHARS,
    PATTERNS,
    TOPIC,
    without_fact,
    without_payload,
    without_topic,
)
from router.catalog.search import search
from tests.test_fit_gate import seeded  # noqa: F401 (a fixture)
from tests.test_search_page import default_page


@pytest.mark.parametrize(
    "request_text, reading",
    [
        ("pull up the entries for Priya and Sam", "pull up the entries for and"),
        ("grab https://example.com/docs?page=2 as markdown", "grab web page as markdown"),
        ("delete tmp/old_dump.sql, we don't need it", "delete file , we don't need it"),
        ("is build/ empty?", "is folder empty?"),
        ("add .venv/ to .gitignore", "add folder to file"),
        ("e.g. the end.", "e.g. the end."),
        ("look at shots/error.PNG", "look at image file"),
        ("play intro.mp3", "play audio file"),
        ("save it as invoice.pdf", "save it as pdf file"),
        ("what changed in commit 4e1f0c2?", "what changed in commit commit ?"),
        ("what did 3f9c2e1 actually touch", "what did commit actually touch"),
        ("rename the function at 0x140001a80", "rename the function at address"),
        ("commit with the message 'fix the pager'", "commit with the message text"),
        ("call it parse_config", "call it"),
        ("show pyproject.toml at tag v0.3.0", "show file at tag"),
        ("mail bob@example.org the log", "mail email address the log"),
        # a JSON body is one thing, not the words its quotes hold
        ('POST {"name":"test"} to https://httpbin.org/post', "POST json to web page"),
        ("a { brace left open", "a { brace left open"),
        # a port, a year: what it is, not its digits; a count and a time stay the ask's words
        (
            "bump the port in docker-compose.yml from 5432 to 5433",
            "bump the port in file from number to number",
        ),
        ("the last 50 lines of app.log at 09:30", "the last 50 lines of file at 09:30"),
        # a host name is a link without its scheme; a script's name is no host
        ("is status.stripe.com showing any incidents?", "is web page showing any incidents?"),
        ("what does the readme on github.com/astral-sh/uv say", "what does the readme on web page say"),
        ("run deploy.sh", "run file"),
        # a name with more than one dot is one file; a sentence's last dot is no extension
        ("rename old_config.json -> config.legacy.json", "rename file -> file"),
        ("open app.test.ts", "open file"),
        ("open app.py.", "open file ."),
        # a date is a date, not three numbers (nor a path)
        (
            "how many business days between 2024-03-01 and 2024-11-15?",
            "how many business days between date and date ?",
        ),
        ("commits since 3/1/2024", "commits since date"),
        # a picture's format on its own is a picture; in a file's name it is the file's kind
        ("full page png of https://acme.io/pricing", "full page image of web page"),
        ("look at shot.png", "look at image file"),
        # numbers and times are the ask's own words; the first word is never taken for a name
        ("if it's 3pm in London, what time is it at 09:30 UTC", "if it's 3pm in , what time is it at 09:30"),
        ("Show the last 10 commits", "Show the last 10 commits"),
        ("what did I change since I'm back", "what did I change since I'm back"),
        ("", ""),
    ],
)
def test_the_payload_is_replaced_by_its_kind(request_text, reading):
    assert without_payload(request_text) == reading


def test_no_pattern_reads_a_long_run_once_per_character():
    # runs that made the first patterns backtrack over the rest of the text at every character
    # (seconds at this length); read once, each takes milliseconds
    import time

    runs = ["x." * 20_000, "a-" * 20_000, "a.a+" * 10_000, "a/" * 20_000, "'" * 40_000, "A " * 40_000]
    runs += ["{a" * 20_000, "{" + "a" * 40_000, "1" * 40_000, "1:" * 20_000]
    for pattern in PATTERNS:
        for text in runs:
            started = time.perf_counter()
            pattern.sub(" ", text)
            assert time.perf_counter() - started < 0.5, (pattern.pattern, text[:8])


def test_a_paste_longer_than_a_request_is_read_as_written():
    paste = "see tmp/app.log " * (MAX_READ_CHARS // 16 + 1)
    assert without_payload(paste) == paste
    assert without_payload(paste[:MAX_READ_CHARS]) != paste[:MAX_READ_CHARS]


def test_names_in_a_request_no_longer_hide_the_example_that_asks_alike(seeded, monkeypatch):  # noqa: F811
    query = "pull up the entries for Priya and Sam"
    read = {hit.name: hit.evidence.example_cosine for hit in search(seeded, query, evidence=True)}
    # the request read as written only: its names weigh as much as its ask
    monkeypatch.setattr("router.catalog.search.without_payload", lambda text: text)
    written = {hit.name: hit.evidence.example_cosine for hit in search(seeded, query, evidence=True)}
    assert read["open_nodes"] >= written["open_nodes"] + 0.2
    assert read["open_nodes"] == max(read.values())


def test_a_host_named_without_its_scheme_is_fetched_not_matched_by_its_words(seeded):  # noqa: F811
    # "status" in the host's name is no git status: the words read a link as a link
    query = "is status.stripe.com showing any incidents rn?"
    page = default_page(seeded, query)
    assert [tool["name"] for tool in page["tools"]][:1] == ["fetch"]


def test_a_request_to_change_a_number_in_a_file_finds_the_file_editor(seeded):  # noqa: F811
    # the digits of two ports weighed more than the ask; read as numbers, the request is as close
    # to the editor's example "change the port from 8080 to 9000 in server.js" as it looks
    query = "bump the postgres port in docker-compose.yml from 5432 to 5433"
    page = default_page(seeded, query)
    assert [tool["name"] for tool in page["tools"]][:1] == ["edit_file"], page


def test_a_commit_id_reads_as_a_commit_not_a_memory_address(seeded):  # noqa: F811
    # a disassembler's cross references were closer to "what did <address> touch" than git's show
    page = default_page(seeded, "what did 3f9c2e1 actually touch")
    assert [tool["name"] for tool in page["tools"]][:1] == ["git_show"], page


def test_a_picture_of_a_page_is_no_fetch(seeded):  # noqa: F811
    # fetch's examples of reading a page were as close as the page screenshot's; "png" as a
    # picture leaves the screenshot ahead by the margin of rule 5
    page = default_page(
        seeded, "full page png of https://staging.acme.io/pricing so i can eyeball the layout"
    )
    assert page["tools"] == [] and page["unavailable"][0]["server"] == "crawl4ai", page


def test_a_request_to_post_a_json_body_is_no_fetch(seeded):  # noqa: F811
    # the fetch server's not-for "send a POST request to a URL with a JSON body" is found once the
    # body reads as json rather than as its quoted words
    query = 'POST {"name":"test"} to https://httpbin.org/post and show me the response'
    page = default_page(seeded, query)
    assert "fetch" not in [tool["name"] for tool in page["tools"]], page


def test_a_fact_to_keep_finds_the_memory_s_writers_not_what_the_fact_says(seeded):  # noqa: F811
    # the fact's words ("owns", "service", "lines") matched a memory search and a file reader
    query = "remember that jonas owns the billing service and prefers PRs under 300 lines"
    page = default_page(seeded, query)
    assert [tool["name"] for tool in page["tools"]][:1] == ["create_entities"]
    # the fact's words ("plan lives in runbook/atlas.md") matched the file writer
    query = (
        "save a note on project Atlas: deploy freeze starts dec 18, rollback plan lives in runbook/atlas.md"
    )
    page = default_page(seeded, query)
    assert [tool["name"] for tool in page["tools"]][:1] in (["add_observations"], ["create_entities"]), page


@pytest.mark.parametrize(
    "reading, asked",
    [
        ("do you have anything saved about the kubernetes cluster", "do you have anything saved"),
        ("has anything been saved about the redis migration?", "has anything been saved"),
        ("what do we know regarding the billing service", "what do we know"),
        # what follows a colon is what to act on
        ("what's in there: the api notes", "what's in there"),
        ("keep in mind for later: likes short commit messages", "keep in mind that"),
        # a fact to keep is what to keep, not what is asked
        ("remember that jonas prefers tabs", "remember that"),
        # a fact that ties two things keeps how it ties them
        ("remember that jonas owns the billing service", "remember that one owns another"),
        ("remember: payments-api depends on redis-cache", "remember that one depends on another"),
        ("save a note that falcon ships march 3, runs on postgres 16", "save a note that"),
        ("note: the api is down", "note that"),
        # where the fact goes is part of the ask
        ("save a note on project atlas: deploy freeze starts dec 18", "save a note on project atlas that"),
        ("jot down on the payments entry: rate limit is 100/min", "jot down on the payments entry that"),
        ("show the commit that broke the build", "show the commit that broke the build"),
        # too little left before the topic to match on, or no topic at all
        ("tell me about the release", "tell me about the release"),
        ("turn on dark mode", "turn on dark mode"),
        ("show the last 10 commits", "show the last 10 commits"),
    ],
)
def test_a_reading_without_its_topic_keeps_what_is_asked(reading, asked):
    assert without_topic(reading) == asked


def test_the_topic_pattern_reads_a_long_request_once():
    import time

    for text in ("a " * 40_000, "about " * 20_000, "x on" * 20_000):
        started = time.perf_counter()
        TOPIC.sub("", text)
        assert time.perf_counter() - started < 0.5, text[:8]
    for text in ("remember " * 20_000, "note " * 20_000 + "that", "x " * 40_000 + "remember that x"):
        started = time.perf_counter()
        FACT.match(text)
        assert time.perf_counter() - started < 0.5, text[:8]
    paste = "anything saved about it " * (MAX_READ_CHARS // 24 + 1)
    assert without_topic(paste) == paste
    assert without_fact("remember that " + paste) == "remember that " + paste


def test_a_recall_about_a_topic_no_example_names_finds_the_memory_search(seeded, monkeypatch):  # noqa: F811
    query = "do you have anything saved about the kubernetes cluster"

    def first_on_page() -> list[str]:
        page = default_page(seeded, query)
        return [tool["name"] for tool in page["tools"]][:1]

    assert first_on_page() == ["search_nodes"]
    # read with its topic, the topic's words pull the request towards a web search
    monkeypatch.setattr("router.catalog.search.without_topic", lambda text: text)
    assert first_on_page() != ["search_nodes"]
