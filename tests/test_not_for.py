"""Not-for requests: the jobs next to a server's own that none of its tools does
(servers.not_for, from a seed's `not_for`). They load with the seed and are refused naming
the file and field when malformed, are embedded like examples (and dropped with them), and a
request closer to one of them than to anything of its server's tools gets none of that
server's tools (fit gate rule 8), while the requests its tools do keep them."""

import json
from dataclasses import replace

import pytest

from router.backends.servers import SearchSettings
from router.catalog import example_vectors
from router.catalog.fit_gate import NOT_FOR_MARGIN, fitting, not_its_servers_job
from router.catalog.load import load_catalog
from router.catalog.models import MAX_NOT_FOR
from router.catalog.search import Evidence, SearchHit, search
from router.db import SCHEMA_VERSION, catalog_version, connect
from router.errors import SeedError
from router.facade.search_page import page_for_query
from router.paths import SEEDS_DIR
from tests.test_fit_gate import seeded  # noqa: F401 (a fixture)

# every server callable: the rule, not availability, empties these pages
NOTHING_UNAVAILABLE: dict[str, str] = {}


def page_tools(conn, query: str) -> list[str]:
    page = page_for_query(conn, query, limit=10, unavailable=NOTHING_UNAVAILABLE, settings=SearchSettings())
    return [tool["name"] for tool in page["tools"]]


def git_seed(seed_dir) -> dict:
    return json.loads((seed_dir / "git.json").read_text(encoding="utf-8"))


def write_git_seed(seed_dir, seed: dict) -> None:
    (seed_dir / "git.json").write_text(json.dumps(seed), encoding="utf-8")


@pytest.mark.parametrize(
    "query",
    [
        "open a PR for my feature branch",
        "push everything I committed up to github",
        "git fetch origin and show me what came in",
        "delete the stale-experiment branch, it's merged",
        "undo my last commit",
    ],
)
def test_a_job_the_git_server_leaves_to_others_gets_none_of_its_tools(seeded, query):  # noqa: F811
    hits = search(seeded, query, evidence=True)
    git_hits = [hit for hit in hits if hit.server == "git"]
    assert git_hits, query  # search still ranks them; the gate is what keeps them off
    assert all(not_its_servers_job(hit.evidence) for hit in git_hits), query
    assert not [name for name in page_tools(seeded, query) if name.startswith("git_")], query


@pytest.mark.parametrize(
    "query, tool",
    [
        ("make a new branch called feature/login", "git_create_branch"),
        ("spin up hotfix/cart-total off main", "git_create_branch"),  # the branch never named so
        ("switch over to the release branch", "git_checkout"),
        ("what's staged for the next commit", "git_diff_staged"),
        ("commit this with the message 'fix typo'", "git_commit"),
        ("show me the last five commits", "git_log"),
    ],
)
def test_the_jobs_the_git_server_does_keep_its_tools(seeded, query, tool):  # noqa: F811
    hits = {hit.name: hit for hit in search(seeded, query, evidence=True)}
    assert not not_its_servers_job(hits[tool].evidence), query
    assert tool in page_tools(seeded, query)[:3], query


def test_other_servers_say_what_they_leave_to_others(seeded):  # noqa: F811
    # fetch does not turn a page into a PDF, the clock sets no timers, memory deletes no branch
    assert "fetch" not in page_tools(seeded, "save https://example.com/guide as a pdf file")
    assert not {"get_current_time", "convert_time"} & set(page_tools(seeded, "set a timer for 25 minutes"))
    # nor does the clock, or git's log of commits between two dates, count days between dates
    assert page_tools(seeded, "how many business days between 2024-03-01 and 2024-11-15?") == []
    assert not {"delete_entities", "delete_observations"} & set(
        page_tools(seeded, "delete the hotfix-12 branch")
    )
    # and still do their own jobs
    assert page_tools(seeded, "grab the text of https://example.com/guide")[:1] == ["fetch"]
    assert page_tools(seeded, "what time is it in Tokyo")[:1] == ["get_current_time"]


def test_a_request_that_only_reads_is_not_taken_for_a_change_its_server_leaves_to_others(seeded):  # noqa: F811
    from router.catalog.embeddings import catalog_model
    from router.catalog.match_plan import term_stats
    from router.catalog.request_intent import asks_for_a_change
    from router.catalog.semantic_index import semantic_index

    assert asks_for_a_change("open a PR for my branch") and asks_for_a_change("delete a branch")
    assert not asks_for_a_change("git blame this file") and not asks_for_a_change("what's the news today")
    # "is there a branch for X" came closest to "open a PR for my branch" of all git's requests
    query = "is there already a branch for the oauth stuff? list em"
    model = catalog_model()
    index = semantic_index(seeded).refresh(model, term_stats(seeded).refresh())
    vector = model.encode([query])[0]
    as_any = index.not_for_matches(vector)["git"]
    as_a_read = index.not_for_matches(vector, reads_only=True)["git"]
    assert as_a_read.not_for < as_any.not_for and as_a_read.tools == as_any.tools
    assert page_tools(seeded, query)[:1] == ["git_branch"]
    # a read the server leaves to others still goes: git blame is not git's here
    assert not [
        name for name in page_tools(seeded, "show me the git blame for src/app.py") if name.startswith("git_")
    ]


def hit(name: str, server: str, **given) -> SearchHit:
    fields = {
        "cosine": 0.6,
        "example_cosine": 0.6,
        "coverage": 0.5,
        "trigger": False,
        "boost": False,
        "exact_name": False,
        "changes_things": False,
    }
    return SearchHit(name, "core", "", 1.0, server=server, evidence=Evidence(**(fields | given)))


def test_the_rule_weighs_the_not_for_match_against_the_server_s_tools_with_a_margin():
    tools = 0.5
    near = hit("near", "git", not_for_cosine=tools + NOT_FOR_MARGIN, server_cosine=tools)
    beyond = hit("beyond", "git", not_for_cosine=tools + NOT_FOR_MARGIN + 0.01, server_cosine=tools)
    other = hit("other", "fetch")  # a server without not-for requests: 0 and 0
    assert [h.name for h in fitting("a request", [near, beyond, other])] == ["near", "other"]
    # a trigger phrase or the exact name still brings it
    for sign in ({"trigger": True}, {"exact_name": True}):
        named = replace(beyond, evidence=replace(beyond.evidence, **sign))
        assert [h.name for h in fitting("a request", [named])] == ["beyond"]


def test_a_seed_s_not_for_requests_load_embed_once_and_leave_with_it(tmp_path, seed_copy):
    conn = connect(tmp_path / "router.db")
    load_catalog(conn, seed_dir=seed_copy, user_files=[])
    stored = conn.execute("SELECT not_for FROM servers WHERE name = 'git'").fetchone()[0].split("\n")
    assert stored == git_seed(seed_copy)["not_for"]
    texts = {text for server, text in example_vectors.embedded_not_for(conn) if server == "git"}
    vectors = {str(h) for (h,) in conn.execute("SELECT example_hash FROM example_embeddings")}
    assert texts and {example_vectors.example_hash(text) for text in texts} <= vectors

    # one more request: one more vector, and search reads it at once
    seed = git_seed(seed_copy)
    before = catalog_version(conn)
    seed["not_for"].append("bisect to find the commit that broke the build")
    write_git_seed(seed_copy, seed)
    summary = load_catalog(conn, seed_dir=seed_copy, user_files=[])
    assert summary.examples_embedded == 1 and catalog_version(conn) > before
    query = "bisect to find the commit that broke the build"
    assert not [name for name in page_tools(conn, query) if name.startswith("git_")]

    # none left: their vectors go, and the git tools are back for that request
    seed.pop("not_for")
    write_git_seed(seed_copy, seed)
    load_catalog(conn, seed_dir=seed_copy, user_files=[])
    assert conn.execute("SELECT not_for FROM servers WHERE name = 'git'").fetchone()[0] == ""
    vectors = {str(h) for (h,) in conn.execute("SELECT example_hash FROM example_embeddings")}
    assert not {example_vectors.example_hash(text) for text in texts} & vectors
    assert all(not not_its_servers_job(h.evidence) for h in search(conn, query, evidence=True))
    conn.close()


@pytest.mark.parametrize(
    "not_for, problem",
    [
        ([""], "empty not-for request"),
        (["x" * 161], "longer than 160 characters"),
        (["push it", "push it"], "given twice"),
        ([f"request {n}" for n in range(MAX_NOT_FOR + 1)], f"at most {MAX_NOT_FOR} per server"),
        ("push my commits", "not_for"),
    ],
)
def test_a_malformed_not_for_is_refused_naming_the_file_and_field(tmp_path, seed_copy, not_for, problem):
    seed = git_seed(seed_copy)
    seed["not_for"] = not_for
    write_git_seed(seed_copy, seed)
    conn = connect(tmp_path / "router.db")
    with pytest.raises(SeedError) as raised:
        load_catalog(conn, seed_dir=seed_copy, user_files=[])
    message = str(raised.value)
    assert "git.json" in message and "not_for" in message and problem in message
    assert conn.execute("SELECT count(*) FROM tools").fetchone()[0] == 0  # nothing half-loaded
    conn.close()


def test_a_version_14_file_gains_the_column_and_keeps_its_servers(tmp_path):
    path = tmp_path / "router.db"
    conn = connect(path)
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    servers = conn.execute("SELECT name, profile FROM servers ORDER BY name").fetchall()
    # what a version-14 router left: no not_for column, nor the trigger on it
    conn.execute("DROP TRIGGER catalog_version_servers_au")
    conn.execute("ALTER TABLE servers DROP COLUMN not_for")
    conn.execute("PRAGMA user_version = 14")
    conn.close()

    conn = connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 15
    assert conn.execute("SELECT name, profile FROM servers ORDER BY name").fetchall() == servers
    assert {row[0] for row in conn.execute("SELECT not_for FROM servers")} == {""}
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])  # the next load fills it in
    assert (
        "open a pull request" in conn.execute("SELECT not_for FROM servers WHERE name = 'git'").fetchone()[0]
    )
    conn.close()


def test_search_all_says_when_a_tool_is_left_off_as_its_server_s_not_for_job(seeded_db, capsys):
    from router.cli import main

    query = "push everything I committed up to github"
    assert main(["search", "--db", str(seeded_db), "--all", query]) == 0
    shown = capsys.readouterr().out
    line = next(line for line in shown.splitlines() if "git_commit" in line)
    assert "(not on the page: its server leaves this job to others (not-for 0." in line
    # a tool kept off for a loose match keeps the general reason
    assert main(["search", "--db", str(seeded_db), "--all", "what time is it in Tokyo"]) == 0
    shown = capsys.readouterr().out
    assert "(not on the page: does not fit the request)" in shown
    assert "leaves this job to others" not in shown
