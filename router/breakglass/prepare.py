"""Everything decided before money is at stake: the gate, classification, context, the
estimate and the cost gate's refusals. Side-effect free (it may run once per MCP input round);
the tool body records what it decided."""

import math
from dataclasses import dataclass, field
from pathlib import Path

import apsw

from router.breakglass import classify as classifier
from router.breakglass import context as ctxmod
from router.breakglass import prompt
from router.breakglass.gate import EarlierTiers, gate_refusal, problem_statement
from router.breakglass.ledger import Caps, cap_refusal, session_usage
from router.breakglass.pricing import Estimate, PriceError, estimate_run, read_prices
from router.breakglass.settings import Settings, usd_to_micro
from router.hashing import content_hash
from router.redact import Redactor
from router.tokens import count_tokens


@dataclass
class Prepared:
    problem: str  # redacted
    refusal: str | None = None
    problem_type: str | None = None
    classification: str = ""
    complexity: str | None = None
    panel: list[str] = field(default_factory=list)
    judge: str | None = None
    context: ctxmod.AssembledContext | None = None
    user_message: str = ""
    context_tokens: int | None = None
    estimate: Estimate | None = None
    budget_micro: int = 0
    over_threshold: bool = False
    needs_confirmation: bool = False
    fingerprint: str = ""
    secrets_removed: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Request:
    problem: str
    context_files: list[str]
    problem_type: str | None
    budget: float | None
    earlier_tiers: EarlierTiers | None


def session_caps(settings: Settings) -> Caps:
    return Caps(settings.cost.session_max_invocations, usd_to_micro(settings.cost.session_max_usd))


def fingerprint(problem: str, problem_type: str, files: list[str], budget_micro: int) -> str:
    """What a confirmation token is bound to: the same request, not merely the same session."""
    return content_hash(
        {"problem": problem, "type": problem_type, "files": sorted(files), "budget": budget_micro}
    )


def prepare(
    conn: apsw.Connection, settings: Settings, workspace: Path, session_id: str, req: Request, stage
) -> Prepared:
    """stage(name) is called as each step starts (for progress notifications)."""
    redactor = Redactor()
    out = Prepared(problem=redactor.text(req.problem))

    def refused(reason: str) -> Prepared:
        out.refusal = reason
        out.secrets_removed = dict(redactor.removed)
        return out

    if (reason := gate_refusal(req.problem, req.earlier_tiers)) is not None:
        return refused(reason)
    tiers = req.earlier_tiers
    assert tiers is not None, "the gate refuses a call that shows no earlier tiers"
    budget_usd = settings.cost.default_budget_usd if req.budget is None else req.budget
    if not math.isfinite(budget_usd) or budget_usd <= 0:
        return refused(f"budget: must be a positive number of US dollars, got {req.budget!r}")
    out.budget_micro = usd_to_micro(budget_usd)
    statement = redactor.text(problem_statement(req.problem) or "")

    stage("classify")
    if req.problem_type is not None:
        problem_type, out.classification = req.problem_type, "given by the caller"
    else:
        found = classifier.classify(settings, statement, req.context_files)
        problem_type, out.classification = found.problem_type, found.explanation
    out.problem_type = problem_type
    spec = settings.type_settings(problem_type)
    out.panel, out.judge = list(spec.panel), settings.openrouter.judge

    stage("context")
    try:
        out.context = ctxmod.assemble(
            conn, settings.context, workspace, statement, problem_type, req.context_files, redactor
        )
    except ctxmod.ContextError as exc:
        return refused(str(exc))
    out.user_message = prompt.user_message(statement, problem_type, tiers, out.context, redactor.text)
    out.secrets_removed = dict(redactor.removed)

    stage("estimate")
    messages = prompt.panel_messages(out.user_message)
    out.context_tokens = sum(count_tokens(m["content"]) for m in messages)
    out.complexity = classifier.complexity(out.context_tokens, len(out.context.files))
    try:
        out.estimate = estimate_run(
            read_prices(conn),
            out.panel,
            out.judge,
            out.context_tokens,
            settings.cost.expected_output_tokens,
            settings.cost.output_cap_tokens,
            settings.cost.attempts_reserved,
        )
    except PriceError as exc:
        return refused(str(exc))

    estimate = out.estimate.expected_micro
    threshold = settings.threshold_micro(problem_type)
    ceiling = round(threshold * settings.cost.escalate_multiple)
    out.over_threshold = estimate > threshold
    if estimate > ceiling:
        return refused(
            f"estimate ${estimate / 1e6:.4f} is above {settings.cost.escalate_multiple:g}x the "
            f"{out.problem_type} threshold (${threshold / 1e6:.2f}, ceiling ${ceiling / 1e6:.2f}): "
            "escalate to a person instead"
        )
    if estimate > out.budget_micro:
        return refused(
            f"estimate ${estimate / 1e6:.4f} is above this call's budget ${out.budget_micro / 1e6:.2f}"
        )
    # an early, read-only look so nobody is asked to confirm a call the caps would refuse;
    # the binding check is the reservation under BEGIN IMMEDIATE
    caps = session_caps(settings)
    if (
        reason := cap_refusal(
            session_usage(conn, session_id), out.estimate.worst_case_micro, caps, session_id
        )
    ) is not None:
        return refused(reason)
    out.needs_confirmation = estimate > usd_to_micro(settings.cost.confirm_above_usd)
    out.fingerprint = fingerprint(out.problem, out.problem_type, req.context_files, out.budget_micro)
    return out
