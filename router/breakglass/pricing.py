"""Cost estimates from token counts and the catalog's prices, in integer money.

A run is the panel members each reading the prompt and writing an answer, then the judge
reading the prompt plus every answer and writing ours. Expected uses the typical answer
length; the worst case uses max_tokens for every answer, at the higher of the completion and
reasoning price, times the attempts the reservation covers. The worst case is linear in
max_tokens, so the largest max_tokens that fits a limit is one division.
"""

from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_CEILING, Decimal

from router import clock
from router.breakglass.prices import ModelPrice, PriceError, decimal_amount

PICO_PER_MICRO = 10**6
# provider.max_price is quoted in USD per million tokens: pico-dollars per token / 10^6
PICO_PER_TOKEN_TO_USD_PER_MTOK = Decimal(10) ** 6
SECONDS_PER_DAY = 86_400


def pico_to_micro_ceil(pico: int) -> int:
    return -(-pico // PICO_PER_MICRO)


def usd_text_to_micro_ceil(value) -> int:
    """A provider's USD amount (number or decimal text) → micro-dollars, rounded up.

    ValueError for anything that is not a finite, non-negative amount (a bool, "abc", -1, NaN):
    the caller counts such a call at its worst case, never at $0.
    """
    amount = decimal_amount(value)
    if not amount.is_finite() or amount < 0:
        raise ValueError(f"not a non-negative amount: {value!r}")
    return int((amount * 1_000_000).to_integral_value(rounding=ROUND_CEILING))


@dataclass(frozen=True)
class Estimate:
    """Expected and worst-case cost of one panel run, in micro-dollars."""

    prompt_tokens: int
    # max_tokens of every call in the run
    output_cap: int
    attempts: int
    expected_micro: int
    worst_run_micro: int
    # the reservation: the worst case times the attempts a run may take
    worst_case_micro: int
    breakdown: dict[str, int]
    # worst case of each single call ('panel:<model>', 'judge:<model>'): what a call that may
    # have been billed without reporting usage is charged
    worst_calls: dict[str, int]


def missing_prices(prices: dict[str, ModelPrice], models: list[str]) -> str | None:
    missing = sorted({m for m in models if m not in prices})
    if not missing:
        return None
    return (
        f"no price in the catalog for {', '.join(missing)}; load current prices with "
        "`context-router prices --fetch` (or --from a saved /api/v1/models response)"
    )


def _run_parts(
    prices: dict[str, ModelPrice], panel: list[str], judge: str, prompt_tokens: int, output: int, worst: bool
) -> dict[str, int]:
    def call(model: str, read: int) -> int:
        price = prices[model]
        per_output = price.output_pico_worst if worst else price.completion_pico
        return read * price.prompt_pico + output * per_output + price.request_pico

    parts: dict[str, int] = {}
    for model in panel:
        parts[f"panel:{model}"] = parts.get(f"panel:{model}", 0) + call(model, prompt_tokens)
    parts[f"judge:{judge}"] = call(judge, prompt_tokens + len(panel) * output)
    return parts


def estimate_run(
    prices: dict[str, ModelPrice],
    panel: list[str],
    judge: str,
    prompt_tokens: int,
    expected_output: int,
    output_cap: int,
    attempts: int,
) -> Estimate:
    if (missing := missing_prices(prices, [*panel, judge])) is not None:
        raise PriceError(missing)
    expected_parts = _run_parts(prices, panel, judge, prompt_tokens, min(expected_output, output_cap), False)
    worst_parts = _run_parts(prices, panel, judge, prompt_tokens, output_cap, True)
    worst_run = pico_to_micro_ceil(sum(worst_parts.values()))
    return Estimate(
        prompt_tokens=prompt_tokens,
        output_cap=output_cap,
        attempts=attempts,
        expected_micro=pico_to_micro_ceil(sum(expected_parts.values())),
        worst_run_micro=worst_run,
        worst_case_micro=worst_run * attempts,
        breakdown={k: pico_to_micro_ceil(v) for k, v in expected_parts.items()},
        worst_calls={k: pico_to_micro_ceil(v) for k, v in worst_parts.items()},
    )


def largest_cap_within(
    prices: dict[str, ModelPrice],
    panel: list[str],
    judge: str,
    prompt_tokens: int,
    attempts: int,
    limit_micro: int,
) -> int:
    """The largest max_tokens whose worst case (× attempts) stays within limit_micro; 0 or less
    when even the prompts alone do not fit."""
    fixed = sum(_run_parts(prices, panel, judge, prompt_tokens, 0, True).values())
    per_token = sum(_run_parts(prices, panel, judge, prompt_tokens, 1, True).values()) - fixed
    run_limit_pico = (limit_micro // attempts) * PICO_PER_MICRO
    if per_token <= 0:
        return 0 if fixed > run_limit_pico else 10**9
    return (run_limit_pico - fixed) // per_token


def max_price(prices: dict[str, ModelPrice], models: list[str]) -> dict[str, float]:
    """OpenRouter's per-request price ceiling (provider.max_price, USD per million tokens) at
    the prices the estimate used: the highest of the models a request may run."""

    def ceiling(pico: int) -> float:
        return float(Decimal(pico) / PICO_PER_TOKEN_TO_USD_PER_MTOK)

    used = [prices[m] for m in models]
    return {
        "prompt": ceiling(max(p.prompt_pico for p in used)),
        "completion": ceiling(max(p.output_pico_worst for p in used)),
    }


def stale_prices(
    prices: dict[str, ModelPrice], models: list[str], max_age_days: float, now: datetime | None = None
) -> str | None:
    """A warning naming the models whose price is older than max_age_days, or None."""
    now = now or clock.now()
    old = []
    for model in sorted(set(models)):
        priced = datetime.fromisoformat(prices[model].priced_at.replace("Z", "+00:00"))
        days = (now - priced).total_seconds() / SECONDS_PER_DAY
        if days > max_age_days:
            # whole days elapsed, as a person counts a price's age: one priced as of a date is
            # "45 days" old all day long on the 45th day after it, not 46 from noon on
            old.append(f"{model} ({int(days)} days)")
    if not old:
        return None
    return (
        f"prices older than {max_age_days:g} days: {', '.join(old)}; the estimate may be off: "
        "refresh with `context-router prices --fetch`"
    )
