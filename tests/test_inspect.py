"""mcp_inspect_schema's answer (router/catalog/tool_schema.py over v_tool_schema) on the real seeded
catalog: a tool's title and outputSchema when its backend gives them, no key when not."""

import json

import pytest

from router.catalog.load import load_catalog
from router.catalog.sources import read_seed_file
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
        "readOnly",
        "readOnlySource",
        "schemaDraft",
    ]
    assert (shown["readOnly"], shown["readOnlySource"]) == (True, "server")
    # the server's schemas declare draft-07, and its args are checked under draft-07
    assert shown["inputSchema"]["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert shown["schemaDraft"] == "draft7"


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
        "readOnly",
        "readOnlySource",
    ]
    assert None not in shown.values()
    # adb gives no annotations; the seed's reviewed classification decides
    assert (shown["mutating"], shown["readOnly"], shown["readOnlySource"]) == (True, False, "router-review")


@pytest.mark.parametrize(
    "tool, read_only, source",
    [
        ("ghidra_decompile_function", True, "router-review"),
        ("adb_list_devices", True, "router-review"),
        ("r2_analyze", True, "router-review"),
        ("r2_decompile_function", True, "router-review"),
        ("adb_install_apk", False, "router-review"),
        ("ghidra_rename_function", False, "router-review"),
        ("read_text_file", True, "server"),
        ("write_file", False, "server"),
    ],
)
def test_inspect_says_whether_a_tool_only_reads_and_who_decided(seeded, tool, read_only, source):
    shown = inspect_tool(seeded, tool)
    assert (shown["readOnly"], shown["readOnlySource"], shown["mutating"]) == (
        read_only,
        source,
        not read_only,
    )


def test_a_tool_with_neither_annotation_nor_review_defaults_to_mutating(conn, tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text(
        json.dumps({"name": "quiet", "description": "Q", "inputSchema": {"type": "object"}}) + "\n"
    )
    load_catalog(conn, seed_dir=None, user_files=[path])
    shown = inspect_tool(conn, "quiet")
    assert (shown["readOnly"], shown["readOnlySource"]) == (False, "default-mutating")


def test_server_annotation_wins_over_a_router_review(conn, tmp_path):
    path = tmp_path / "mine.jsonl"
    tool = {
        "name": "says_it_writes",
        "description": "The server says it writes; a review says it reads",
        "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": False},
        "router": {"readOnly": True, "reviewed": "a wrong review"},
    }
    path.write_text(json.dumps(tool) + "\n")
    load_catalog(conn, seed_dir=None, user_files=[path])
    shown = inspect_tool(conn, "says_it_writes")
    assert (shown["readOnly"], shown["readOnlySource"]) == (False, "server")


def test_every_tool_without_a_server_hint_is_reviewed_in_the_seeds():
    for path in sorted(SEEDS_DIR.glob("*.json")):
        for tool in read_seed_file(path).tools:
            if tool.annotations is None or tool.annotations.readOnlyHint is None:
                assert tool.router is not None and tool.router.reviewed, f"{path.name}: {tool.name}"


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
