"""docs/database.md cannot drift: every view schema.sql defines has its own heading and an
example query, and every sqlite3 example query in the page runs in the system sqlite3 shell
and reads what the router reads."""

import json
import re
import subprocess

import pytest

from router.catalog.load import load_catalog
from router.db import connect, query_dicts
from router.facade import audit
from router.paths import SCHEMA_FILE, SEEDS_DIR
from tests.docs_support import doc_text

PAGE = doc_text("docs/database.md")
# sqlite3 -header -column router.db 'SQL' (or "SQL" when the SQL holds a quoted literal)
EXAMPLE_QUERY = re.compile(r"""^sqlite3 -header -column router\.db (?:'([^']+)'|"([^"]+)")$""", re.MULTILINE)
VIEWS = sorted(set(re.findall(r"CREATE VIEW (v_\w+)", SCHEMA_FILE.read_text(encoding="utf-8"))))


def example_queries() -> list[str]:
    return [single or double for single, double in EXAMPLE_QUERY.findall(PAGE)]


def test_every_view_in_schema_is_documented_with_an_example_query():
    assert VIEWS, "schema.sql defines no views"
    headed = set(re.findall(r"^### (v_\w+)$", PAGE, re.MULTILINE)) | set(
        re.findall(r"^- \*\*(v_\w+)\*\*", PAGE, re.M)
    )
    assert [view for view in VIEWS if view not in headed] == []
    queried = " ".join(example_queries())
    assert [view for view in VIEWS if not re.search(rf"\b{view}\b", queried)] == []


@pytest.fixture(scope="module")
def catalog_db(tmp_path_factory):
    """A catalog with an audit row and an open breaker, so the views people query have rows."""
    path = tmp_path_factory.mktemp("database-docs") / "router.db"
    conn = connect(path)
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    audit.record(
        conn, session_id="s1", role="director", meta_tool="mcp_search_tools", target=None,
        arguments={"query": "time"}, outcome="ok", latency_ms=0.4, error=None,
    )  # fmt: skip
    conn.execute(
        "INSERT INTO breaker(tool, state, consecutive_failures, opened_at, updated_at, last_error) "
        "VALUES ('git_status', 'open', 3, 1767225600.0, '2026-01-01T00:00:00.000Z', 'boom')"
    )
    conn.close()
    return path


@pytest.mark.parametrize("query", example_queries())
def test_example_query_runs_in_system_sqlite3_and_reads_what_the_router_wrote(catalog_db, query):
    """The shell people have (older than apsw's SQLite) must read each view as the router does."""
    result = subprocess.run(
        ["sqlite3", "-json", str(catalog_db), query],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr
    shell_rows = json.loads(result.stdout) if result.stdout.strip() else []
    conn = connect(catalog_db)
    try:
        router_rows = query_dicts(conn, query)
    finally:
        conn.close()
    assert shell_rows == router_rows


def test_the_example_queries_show_the_rows_the_fixture_wrote(catalog_db):
    """Guards the test above against comparing two empty results."""
    conn = connect(catalog_db)
    try:
        assert len(query_dicts(conn, "SELECT * FROM v_catalog_per_profile")) == 5
        assert [r["outcome"] for r in query_dicts(conn, "SELECT * FROM v_recent_audit")] == ["ok"]
        assert [r["tool"] for r in query_dicts(conn, "SELECT * FROM v_breaker_state")] == ["git_status"]
    finally:
        conn.close()


def test_the_inspection_views_have_example_queries():
    queried = " ".join(example_queries())
    for view in (
        "v_catalog_per_profile",
        "v_recent_audit",
        "v_cost_per_session",
        "v_cost_per_day",
        "v_breaker_state",
        "v_skills",
    ):
        assert view in queried
