"""The semantic part of search: the query's nearest tools by the real default model join the
lexical candidates, every candidate gets W × cosine, and the filters and rules stay as they are."""

import json
from itertools import pairwise

import pytest

from router.catalog import search as search_module
from router.catalog.load import load_catalog
from router.catalog.search import SEMANTIC_WEIGHT, search
from router.catalog.search_filters import Filters
from router.cli import main
from router.paths import SEEDS_DIR


def tool(name, description, *, read_only=True, profile="custom"):
    return {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": read_only},
        "profile": profile,
    }


# An imported calculator server's tools and unrelated neighbours: "add two numbers" shares no
# word with get-sum (its description says "Sum of a and b").
IMPORTED = [
    tool("get-sum", "Sum of a and b."),
    tool("get-product", "Product of a and b."),
    tool("send_email", "Send an email message to a recipient."),
    tool("book_table", "Reserve a restaurant table for dinner."),
    tool("weather_now", "Current weather conditions for a city."),
    tool("delete_files", "Delete files from the disk.", read_only=False),
    tool("translate_text", "Translate text into another language."),
    tool("play_song", "Play a song on the speaker."),
]


def load(conn, tmp_path, tools):
    path = tmp_path / "catalog.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in tools))
    load_catalog(conn, seed_dir=None, user_files=[path])
    return conn


@pytest.fixture
def seeded(conn):
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    return conn


def names(hits):
    return [hit.name for hit in hits]


def test_a_tool_that_shares_no_word_with_the_query_is_found(conn, tmp_path):
    load(conn, tmp_path, IMPORTED)
    assert "get-sum" not in names(search(conn, "add two numbers", semantic=False))
    assert names(search(conn, "add two numbers"))[0] == "get-sum"


def test_the_seeded_catalog_answers_what_users_ask_in_their_own_words(seeded):
    """Issue 21's misses: the words favour git_show and godot_stop_project; the model's cosines
    (with SEMANTIC_WEIGHT) must put the tool the user means first."""
    assert names(search(seeded, "show me the last 5 commits"))[0] == "git_log"
    assert names(search(seeded, "run my godot game project"))[0] == "godot_run_project"


def test_the_seeded_catalog_finds_the_tools_users_mean_near_the_top(seeded):
    assert "git_log" in names(search(seeded, "show me the last 5 commits"))[:2]
    assert "godot_run_project" in names(search(seeded, "run my godot game project"))[:2]


def test_explain_shows_the_semantic_part_and_the_parts_add_up(seeded):
    hits = search(seeded, "show me the last 5 commits", explain=True)
    for hit in hits:
        e = hit.explain
        assert hit.score == pytest.approx(e.trigger + e.bm25 + e.boost + e.semantic)
        assert 0 <= e.semantic <= SEMANTIC_WEIGHT
    assert hits[0].explain.semantic > 0


def test_the_lexical_search_has_no_semantic_part(seeded):
    hits = search(seeded, "show me the last 5 commits", explain=True, semantic=False)
    assert hits and all(hit.explain.semantic == 0 for hit in hits)


def test_bm25_is_a_share_of_the_querys_best_match(seeded):
    hits = search(seeded, "list files in a directory", explain=True, limit=20)
    best = max(hit.explain.bm25 for hit in hits)
    assert best == pytest.approx(search_module.BM25_WEIGHT)
    assert all(0 <= hit.explain.bm25 <= best for hit in hits)


def test_semantic_neighbours_obey_the_role_and_the_profile(conn, tmp_path):
    other = tool("list_devices", "List the connected phones.", profile="android") | {"server": "phones"}
    load(conn, tmp_path, IMPORTED + [tool("wipe_disk", "Erase the whole drive.", read_only=False), other])
    assert "wipe_disk" in names(search(conn, "erase the drive", limit=50))
    assert "wipe_disk" not in names(search(conn, "erase the drive", limit=50, may_call_mutating=False))
    assert "get-sum" not in names(search(conn, "add two numbers", profile="android", limit=50))


def test_an_exact_name_still_wins(seeded):
    assert names(search(seeded, "git_show"))[0] == "git_show"


def test_results_repeat_exactly(seeded):
    first = [hit.to_dict() for hit in search(seeded, "run my godot game project", explain=True)]
    assert [hit.to_dict() for hit in search(seeded, "run my godot game project", explain=True)] == first


def test_new_tools_are_searchable_by_meaning_after_a_reload(conn, tmp_path):
    load(conn, tmp_path, IMPORTED[2:])
    assert "get-sum" not in names(search(conn, "add two numbers", limit=50))
    load(conn, tmp_path, IMPORTED)  # the same connection: its cached vectors must follow
    assert names(search(conn, "add two numbers"))[0] == "get-sum"


def test_the_cli_explain_prints_the_semantic_part(seeded, db_path, capsys):
    assert main(["search", "--db", str(db_path), "--explain", "show me the last 5 commits"]) == 0
    assert "+ semantic " in capsys.readouterr().out


def test_a_large_catalog_is_grouped_and_probed_and_still_finds_them(conn, tmp_path, monkeypatch):
    from router.catalog import semantic_index, vector_clusters, vector_groups

    queries = ["show me the last 5 commits", "decompile a function", "take a screenshot of the phone"]
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    exhaustive = [names(search(conn, query))[0] for query in queries]
    monkeypatch.setattr(vector_groups, "EXHAUSTIVE_MAX_TOOLS", 50)
    monkeypatch.setattr(vector_clusters, "PROBES", 4)
    load(conn, tmp_path, IMPORTED)  # a new catalog version each time: reloaded, now grouped
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    assert [names(search(conn, query))[0] for query in queries] == exhaustive
    index = semantic_index.semantic_index(conn)
    clusters = index._clusters
    assert clusters is not None and len(clusters.centroids) == round(len(index) ** 0.5)
    assert sorted(clusters.order.tolist()) == list(range(len(index)))  # every row in one group


NEIGHBOURS = 8


@pytest.mark.parametrize(
    ("profile", "may_call_mutating"), [(None, True), ("core", True), (None, False), ("core", False)]
)
def test_grouped_neighbours_probing_every_group_are_the_exhaustive_ones_under_each_filter(
    conn, monkeypatch, profile, may_call_mutating
):
    from router.catalog import semantic_index, vector_clusters, vector_groups
    from router.catalog.embeddings import catalog_model

    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    model = catalog_model()
    query = model.encode(["show me the last 5 commits"])[0]
    kwargs = {"filters": Filters(profile, may_call_mutating), "min_cosine": 0.1}
    # NEIGHBOURS is fewer than the tools each filter leaves above the floor: the limit binds
    exhaustive = semantic_index.semantic_index(conn).refresh(model).nearest(query, NEIGHBOURS, **kwargs)
    monkeypatch.setattr(vector_groups, "EXHAUSTIVE_MAX_TOOLS", 50)
    monkeypatch.setattr(vector_clusters, "PROBES", 10_000)  # every group: nothing may be missed
    grouped = semantic_index.SemanticIndex(conn).refresh(model)
    assert grouped._clusters is not None
    found = grouped.nearest(query, NEIGHBOURS, **kwargs)
    # the same tools with the same cosines, best first; a cosine may differ in its last float32
    # bits (another product shape sums in another order), so two tools whose cosines tie to
    # those bits may come in either order
    assert set(found) == set(exhaustive) and len(exhaustive) == NEIGHBOURS
    assert [found[t] for t in exhaustive] == pytest.approx(list(exhaustive.values()), abs=1e-5)
    in_order = list(found.values())
    assert all(better >= worse - 1e-5 for better, worse in pairwise(in_order))
    # with the examples' cosines too: probed groups and the whole matrix agree
    whole = semantic_index.semantic_index(conn).refresh(model)
    exhaustive_examples = whole.nearest(
        query, NEIGHBOURS, **kwargs, examples=whole.example_cosines(query), example_weight=0.85
    )
    assert exhaustive_examples != exhaustive  # the examples moved something
    # (each index's own example cosines: their rows are positions in its own row order)
    found = grouped.nearest(
        query, NEIGHBOURS, **kwargs, examples=grouped.example_cosines(query), example_weight=0.85
    )
    assert set(found) == set(exhaustive_examples)
    assert [found[t] for t in exhaustive_examples] == pytest.approx(
        list(exhaustive_examples.values()), abs=1e-5
    )
    profiles = dict(conn.execute("SELECT t.id, s.profile FROM tools t JOIN servers s ON s.name = t.server"))
    mutating = dict(conn.execute("SELECT id, mutating FROM tools"))
    assert all(profile is None or profiles[tool_id] == profile for tool_id in exhaustive)
    assert all(may_call_mutating or not mutating[tool_id] for tool_id in exhaustive)
    cosines = list(exhaustive.values())
    assert cosines == sorted(cosines, reverse=True) and min(cosines) >= 0.1


def test_a_large_catalogs_grouping_is_stored_by_the_load_and_read_by_search(conn, tmp_path, monkeypatch):
    from router.catalog import semantic_index, vector_clusters, vector_groups
    from router.catalog.embeddings import catalog_model

    def counts():
        return conn.execute(
            "SELECT (SELECT count(*) FROM tool_embeddings), (SELECT count(*) FROM vector_groups),"
            " (SELECT count(*) FROM vector_centroids)"
        ).fetchone()

    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    assert counts()[1:] == (0, 0)  # small enough to be scored whole: nothing stored
    monkeypatch.setattr(vector_groups, "EXHAUSTIVE_MAX_TOOLS", 50)
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])  # nothing changed, but not grouped yet
    vectors, grouped, centroids = counts()
    assert grouped == vectors > 50 and centroids == 1
    stored = conn.execute("SELECT group_no FROM vector_groups ORDER BY definition_hash").fetchall()

    def no_kmeans(matrix):
        raise AssertionError("search grouped the vectors itself")

    monkeypatch.setattr(vector_clusters, "build", no_kmeans)
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])  # unchanged: the grouping stays
    assert conn.execute("SELECT group_no FROM vector_groups ORDER BY definition_hash").fetchall() == stored
    model = catalog_model()
    index = semantic_index.SemanticIndex(conn).refresh(model)
    assert index._clusters is not None and len(index._clusters.centroids) == round(vectors**0.5)
    monkeypatch.setattr(vector_clusters, "PROBES", 10_000)
    query = model.encode(["show me the last 5 commits"])[0]
    kwargs = {"filters": Filters(), "min_cosine": 0.1}
    monkeypatch.setattr(vector_groups, "EXHAUSTIVE_MAX_TOOLS", 4_096)
    whole = semantic_index.SemanticIndex(conn).refresh(model)
    assert whole._clusters is None
    assert list(index.nearest(query, 12, **kwargs)) == list(whole.nearest(query, 12, **kwargs))
    load(conn, tmp_path, IMPORTED)  # back under the threshold: what was stored goes
    assert counts()[1:] == (0, 0)


def test_a_hidden_servers_tools_take_no_neighbours_place(conn):
    from router.catalog.embeddings import catalog_model
    from router.catalog.semantic_index import semantic_index

    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    model = catalog_model()
    index = semantic_index(conn).refresh(model)
    query = model.encode(["show me the last 5 commits"])[0]
    kwargs = {"filters": Filters(), "min_cosine": 0.1}
    server_of = dict(conn.execute("SELECT id, server FROM tools"))
    everything = index.nearest(query, 200, **kwargs)
    assert [server_of[tool_id] for tool_id in list(everything)[:3]] == ["git"] * 3
    shown = [tool_id for tool_id in everything if server_of[tool_id] != "git"][:12]
    hidden = Filters(hidden_servers=frozenset({"git"}))
    assert list(index.nearest(query, 12, filters=hidden, min_cosine=0.1)) == shown


def test_search_batch_and_eval_take_the_same_path(conn, db_path, tmp_path, capsys):
    load(conn, tmp_path, IMPORTED)
    assert main(["search", "--db", str(db_path), "--json", "--all", "add two numbers"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["name"] == "get-sum"
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"id": "q", "query": "add two numbers", "relevant": ["get-sum"]}) + "\n")
    assert main(["search", "--db", str(db_path), "--batch", str(queries)]) == 0
    assert json.loads(capsys.readouterr().out)["ranked"][0] == "get-sum"
    assert main(["eval", "--db", str(db_path), "--json", str(queries)]) == 0
    row = json.loads(capsys.readouterr().out)
    assert (row["recall@1"], row["lexical"]["recall@1"]) == (1.0, 0.0)


def test_with_the_semantic_model_off_a_load_embeds_nothing_and_search_uses_the_words(
    conn, tmp_path, monkeypatch
):
    monkeypatch.setenv("CONTEXT_ROUTER_SEMANTIC_MODEL", "off")
    load(conn, tmp_path, IMPORTED)
    assert conn.execute("SELECT count(*) FROM tool_embeddings").fetchone() == (0,)
    hits = search(conn, "send an email", explain=True)
    assert hits and all(hit.explain.semantic == 0 for hit in hits)
    assert "get-sum" not in names(search(conn, "add two numbers", limit=50))


def test_neighbours_tied_at_the_last_place_go_to_the_lower_ids(conn, tmp_path):
    from router.catalog.embeddings import catalog_model
    from router.catalog.semantic_index import semantic_index

    # one tool spelt eight ways: the same name words and description, so the same vector and
    # the same cosine
    spellings = ["get-sum", "get_sum", "getSum", "GetSum", "get.sum", "GET_SUM", "get__sum", "Get-Sum"]
    load(conn, tmp_path, [tool(name, "Sum of a and b.") for name in spellings] + IMPORTED[1:])
    model = catalog_model()
    query = model.encode(["add two numbers"])[0]
    kwargs = {"filters": Filters(), "min_cosine": 0.1}
    index = semantic_index(conn).refresh(model)
    tied = [
        tool_id for (tool_id,) in conn.execute("SELECT id FROM tools WHERE name LIKE 'get%sum' ORDER BY id")
    ]
    everything = index.nearest(query, 100, **kwargs)
    assert len(tied) == 8 and list(everything)[:8] == tied
    assert len({everything[tool_id] for tool_id in tied}) == 1
    for k in (1, 3, 7):  # the cut falls inside the tie: its lowest ids, in id order
        assert list(index.nearest(query, k, **kwargs)) == tied[:k]


# Sixteen tools the words rank alike for "phone numbers" (their names hold both words; ties go
# by name), which the model tells apart by the place each one serves.
PHONE_BOOKS = [
    tool(f"list_{place}_phone_numbers", f"List the phone numbers of the {place}.")
    for place in (
        "bank", "camp", "clinic", "club", "depot", "farm", "garage", "home",
        "hotel", "lab", "mill", "office", "port", "school", "shop", "studio",
    )
]  # fmt: skip


def test_the_meaning_lifts_a_tool_the_words_rank_below_the_page_without_a_phrase(conn, tmp_path, monkeypatch):
    # Without the nearest neighbours (none join: only the words' candidates are scored), the
    # first hit is the best score among the words' best 1 + POOL_MARGIN, phrase or not: the
    # cosine must be weighed beyond the page's edge, not only for a query holding a phrase.
    # seventeen other tools, so that "phone" and "numbers" are in fewer than half the rows and
    # select candidates (router/catalog/match_plan.py)
    load(
        conn,
        tmp_path,
        PHONE_BOOKS + [tool(f"open_{thing}", f"Open the {thing}.") for thing in "abcdefghijklmnopq"],
    )
    monkeypatch.setattr(search_module, "SEMANTIC_MARGIN", -1)
    query = "phone numbers"
    by_words = names(search(conn, query, limit=len(PHONE_BOOKS), semantic=False))
    assert sorted(by_words) == sorted(t["name"] for t in PHONE_BOOKS)
    scores = {hit.name: hit.score for hit in search(conn, query, limit=len(PHONE_BOOKS))}
    best = min(by_words[: 1 + search_module.POOL_MARGIN], key=lambda name: (-scores[name], name))
    # the case the test is about: the words alone put that tool below the first few
    assert by_words.index(best) > 5
    assert names(search(conn, query, limit=1)) == [best]


def test_the_tools_alike_are_those_whose_descriptions_nearly_match(tmp_path):
    from router.catalog.embeddings import catalog_model
    from router.catalog.load import load_catalog
    from router.catalog.match_plan import term_stats
    from router.catalog.semantic_index import semantic_index
    from router.db import connect
    from router.paths import SEEDS_DIR

    conn = connect(tmp_path / "seeded.db")
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    index = semantic_index(conn).refresh(catalog_model(), term_stats(conn).refresh())
    ids = {name: int(tool_id) for tool_id, name in conn.execute("SELECT id, name FROM tools")}
    listing, r2_listing, clock = ids["list_directory"], ids["r2_list_files"], ids["get_current_time"]
    alike = index.alike([listing, r2_listing, clock], 0.75)
    assert alike == {listing: {r2_listing}, r2_listing: {listing}}
    assert index.alike([listing, r2_listing], 0.99) == {}  # alike, not the same
    assert index.alike([listing], 0.0) == {}  # nothing to be alike with
