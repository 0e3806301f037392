"""The lexical index: FTS5's postings and row lengths read into memory, scored as FTS5's
bm25() scores them, and kept in step with the catalog."""

import json

import pytest

from router.catalog import lexical_index as lexical
from router.catalog.load import load_catalog
from router.catalog.match_plan import idf
from router.catalog.search import COLUMN_WEIGHTS, search
from router.catalog.search_filters import Filters


def tool(name, description, *, server="ops", mutating=False, arguments=("path",)):
    return {
        "name": name,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": {a: {"type": "string", "description": f"The {a}."} for a in arguments},
        },
        "annotations": {"readOnlyHint": not mutating},
        "server": server,
    }


def load(conn, tmp_path, tools, name="catalog.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(t) + "\n" for t in tools))
    load_catalog(conn, seed_dir=None, user_files=[path])
    return conn


def fts5_bm25(conn, words):
    return dict(
        conn.execute(
            "SELECT rowid, -bm25(tools_fts, 3.0, 1.0, 0.5, 1.0, 1.0) FROM tools_fts WHERE tools_fts MATCH ?",
            (" OR ".join(f'"{w}"' for w in words),),
        ).fetchall()
    )


def idfs(conn, terms):
    """(term, FTS5's IDF) for each indexed term."""
    rows = conn.execute("SELECT count(*) FROM tools").fetchone()[0]
    docs = dict(conn.execute("SELECT term, doc FROM tools_fts_terms").fetchall())
    return [(term, idf(rows, docs[term])) for term in terms]


def test_rows_longer_than_127_tokens_have_their_length(conn, tmp_path):
    """A column of 128 tokens or more is a varint of two or three bytes in FTS5's docsize: the
    row's length, and so its BM25, must still be FTS5's."""
    tools = [
        tool("short_archive", "Archive a folder."),
        tool("long_archive", "Archive a folder. " + "Also notes many other things here. " * 60),
        tool("huge_archive", "archive " + "word " * 20_000),
        tool("other", "Unrelated text about weather.", arguments=tuple(f"arg{i}" for i in range(200))),
    ]
    load(conn, tmp_path, tools)
    index = lexical.lexical_index(conn).refresh(None, COLUMN_WEIGHTS)
    expected = fts5_bm25(conn, ["archive", "folder", "weather"])
    ranking = index.ranked(
        ["archiv", "folder", "weather"],
        idfs(conn, ["archiv", "folder", "weather"]),
        index.positions([]),
        10,
        Filters(),
        list(expected),
    )
    assert len(expected) == 4
    for rowid, score in expected.items():
        assert ranking.asked[rowid] == pytest.approx(score, rel=1e-6)
        assert ranking.pool[rowid] == pytest.approx(score, rel=1e-6)


def test_a_search_leaves_no_trace_for_the_next(conn, tmp_path):
    """The selection and score slots are kept between searches: each search must find them
    empty, whatever the one before selected, filtered or scored."""
    tools = [
        tool(f"notes_{i}", f"Notes number {i} with words alpha{i % 3}.", mutating=i % 2 == 1)
        for i in range(30)
    ]
    load(conn, tmp_path, tools)
    queries = ["notes alpha0", "alpha1", "number alpha2 notes", "can you show me the notes"]
    alone = []
    for query in queries:  # each in a fresh index: nothing before it
        lexical.lexical_index(conn).version = None
        alone.append(search(conn, query, limit=50, semantic=False, explain=True))
    for _ in range(2):  # in turns, with a filter between
        for query, expected in zip(queries, alone):
            search(conn, query, limit=50, semantic=False, may_call_mutating=False)
            assert search(conn, query, limit=50, semantic=False, explain=True) == expected


def test_row_lengths_decode_sqlite_varints():
    # 5 → one byte; 200 → 0x81 0x48; 20,001 → 0x81 0x9c 0x21
    sizes = [bytes([5, 0, 1, 0, 0]), bytes([0x81, 0x48, 3]), bytes([0x81, 0x9C, 0x21])]
    assert lexical.row_lengths(sizes).tolist() == [6.0, 203.0, 20_001.0]


def test_the_index_follows_the_catalog(conn, tmp_path):
    load(conn, tmp_path, [tool("fetch_page", "Fetch a web page.")])
    assert [h.name for h in search(conn, "fetch", semantic=False)] == ["fetch_page"]
    # another process's load bumps the catalog version: the next search reads the new postings
    load(conn, tmp_path, [tool("fetch_page", "Fetch a web page."), tool("fetch_feed", "Fetch an RSS feed.")])
    assert {h.name for h in search(conn, "fetch", semantic=False)} == {"fetch_page", "fetch_feed"}


def test_the_postings_kept_in_memory_are_bounded(conn, tmp_path, monkeypatch):
    tools = [tool(f"tool_{i}", f"Word{i} and common text {i % 7}.") for i in range(50)]
    load(conn, tmp_path, tools)
    queries = [f"word{i} common" for i in range(50)]
    unbounded = [[h.name for h in search(conn, q, semantic=False)] for q in queries]
    monkeypatch.setattr(lexical, "MAX_CACHED_POSTINGS", 60)
    index = lexical.lexical_index(conn)
    index.refresh(index.version, COLUMN_WEIGHTS)  # unchanged: the cache stays
    index._postings.clear()
    index._cached = 0
    bounded = [[h.name for h in search(conn, q, semantic=False)] for q in queries]
    assert bounded == unbounded
    assert index._cached <= 60 and len(index._postings) < 51


def test_filters_apply_to_the_candidates(conn, tmp_path):
    tools = [
        tool("read_notes", "Read the notes.", server="notes"),
        tool("write_notes", "Write the notes.", server="notes", mutating=True),
        tool("sync_notes", "Sync the notes.", server="cloud"),
    ]
    load(conn, tmp_path, tools)
    names = lambda **f: {h.name for h in search(conn, "notes", semantic=False, **f)}  # noqa: E731
    assert names() == {"read_notes", "write_notes", "sync_notes"}
    assert names(may_call_mutating=False) == {"read_notes", "sync_notes"}
    assert names(hidden_servers=["cloud"]) == {"read_notes", "write_notes"}


def test_coverage_is_the_share_of_the_query_words_idf_a_tool_holds(conn, tmp_path):
    tools = [
        tool("archive_folder", "Archive a folder."),
        tool("weather_now", "Weather for a city."),
        tool("both", "Archive the weather folder."),
        tool("neither", "Something else entirely."),
    ]
    load(conn, tmp_path, tools)
    index = lexical.lexical_index(conn).refresh(None, COLUMN_WEIGHTS)
    terms = idfs(conn, ["archiv", "weather"])
    terms.append(("nowhere", 2.0))  # a term no row holds: its IDF counts, no row has it
    ids = dict(conn.execute("SELECT name, id FROM tools").fetchall())
    total = sum(weight for _, weight in terms)
    covered = index.coverage(terms, ids.values())
    assert covered[ids["archive_folder"]] == pytest.approx(terms[0][1] / total)
    assert covered[ids["weather_now"]] == pytest.approx(terms[1][1] / total)
    assert covered[ids["both"]] == pytest.approx((terms[0][1] + terms[1][1]) / total)
    assert covered[ids["neither"]] == 0.0
