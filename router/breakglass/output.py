"""The shapes at the edges: the judge's JSON answer (sent as response_format) and the tool's
result. Pydantic validates both; the JSON Schema the judge must follow comes from here."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Answer(BaseModel):
    # extra='forbid' renders additionalProperties: false, which strict structured output needs
    model_config = ConfigDict(extra="forbid")


class CodeSnippet(_Answer):
    file: str = Field(description="path of the file the code belongs in")
    code: str = Field(description="the code, ready to paste")


class Solution(_Answer):
    approach: str
    confidence: float = Field(ge=0, le=1)
    files_to_change: list[str]
    # a list of {file, code} rather than a free-form map: strict JSON Schema has no open maps
    code_snippets: list[CodeSnippet]


class PanelAnswer(_Answer):
    """What the judge returns: our JSON, validated before anyone sees it."""

    diagnosis: str = Field(min_length=1)
    solution: Solution
    alternatives: list[str]
    risks: list[str]


def answer_json_schema() -> dict:
    return PanelAnswer.model_json_schema()


class CostReport(BaseModel):
    estimated_usd: str
    worst_case_usd: str
    actual_usd: str | None
    estimated_micro_usd: int
    worst_case_micro_usd: int
    reserved_micro_usd: int
    actual_micro_usd: int | None
    over_threshold: bool = Field(
        description="estimate above the type's threshold (allowed up to the escalation multiple)"
    )
    # max_tokens of every model call: the config's cap, or lower to fit a budget or cap
    max_tokens: int | None = None
    over_worst_case: bool = Field(
        False, description="the provider charged more than the worst case reserved; the session stops"
    )


Status = Literal["ok", "failed", "needs_confirmation"]


class BreakGlassResult(BaseModel):
    """The tool's result. status 'needs_confirmation' carries a one-time token; 'failed' says
    why in `message` and what was spent in `cost`."""

    status: Status
    invocation_id: int
    message: str
    problem_type: str
    classification: str
    complexity: str
    mode: Literal["fusion", "fanout"] | None = None
    panel: list[str]
    judge: str
    diagnosis: str | None = None
    solution: Solution | None = None
    alternatives: list[str] = []
    risks: list[str] = []
    cost: CostReport
    confirmation_token: str | None = None
    context_files: list[str] = []
    context_notes: list[str] = []
    secrets_removed: dict[str, int] = {}
    # what the caller should know: a lowered max_tokens, prices older than max_price_age_days
    warnings: list[str] = []
