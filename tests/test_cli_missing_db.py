"""A mistyped --db (issue 20): the commands that read a catalog say the file does not exist
and how to build it, and leave no new file behind; only the commands that build a catalog
create one. A damaged file's hint names the command that rebuilds it here."""

import json
from pathlib import Path

import pytest

from router import paths
from router.cli import main
from router.paths import DB_ENV_VAR, build_command

READ_COMMANDS = {
    "search": ["search", "read a file"],
    "search --batch": ["search", "--batch", "{queries}"],
    "inspect": ["inspect", "read_file"],
    "eval": ["eval", "{queries}"],
    "servers": ["servers"],
}


@pytest.mark.parametrize("command", sorted(READ_COMMANDS))
def test_a_read_command_on_a_missing_file_creates_nothing(command, tmp_path, capsys):
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"id": "1", "query": "read a file", "relevant": ["read_file"]}) + "\n")
    missing = tmp_path / "mistyped.db"
    argv = [arg.format(queries=queries) for arg in READ_COMMANDS[command]]
    assert main([argv[0], "--db", str(missing), *argv[1:]]) == 2
    err = capsys.readouterr().err
    name = argv[0]
    assert f"context-router {name}: error: database {missing} does not exist" in err
    assert f"build it with context-router catalog --db {missing}" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["q.jsonl"]  # no file, no -wal, no -shm


def test_the_building_commands_still_create_the_file(tmp_path, capsys):
    db = tmp_path / "new.db"
    assert main(["catalog", "--db", str(db)]) == 0
    assert db.is_file()
    assert main(["search", "--db", str(db), "read a file"]) == 0
    assert "read_file" in capsys.readouterr().out


def test_the_missing_default_database_names_its_build_command(tmp_path, monkeypatch, capsys):
    default = tmp_path / "env-default.db"  # conftest points CONTEXT_ROUTER_DB here
    assert main(["search", "read a file"]) == 2
    assert (
        f"database {default} does not exist; build it with context-router catalog\n"
        in capsys.readouterr().err
    )
    assert not default.exists()


def test_the_build_command_is_make_catalog_only_for_a_checkouts_own_database(tmp_path, monkeypatch):
    monkeypatch.delenv(DB_ENV_VAR)
    monkeypatch.setattr(paths, "CHECKOUT_ROOT", tmp_path)
    assert build_command(tmp_path / "router.db") == "make catalog"
    assert build_command(tmp_path / "other.db") == f"context-router catalog --db {tmp_path / 'other.db'}"
    # installed as a package: no Makefile to run
    monkeypatch.setattr(paths, "CHECKOUT_ROOT", None)
    assert build_command(paths.default_db_path()) == "context-router catalog"
    spaced = Path(tmp_path / "my dir" / "x.db")
    assert build_command(spaced) == f"context-router catalog --db '{spaced}'"


def test_a_damaged_file_outside_a_checkout_says_context_router_catalog(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(DB_ENV_VAR)
    monkeypatch.setattr(paths, "CHECKOUT_ROOT", None)
    default = paths.default_db_path()
    default.parent.mkdir(parents=True)
    default.write_bytes(b"not sqlite at all " * 300)
    assert main(["search", "read a file"]) == 2
    err = capsys.readouterr().err
    assert "is not an SQLite database or is damaged" in err
    assert "build a new one (context-router catalog)" in err and "make catalog" not in err


def test_a_directory_given_as_the_database_is_said_so(tmp_path, capsys):
    assert main(["search", "--db", str(tmp_path), "read a file"]) == 2
    assert f"database {tmp_path} is a directory: --db names the database file" in capsys.readouterr().err
