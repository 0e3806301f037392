"""`make bench` writes its figures into docs/benchmarks.md between the markers, keeping the
page's hand-written header, and nowhere in the README."""

import json

from bench import __main__ as bench_main
from bench.paths import BENCHMARKS_PAGE, CHART
from bench.report import BEGIN, END, Section, link_from_page, update_sections, write_benchmarks_page
from tests.docs_support import README, page

HEADER = "# Benchmarks\n\nWhat each section measures, written by hand.\n\n## Results\n\n"


def test_the_figures_replace_the_marked_block_and_keep_the_header(tmp_path):
    target = tmp_path / "benchmarks.md"
    target.write_text(f"{HEADER}{BEGIN}\nold figures\n{END}\n\nA closing note.\n", encoding="utf-8")
    sections = [Section("Latency", "| a |\n| --- |\n| 1 |"), Section("Install size", "77 MB")]
    write_benchmarks_page(sections, target)
    text = target.read_text(encoding="utf-8")
    assert text.startswith(HEADER) and text.endswith(f"{END}\n\nA closing note.\n")
    assert "old figures" not in text
    assert f"{BEGIN}\n### Latency\n\n| a |\n| --- |\n| 1 |\n\n### Install size\n\n77 MB\n{END}" in text
    write_benchmarks_page(sections, target)
    assert target.read_text(encoding="utf-8") == text


def test_a_page_without_markers_gets_a_results_section(tmp_path):
    target = tmp_path / "benchmarks.md"
    target.write_text("# Benchmarks\n\nIntro.\n", encoding="utf-8")
    write_benchmarks_page([Section("Latency", "fast")], target)
    assert (
        target.read_text(encoding="utf-8")
        == f"# Benchmarks\n\nIntro.\n\n## Results\n\n{BEGIN}\n### Latency\n\nfast\n{END}\n"
    )


def test_make_bench_writes_the_docs_page_not_the_readme():
    assert BENCHMARKS_PAGE.parent.name == "docs"
    shipped = page(BENCHMARKS_PAGE)
    assert shipped.count(BEGIN) == shipped.count(END) == 1
    assert BEGIN not in page(README)
    assert bench_main.write_benchmarks_page is write_benchmarks_page


def test_the_chart_link_resolves_from_the_page():
    link = link_from_page(CHART)
    assert link == "../bench/latency.png"
    assert (BENCHMARKS_PAGE.parent / link).resolve() == CHART
    assert f"]({link})" in page(BENCHMARKS_PAGE)


def test_one_module_s_sections_replace_theirs_and_keep_the_others(tmp_path):
    target, results = tmp_path / "benchmarks.md", tmp_path / "results.json"
    target.write_text(f"{HEADER}{BEGIN}\nold{END}\n\nA closing note.\n", encoding="utf-8")
    write_benchmarks_page([Section("Latency", "fast"), Section("Page", "old page")], target)
    results.write_text(json.dumps({"Latency": {"ms": 1}, "Page": {"first": 0.5}}), encoding="utf-8")
    update_sections([Section("Page", "new page", {"first": 0.9}), Section("Size", "77 MB")], target, results)
    text = target.read_text(encoding="utf-8")
    assert f"{BEGIN}\n### Latency\n\nfast\n\n### Page\n\nnew page\n\n### Size\n\n77 MB\n{END}" in text
    assert text.startswith(HEADER) and text.endswith(f"{END}\n\nA closing note.\n")
    assert json.loads(results.read_text()) == {"Latency": {"ms": 1}, "Page": {"first": 0.9}, "Size": {}}
