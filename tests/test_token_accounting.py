"""Token accounting as data: a catalog load counts each tool as its server's tools/list gives
it, each search and inspect row keeps the tokens the model got (and a search its callable
tools), and v_tokens_per_session adds them up against the whole catalog."""

import json

import anyio
import pytest

from router.catalog.load import load_catalog
from router.catalog.token_counts import META_TOOLS_SURFACE
from router.db import connect
from router.facade.search_page import compact_json
from router.tokens import count_tokens
from tests.db_rows import rows
from tests.facade_support import json_of, text_of, write_catalog_file

pytestmark = [pytest.mark.slow]


def listed(line: dict) -> dict:
    """A harvested line as its server's tools/list gave it (without where it is filed)."""
    return {key: value for key, value in line.items() if key not in ("server", "profile")}


def stored_tokens(db) -> dict[str, int]:
    found = rows(db, "SELECT t.name, k.tokens FROM tools t JOIN tool_tokens k USING (definition_hash)")
    return {row["name"]: row["tokens"] for row in found}


def test_a_load_counts_each_tool_as_its_server_lists_it_and_only_once(tmp_path, harvested_catalog):
    lines = [json.loads(line) for line in harvested_catalog.read_text().splitlines()]
    db = tmp_path / "router.db"
    conn = connect(db)
    try:
        load_catalog(conn, seed_dir=None, user_files=[harvested_catalog])
    finally:
        conn.close()
    expected = {line["name"]: count_tokens(compact_json(listed(line))) for line in lines}
    assert stored_tokens(db) == expected
    (catalog,) = rows(db, "SELECT * FROM v_catalog_tokens")
    assert catalog["tools"] == catalog["tools_counted"] == len(lines)
    assert catalog["catalog_tokens"] == sum(expected.values())
    (surface,) = rows(db, "SELECT tokens FROM surface_tokens WHERE surface = :s", {"s": META_TOOLS_SURFACE})
    assert 0 < surface["tokens"] < 400  # the three meta-tools, far below any real catalog

    # a tool whose definition changes is counted again; one that goes is dropped
    changed = [line | {"description": line.get("description", "") + " Now longer."} for line in lines[1:]]
    smaller = write_catalog_file(tmp_path / "smaller.jsonl", changed)
    conn = connect(db)
    try:
        load_catalog(conn, seed_dir=None, user_files=[smaller])
    finally:
        conn.close()
    assert stored_tokens(db) == {line["name"]: count_tokens(compact_json(listed(line))) for line in changed}
    assert rows(db, "SELECT count(*) AS n FROM tool_tokens")[0]["n"] == len({json.dumps(c) for c in changed})


async def search_and_inspect(facade) -> tuple[list[str], str]:
    async with facade.router() as router:
        texts = []
        for query in (
            {"query": "current time"},
            {"query": "book me a flight to Lisbon next friday"},
        ):
            texts.append(text_of(await router.call_tool("mcp_search_tools", query)))
        inspected = await router.call_tool("mcp_inspect_schema", {"toolName": "get_current_time"})
        json_of(inspected)
        return texts, text_of(inspected)


def test_search_and_inspect_rows_keep_the_tokens_the_model_got(facade):
    pages, inspected = anyio.run(search_and_inspect, facade)
    searched = rows(
        facade.db,
        "SELECT result_tokens, page_tools FROM audit WHERE meta_tool = 'mcp_search_tools' ORDER BY id",
    )
    assert searched == [
        {"result_tokens": count_tokens(page), "page_tools": len(json.loads(page)["tools"])} for page in pages
    ]
    assert searched[0]["page_tools"] > 0 and searched[1]["page_tools"] == 0
    (inspect_row,) = rows(
        facade.db, "SELECT result_tokens, page_tools FROM audit WHERE meta_tool = 'mcp_inspect_schema'"
    )
    assert inspect_row == {"result_tokens": count_tokens(inspected), "page_tools": None}

    (session,) = rows(facade.db, "SELECT * FROM v_tokens_per_session")
    (catalog,) = rows(facade.db, "SELECT * FROM v_catalog_tokens")
    served = catalog["meta_tools_tokens"] + sum(count_tokens(text) for text in [*pages, inspected])
    assert (session["searches"], session["inspects"], session["tokens_served"]) == (2, 1, served)
    assert session["full_catalog_tokens"] == catalog["catalog_tokens"]
    assert session["tokens_saved"] == catalog["catalog_tokens"] - served > 0
    (nothing,) = rows(facade.db, "SELECT * FROM v_searches_nothing_callable")
    assert nothing["result_tokens"] == count_tokens(pages[1])
