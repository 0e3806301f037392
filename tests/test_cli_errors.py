"""The CLI on a database it cannot use (issue 16): a read-only, damaged or newer-schema file
gives `catalog`, `search` and `break-glass` a one-line message naming the file and exit
status 2, never a traceback."""

import subprocess
import sys
from pathlib import Path

import pytest

from router.db import SCHEMA_VERSION, connect

pytestmark = pytest.mark.slow

CONTEXT_ROUTER = Path(sys.executable).parent / "context-router"
COMMANDS = {
    "catalog": ["catalog"],
    "search": ["search", "what time is it"],
    "break-glass": ["break-glass"],
}


def run(command: str, db: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(CONTEXT_ROUTER), *COMMANDS[command], "--db", str(db)],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )


def assert_refused(done: subprocess.CompletedProcess, command: str, *words: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    # SQLite's own log lines (SQLITE_LOG: ... SQLITE_NOTADB) say the same thing worse
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"context-router {command}: error: database "), last
    for word in words:
        assert word in last, last


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_damaged_file_is_a_message(tmp_path, command):
    db = tmp_path / "damaged.db"
    db.write_bytes(b"this is not an sqlite file, just some bytes " * 200)
    assert_refused(
        run(command, db), command, str(db), "not an SQLite database or is damaged", f"catalog --db {db}"
    )


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_file_that_cannot_be_opened_is_one_line(tmp_path, command):
    db = tmp_path / "no-such-dir" / "x.db"
    # catalog makes a missing directory (what the others' errors tell the user to run), so
    # it is refused one that cannot be made: a file stands where the directory would be
    words = ("does not exist",)
    if command == "catalog":
        db = tmp_path / "a-file" / "x.db"
        db.parent.write_text("not a directory")
        words = ("cannot be created", f"its directory {db.parent} cannot be made")
    if command == "break-glass":
        words = ("cannot be opened",)  # a server: it opens (and may create) its ledger file
    assert_refused(run(command, db), command, str(db), *words)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_newer_schema_is_a_message(tmp_path, command):
    db = tmp_path / "newer.db"
    conn = connect(db)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    assert_refused(run(command, db), command, f"schema version {SCHEMA_VERSION + 1} is newer")


def test_a_read_only_file_is_a_message_for_catalog(tmp_path):
    db = tmp_path / "read-only.db"
    connect(db).close()
    subprocess.run(["chattr", "+i", str(db)], check=True)  # read-only even for root
    try:
        done = run("catalog", db)
    finally:
        subprocess.run(["chattr", "-i", str(db)], check=True)
    assert_refused(done, "catalog", "is read-only")
