"""The agent's search page (router/facade/search_page.py) on the real seeded catalog: callable
tools only, each uncallable server said once and only when it matches better, and never more
than PAGE_TOKEN_BUDGET tokens, whatever the query or the catalog holds."""

import json

import pytest

from router.backends.servers import SearchSettings
from router.catalog.fit_gate import fitting
from router.catalog.load import load_catalog
from router.catalog.search import MAX_LIMIT, SearchHit, search
from router.db import connect
from router.facade.search_page import (
    MAX_SERVER_ENTRIES,
    PAGE_TOKEN_BUDGET,
    compact_json,
    compose_page,
    fit_page,
    page_for_query,
    page_tokens,
)
from router.paths import SEEDS_DIR
from router.tokens import count_tokens
from tests.test_search_cli import PAGE_QUERIES

CORE = {"time", "git", "fetch", "filesystem", "memory"}


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    conn = connect(tmp_path_factory.mktemp("page") / "seeded.db")
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    yield conn
    conn.close()


def default_install(conn) -> dict[str, str]:
    """The shipped servers as a fresh install has them: the core ones callable, the rest not."""
    return {
        str(name): f"not installed: its program for {name} is not found; to install it: get-{name} --now"
        for (name,) in conn.execute("SELECT name FROM servers")
        if name not in CORE
    }


def page_for(conn, query: str, unavailable: dict[str, str], limit: int = 10) -> dict:
    return page_for_query(conn, query, limit=limit, unavailable=unavailable, settings=SearchSettings())


def default_page(conn, query: str) -> dict:
    """The page a fresh install's agent gets for the request."""
    return page_for(conn, query, default_install(conn))


def test_a_page_lists_callable_tools_and_names_each_better_uncallable_server_once(seeded):
    unavailable = default_install(seeded)
    page = page_for(seeded, "decompile a function", unavailable)
    servers_of = dict(seeded.execute("SELECT name, server FROM tools").fetchall())
    assert all(servers_of[tool["name"]] in CORE for tool in page["tools"])
    entries = page["unavailable"]
    assert [entry["server"] for entry in entries][:2] == ["ghidra", "radare2"]
    assert len({entry["server"] for entry in entries}) == len(entries) <= MAX_SERVER_ENTRIES
    for entry in entries:
        assert all(servers_of[name] == entry["server"] for name in entry["tools"])
        # the reason, install line included, is said once for the whole server
        assert compact_json(page).count(f"get-{entry['server']} --now") == 1
    assert "ghidra_decompile_function" in entries[0]["tools"]


def test_an_uncallable_match_below_the_best_callable_tool_is_not_mentioned(seeded):
    unavailable = default_install(seeded)
    hits = search(seeded, "list git branches", limit=MAX_LIMIT, unavailable=unavailable)
    assert any(not hit.available for hit in hits)  # matches exist, all of them ranked below
    page = compose_page(hits, 10)
    assert "unavailable" not in page
    callable_names = [hit.name for hit in hits if hit.available][:10]
    assert [tool["name"] for tool in page["tools"]] == callable_names
    assert page["tools"][0]["name"] == "git_branch"


def test_on_a_full_install_a_page_is_the_fitting_part_of_the_ranking(seeded):
    cut = 0
    for query in PAGE_QUERIES:
        hits = search(seeded, query, limit=10, unavailable={}, evidence=True)
        kept = fitting(query, hits)
        page = page_for(seeded, query, {})
        assert kept, query
        cut += len(kept) < len(hits)  # the gate left loose matches out
        assert [tool["name"] for tool in page["tools"]] == [hit.name for hit in kept], query
        # a summary may be cut to fit the signatures in; the best hit keeps its signature
        assert "signature" in page["tools"][0], query
        for tool, hit in zip(page["tools"], kept):
            assert tool["summary"] == hit.summary or hit.summary.startswith(tool["summary"][:-1].rstrip())
        assert "unavailable" not in page and "note" not in page
    assert cut >= len(PAGE_QUERIES) // 2


def test_every_page_stays_within_the_budget_on_both_installs(seeded):
    queries = [*PAGE_QUERIES, "decompile the binary and list its strings", "godot android blender web"]
    for unavailable in (default_install(seeded), {}):
        for query in queries:
            for limit in (10, MAX_LIMIT):
                page = page_for(seeded, query, unavailable, limit)
                assert page_tokens(page) <= PAGE_TOKEN_BUDGET, (query, limit)
                assert page["tools"] or page.get("unavailable"), query


def long_hit(i: int, available: bool) -> SearchHit:
    name = f"tool_{i:03d}_" + "x" * 118
    reason = None if available else "not installed: " + "install this very long thing; " * 100
    return SearchHit(
        name, "profile-" + "p" * 40, "word " * 20, 10.0 - i, available, reason, server=f"server-{i}"
    )


def test_the_budget_holds_for_the_longest_names_and_install_lines_a_catalog_may_hold():
    # uncallable ones first, each of its own server, then callable ones: every kind of entry
    hits = [long_hit(i, available=i >= 5) for i in range(50)]
    page = compose_page(hits, MAX_LIMIT)
    assert page_tokens(page) <= PAGE_TOKEN_BUDGET
    # the cuts keep the best of each kind: the best callable tool and the best server
    assert page["tools"][0]["name"] == hits[5].name
    assert page["unavailable"][0]["server"] == "server-0"
    assert page["unavailable"][0]["reason"].startswith("not installed: ")


def test_a_page_over_budget_shortens_the_lowest_summaries_first(seeded):
    hits = search(seeded, "read a file", limit=10, unavailable={})
    full = compose_page(hits, 10)
    budget = page_tokens(full) - 10
    cut = compose_page(hits, 10, budget=budget)
    assert page_tokens(cut) <= budget
    assert [tool["name"] for tool in cut["tools"]] == [hit.name for hit in hits]  # nothing dropped
    assert cut["tools"][0]["summary"] == hits[0].summary  # the best one is untouched
    assert cut["tools"][-1]["summary"].endswith("…")


def test_fit_page_empties_a_page_nothing_of_which_fits():
    page = {"tools": [{"name": "a" * 128, "profile": "p", "summary": "s"}]}
    assert fit_page(page, budget=5) == {"tools": []}
    assert json.loads(compact_json(page)) == {"tools": []}


def test_text_spelling_a_special_token_is_counted_as_ordinary_text():
    # a tool's summary may say anything: counting must neither refuse it nor read one token
    assert count_tokens("<|endoftext|>") == count_tokens("<|endoftext|") + count_tokens(">") > 1


def test_callable_limit_counts_only_callable_hits_and_keeps_the_order(seeded):
    unavailable = default_install(seeded)
    plain = search(seeded, "install an apk and list git branches", limit=MAX_LIMIT, unavailable=unavailable)
    cut = search(
        seeded, "install an apk and list git branches", limit=3, unavailable=unavailable, callable_limit=True
    )
    assert sum(hit.available for hit in cut) == 3 and cut[-1].available
    assert any(not hit.available for hit in cut)  # the adb tools ranked among them came along
    assert [hit.name for hit in cut] == [hit.name for hit in plain[: len(cut)]]


def test_an_uncallable_tool_scoring_above_the_best_callable_one_is_named_though_ranked_below_it():
    # search's order: the penalty put git_log (12.0) below a loose callable match (10.0)
    hits = [
        SearchHit("hang_forever", "custom", "Never answer.", 10.0),
        SearchHit(
            "git_log", "core", "Shows the commit logs.", 12.0, False, "not usable here; fix: x", server="git"
        ),
        SearchHit("git_show", "core", "Shows a commit.", 9.5, False, "not usable here; fix: x", server="git"),
    ]
    page = compose_page(hits, 10)
    assert [tool["name"] for tool in page["tools"]] == ["hang_forever"]
    assert page["unavailable"] == [
        {"server": "git", "profile": "core", "tools": ["git_log"], "reason": "not usable here; fix: x"}
    ]
