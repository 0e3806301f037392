"""The README cannot drift: every view schema.sql defines is documented (in it or a docs/
page), every sqlite3 example query in it runs in the system sqlite3 shell, and every CLI
command is mentioned (in it or a docs/ page)."""

import json
import re
import subprocess

import pytest

from router.catalog.load import load_catalog
from router.cli import build_parser
from router.db import connect, query_dicts
from router.facade import audit
from router.paths import SCHEMA_FILE, SEEDS_DIR
from tests.project import PROJECT_ROOT

README = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
# the manual and its topic pages together
DOCS = README + "".join(
    page.read_text(encoding="utf-8") for page in sorted((PROJECT_ROOT / "docs").glob("*.md"))
)
EXAMPLE_QUERY = re.compile(r"^sqlite3 -header -column router\.db '([^']+)'$", re.MULTILINE)
VIEWS = sorted(set(re.findall(r"CREATE VIEW (v_\w+)", SCHEMA_FILE.read_text(encoding="utf-8"))))


def test_every_view_in_schema_is_documented():
    assert VIEWS, "schema.sql defines no views"
    undocumented = [view for view in VIEWS if f"`{view}`" not in DOCS]
    assert undocumented == []


@pytest.fixture(scope="module")
def catalog_db(tmp_path_factory):
    """A catalog with an audit row and an open breaker, so the views people query have rows."""
    path = tmp_path_factory.mktemp("readme") / "router.db"
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


@pytest.mark.parametrize("query", EXAMPLE_QUERY.findall(README))
def test_readme_example_query_runs_in_system_sqlite3_and_reads_what_the_router_wrote(catalog_db, query):
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


def test_readme_has_example_queries_for_the_inspection_views():
    queried = " ".join(EXAMPLE_QUERY.findall(README))
    for view in (
        "v_catalog_per_profile",
        "v_recent_audit",
        "v_cost_per_session",
        "v_cost_per_day",
        "v_breaker_state",
        "v_skills",
    ):
        assert view in queried


def test_every_cli_command_is_documented():
    subparsers = next(a for a in build_parser()._actions if a.dest == "command")
    missing = [name for name in subparsers.choices if f"context-router {name}" not in DOCS]
    assert missing == []
