"""Call signatures (router/catalog/signatures.py): their format on hand-made schemas and on the
real seeded catalog, the page's cutting order with them, and the bench's judge of whether a
signature alone makes a valid call (bench/signatures.py)."""

import json

import pytest

from bench.signatures import BAR, filled_call, judge, measure
from router.backends.servers import SearchSettings
from router.catalog.draft_keys import DEFAULT_DRAFT
from router.catalog.load import load_catalog
from router.catalog.search import SearchHit, search
from router.catalog.signatures import MAX_ENUM_CHARS, MAX_FULL_CHARS, Signature, signature, tool_signatures
from router.db import connect
from router.facade.search_page import SIGNATURE, compose_page, page_for_query, page_tokens
from router.paths import SEEDS_DIR


def obj(properties: dict, required: list[str] | None = None, **more) -> dict:
    return {"type": "object", "properties": properties, "required": required or []} | more


STR, INT = {"type": "string"}, {"type": "integer"}


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    conn = connect(tmp_path_factory.mktemp("signatures") / "seeded.db")
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    yield conn
    conn.close()


# --- the format ---------------------------------------------------------------------------


def test_required_arguments_come_first_with_their_types_and_optional_ones_are_marked():
    schema = obj(
        {"max_count": INT, "repo_path": STR, "ratio": {"type": "number"}, "all": {"type": "boolean"}},
        ["repo_path"],
    )
    found = signature("git_log", schema)
    assert found.full == "git_log(repo_path: str, max_count?: int, ratio?: num, all?: bool)"
    assert found.short == "git_log(repo_path: str, …)"
    assert signature("ping", {"type": "object"}) == signature("ping", {"type": "object", "properties": {}})
    assert signature("ping", {"type": "object"}).full == "ping()"
    # nothing optional: both forms are the whole signature, without `…`
    both = signature("git_show", obj({"repo_path": STR, "revision": STR}, ["revision", "repo_path"]))
    assert both.full == both.short == "git_show(revision: str, repo_path: str)"


def test_null_choices_enums_and_consts_read_as_a_caller_needs_them():
    schema = obj(
        {
            "since": {"anyOf": [STR, {"type": "null"}], "default": None},
            "count": {"type": ["integer", "null"]},
            "either": {"anyOf": [STR, {"type": "array", "items": {"type": "number"}}]},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "key": {"type": "string", "enum": [f"value_{i}" for i in range(20)]},
            "kind": {"const": "fixed"},
            "nothing": {"type": "null"},
            "free": {},
        },
        ["mode", "key"],
    )
    found = signature("t", schema)
    assert found.full.startswith('t(mode: "fast"|"slow", key: "value_0"|')
    key = found.full.split("key: ")[1].split(", since")[0]
    assert key.endswith("|…") and len(key) <= MAX_ENUM_CHARS  # a long enum: its first values
    assert found.full.endswith(
        'since?: str, count?: int, either?: str|[num], kind?: "fixed", nothing?: null, free?: any)'
    )


def test_an_enum_whose_first_value_is_too_long_shows_its_type():
    schema = obj({"huge": {"enum": ["v" * 100, "w"]}, "fixed": {"const": 7}}, ["huge", "fixed"])
    assert signature("t", schema).full == "t(huge: str, fixed: 7)"


def test_arrays_and_objects_are_spelled_out_to_a_depth_and_the_short_form_keeps_their_required_members():
    edits = {
        "type": "array",
        "items": obj({"oldText": STR, "newText": STR, "note": STR}, ["oldText", "newText"]),
    }
    deep = obj({"a": obj({"b": obj({"c": STR}, ["c"])}, ["b"])}, ["a"])
    schema = obj(
        {"path": STR, "edits": edits, "env": {"type": "object", "additionalProperties": STR}, "deep": deep},
        ["path", "edits"],
    )
    found = signature("edit_file", schema)
    assert found.full == (
        "edit_file(path: str, edits: [{oldText: str, newText: str}], env?: obj, deep?: {a: {b: obj}})"
    )
    # nested optional members are only in the full form of an optional argument; a required
    # argument shows its required members, all a valid call needs
    assert found.short == "edit_file(path: str, edits: [{oldText: str, newText: str}], …)"


def test_local_references_are_followed_and_a_recursive_schema_ends():
    schema = {
        "type": "object",
        "properties": {
            "format": {"anyOf": [{"$ref": "#/$defs/Format"}, {"type": "null"}]},
            "tree": {"$ref": "#/$defs/Node"},
            "remote": {"$ref": "https://example.invalid/schema.json"},
        },
        "required": ["tree"],
        "$defs": {
            "Format": {"enum": ["png", "jpeg"], "type": "string"},
            "Node": obj({"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}, ["children"]),
        },
    }
    found = signature("t", schema)
    # spelled out to MAX_DEPTH, then `obj`; a remote reference is not fetched
    assert found.full == 't(tree: {children: [obj]}, format?: "png"|"jpeg", remote?: any)'
    loop = {"type": "object", "properties": {"x": {"$ref": "#/properties/x"}}, "required": ["x"]}
    assert signature("t", loop).full == "t(x: any)"


def test_odd_names_are_quoted_and_a_long_full_form_stops_listing_optional_arguments():
    schema = obj({"with space": STR, "ok_name": STR}, ["with space"])
    assert signature("t", schema).full == 't("with space": str, ok_name?: str)'
    many = obj({"needed": STR} | {f"option_{i:02d}": STR for i in range(40)}, ["needed"])
    found = signature("wide", many)
    assert found.full.startswith("wide(needed: str, option_00?: str, ") and found.full.endswith(", …)")
    assert len(found.full) <= MAX_FULL_CHARS
    # malformed schemas never raise: a signature is rendered from whatever is there
    assert signature("t", {"properties": "nonsense", "required": 3}).full == "t()"
    assert signature("t", obj({"x": True, "y": []}, ["x", "y"])).full == "t(x: any, y: any)"


def test_seeded_tools_have_the_signatures_their_real_schemas_say(seeded):
    found = tool_signatures(seeded, ["git_log", "edit_file", "create_entities", "no_such_tool"])
    assert set(found) == {"git_log", "edit_file", "create_entities"}
    # the catalog stores schemas canonically (keys sorted): optional arguments come in that order
    assert found["git_log"].full == (
        "git_log(repo_path: str, end_timestamp?: str, max_count?: int, start_timestamp?: str)"
    )
    assert found["git_log"].short == "git_log(repo_path: str, …)"
    assert (
        found["edit_file"].full
        == "edit_file(path: str, edits: [{oldText: str, newText: str}], dryRun?: bool)"
    )
    assert found["create_entities"].full == (
        "create_entities(entities: [{name: str, entityType: str, observations: [str]}])"
    )


# --- the page -----------------------------------------------------------------------------


def test_every_callable_hit_on_a_page_carries_its_signature(seeded):
    page = page_for_query(seeded, "show the commit log", limit=5, unavailable={}, settings=SearchSettings())
    signatures = tool_signatures(seeded, [tool["name"] for tool in page["tools"]])
    assert [tool[SIGNATURE] for tool in page["tools"]] == [signatures[t["name"]].full for t in page["tools"]]
    assert page["tools"][0] == {
        "name": "git_log",
        "profile": "core",
        "summary": "Shows the commit logs",
        "signature": signatures["git_log"].full,
    }


def test_a_page_over_budget_shortens_then_drops_the_lowest_signatures_first(seeded):
    hits = search(seeded, "read a file", limit=10, unavailable={})
    signatures = tool_signatures(seeded, [hit.name for hit in hits])
    full = compose_page(hits, 10, budget=10_000, signatures=signatures)
    assert all(tool[SIGNATURE] == signatures[tool["name"]].full for tool in full["tools"])
    shortened = [i for i, hit in enumerate(hits) if signatures[hit.name].short != signatures[hit.name].full]
    assert len(shortened) >= 3  # the query's hits have optional arguments to leave out

    # a little over: only the lowest signatures with optional arguments lose them
    tight = compose_page(hits, 10, budget=page_tokens(full) - 4, signatures=signatures)
    forms = [
        "full" if tool[SIGNATURE] == signatures[tool["name"]].full else "short" for tool in tight["tools"]
    ]
    assert forms[0] == "full" and forms[shortened[-1]] == "short"
    assert forms == sorted(forms)  # every shortened one ranks below every full one ("full" < "short")
    assert [tool["summary"] for tool in tight["tools"]] == [hit.summary for hit in hits]

    # far over: the summaries are cut, then signatures dropped from the bottom; the best
    # tool keeps its full signature as long as any other tool keeps one
    squeezed = compose_page(hits, 10, budget=page_tokens(full) - 160, signatures=signatures)
    kept = [SIGNATURE in tool for tool in squeezed["tools"]]
    assert kept[0] and not kept[-1] and kept == sorted(kept, reverse=True)
    assert squeezed["tools"][0][SIGNATURE] == signatures[hits[0].name].full
    assert len(squeezed["tools"]) == 10 and squeezed["tools"][-1]["summary"].endswith("…")
    assert page_tokens(squeezed) <= page_tokens(full) - 160


def test_a_single_tool_too_long_for_the_budget_loses_its_signature_before_its_place():
    hit = SearchHit("wide", "core", "Does a wide thing.", 1.0)
    long_signature = Signature("wide(" + ", ".join(f"a{i}: str" for i in range(80)) + ")", "wide(…)")
    page = compose_page([hit], 10, budget=40, signatures={"wide": long_signature})
    assert page == {
        "tools": [{"name": "wide", "profile": "core", "summary": "Does a wide thing.", SIGNATURE: "wide(…)"}]
    }
    # the page without any signature takes 20 tokens, with the short one 25
    page = compose_page([hit], 10, budget=22, signatures={"wide": long_signature})
    assert page == {"tools": [{"name": "wide", "profile": "core", "summary": "Does a wide thing."}]}


# --- the bench's judge --------------------------------------------------------------------


def test_a_call_is_filled_from_the_signature_alone():
    assert filled_call("git_log(repo_path: str, max_count?: int, …)") == {"repo_path": "x"}
    assert filled_call(
        't(a: [{b: int, c?: num}], d: "png"|"jpeg", e: num|null, "odd key": bool, f: obj)'
    ) == {
        "a": [{"b": 1}],
        "d": "png",
        "e": 1.5,
        "odd key": True,
        "f": {},
    }
    assert filled_call('t(key: "back"|"home"|…)') == {"key": "back"}
    assert filled_call("ping()") == {}


def test_the_judge_passes_a_true_signature_and_fails_a_false_one():
    schema = obj(
        {"path": STR, "count": INT, "tags": {"type": "array", "items": STR}}, ["path", "count", "tags"]
    )
    true = signature("t", schema).full
    assert judge(true, schema, DEFAULT_DRAFT).outcome == "pass"
    wrong_type = judge("t(path: str, count: str, tags: [str])", schema, DEFAULT_DRAFT)
    assert wrong_type.outcome == "fail" and "count" in wrong_type.why
    missing = judge("t(path: str, tags: [str])", schema, DEFAULT_DRAFT)
    assert missing.outcome == "fail" and "'count' is a required property" in missing.why
    not_an_array = judge("t(path: str, count: int, tags: str)", schema, DEFAULT_DRAFT)
    assert not_an_array.outcome == "fail"
    assert judge("t(path: str", schema, DEFAULT_DRAFT).outcome == "fail"  # unreadable


def test_the_judge_excuses_value_constraints_the_signature_cannot_carry():
    constrained = obj(
        {
            "id": {"type": "string", "pattern": "^[0-9]+$"},
            "size": {"type": "integer", "minimum": 5},
            "level": {"anyOf": [{"type": "integer", "maximum": 0}, {"type": "null"}]},
        },
        ["id", "size", "level"],
    )
    verdict = judge("t(id: str, size: int, level: int)", constrained, DEFAULT_DRAFT)
    assert verdict.outcome == "excused" and "pattern" not in verdict.why.split(":")[0]
    # a type error beside a constraint is still the signature's fault
    assert judge("t(id: str, size: str, level: int)", constrained, DEFAULT_DRAFT).outcome == "fail"
    # a choice none of whose branches takes the type: a failure, not a constraint
    assert judge("t(id: str, size: int, level: str)", constrained, DEFAULT_DRAFT).outcome == "fail"


def test_the_bench_counts_every_seeded_tool_and_meets_the_bar(tmp_path):
    figures = measure(tmp_path / "bench.db")
    for form in ("full", "short"):
        assert figures[form]["tools"] == 183
        assert figures[form]["pass"] + figures[form]["excused"] + figures[form]["fail"] == 183
        assert figures[form]["pass_share"] >= BAR, figures[form]["failed_tools"]
    assert figures["need_arguments"] > 100
    assert json.dumps(figures)  # the results file takes it
