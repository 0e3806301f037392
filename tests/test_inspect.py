"""mcp_inspect_schema's answer (router/catalog/tool_schema.py over v_tool_schema) on the real seeded
catalog: a tool's title and outputSchema when its backend gives them, no key when not."""

import json

import pytest

from router.catalog.load import load_catalog, read_seed_file
from router.catalog.tool_schema import inspect_tool
from router.cli import main
from router.errors import UnknownToolError
from router.paths import SEEDS_DIR


@pytest.fixture
def seeded(conn):
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    return conn


def seed_tool(seed: str, name: str) -> dict:
    """The tool exactly as the seed file lists it."""
    return next(t for t in json.loads((SEEDS_DIR / seed).read_text())["tools"] if t["name"] == name)


def test_memory_tool_inspects_with_its_title_and_output_schema(seeded):
    listed = seed_tool("memory.json", "read_graph")
    shown = inspect_tool(seeded, "read_graph")
    assert shown["title"] == listed["title"] == "Read Graph"
    assert shown["outputSchema"] == listed["outputSchema"]
    assert shown["outputSchema"]["properties"].keys() == {"entities", "relations"}
    # the MCP order a reader expects: title beside the name, the result shape after the arguments
    assert list(shown) == [
        "name",
        "title",
        "profile",
        "server",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
        "mutating",
    ]


def test_tool_with_only_an_output_schema_has_no_title_key(seeded):
    assert "title" not in seed_tool("time.json", "get_current_time")
    shown = inspect_tool(seeded, "get_current_time")
    assert "title" not in shown
    assert shown["outputSchema"] == seed_tool("time.json", "get_current_time")["outputSchema"]


def test_tool_without_output_schema_or_title_has_neither_key(seeded):
    shown = inspect_tool(seeded, "adb_install_apk")
    assert list(shown) == [
        "name",
        "profile",
        "server",
        "description",
        "inputSchema",
        "annotations",
        "mutating",
    ]
    assert None not in shown.values()


def test_every_seeded_tool_inspects_with_exactly_the_fields_its_seed_gives(seeded):
    for path in sorted(SEEDS_DIR.glob("*.json")):
        seed = read_seed_file(path)
        for tool in seed.tools:
            shown = inspect_tool(seeded, seed.toolPrefix + tool.name)
            assert shown.get("outputSchema") == tool.outputSchema, tool.name
            assert shown.get("title") == tool.title, tool.name


def test_unknown_tool_is_an_error(seeded):
    with pytest.raises(UnknownToolError, match="mcp_search_tools"):
        inspect_tool(seeded, "no_such_tool")


def test_cli_inspect_prints_the_same_answer(seeded, db_path, capsys):
    assert main(["inspect", "--db", str(db_path), "read_graph"]) == 0
    assert json.loads(capsys.readouterr().out) == inspect_tool(seeded, "read_graph")
