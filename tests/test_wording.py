"""Counts in messages (issue 20): "1 tool", "1 server", never "1 tools"."""

import json

from router.cli import main
from router.wording import counted


def test_counted_says_one_thing_and_many_things():
    assert counted(1, "tool") == "1 tool"
    assert counted(0, "tool") == "0 tools"
    assert counted(2, "model price") == "2 model prices"
    assert counted(3, "analysis", "analyses") == "3 analyses"


def test_a_one_tool_catalog_is_one_tool_in_catalog_and_servers(tmp_path, capsys):
    tools = tmp_path / "one.jsonl"
    tools.write_text(
        json.dumps({"name": "only_tool", "description": "one", "inputSchema": {"type": "object"}})
    )
    db = tmp_path / "one.db"
    assert main(["catalog", "--db", str(db), "--from", str(tools)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("catalog: 1 tool (custom 1); 1 added")
    assert main(["servers", "--db", str(db)]) == 0
    listed = capsys.readouterr().out
    assert "1 tools" not in listed and "1 servers" not in listed
    assert "one: NOT AVAILABLE; 1 tool; running" in listed  # a catalog file names its server
