"""The CLI's start-up (issue 20, the first hour): a command imports only its own module, so
the commands that do not speak MCP never load the SDK (seconds on a busy machine; the times
themselves are bench/startup.py's), and a mistyped command is answered with the close ones."""

import json
import subprocess
import sys

import pytest

from router.cli import COMMAND_MODULES, COMMANDS, build_parser, main
from router.commands.catalog import load_default_catalog

# Run a command line in a fresh interpreter and print which SDK modules it loaded.
PROBE = """
import contextlib, io, json, sys
from router.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exit:
        code = exit.code
loaded = sorted(name for name in sys.modules if name.split(".")[0] in ("mcp", "mcp_types"))
print(json.dumps({"code": code, "sdk": loaded[:5]}))
"""


def loaded_sdk(*argv: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def catalog_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("startup") / "router.db"
    load_default_catalog(db)
    return db


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ["--version"],
        ["--help"],
        ["paths"],
        ["search", "--db", "{db}", "read a file"],
        ["inspect", "--db", "{db}", "read_file"],
        ["servers", "--db", "{db}"],
        ["eval", "--db", "{db}", "missing-queries.jsonl"],
        ["doctor", "--db", "{db}"],
    ],
    ids=lambda argv: argv[0],
)
def test_commands_that_do_not_speak_mcp_never_import_the_sdk(argv, catalog_db):
    probe = loaded_sdk(*(arg.format(db=catalog_db) for arg in argv))
    assert probe["sdk"] == [], probe


def test_every_command_is_in_the_table_under_the_module_that_registers_it():
    for module in COMMAND_MODULES:
        subparsers = build_parser((module,))._subparsers._group_actions[0]  # type: ignore[union-attr]
        assert sorted(subparsers.choices) == sorted(n for n, m in COMMANDS.items() if m == module)
    full = build_parser()._subparsers._group_actions[0]  # type: ignore[union-attr]
    assert list(full.choices) == list(COMMANDS)  # --help lists them in the table's order


@pytest.mark.parametrize(
    ("typed", "meant"), [("serach", "search"), ("inspcet", "inspect"), ("doctr", "doctor")]
)
def test_a_mistyped_command_gets_a_did_you_mean(typed, meant, capsys):
    with pytest.raises(SystemExit) as exit:
        main([typed, "anything"])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert f"unknown command {typed!r}; did you mean {meant}" in err
    assert "usage: context-router" in err


def test_a_command_close_to_none_points_at_help(capsys):
    with pytest.raises(SystemExit):
        main(["zzzz"])
    assert "unknown command 'zzzz'; `context-router --help` lists the commands" in capsys.readouterr().err


def test_version_and_help_still_work(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--version"])
    assert exit.value.code == 0
    assert capsys.readouterr().out.startswith("context-router ")
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(name in out for name in COMMANDS)


def test_an_option_the_top_level_does_not_know_is_argparses_to_report(capsys):
    # `--db x search`: x is --db's value, not a mistyped command
    with pytest.raises(SystemExit) as exit:
        main(["--db", "x.db", "search", "files"])
    assert exit.value.code == 2
    assert "unknown command" not in capsys.readouterr().err
