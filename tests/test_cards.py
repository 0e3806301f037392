"""A2A agent cards: valid under the official a2a-sdk's strict protobuf check, and served
where an A2A client looks for them."""

import asyncio
import copy
import functools
import http.server
import json
import threading

import httpx
import pytest
from a2a.client.card_resolver import A2ACardResolver
from a2a.types import AgentCard
from a2a.utils.proto_utils import validate_proto_required_fields
from google.protobuf.json_format import ParseDict, ParseError

from router.agents.cards import ROLE_SKILLS, WELL_KNOWN_PATH
from router.agents.roles import ROLE_NAMES, get_role
from router.cli import main

BASE_URL = "https://agents.example.org/team"


def strict_check(card: dict) -> AgentCard:
    """checks.md's strict check: unknown fields refused, then the SDK's REQUIRED fields."""
    message = ParseDict(card, AgentCard(), ignore_unknown_fields=False)
    validate_proto_required_fields(message)
    return message


@pytest.fixture(scope="module")
def card_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("cards")
    assert main(["cards", "--base-url", BASE_URL + "/", "--out", str(out)]) == 0
    return out


def read_card(card_dir, role):
    return json.loads((card_dir / role / WELL_KNOWN_PATH).read_text(encoding="utf-8"))


def test_one_card_per_role(card_dir):
    assert sorted(p.parent.parent.name for p in card_dir.glob(f"*/{WELL_KNOWN_PATH}")) == sorted(ROLE_NAMES)


@pytest.mark.parametrize("role", ROLE_NAMES)
def test_card_passes_the_sdk_strict_check(card_dir, role):
    card = read_card(card_dir, role)
    message = strict_check(card)
    assert message.name == f"context-router {role}"
    [interface] = message.supported_interfaces
    assert interface.protocol_version == "1.0"
    assert interface.protocol_binding == "JSONRPC"
    assert interface.url == f"{BASE_URL}/{role}"
    assert len(message.skills) == len(ROLE_SKILLS[role]) >= 1
    for skill in message.skills:
        assert skill.id and skill.name and skill.description and len(skill.tags) >= 1
    assert list(message.default_input_modes) and list(message.default_output_modes)


@pytest.mark.parametrize("role", ROLE_NAMES)
def test_card_describes_the_role_from_the_matrix(card_dir, role):
    card = read_card(card_dir, role)
    matrix = get_role(role)
    assert matrix.title in card["description"]
    calls = "read-only and mutating" if matrix.may_call_mutating_tools else "calls read-only"
    assert calls in card["description"]
    tags = {tag for skill in card["skills"] for tag in skill["tags"]}
    assert tags & {"TaskBrief", "WorkerReceipt", "QaVerdict"}


def test_skill_ids_are_unique_per_card(card_dir):
    for role in ROLE_NAMES:
        ids = [skill["id"] for skill in read_card(card_dir, role)["skills"]]
        assert len(ids) == len(set(ids))


# --- the strict check can fail ----------------------------------------------------------


@pytest.mark.parametrize(
    "breakage",
    [
        lambda c: c.pop("name"),
        lambda c: c.pop("supportedInterfaces"),
        lambda c: c["skills"][0].pop("tags"),
        lambda c: c["supportedInterfaces"][0].pop("protocolVersion"),
        lambda c: c.pop("capabilities"),
    ],
    ids=["no-name", "no-interfaces", "skill-without-tags", "no-protocol-version", "no-capabilities"],
)
def test_strict_check_refuses_a_card_missing_a_required_field(card_dir, breakage):
    card = copy.deepcopy(read_card(card_dir, "manager"))
    breakage(card)
    with pytest.raises(Exception, match=r"Validation failed|required"):
        strict_check(card)


def test_strict_check_refuses_unknown_and_legacy_fields(card_dir):
    card = copy.deepcopy(read_card(card_dir, "manager"))
    card["url"] = BASE_URL  # the 0.3 card's top-level url is not a 1.0 field
    with pytest.raises(ParseError):
        strict_check(card)


def test_bad_base_url_is_refused(tmp_path, capsys):
    assert main(["cards", "--base-url", "agents.example.org", "--out", str(tmp_path / "c")]) == 2
    assert "must be an absolute http(s) URL" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


# --- a real A2A client fetches them ------------------------------------------------------


@pytest.fixture
def served_cards(tmp_path):
    """`cards` for a base URL on 127.0.0.1, served by a static HTTP server."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), None)
    base_url = f"http://127.0.0.1:{server.server_address[1]}"
    out = tmp_path / "site"
    assert main(["cards", "--base-url", base_url, "--out", str(out)]) == 0
    server.RequestHandlerClass = functools.partial(_QuietHandler, directory=str(out))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield base_url
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_a2a_client_resolves_every_card(served_cards):
    async def fetch_all():
        async with httpx.AsyncClient() as client:
            return [
                await A2ACardResolver(client, f"{served_cards}/{role}").get_agent_card()
                for role in ROLE_NAMES
            ]

    cards = asyncio.run(fetch_all())
    for role, card in zip(ROLE_NAMES, cards):
        assert card.name == f"context-router {role}"
        assert card.supported_interfaces[0].url == f"{served_cards}/{role}"
