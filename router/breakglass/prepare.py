"""Everything decided before money is at stake: the gate, classification, context, the
estimate and the cost gate. Side-effect free (it may run once per MCP input round); the tool
body records what it decided.

The cost gate: the worst case (every answer at max_tokens, × the attempts reserved) must fit
the call's budget and the room the session and day caps leave. When it does not, max_tokens
is lowered to fit if that still leaves min_output_tokens for an answer (the result says so);
otherwise the call is refused with the numbers. A person confirms above confirm_above_usd of
worst case.
"""

import math
from dataclasses import dataclass, field
from pathlib import Path

import apsw

from router.breakglass import caps as capsmod
from router.breakglass import classify as classifier
from router.breakglass import context as ctxmod
from router.breakglass import leases, prompt
from router.breakglass.gate import EarlierTiers, gate_refusal, problem_statement
from router.breakglass.prices import PriceError, read_prices
from router.breakglass.pricing import Estimate, estimate_run, largest_cap_within, max_price, stale_prices
from router.breakglass.settings import Settings, usd, usd_to_micro
from router.hashing import content_hash
from router.redaction.redactor import Redactor
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
    # what the result must tell the caller: a lowered max_tokens, stale prices
    warnings: list[str] = field(default_factory=list)
    # provider.max_price per route ('fusion', 'judge', a panel model)
    max_prices: dict[str, dict] = field(default_factory=dict)


@dataclass(frozen=True)
class Request:
    problem: str
    context_files: list[str]
    problem_type: str | None
    budget: float | None
    earlier_tiers: EarlierTiers | None


def caps_of(settings: Settings) -> capsmod.Caps:
    cost = settings.cost
    return capsmod.Caps(
        session_max_invocations=cost.session_max_invocations,
        session_max_micro=usd_to_micro(cost.session_max_usd),
        day_max_invocations=cost.day_max_invocations,
        day_max_micro=usd_to_micro(cost.day_max_usd),
    )


def fit_to_limits(
    prices, out: "Prepared", settings: Settings, estimate: Estimate, use: capsmod.Usage
) -> tuple[Estimate | None, str | None]:
    """(the estimate whose worst case fits the budget and the caps, None) or (None, refusal)."""
    cost = settings.cost
    room = capsmod.room_micro(use, caps_of(settings))
    limit = min(out.budget_micro, room)
    if estimate.worst_case_micro <= limit:
        return estimate, None
    if out.budget_micro <= room:
        limit_text = f"this call's budget is ${out.budget_micro / 1e6:.2f}"
    else:
        limit_text = capsmod.binding_cap(use, caps_of(settings))
    over = (
        f"the worst case {usd(estimate.worst_case_micro)} (expected {usd(estimate.expected_micro)}) does "
        f"not fit: {limit_text}, short by {usd(estimate.worst_case_micro - max(limit, 0))}"
    )
    judge = out.judge or ""
    cap = largest_cap_within(prices, out.panel, judge, estimate.prompt_tokens, estimate.attempts, limit)
    if cap >= cost.min_output_tokens:
        fitted = estimate_run(
            prices,
            out.panel,
            judge,
            estimate.prompt_tokens,
            cost.expected_output_tokens,
            cap,
            estimate.attempts,
        )
        out.warnings.append(
            f"max_tokens lowered from {estimate.output_cap} to {cap} per call ({over}); the worst case "
            f"is now {usd(fitted.worst_case_micro)}"
        )
        return fitted, None
    least = estimate_run(
        prices,
        out.panel,
        judge,
        estimate.prompt_tokens,
        cost.expected_output_tokens,
        cost.min_output_tokens,
        estimate.attempts,
    )
    return None, (
        f"{over}; even at max_tokens {cost.min_output_tokens}, the least that leaves room for a useful answer, "
        f"the worst case would be {usd(least.worst_case_micro)}. Nothing was sent"
    )


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
    prices = read_prices(conn)
    try:
        full = estimate_run(
            prices,
            out.panel,
            out.judge,
            out.context_tokens,
            settings.cost.expected_output_tokens,
            settings.cost.output_cap_tokens,
            settings.cost.attempts_reserved,
        )
    except PriceError as exc:
        return refused(str(exc))
    out.estimate = full

    expected = full.expected_micro
    threshold = settings.threshold_micro(problem_type)
    ceiling = round(threshold * settings.cost.escalate_multiple)
    out.over_threshold = expected > threshold
    if expected > ceiling:
        return refused(
            f"estimate {usd(expected)} is above {settings.cost.escalate_multiple:g}x the "
            f"{out.problem_type} threshold (${threshold / 1e6:.2f}, ceiling ${ceiling / 1e6:.2f}): "
            "escalate to a person instead"
        )
    # an early, read-only look at the caps, to fit max_tokens and so that nobody is asked to
    # confirm a call they would refuse; the binding check is the reservation (BEGIN IMMEDIATE)
    use = capsmod.usage(conn, session_id)
    if (reason := capsmod.call_refusal(use, caps_of(settings))) is not None:
        return refused(reason)
    if (flight := leases.in_flight(conn)) is not None:
        return refused(flight.refusal())
    fitted, reason = fit_to_limits(prices, out, settings, full, use)
    if fitted is None:
        return refused(reason or "")
    out.estimate = fitted
    models = [*out.panel, out.judge]
    if (stale := stale_prices(prices, models, settings.cost.max_price_age_days)) is not None:
        out.warnings.append(stale)
    out.max_prices = {
        "fusion": max_price(prices, models),
        "judge": max_price(prices, [out.judge]),
        **{model: max_price(prices, [model]) for model in out.panel},
    }
    out.needs_confirmation = fitted.worst_case_micro > usd_to_micro(settings.cost.confirm_above_usd)
    out.fingerprint = fingerprint(out.problem, out.problem_type, req.context_files, out.budget_micro)
    return out
