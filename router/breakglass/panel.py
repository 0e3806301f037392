"""Running the panel: one Fusion call, or the router's own fan-out (panel calls in parallel,
then a judge), with the judge's answer validated and a malformed one retried once.

Spending is tracked call by call against the reservation: an attempt that could push the
spend past what was reserved is not started; a call that may have been billed without
reporting a usable cost is counted at its worst case; a call charged above its worst case
is counted as charged and stops the run. Every request is recorded before it is sent, so a
process that dies mid-call leaves what it may have been billed for.
"""

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol

import anyio
import httpx
from pydantic import ValidationError

from router.breakglass import openrouter, prompt
from router.breakglass.openrouter import Completion, ProviderError
from router.breakglass.output import PanelAnswer, answer_json_schema
from router.breakglass.pricing import Estimate
from router.breakglass.settings import usd

FUSION_MODEL = "openrouter/fusion"
FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)
# provider failures after which another attempt (or the fan-out) would fail the same way
FINAL_KINDS = {"payment", "rate_limited"}

Progress = Callable[[str, str], Awaitable[None]]


class Recorder(Protocol):
    """Where each request is written down: before it is sent, and when it answers."""

    def sent(self, what: str, worst: int) -> int: ...

    def answered(self, request_id: int, generation_id: str | None, cost: int | None) -> None: ...


@dataclass(frozen=True)
class RunPlan:
    panel: list[str]
    judge: str
    fusion: bool
    user_message: str
    output_cap: int
    reserved_micro: int
    estimate: Estimate
    key: str
    app_url: str
    app_title: str
    timeout_seconds: float
    max_retry_after: float
    # provider.max_price per route: 'fusion', 'judge', or a panel model
    max_prices: dict[str, dict]
    recorder: Recorder


@dataclass
class RunResult:
    status: Literal["ok", "failed"]
    mode: str | None
    spent_micro: int
    message: str
    answer: PanelAnswer | None = None
    events: list[str] = field(default_factory=list)


class _Budget:
    def __init__(self, plan: RunPlan):
        self.plan = plan
        self.spent = 0
        self.events: list[str] = []
        # the first call charged above its own worst case: the run stops, the session too
        self.overrun: str | None = None
        # requests that may have been billed without a usable cost: counted at their worst case
        self.at_worst_case = 0

    def fits(self, worst: int) -> bool:
        return self.overrun is None and self.spent + worst <= self.plan.reserved_micro

    def charge(self, completion: Completion | None, worst: int, what: str) -> None:
        if completion is not None and completion.cost_micro is not None:
            cost = completion.cost_micro
            self.spent += cost  # as reported, never clipped
            how = (
                f" (looked up: {completion.cost_problem or 'usage.cost missing'})"
                if completion.cost_looked_up
                else ""
            )
            self.events.append(f"{what}: ${cost / 1e6:.6f}{how}")
            if cost > worst and self.overrun is None:
                self.overrun = (
                    f"{what} was charged ${cost / 1e6:.6f}, above its worst case ${worst / 1e6:.6f}"
                )
        else:
            self.spent += worst
            self.at_worst_case += 1
            why = completion.cost_problem if completion and completion.cost_problem else "cost not reported"
            self.events.append(f"{what}: {why}, counted at worst case ${worst / 1e6:.6f}")

    def basis(self) -> str | None:
        """What the spend is when it is not simply the provider's reported costs."""
        if not self.at_worst_case:
            return None
        return (
            f"provider usage.cost as reported, but {self.at_worst_case} requests at their worst case "
            "(billed, perhaps, without a usable cost)"
        )


def parse_answer(content: str) -> PanelAnswer:
    match = FENCE.match(content)
    return PanelAnswer.model_validate_json(match.group(1) if match else content)


def fusion_body(plan: RunPlan) -> dict:
    return {
        "model": FUSION_MODEL,
        "plugins": [{"id": "fusion", "model": plan.judge, "analysis_models": plan.panel}],
        "messages": prompt.panel_messages(plan.user_message),
        "response_format": prompt.answer_response_format(answer_json_schema()),
        "max_tokens": plan.output_cap,
        "usage": {"include": True},
        **_ceiling(plan, "fusion"),
    }


def _ceiling(plan: RunPlan, route: str) -> dict:
    """Ask OpenRouter to hold the line too: no provider above the prices the estimate used."""
    price = plan.max_prices.get(route)
    return {"provider": {"max_price": price}} if price else {}


def judge_body(plan: RunPlan, analyses: dict[str, str]) -> dict:
    return {
        "model": plan.judge,
        "messages": prompt.judge_messages(plan.user_message, analyses),
        "response_format": prompt.answer_response_format(answer_json_schema()),
        "max_tokens": plan.output_cap,
        "usage": {"include": True},
        **_ceiling(plan, "judge"),
    }


def member_body(plan: RunPlan, model: str) -> dict:
    return {
        "model": model,
        "messages": prompt.panel_messages(plan.user_message),
        "max_tokens": plan.output_cap,
        "usage": {"include": True},
        **_ceiling(plan, model),
    }


async def _call(client: httpx.AsyncClient, budget: _Budget, body: dict, what: str, worst: int) -> Completion:
    """One request: written down before it is sent, its answer recorded, and charged to the
    budget (at its reported cost, or at its worst case when the cost is unknown)."""
    plan = budget.plan
    request_id = plan.recorder.sent(what, worst)
    try:
        completion = await openrouter.chat(
            client,
            body,
            key=plan.key,
            app_url=plan.app_url,
            app_title=plan.app_title,
            max_retry_after=plan.max_retry_after,
        )
    except ProviderError as exc:
        # refused outright: nothing billed; otherwise unknown, counted at worst if the caller dies
        plan.recorder.answered(request_id, None, None if exc.charged_unknown else 0)
        if exc.charged_unknown:
            budget.charge(None, worst, f"{what} ({exc.kind})")
        raise
    # no usable usage.cost: what OpenRouter billed for the generation, rather than the worst case
    completion = await openrouter.looked_up(client, completion, plan.key)
    plan.recorder.answered(request_id, completion.generation_id, completion.cost_micro)
    budget.charge(completion, worst, what)
    return completion


def _stopped(budget: _Budget, mode: str) -> RunResult:
    return RunResult("failed", mode, budget.spent, f"stopped: {budget.overrun}", events=budget.events)


def _no_room(budget: _Budget, what: str) -> RunResult:
    return RunResult(
        "failed",
        None,
        budget.spent,
        f"stopped before {what}: it could exceed the {usd(budget.plan.reserved_micro)} reserved",
        events=budget.events,
    )


async def _fusion(client, plan: RunPlan, budget: _Budget, progress: Progress) -> RunResult | ProviderError:
    """RunResult when Fusion decided the outcome; the ProviderError when the fan-out should try."""
    worst = plan.estimate.worst_run_micro
    for attempt in (1, 2):
        if not budget.fits(worst):
            return _no_room(budget, "the Fusion call")
        await progress(
            "panel", f"Fusion: panel {', '.join(plan.panel)} with judge {plan.judge} (attempt {attempt})"
        )
        try:
            completion = await _call(client, budget, fusion_body(plan), f"fusion attempt {attempt}", worst)
        except ProviderError as exc:
            if exc.kind in FINAL_KINDS:
                return RunResult(
                    "failed",
                    "fusion",
                    budget.spent,
                    f"OpenRouter refused the call: {exc}",
                    events=budget.events,
                )
            budget.events.append(f"fusion attempt {attempt} failed: {exc}")
            return exc
        if budget.overrun:
            return _stopped(budget, "fusion")
        await progress("judge", "validating the judge's answer")
        try:
            return RunResult(
                "ok",
                "fusion",
                budget.spent,
                "panel answered",
                parse_answer(completion.content),
                events=budget.events,
            )
        except ValidationError as exc:
            budget.events.append(f"fusion attempt {attempt}: malformed answer ({exc.error_count()} errors)")
    return RunResult(
        "failed",
        "fusion",
        budget.spent,
        "the judge's answer was malformed twice (retried once)",
        events=budget.events,
    )


async def _fanout(client, plan: RunPlan, budget: _Budget, progress: Progress) -> RunResult:
    worst_calls = plan.estimate.worst_calls
    panel_worst = sum(worst_calls[f"panel:{m}"] for m in plan.panel)
    judge_worst = worst_calls[f"judge:{plan.judge}"]
    if not budget.fits(panel_worst + judge_worst):
        return _no_room(budget, "the fan-out")
    await progress("panel", f"fan-out: {len(plan.panel)} panel calls in parallel")
    analyses: dict[str, str] = {}
    failures: dict[str, ProviderError] = {}

    async def ask(model: str) -> None:
        try:
            completion = await _call(
                client, budget, member_body(plan, model), f"panel {model}", worst_calls[f"panel:{model}"]
            )
        except ProviderError as exc:
            failures[model] = exc
            return
        analyses[model] = completion.content

    async with anyio.create_task_group() as group:
        for model in plan.panel:
            group.start_soon(ask, model)
    for model, exc in failures.items():
        budget.events.append(f"panel {model} failed: {exc}")
    if budget.overrun:
        return _stopped(budget, "fanout")
    if not analyses:
        reasons = "; ".join(f"{m}: {e}" for m, e in failures.items())
        return RunResult(
            "failed", "fanout", budget.spent, f"every panel call failed ({reasons})", events=budget.events
        )
    for attempt in (1, 2):
        if not budget.fits(judge_worst):
            return _no_room(budget, "the judge call")
        await progress("judge", f"judge {plan.judge} weighing {len(analyses)} analyses (attempt {attempt})")
        try:
            completion = await _call(
                client, budget, judge_body(plan, analyses), f"judge attempt {attempt}", judge_worst
            )
        except ProviderError as exc:
            return RunResult(
                "failed", "fanout", budget.spent, f"the judge call failed: {exc}", events=budget.events
            )
        if budget.overrun:
            return _stopped(budget, "fanout")
        try:
            return RunResult(
                "ok",
                "fanout",
                budget.spent,
                "panel answered",
                parse_answer(completion.content),
                events=budget.events,
            )
        except ValidationError as exc:
            budget.events.append(f"judge attempt {attempt}: malformed answer ({exc.error_count()} errors)")
    return RunResult(
        "failed",
        "fanout",
        budget.spent,
        "the judge's answer was malformed twice (retried once)",
        events=budget.events,
    )


async def run_panel(plan: RunPlan, progress: Progress, budget: _Budget | None = None) -> RunResult:
    budget = budget or _Budget(plan)
    timeout = httpx.Timeout(plan.timeout_seconds, connect=min(10.0, plan.timeout_seconds))
    async with httpx.AsyncClient(timeout=timeout) as client:
        if plan.fusion:
            outcome = await _fusion(client, plan, budget, progress)
            if isinstance(outcome, RunResult):
                return outcome
            await progress("panel", f"Fusion failed ({outcome.kind}); running the panel ourselves")
        return await _fanout(client, plan, budget, progress)


def new_budget(plan: RunPlan) -> _Budget:
    """The spend tracker; the caller keeps it to settle what was spent if the run is cancelled."""
    return _Budget(plan)
