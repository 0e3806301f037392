"""The committed benchmark set loads as a catalog, and every relevant name it gives is a tool of
its catalog (a wrong name would silently cap every metric). The public sets converted from
fetched repositories are not committed; their converters check the same when they write them."""

import importlib
import json
import pkgutil

import bench
from bench.__main__ import BENCHES
from bench.mixed_quality import mixed_catalog
from bench.page_tokens import EVERYDAY_QUERIES
from bench.paths import BFCL_CATALOG, BFCL_QUERIES
from bench.synthetic import catalog, planted_queries
from router.catalog.evaluation import read_query_file
from router.catalog.load import load_catalog
from router.paths import SEEDS_DIR


def test_the_bfcl_set_loads_and_names_only_its_own_tools(conn):
    catalog_file, queries_file = BFCL_CATALOG, BFCL_QUERIES
    summary = load_catalog(conn, seed_dir=None, user_files=[catalog_file])
    names = {name for (name,) in conn.execute("SELECT name FROM tools")}
    queries = read_query_file(queries_file, need_relevant=True)
    assert summary.total == len(names) > 50 and len(queries) > 50
    missing = {name for line in queries for name in line.relevant} - names
    assert missing == set()


def test_planted_queries_name_tools_of_the_smallest_synthetic_catalog():
    names = {tool["name"] for tool in catalog(1_000)}
    planted = planted_queries()
    assert len(planted) == 200 and len({q["id"] for q in planted}) == 200
    assert {q["relevant"][0] for q in planted} <= names
    # the same labelled set at every size: it is made from the first 1,000 tools only
    assert planted == planted_queries()


def test_the_everyday_page_set_names_only_seeded_tools(conn):
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    names = {name for (name,) in conn.execute("SELECT name FROM tools")}
    queries = read_query_file(EVERYDAY_QUERIES, need_relevant=True)
    assert len(queries) >= 30
    assert {name for line in queries for name in line.relevant} - names == set()


def test_the_mixed_catalog_keeps_a_shared_name_once_from_the_first_set_and_loads(conn, tmp_path):
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"

    def tool(name: str, description: str) -> str:
        return (
            json.dumps({"name": name, "description": description, "inputSchema": {"type": "object"}}) + "\n"
        )

    first.write_text(tool("get_news", "headlines of the day"))
    second.write_text(
        tool("get_news", "another set's news tool") + tool("get_weather", "forecast for a city")
    )
    specs = [(name, None, path, None, "development") for name, path in (("first", first), ("second", second))]
    mixed = tmp_path / "mixed.jsonl"
    kept, dropped = mixed_catalog(specs, mixed)
    assert [tool["name"] for tool in kept] == ["get_news", "get_weather"] and dropped == ["get_news"]
    load_catalog(conn, seed_dir=None, user_files=[mixed])
    rows = dict(conn.execute("SELECT name, description FROM tools"))
    assert rows == {"get_news": "headlines of the day", "get_weather": "forecast for a city"}


def test_every_bench_module_imports():
    # a renamed helper one bench module imports from another breaks `make bench` only at its
    # end, minutes in; importing them all here breaks the test run instead
    names = [info.name for info in pkgutil.iter_modules(bench.__path__, "bench.")]
    assert set(BENCHES) <= set(names) and len(names) > len(BENCHES)
    for name in names:
        importlib.import_module(name)


def test_the_page_sets_name_only_seeded_tools_and_say_what_to_avoid(conn):
    from bench.page_quality import DEVELOPMENT_PAGE_SETS, HELD_OUT_PAGE_SETS, read_page_set

    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    names = {name for (name,) in conn.execute("SELECT name FROM tools")}
    held_out = [path for path in HELD_OUT_PAGE_SETS.values() if path.is_file()]  # until written
    for path in (*DEVELOPMENT_PAGE_SETS.values(), *held_out):
        requests = read_page_set(path, names)  # an unknown tool name ends the bench: here, the test
        assert len(requests) >= 60 and len({r.id for r in requests}) == len(requests)
        assert any(not r.relevant for r in requests) and any(r.avoid for r in requests)
