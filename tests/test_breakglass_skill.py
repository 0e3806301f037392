"""The agent-facing protocol (roles/skills/break-glass/SKILL.md) says what the server enforces: the
trigger, the three tiers by the tool's own field names, and the default costs and caps of
configs/breakglass.toml; and it is a skill the project's own lock tooling accepts."""

import re

import yaml

from router.breakglass.gate import TRIGGER, EarlierTiers, TierAttempt
from router.breakglass.settings import load_settings
from router.cli import main
from tests.project import PROJECT_ROOT

SKILL = PROJECT_ROOT / "roles" / "skills" / "break-glass"


def skill_parts():
    text = (SKILL / "SKILL.md").read_text(encoding="utf-8")
    _, front, body = text.split("---\n", 2)
    return yaml.safe_load(front), body


def test_front_matter_names_the_skill_and_its_trigger():
    front, _ = skill_parts()
    assert front["name"] == SKILL.name
    assert "Last resort" in front["description"] and "never as a first try" in front["description"]


def test_the_protocol_uses_the_tools_own_names():
    _, body = skill_parts()
    assert f"`{TRIGGER}`" in body
    for tier in EarlierTiers.model_fields:
        assert f"`{tier}`" in body
    for field in TierAttempt.model_fields:
        assert f"`{field}`" in body
    for argument in ("problem", "earlier_tiers", "context_files", "problem_type", "budget"):
        assert f"`{argument}`" in body
    assert "confirmation_token" in body and "Never confirm on their behalf" in body


def test_the_costs_it_states_are_the_configs_defaults():
    _, body = skill_parts()
    cost = load_settings().cost
    stated = " ".join(body.split())
    assert f"budget` (optional, USD, default {cost.default_budget_usd:.2f})" in stated
    assert (
        f"{cost.session_max_invocations} calls and ${cost.session_max_usd:.2f} per session; "
        f"{cost.day_max_invocations} calls and ${cost.day_max_usd:.2f} per UTC day" in stated
    )
    assert f"Above ${cost.confirm_above_usd:.2f} of worst case a person confirms" in stated
    assert re.search(r"When not to call it", body)


def test_the_projects_skill_tooling_locks_and_verifies_it(tmp_path, capsys):
    options = ["--lock", str(tmp_path / ".skill-lock.json"), "--grimoire", str(tmp_path / "grimoire.lock")]
    options += ["--db", str(tmp_path / "router.db")]
    assert main(["skills", "lock", str(SKILL), *options]) == 0
    assert main(["skills", "verify", "break-glass", *options]) == 0
    assert "verified break-glass" in capsys.readouterr().out
