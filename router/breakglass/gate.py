"""The gate: the `break glass:` trigger and evidence that the three earlier tiers failed.

A refusal says exactly what is missing, so the caller can supply it rather than guess.
"""

from pydantic import BaseModel, ConfigDict, Field

TRIGGER = "break glass:"
# evidence shorter than this is a placeholder, not a description of an attempt
MIN_EVIDENCE_CHARS = 12


class TierAttempt(BaseModel):
    """One earlier tier: what was used, what was tried, and how it failed."""

    model_config = ConfigDict(extra="forbid")

    used: str = Field("", description="the model or skill/tool used, e.g. 'hermes3 (local)'")
    tried: str = Field("", description="what was tried")
    failure: str = Field("", description="how it failed (error, wrong answer, timeout)")


class EarlierTiers(BaseModel):
    """Evidence that the problem defeated the three cheaper tiers."""

    model_config = ConfigDict(extra="forbid")

    local_model: TierAttempt | None = Field(None, description="tier 1: the local model")
    frontier_model: TierAttempt | None = Field(None, description="tier 2: one frontier model")
    skill_system: TierAttempt | None = Field(None, description="tier 3: the skill/tool system")


TIER_NAMES = {
    "local_model": "the local model",
    "frontier_model": "a frontier model",
    "skill_system": "the skill/tool system",
}
FIELD_MEANING = {"used": "which one was used", "tried": "what was tried", "failure": "how it failed"}


def problem_statement(problem: str) -> str | None:
    """The text after the trigger, or None when the trigger is absent."""
    stripped = problem.lstrip()
    if not stripped.lower().startswith(TRIGGER):
        return None
    return stripped[len(TRIGGER) :].strip()


def gate_refusal(problem: str, tiers: EarlierTiers | None) -> str | None:
    """None when the call may proceed; otherwise everything that is missing, in one message."""
    missing: list[str] = []
    statement = problem_statement(problem)
    if statement is None:
        missing.append(f"problem must start with '{TRIGGER}' (an explicit request for the panel)")
    elif len(statement) < MIN_EVIDENCE_CHARS:
        missing.append(f"problem: the statement after '{TRIGGER}' is empty or too short to act on")
    for key, name in TIER_NAMES.items():
        attempt = getattr(tiers, key, None) if tiers is not None else None
        if attempt is None:
            missing.append(f"earlier_tiers.{key}: no evidence that {name} was tried")
            continue
        for field, meaning in FIELD_MEANING.items():
            value = getattr(attempt, field).strip()
            minimum = 2 if field == "used" else MIN_EVIDENCE_CHARS
            if len(value) < minimum:
                missing.append(f"earlier_tiers.{key}.{field}: {meaning} with {name}")
    if not missing:
        return None
    return "break-glass refused; missing: " + "; ".join(missing)
