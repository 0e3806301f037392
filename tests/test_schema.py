"""schema.sql applies to a fresh file, is idempotent, and guards against newer files."""

import subprocess

import apsw
import pytest

from router import db
from router.errors import SchemaVersionError
from router.paths import SCHEMA_FILE

PROMISED_VIEWS = {
    "v_catalog_per_profile",
    "v_recent_audit",
    "v_cost_per_session",
    "v_cost_per_day",
    "v_breaker_state",
    "v_skills",
    "v_tool_schema",
}


def schema_objects(conn):
    return conn.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name"
    ).fetchall()


def test_fresh_file_gets_schema_and_version(db_path):
    conn = db.connect(db_path)
    assert db.schema_version(conn) == db.SCHEMA_VERSION
    names = {name for _, name, _ in schema_objects(conn)}
    assert {"tools", "tools_fts", "servers", "profiles", "audit", "breaker", "cost_ledger"} <= names
    assert PROMISED_VIEWS <= names
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_schema_script_is_idempotent(db_path):
    conn = db.connect(db_path)
    before = schema_objects(conn)
    with conn:
        conn.execute(SCHEMA_FILE.read_text())  # run the whole script a second time
    assert schema_objects(conn) == before
    conn.close()
    reopened = db.connect(db_path)
    assert schema_objects(reopened) == before


def test_newer_database_is_refused(db_path):
    conn = db.connect(db_path)
    conn.execute(f"PRAGMA user_version = {db.SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(SchemaVersionError, match="newer"):
        db.connect(db_path)


def test_failed_schema_apply_leaves_file_untouched(db_path, monkeypatch, tmp_path):
    broken = tmp_path / "broken.sql"
    broken.write_text("CREATE TABLE half_done(x);\nTHIS IS NOT SQL;\n")
    monkeypatch.setattr(db, "SCHEMA_FILE", broken)
    with pytest.raises(apsw.SQLError):
        db.connect(db_path)
    plain = apsw.Connection(str(db_path))
    assert plain.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
    assert plain.execute("PRAGMA user_version").fetchone()[0] == 0


@pytest.mark.parametrize("view", sorted(PROMISED_VIEWS))
def test_system_sqlite3_shell_reads_every_view(db_path, view):
    """People inspect the file with the sqlite3 they have (older than apsw's SQLite)."""
    db.connect(db_path).close()
    result = subprocess.run(
        ["sqlite3", str(db_path), f"SELECT * FROM {view} LIMIT 1;"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
