"""The README cannot drift: every view schema.sql defines is documented, every sqlite3
example query in it runs in the system sqlite3 shell, and every CLI command is mentioned."""

import re
import subprocess

import pytest

from router.catalog.load import load_catalog
from router.cli import build_parser
from router.db import connect
from router.paths import PROJECT_ROOT, SCHEMA_FILE, SEEDS_DIR

README = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
EXAMPLE_QUERY = re.compile(r"^sqlite3 -header -column router\.db '([^']+)'$", re.MULTILINE)
VIEWS = sorted(set(re.findall(r"CREATE VIEW (v_\w+)", SCHEMA_FILE.read_text(encoding="utf-8"))))


def test_every_view_in_schema_is_documented():
    assert VIEWS, "schema.sql defines no views"
    undocumented = [view for view in VIEWS if f"`{view}`" not in README]
    assert undocumented == []


@pytest.fixture(scope="module")
def catalog_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("readme") / "router.db"
    conn = connect(path)
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    conn.close()
    return path


@pytest.mark.parametrize("query", EXAMPLE_QUERY.findall(README))
def test_readme_example_query_runs_in_system_sqlite3(catalog_db, query):
    result = subprocess.run(
        ["sqlite3", "-header", "-column", str(catalog_db), query],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr


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
    missing = [name for name in subparsers.choices if f"context-router {name}" not in README]
    assert missing == []
