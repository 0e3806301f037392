"""A2A agent cards (protocol 1.0), one per role, served at /.well-known/agent-card.json.

Each role is its own agent under `<base-url>/<role>`; its card names the JSON-RPC interface
there, the envelopes it takes and returns as skills, and what it may do from the role matrix.
Field names and requirements follow the official a2a-sdk's AgentCard type (tests check every
card with its strict protobuf parser).
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from router import __version__
from router.agents.roles import ROLE_MATRIX, Role
from router.errors import RouterError

A2A_PROTOCOL_VERSION = "1.0"
PROTOCOL_BINDING = "JSONRPC"
WELL_KNOWN_PATH = ".well-known/agent-card.json"
ENVELOPE_MEDIA_TYPE = "application/json"
TEXT_MEDIA_TYPE = "text/plain"


class CardError(RouterError):
    pass


@dataclass(frozen=True)
class Skill:
    id: str
    name: str
    description: str
    tags: tuple[str, ...]
    examples: tuple[str, ...] = ()


# What each role offers another agent, in the envelopes' terms.
ROLE_SKILLS: dict[str, tuple[Skill, ...]] = {
    "director": (
        Skill(
            "plan-task-dag",
            "Plan a task DAG",
            "Turns a goal into TaskBrief envelopes linked by dependsOn, split by edit scope, "
            "each with acceptance checks.",
            ("planning", "task-dag", "TaskBrief"),
            ("Plan adding rate limiting to the public API.",),
        ),
        Skill(
            "judge-delivery",
            "Accept delivered work",
            "Accepts a task only with a QaVerdict of PASS for the delivered commit; re-plans otherwise.",
            ("acceptance", "QaVerdict"),
        ),
    ),
    "architect": (
        Skill(
            "design-contract",
            "Design an API or data contract",
            "Changes contracts/** (OpenAPI, JSON Schema) from a TaskBrief, validated by a "
            "real validator; returns a WorkerReceipt.",
            ("contracts", "api", "schema", "TaskBrief", "WorkerReceipt"),
        ),
        Skill(
            "design-tokens",
            "Maintain design tokens",
            "Changes tokens/** (colours, spacing, typography) from a TaskBrief; returns a WorkerReceipt.",
            ("design-tokens", "ui", "TaskBrief", "WorkerReceipt"),
        ),
    ),
    "manager": (
        Skill(
            "dispatch-task",
            "Dispatch and track a task",
            "Routes a TaskBrief to the worker whose edit scope holds its owned paths and "
            "re-runs the acceptance checks on the receipt's commit.",
            ("dispatch", "TaskBrief", "WorkerReceipt"),
        ),
        Skill(
            "gate-on-qa",
            "Merge only on QA PASS",
            "Merges a commit only when a QaVerdict of PASS with red-proof evidence names it.",
            ("merge", "quality-gate", "QaVerdict"),
        ),
    ),
    "staff-backend": (
        Skill(
            "implement-backend",
            "Implement back-end code",
            "Implements src/** from a TaskBrief with tests; returns a WorkerReceipt with "
            "the commit hash and real test counts.",
            ("backend", "implementation", "TaskBrief", "WorkerReceipt"),
            ("Implement the token bucket in src/ratelimit/ with unit tests.",),
        ),
    ),
    "staff-ui": (
        Skill(
            "implement-ui",
            "Implement web UI",
            "Implements ui/web/** from a TaskBrief using design tokens, checked in a real "
            "browser; returns a WorkerReceipt.",
            ("frontend", "ui", "accessibility", "TaskBrief", "WorkerReceipt"),
        ),
    ),
    "qa-adversary": (
        Skill(
            "red-proof-review",
            "Red-proof a delivered commit",
            "Runs the acceptance checks on a commit, sabotages the new behaviour to show the "
            "tests fail, reverts, and returns a QaVerdict.",
            ("qa", "red-proof", "sabotage", "WorkerReceipt", "QaVerdict"),
        ),
    ),
}


def _check_base_url(base_url: str) -> str:
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise CardError(f"--base-url {base_url!r} must be an absolute http(s) URL")
    if parts.query or parts.fragment:
        raise CardError(f"--base-url {base_url!r} must not have a query or fragment")
    return base_url.rstrip("/")


def agent_url(base_url: str, role: Role) -> str:
    return f"{_check_base_url(base_url)}/{role.name}"


def _permissions_sentence(role: Role) -> str:
    edits = ", ".join(role.edit_scope) if role.edit_scope else "nothing"
    calls = "read-only and mutating" if role.may_call_mutating_tools else "read-only"
    return f"Edits {edits}; calls {calls} backend tools."


def agent_card(role: Role, base_url: str) -> dict[str, Any]:
    """The role's agent card as the A2A 1.0 JSON shape (camelCase fields)."""
    url = agent_url(base_url, role)
    return {
        "name": f"context-router {role.name}",
        "description": f"{role.level} {role.title}. {_permissions_sentence(role)}",
        "version": __version__,
        "supportedInterfaces": [
            {
                "url": url,
                "protocolBinding": PROTOCOL_BINDING,
                "protocolVersion": A2A_PROTOCOL_VERSION,
            }
        ],
        "capabilities": {"streaming": False, "pushNotifications": False},
        "defaultInputModes": [ENVELOPE_MEDIA_TYPE, TEXT_MEDIA_TYPE],
        "defaultOutputModes": [ENVELOPE_MEDIA_TYPE],
        "skills": [
            {
                "id": skill.id,
                "name": skill.name,
                "description": skill.description,
                "tags": list(skill.tags),
                **({"examples": list(skill.examples)} if skill.examples else {}),
                "inputModes": [ENVELOPE_MEDIA_TYPE],
                "outputModes": [ENVELOPE_MEDIA_TYPE],
            }
            for skill in ROLE_SKILLS[role.name]
        ],
    }


def write_cards(base_url: str, out_dir: Path) -> list[Path]:
    """<out>/<role>/.well-known/agent-card.json for every role: a static server of <out>
    at <base-url> then serves each card where A2A clients look for it."""
    cards = {role.name: agent_card(role, base_url) for role in ROLE_MATRIX}  # all or nothing
    written = []
    for name, card in cards.items():
        path = out_dir / name / WELL_KNOWN_PATH
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written
