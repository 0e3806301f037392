"""A tool whose own text says it is deprecated ranks below the tool it names instead, and its
summary (what the page shows) keeps the word."""

import json

from router.catalog.deprecation import is_deprecated, named_replacement
from router.catalog.load import load_catalog
from router.catalog.search import search
from router.paths import SEEDS_DIR


def names(hits):
    return [hit.name for hit in hits]


def test_read_file_ranks_below_read_text_file_and_says_it_is_deprecated(conn):
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    assert conn.execute("SELECT deprecated, replaced_by FROM tools WHERE name = 'read_file'").fetchone() == (
        1,
        "read_text_file",
    )
    summary = conn.execute("SELECT summary FROM tools WHERE name = 'read_file'").fetchone()[0]
    assert summary.startswith("DEPRECATED (use read_text_file): Read the complete contents")
    for query in (
        "read the contents of README.md",
        "read a file",
        "cat a file old api",
        "read file contents",
    ):
        ranked = names(search(conn, query, limit=20))
        assert "read_file" in ranked, query
        assert "read_text_file" in ranked[: ranked.index("read_file")], (query, ranked)
    # a request naming the old tool exactly still gets it first
    assert names(search(conn, "read_file", limit=3))[0] == "read_file"
    hit = next(
        h for h in search(conn, "cat a file old api", limit=20, evidence=True) if h.name == "read_file"
    )
    assert "DEPRECATED" in hit.summary and hit.evidence.deprecated


def test_a_user_catalogs_deprecated_tool_names_its_replacement_of_the_same_server(conn, tmp_path):
    def tool(name, description, server="files"):
        return {"name": name, "description": description, "inputSchema": {"type": "object"}, "server": server}

    tools = [
        tool("fetch_page_v1", "Fetch a web page and return its HTML. DEPRECATED: use fetch_page instead."),
        tool("fetch_page", "Fetch a web page and return its HTML, with headers."),
        # the word about an argument says nothing about the tool
        tool("list_pages", "List the fetched pages. The `limit` argument is deprecated; use `max`."),
        # a replacement on another server is not this server's tool
        tool("old_search", "(Deprecated) Search the pages. Use web_search instead.", server="other"),
        tool("web_search", "Search the web.", server="third"),
    ]
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in tools))
    load_catalog(conn, seed_dir=None, user_files=[path])
    rows = dict(
        (name, (deprecated, replaced_by))
        for name, deprecated, replaced_by in conn.execute("SELECT name, deprecated, replaced_by FROM tools")
    )
    assert rows["fetch_page_v1"] == (1, "fetch_page")
    assert rows["list_pages"] == (0, None) and rows["fetch_page"] == (0, None)
    assert rows["old_search"] == (1, None)
    ranked = names(search(conn, "fetch a web page and return its html", limit=5))
    assert ranked.index("fetch_page") < ranked.index("fetch_page_v1")


def test_what_counts_as_deprecated():
    assert is_deprecated("Read a file. DEPRECATED: Use read_text_file instead.")
    assert is_deprecated("Deprecated - use v2.")
    assert is_deprecated("Old endpoint (deprecated).")
    assert is_deprecated("This tool is deprecated and will be removed.")
    assert is_deprecated("Reads a file.", title="Read File (Deprecated)")
    assert not is_deprecated("The `limit` argument is deprecated; use `max`.")
    assert not is_deprecated("List deprecated packages of a project.")
    assert named_replacement(
        "DEPRECATED: Use `read_text_file` instead.", "read_file", {"read_text_file"}
    ) == ("read_text_file")
    assert named_replacement("Replaced by tool_v2.", "tool", {"tool_v2"}) == "tool_v2"
    assert named_replacement("DEPRECATED: use nothing_here instead.", "tool", {"tool"}) is None
