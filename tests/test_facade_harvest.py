"""`context-router harvest`: a live backend's tools/list into its seed file; hand-written
triggers and boosts survive, a changed definition is flagged and not silently swapped."""

import json

import pytest

from router.catalog.sources import read_seed_file
from router.cli import main
from tests.facade_support import write_servers_toml

pytestmark = [pytest.mark.slow]


def harvest(tmp_path, *extra: str) -> int:
    return main(
        [
            "harvest",
            "misbehaving",
            "--servers",
            str(tmp_path / "servers.toml"),
            "--seeds",
            str(tmp_path / "seeds"),
            "--db",
            str(tmp_path / "r.db"),
            *extra,
        ]
    )


def test_harvest_writes_a_valid_seed_then_keeps_triggers_and_flags_changes(tmp_path, capsys):
    write_servers_toml(tmp_path / "servers.toml", state_dir=tmp_path)
    seed_file = tmp_path / "seeds" / "misbehaving.json"

    assert harvest(tmp_path) == 0
    seed = read_seed_file(seed_file)  # valid by the catalog's own model
    assert seed.server == "misbehaving" and seed.profile == "custom"
    assert {t.name for t in seed.tools} >= {"whoami", "shout", "append_note", "flaky_step"}

    # a person adds triggers; the seed's description of another tool drifts from the live one;
    # a tool the server no longer has is in the seed
    raw = json.loads(seed_file.read_text(encoding="utf-8"))
    by_name = {t["name"]: t for t in raw["tools"]}
    by_name["whoami"]["triggers"] = ["which process answers"]
    by_name["whoami"]["boost"] = ["pid"]
    by_name["whoami"]["examples"] = ["who is answering my calls", "what is the server's process id"]
    by_name["shout"]["description"] = "An old description."
    by_name["shout"]["examples"] = ["say this louder"]
    raw["tools"].append(
        {
            "name": "retired_tool",
            "description": "Gone from the server.",
            "inputSchema": {"type": "object", "properties": {}},
        }
    )
    seed_file.write_text(json.dumps(raw, indent=2), encoding="utf-8")
    capsys.readouterr()

    assert harvest(tmp_path) == 3  # flagged
    out = capsys.readouterr().out
    assert "changed: shout (description): FLAGGED" in out and "gone: retired_tool" in out
    kept = {t["name"]: t for t in json.loads(seed_file.read_text(encoding="utf-8"))["tools"]}
    assert kept["shout"]["description"] == "An old description."  # not silently swapped
    assert "retired_tool" in kept
    assert kept["whoami"]["triggers"] == ["which process answers"] and kept["whoami"]["boost"] == ["pid"]
    # how people ask for a tool is the router's too: an unchanged tool keeps its examples
    assert kept["whoami"]["examples"] == ["who is answering my calls", "what is the server's process id"]

    assert harvest(tmp_path, "--accept-changed") == 0
    accepted = {t["name"]: t for t in json.loads(seed_file.read_text(encoding="utf-8"))["tools"]}
    assert accepted["shout"]["description"] == "Repeat the text in capitals."
    assert "retired_tool" not in accepted
    assert accepted["whoami"]["triggers"] == ["which process answers"]
    assert accepted["shout"]["examples"] == ["say this louder"]  # kept through an accepted change

    # harvesting again changes nothing
    before = seed_file.read_bytes()
    assert harvest(tmp_path) == 0
    assert seed_file.read_bytes() == before


def test_harvest_of_an_undeclared_or_missing_server_is_a_clear_error(tmp_path, capsys):
    write_servers_toml(tmp_path / "servers.toml", state_dir=tmp_path)
    assert (
        main(
            [
                "harvest",
                "nowhere",
                "--servers",
                str(tmp_path / "servers.toml"),
                "--seeds",
                str(tmp_path / "s"),
            ]
        )
        == 2
    )
    assert "no [servers.nowhere]" in capsys.readouterr().err
    assert (
        main(
            ["harvest", "absent", "--servers", str(tmp_path / "servers.toml"), "--seeds", str(tmp_path / "s")]
        )
        == 2
    )
    assert "npm install @example/absent-server" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()
