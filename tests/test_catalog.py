"""Loading seeds and user catalogs: validation, one transaction, idempotence, FTS sync."""

import json
import subprocess
import sys

import pytest
from jsonschema import Draft202012Validator

from router.catalog.harvest import HarvestReport, merge
from router.catalog.load import load_catalog
from router.catalog.models import ROUTER_FIELDS
from router.catalog.search import search
from router.catalog.sources import read_seed_dir
from router.db import query_dicts
from router.errors import SeedError
from router.paths import SEEDS_DIR


def catalog_snapshot(conn):
    """Everything a load may change, including rowids and the FTS index contents."""
    return {
        "tools": conn.execute("SELECT * FROM tools ORDER BY id").fetchall(),
        "servers": conn.execute("SELECT * FROM servers ORDER BY name").fetchall(),
        "profiles": conn.execute("SELECT * FROM profiles ORDER BY name").fetchall(),
        "loads": conn.execute("SELECT * FROM catalog_loads ORDER BY id").fetchall(),
        "fts": conn.execute("SELECT rowid, * FROM tools_fts ORDER BY rowid").fetchall(),
    }


def write_jsonl(path, tools):
    path.write_text("".join(json.dumps(tool) + "\n" for tool in tools))
    return path


def user_tool(name, description, **extra):
    tool = {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
    tool.update(extra)
    return tool


def test_seeds_load_and_summarise(conn):
    summary = load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    seeded = sum(len(seed.tools) for seed, _ in read_seed_dir(SEEDS_DIR))
    assert summary.total == seeded == conn.execute("SELECT count(*) FROM tools").fetchone()[0]
    assert summary.added == seeded and summary.changed == summary.removed == 0
    assert "catalog:" in summary.one_line() and "core" in summary.one_line()


def test_reloading_the_same_seeds_changes_nothing(conn):
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    before = catalog_snapshot(conn)
    summary = load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    assert (summary.added, summary.changed, summary.removed) == (0, 0, 0)
    assert catalog_snapshot(conn) == before


@pytest.mark.parametrize(
    "breakage, expected",
    [
        (lambda seed: seed["tools"][0].pop("description"), r"tools\[0\]\): field description"),
        (
            lambda seed: seed["tools"][1]["inputSchema"].update(type="array"),
            r"tools\[1\]\): field inputSchema: must be a JSON Schema",
        ),
        (
            lambda seed: seed["tools"][0]["inputSchema"].update(properties={"x": {"type": 5}}),
            r"field inputSchema: not a valid JSON Schema at properties/x/type",
        ),
        (
            lambda seed: seed["tools"][0]["outputSchema"].update(type="array"),
            r"tool 'get_current_time' \(tools\[0\]\): field outputSchema: must be a JSON Schema",
        ),
        (
            lambda seed: seed["tools"][1]["outputSchema"]["properties"].update(x={"type": 5}),
            r"tool 'convert_time' \(tools\[1\]\): field outputSchema: not a valid JSON Schema "
            r"at properties/x/type",
        ),
        (
            lambda seed: seed["tools"][1].update(outputSchema="an object, really"),
            r"tool 'convert_time' \(tools\[1\]\): field outputSchema: Input should be a valid dictionary",
        ),
        (lambda seed: seed["tools"][0].update(trigers=["typo"]), r"field trigers: unknown field"),
        (lambda seed: seed.update(profile="Not A Profile"), r"field profile"),
        (lambda seed: seed["tools"][0].update(name="bad name!"), r"field name"),
    ],
)
def test_broken_seed_names_file_tool_field_and_keeps_old_catalog(conn, seed_copy, breakage, expected):
    load_catalog(conn, seed_dir=seed_copy, user_files=[])
    before = catalog_snapshot(conn)
    assert len(before["tools"]) > 0

    victim = seed_copy / "time.json"
    seed = json.loads(victim.read_text())
    breakage(seed)
    victim.write_text(json.dumps(seed))

    with pytest.raises(SeedError, match=expected) as error:
        load_catalog(conn, seed_dir=seed_copy, user_files=[])
    assert "time.json" in str(error.value)
    assert catalog_snapshot(conn) == before


def tool_rows(conn):
    """Every stored column of every tool, by name."""
    return {row["name"]: row for row in query_dicts(conn, "SELECT * FROM tools")}


@pytest.mark.parametrize(
    "change, column",
    [
        (
            lambda tool: tool["outputSchema"]["properties"]["entities"].update(description="All of them"),
            "output_schema",
        ),
        (lambda tool: tool.update(title="Read The Whole Graph"), "title"),
    ],
)
def test_reload_after_changing_only_output_schema_or_title_rewrites_that_tool(
    conn, seed_copy, change, column
):
    load_catalog(conn, seed_dir=seed_copy, user_files=[])
    before = tool_rows(conn)
    victim = seed_copy / "memory.json"
    seed = json.loads(victim.read_text())
    change(next(tool for tool in seed["tools"] if tool["name"] == "read_graph"))
    victim.write_text(json.dumps(seed))

    summary = load_catalog(conn, seed_dir=seed_copy, user_files=[])
    assert (summary.added, summary.changed, summary.removed) == (0, 1, 0)
    after = tool_rows(conn)
    assert {name for name in after if after[name] != before[name]} == {"read_graph"}
    changed = {key for key in after["read_graph"] if after["read_graph"][key] != before["read_graph"][key]}
    # the definition's identity moves with it, so harvest and people see the change too
    assert changed == {column, "definition_hash"}

    # and a load with nothing changed still writes nothing
    unchanged = catalog_snapshot(conn)
    again = load_catalog(conn, seed_dir=seed_copy, user_files=[])
    assert (again.added, again.changed, again.removed) == (0, 0, 0)
    assert catalog_snapshot(conn) == unchanged


def test_output_schema_and_title_are_stored_as_the_seeds_give_them(conn):
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    stored = tool_rows(conn)
    for seed, _ in read_seed_dir(SEEDS_DIR):
        for tool in seed.tools:
            row = stored[seed.toolPrefix + tool.name]
            output_schema = None if row["output_schema"] is None else json.loads(row["output_schema"])
            assert (output_schema, row["title"]) == (tool.outputSchema, tool.title), tool.name
    # both kinds are in the seeds: some tools give neither, some give only an outputSchema
    assert stored["read_graph"]["title"] == "Read Graph"
    assert (
        stored["get_current_time"]["output_schema"] is not None
        and stored["get_current_time"]["title"] is None
    )
    assert stored["adb_install_apk"]["output_schema"] is None


def test_strict_user_catalog_line_with_a_broken_output_schema_is_refused(conn, tmp_path):
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    before = catalog_snapshot(conn)
    path = write_jsonl(
        tmp_path / "mine.jsonl",
        [
            user_tool("fine_tool", "Fine"),
            user_tool("shaped_tool", "Has a result shape", outputSchema={"type": "object", "required": "x"}),
        ],
    )
    with pytest.raises(
        SeedError,
        match=r"mine.jsonl: line 2: tool 'shaped_tool': field outputSchema: not a valid JSON Schema at required",
    ):
        load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[path], strict_user_files=True)
    assert catalog_snapshot(conn) == before


def test_user_catalog_line_with_a_broken_output_schema_loads_with_a_warning(conn, tmp_path):
    path = write_jsonl(
        tmp_path / "mine.jsonl",
        [
            user_tool("fine_tool", "Fine"),
            user_tool("shaped_tool", "Has a result shape", outputSchema={"type": "object", "required": "x"}),
        ],
    )
    summary = load_catalog(conn, seed_dir=None, user_files=[path])
    assert summary.added == 2
    assert summary.notes == (
        f"{path}: line 2: tool 'shaped_tool': outputSchema not a valid JSON Schema at required: "
        "'x' is not of type 'array': kept as the server gives it",
    )
    # its arguments are still checked: only the result's shape is broken
    assert conn.execute("SELECT arg_validator FROM tools WHERE name = 'shaped_tool'").fetchone() == (
        "draft2020-12",
    )


def test_spec_valid_tools_load_and_the_load_says_what_it_did(conn, tmp_path):
    """The bar: a tool without a description and a draft-04 schema load; a tool no draft
    accepts loads unchecked; a broken line is skipped; the report names each."""
    path = write_jsonl(
        tmp_path / "real-servers.jsonl",
        [
            {"name": "no_description", "inputSchema": {"type": "object"}},
            {
                "name": "draft4_counter",
                "description": "Count up from a positive start",
                "inputSchema": {
                    "type": "object",
                    "properties": {"start": {"type": "integer", "minimum": 0, "exclusiveMinimum": True}},
                },
            },
            {
                "name": "draft7_declared",
                "description": "Declares its draft",
                "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
            },
            {"name": "no_validator_takes_it", "description": "Broken", "inputSchema": {"type": "array"}},
            {"name": "bad name!", "description": "Not an MCP tool name", "inputSchema": {"type": "object"}},
        ],
    )
    summary = load_catalog(conn, seed_dir=None, user_files=[path])
    assert summary.added == 4
    assert summary.notes == (
        f"{path}: line 4: tool 'no_validator_takes_it': inputSchema must be a JSON Schema with \"type\": "
        '"object": loaded with its arguments unchecked',
        f"{path}: line 5: skipped: tool 'bad name!': field name: String should match pattern "
        "'^[A-Za-z0-9_.\\-]{1,128}$'",
    )
    rows = dict(conn.execute("SELECT name, arg_validator FROM tools"))
    assert rows == {
        "no_description": "draft2020-12",
        "draft4_counter": "draft4",
        "draft7_declared": "draft7",
        "no_validator_takes_it": "unchecked",
    }
    # without a description, search still finds the tool by its name
    assert conn.execute(
        "SELECT description, summary FROM tools WHERE name = 'no_description'"
    ).fetchone() == (
        "",
        "no description",
    )


def test_json_lines_split_on_newline_only(conn, tmp_path):
    """U+2028, U+2029 and U+0085 are legal raw inside a JSON string; str.splitlines would cut
    the line there."""
    path = tmp_path / "separators.jsonl"
    text = "Line\u2028separator, paragraph\u2029separator and next\u0085line"
    line = json.dumps(user_tool("odd_text", text), ensure_ascii=False)
    path.write_text(line + "\r\n" + json.dumps(user_tool("plain", "Plain")) + "\n", encoding="utf-8")
    summary = load_catalog(conn, seed_dir=None, user_files=[path])
    assert (summary.added, summary.notes) == (2, ())
    assert conn.execute("SELECT description FROM tools WHERE name = 'odd_text'").fetchone() == (text,)


def test_invalid_json_names_line_and_column(conn, seed_copy):
    load_catalog(conn, seed_dir=seed_copy, user_files=[])
    before = catalog_snapshot(conn)
    (seed_copy / "time.json").write_text('{\n  "server": "time",\n  oops\n}')
    with pytest.raises(SeedError, match=r"time.json: line 3 column 3: invalid JSON"):
        load_catalog(conn, seed_dir=seed_copy, user_files=[])
    assert catalog_snapshot(conn) == before


def test_duplicate_tool_names_across_servers_are_refused(conn, seed_copy):
    seed = json.loads((seed_copy / "time.json").read_text())
    seed["server"] = "time-copy"
    (seed_copy / "zz-time-copy.json").write_text(json.dumps(seed))
    with pytest.raises(
        SeedError, match=r"already in the catalog from .*time.json; give one server a toolPrefix"
    ):
        load_catalog(conn, seed_dir=seed_copy, user_files=[])
    seed["toolPrefix"] = "copy_"
    (seed_copy / "zz-time-copy.json").write_text(json.dumps(seed))
    load_catalog(conn, seed_dir=seed_copy, user_files=[])
    row = conn.execute("SELECT backend_name, server FROM tools WHERE name = 'copy_convert_time'").fetchone()
    assert row == ("convert_time", "time-copy")


def test_failure_midway_through_the_write_rolls_back(conn, seed_copy, monkeypatch):
    """A database error after some rows were written leaves the previous catalog whole."""
    import router.catalog.load as catalog_module

    load_catalog(conn, seed_dir=seed_copy, user_files=[])
    before = catalog_snapshot(conn)
    seed = json.loads((seed_copy / "time.json").read_text())
    seed["tools"][0]["description"] = "A changed description so the load writes rows"
    (seed_copy / "time.json").write_text(json.dumps(seed))
    monkeypatch.setattr(catalog_module, "DELETE_UNUSED_PROFILES", "DELETE FROM no_such_table")
    with pytest.raises(Exception, match="no_such_table"):
        load_catalog(conn, seed_dir=seed_copy, user_files=[])
    assert catalog_snapshot(conn) == before


def test_every_seed_input_schema_is_valid_json_schema():
    seeds = read_seed_dir(SEEDS_DIR)
    for seed, origin in seeds:
        for tool in seed.tools:
            Draft202012Validator.check_schema(tool.inputSchema)
            assert tool.inputSchema["type"] == "object", (origin, tool.name)
            assert tool.triggers and tool.boost, f"{origin}: {tool.name} has no triggers/boost"


def test_fts_stays_in_sync_after_update_and_delete(conn, tmp_path):
    first = write_jsonl(
        tmp_path / "mine.jsonl",
        [
            user_tool("frobnicate_widget", "Frobnicate a widget with zorbles"),
            user_tool("polish_gadget", "Polish a gadget until it gleams"),
        ],
    )
    load_catalog(conn, seed_dir=None, user_files=[first])
    assert [h.name for h in search(conn, "zorbles")] == ["frobnicate_widget"]

    write_jsonl(
        first,
        [user_tool("frobnicate_widget", "Frobnicate a widget with quuxes")],
    )
    summary = load_catalog(conn, seed_dir=None, user_files=[first])
    assert (summary.changed, summary.removed) == (1, 1)
    assert search(conn, "zorbles") == []
    assert [h.name for h in search(conn, "quuxes")] == ["frobnicate_widget"]
    assert search(conn, "gleams") == []
    # FTS5's own check that the index matches its external content table
    conn.execute("INSERT INTO tools_fts(tools_fts, rank) VALUES ('integrity-check', 1)")


def test_user_catalog_defaults_and_names(conn, tmp_path):
    path = write_jsonl(
        tmp_path / "team-tools.jsonl",
        [
            user_tool("deployService", "Deploy a service to staging", annotations={"readOnlyHint": False}),
            user_tool(
                "list_services",
                "List deployed services",
                annotations={"readOnlyHint": True},
                profile="ops",
                server="deployer",
            ),
        ],
    )
    load_catalog(conn, seed_dir=None, user_files=[path])
    rows = conn.execute(
        "SELECT t.name, t.server, s.profile, t.mutating, t.name_words FROM tools t "
        "JOIN servers s ON s.name = t.server ORDER BY t.name"
    ).fetchall()
    assert rows == [
        ("deployService", "team-tools", "custom", 1, "deploy service"),
        ("list_services", "deployer", "ops", 0, "list services"),
    ]


def test_tool_without_read_only_hint_is_mutating(conn, tmp_path):
    path = write_jsonl(tmp_path / "x.jsonl", [user_tool("quiet_tool", "Says nothing about itself")])
    load_catalog(conn, seed_dir=None, user_files=[path])
    assert conn.execute("SELECT mutating FROM tools WHERE name='quiet_tool'").fetchone() == (1,)


def bad_boost_catalog(path):
    path.write_text(
        json.dumps(user_tool("fine_tool", "Fine"))
        + "\n\n"
        + json.dumps(
            {
                "name": "broken_tool",
                "description": "x",
                "inputSchema": {"type": "object"},
                "boost": "notalist",
            }
        )
        + "\n"
    )
    return path


def test_strict_bad_user_catalog_line_names_line_and_field(conn, tmp_path):
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    before = catalog_snapshot(conn)
    path = bad_boost_catalog(tmp_path / "bad.jsonl")
    with pytest.raises(SeedError, match=r"bad.jsonl: line 3: tool 'broken_tool': field boost"):
        load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[path], strict_user_files=True)
    assert catalog_snapshot(conn) == before


def test_bad_user_catalog_line_is_skipped_and_named(conn, tmp_path):
    path = bad_boost_catalog(tmp_path / "bad.jsonl")
    summary = load_catalog(conn, seed_dir=None, user_files=[path])
    assert summary.added == 1
    assert summary.notes == (
        f"{path}: line 3: skipped: tool 'broken_tool': field boost: Input should be a valid list",
    )


def test_user_catalog_with_no_loadable_tool_is_an_error(conn, tmp_path):
    path = tmp_path / "hopeless.jsonl"
    path.write_text("not json\n" + json.dumps({"name": "x"}) + "\n")
    with pytest.raises(SeedError, match=r"hopeless.jsonl: no loadable tools in file \(2 skipped\)"):
        load_catalog(conn, seed_dir=None, user_files=[path])


def test_cli_catalog_success_and_error_exit_codes(tmp_path, seed_copy):
    db_file = tmp_path / "cli.db"
    ok = subprocess.run(
        [sys.executable, "-m", "router", "catalog", "--db", str(db_file), "--seeds", str(seed_copy)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("catalog: ") and " tools (" in ok.stdout

    (seed_copy / "time.json").write_text("{}")
    bad = subprocess.run(
        [sys.executable, "-m", "router", "catalog", "--db", str(db_file), "--seeds", str(seed_copy)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2
    assert "time.json" in bad.stderr and "field server" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_harvest_keeps_a_read_only_review_like_triggers_and_boost():
    # the review is the router's, not the server's: a live definition without it is unchanged,
    # and an accepted change keeps it (else every reviewed tool would read as changed, and
    # accepting would drop the review and make the tool mutating again)
    seed = json.loads((SEEDS_DIR / "adb.json").read_text())
    reviewed = next(tool for tool in seed["tools"] if "router" in tool)
    live = {k: v for k, v in reviewed.items() if k not in ROUTER_FIELDS}
    report = HarvestReport(SEEDS_DIR / "adb.json")
    merged = merge({"tools": [reviewed]}, [live], False, report)
    assert report.unchanged == [reviewed["name"]] and report.changed == {}
    assert merged["tools"] == [reviewed]

    changed_live = live | {"description": "a newer description"}
    report = HarvestReport(SEEDS_DIR / "adb.json")
    merged = merge({"tools": [reviewed]}, [changed_live], True, report)
    assert report.changed == {reviewed["name"]: ["description"]}
    assert merged["tools"][0]["router"] == reviewed["router"]
    assert merged["tools"][0]["description"] == "a newer description"
