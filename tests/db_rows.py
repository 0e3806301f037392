"""Read rows from a router database file the way a person's sqlite3 session would: open,
query, close (a test must not keep a connection the process under test competes with)."""

from pathlib import Path

from router.db import connect, query_dicts


def rows(db_path: Path, sql: str, params=None) -> list[dict]:
    conn = connect(db_path)
    try:
        return query_dicts(conn, sql, params)
    finally:
        conn.close()
