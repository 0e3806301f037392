"""docs/dashboard.md and the dashboard's metadata cannot drift: every view is titled and
described, every canned query, chart, command option and metric is documented, and the
scrape configuration it shows is valid YAML."""

import re

import yaml
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from router.breakglass import caps
from router.cli import build_parser
from router.dashboard.app import DATABASE_NAME, load_metadata
from router.db import connect
from router.metrics.collector import RouterCollector
from router.paths import SCHEMA_FILE
from tests.project import PROJECT_ROOT

PAGE = (PROJECT_ROOT / "docs" / "dashboard.md").read_text(encoding="utf-8")
METADATA = load_metadata()
DATABASE = METADATA["databases"][DATABASE_NAME]
VIEWS = sorted(set(re.findall(r"CREATE VIEW (v_\w+)", SCHEMA_FILE.read_text(encoding="utf-8"))))


def test_every_view_has_a_title_and_a_description():
    missing = [v for v in VIEWS if not DATABASE["tables"].get(v, {}).get("title")]
    missing += [v for v in VIEWS if not DATABASE["tables"].get(v, {}).get("description")]
    assert missing == []


def test_every_canned_query_and_chart_is_documented():
    for name, query in DATABASE["queries"].items():
        assert f"`{name}`" in PAGE, name
        assert query["title"] and query["description"] and query["sql"], name
    charts = METADATA["plugins"]["datasette-dashboards"][DATABASE_NAME]["charts"]
    for chart in charts.values():
        title = re.sub(r" \((?:USD|ms|last 48 hours)\)$", "", chart["title"])
        assert title in PAGE, title


def test_every_dashboard_option_is_documented():
    subparsers = next(a for a in build_parser()._actions if a.dest == "command")
    options = [
        o for a in subparsers.choices["dashboard"]._actions for o in a.option_strings if o.startswith("--")
    ]
    assert {"--db", "--port", "--host"} <= set(options)
    for option in options:
        if option != "--help":
            assert f"`{option}" in PAGE, option


def test_every_metric_is_documented_and_the_scrape_config_parses(db_path):
    conn = connect(db_path)
    try:  # a recorded cap, so every metric family is there
        caps.record(
            conn, caps.Usage("s", 0, 0, None, "2026-01-02", 0, 0), caps.Caps(3, 5_000_000, 20, 15_000_000)
        )
    finally:
        conn.close()
    registry = CollectorRegistry(auto_describe=False)
    registry.register(RouterCollector(db_path, lambda: set()))
    families = list(text_string_to_metric_families(generate_latest(registry).decode()))
    assert len(families) >= 15
    for family in families:
        name = family.name + ("_total" if family.type == "counter" else "")
        assert f"`{name}`" in PAGE, name
    (scrape,) = re.findall(r"```yaml\n(.*?)```", PAGE, re.S)
    config = yaml.safe_load(scrape)
    assert config["scrape_configs"][0]["static_configs"][0]["targets"]
