"""Examples: how people ask for a tool (tools.examples). They load from seeds and user catalogs,
are indexed in their own FTS5 column, get a vector each that is re-embedded only when its text
changes, and find a tool that the words alone miss; a bad value is refused naming its file,
tool and field."""

import json

import pytest

from router.catalog import example_vectors
from router.catalog.load import load_catalog
from router.catalog.models import MAX_EXAMPLE_CHARS, MAX_EXAMPLES
from router.catalog.search import search
from router.errors import SeedError
from router.paths import SEEDS_DIR


def write_jsonl(path, tools):
    path.write_text("".join(json.dumps(tool) + "\n" for tool in tools))
    return path


def tool(name, description, examples=None):
    out = {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    }
    if examples is not None:
        out["examples"] = examples
    return out


def seeds_without_examples(tmp_path):
    out = tmp_path / "seeds"
    out.mkdir()
    for path in SEEDS_DIR.glob("*.json"):
        seed = json.loads(path.read_text(encoding="utf-8"))
        for entry in seed["tools"]:
            entry.pop("examples", None)
        (out / path.name).write_text(json.dumps(seed), encoding="utf-8")
    return out


def names(hits):
    return [hit.name for hit in hits]


def embedded_examples(conn) -> int:
    return conn.execute("SELECT count(*) FROM example_embeddings").fetchone()[0]


def test_the_seeds_examples_load_index_and_embed_once(conn):
    summary = load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    examples = conn.execute("SELECT examples FROM tools WHERE name = 'git_add'").fetchone()[0]
    assert "stage everything I changed" in examples.split("\n")
    distinct = {text for _, text, _ in example_vectors.embedded_examples(conn)}
    written = {text for _, text in example_vectors.tool_examples(conn)}
    # each example, and its reading without payload where that differs
    assert written < distinct and len(written) > 500
    assert "pull up the memory entries for and" in distinct - written
    # and the servers' not-for requests alike
    distinct |= {text for _, text in example_vectors.embedded_not_for(conn)}
    assert summary.examples_embedded == embedded_examples(conn) == len(distinct)
    assert f"{len(distinct)} request vectors embedded" in summary.one_line()
    # an example's words are in their own column: found there, and only there
    found = conn.execute(
        "SELECT t.name FROM tools_fts f JOIN tools t ON t.id = f.rowid WHERE tools_fts MATCH ?",
        ("{examples} : untracked",),
    ).fetchall()
    assert ("git_status",) in found
    assert not conn.execute(
        "SELECT count(*) FROM tools_fts WHERE tools_fts MATCH '{description} : untracked'"
    ).fetchone()[0]
    again = load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    assert (again.added, again.changed, again.removed, again.examples_embedded) == (0, 0, 0, 0)


def test_a_reload_that_changes_only_an_example_is_a_change_and_embeds_that_one(conn, tmp_path):
    tools = [
        tool("kv_put", "Store a value under a key.", ["save this setting for later", "keep my token"]),
        tool("kv_get", "Read the value stored under a key.", ["what did I save as my token"]),
    ]
    catalog = write_jsonl(tmp_path / "kv.jsonl", tools)
    load_catalog(conn, seed_dir=None, user_files=[catalog])
    before = dict(conn.execute("SELECT example_hash, created_at FROM example_embeddings").fetchall())
    assert len(before) == 3

    tools[0]["examples"][1] = "remember my preferred editor"
    summary = load_catalog(conn, seed_dir=None, user_files=[write_jsonl(catalog, tools)])
    assert (summary.added, summary.changed, summary.removed) == (0, 1, 0)
    assert summary.examples_embedded == 1
    assert conn.execute("SELECT count(*) FROM catalog_loads").fetchone()[0] == 2
    after = dict(conn.execute("SELECT example_hash, created_at FROM example_embeddings").fetchall())
    assert len(after) == 3  # the old text's vector is gone, the new one's is there
    assert after.keys() - before.keys() == {example_vectors.example_hash("remember my preferred editor")}
    kept = before.keys() & after.keys()
    assert len(kept) == 2 and all(after[h] == before[h] for h in kept)  # not re-embedded


def test_examples_find_the_tool_that_words_and_descriptions_miss(tmp_path, conn):
    # the request shares no word with r2_list_strings' name or description; its examples say
    # how people ask for it
    query = "pull the text constants out of the executable"
    plain = tmp_path / "plain.db"
    from router.db import connect

    without = connect(plain)
    load_catalog(without, seed_dir=seeds_without_examples(tmp_path), user_files=[])
    assert not {"r2_list_strings", "ghidra_list_strings"} & set(names(search(without, query, limit=1)))
    without.close()
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    assert names(search(conn, query, limit=1))[0] in {"r2_list_strings", "ghidra_list_strings"}
    hit = search(conn, query, limit=1, explain=True, evidence=True)[0]
    assert hit.explain.via_example and hit.evidence.example_cosine > hit.evidence.cosine - 0.01


@pytest.mark.parametrize(
    "query, first",
    [
        # asked as the clock's example "is it already past 6pm in London" asks
        ("is it already past midnight in auckland?", "get_current_time"),
        # a fact that ties two things is a relation, as "note that the checkout service depends
        # on the inventory api" says, not a note on one of them
        ("note that payments-api depends on postgres, link them", "create_relations"),
        ("remember: payments-api depends on redis-cache", "create_relations"),  # the tie read in the fact
        # the reader's trigger "everything you remember" is inside it, but it asks to forget
        ("nuke everything you remember about the old staging-v1 cluster", "delete_entities"),
        # someone's entry, named by a possessive, with the fact after a colon
        ("add to carol's entry: prefers async reviews, out on fridays", "add_observations"),
        # its keywords: a size question is the listing with sizes, not the plain listing
        ("which files in assets/ are the fattest", "list_directory_with_sizes"),
        ("what's eating all the space in dist/", "list_directory_with_sizes"),
    ],
)
def test_the_seeds_examples_and_keywords_put_the_tool_asked_so_first(conn, query, first):
    from tests.test_search_page import default_page

    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    page = default_page(conn, query)
    assert [tool["name"] for tool in page["tools"]][:1] == [first], page


def test_a_user_catalogs_examples_count_like_the_seeds(conn, tmp_path):
    tools = [
        tool("note_append", "Append a line to the notes file."),
        tool("graph_add", "Create entities in a graph.", ["remember that I prefer dark mode"]),
    ]
    load_catalog(conn, seed_dir=None, user_files=[write_jsonl(tmp_path / "mine.jsonl", tools)])
    hits = search(conn, "remember that I prefer tabs", limit=2, explain=True)
    assert hits[0].name == "graph_add" and hits[0].explain.via_example
    without = [{k: v for k, v in t.items() if k != "examples"} for t in tools]
    load_catalog(conn, seed_dir=None, user_files=[write_jsonl(tmp_path / "mine.jsonl", without)])
    assert embedded_examples(conn) == 0  # no example left: no vector left
    assert "graph_add" not in names(search(conn, "remember that I prefer tabs", limit=2))


@pytest.mark.parametrize(
    "examples, expected",
    [
        ("save this", "field examples: Input should be a valid list"),
        ([""], "field examples: empty example"),
        (["x" * (MAX_EXAMPLE_CHARS + 1)], f"is longer than {MAX_EXAMPLE_CHARS} characters"),
        ([f"request {i}" for i in range(MAX_EXAMPLES + 1)], f"at most {MAX_EXAMPLES} per tool"),
        (["save this", "save  this"], "is given twice"),
        ([42], "field examples[0]: Input should be a valid string"),
    ],
)
def test_a_bad_examples_value_names_file_tool_and_field(conn, tmp_path, examples, expected):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    seed = json.loads((SEEDS_DIR / "time.json").read_text(encoding="utf-8"))
    seed["tools"][1]["examples"] = examples
    (seeds / "time.json").write_text(json.dumps(seed), encoding="utf-8")
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    before = conn.execute("SELECT name, examples FROM tools ORDER BY name").fetchall()
    with pytest.raises(SeedError) as raised:
        load_catalog(conn, seed_dir=seeds, user_files=[])
    message = str(raised.value)
    assert message.startswith(f"{seeds / 'time.json'}: tool 'convert_time' (tools[1]): ")
    assert expected in message
    assert conn.execute("SELECT name, examples FROM tools ORDER BY name").fetchall() == before

    # a user catalog: the line is skipped and said so (strict: refused), the rest loads
    line = tool("bad_one", "Has bad examples.", examples)
    path = write_jsonl(tmp_path / "mine.jsonl", [line, tool("good_one", "Loads.")])
    summary = load_catalog(conn, seed_dir=None, user_files=[path])
    assert summary.total == 1 and any(
        "line 1: skipped" in note and expected in note for note in summary.notes
    )
    with pytest.raises(SeedError, match="line 1: tool 'bad_one': field examples"):
        load_catalog(conn, seed_dir=None, user_files=[path], strict_user_files=True)
