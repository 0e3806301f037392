"""Read rows from a router database file the way a person's sqlite3 session would: open,
query, close (a test must not keep a connection the process under test competes with)."""

from pathlib import Path

import apsw

from router.db import connect, query_dicts


def rows(db_path: Path, sql: str, params=None) -> list[dict]:
    conn = connect(db_path)
    try:
        return query_dicts(conn, sql, params)
    finally:
        conn.close()


def every_stored_text(db_path: Path) -> str:
    """Every row of every table as text: what a search for a leaked secret must not find."""
    conn = apsw.Connection(str(db_path))
    try:
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        return "\n".join(str(row) for table in tables for row in conn.execute(f"SELECT * FROM {table}"))
    finally:
        conn.close()
