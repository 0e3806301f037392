"""Model prices: OpenRouter's /api/v1/models JSON → model_prices rows, and cost estimates.

Prices are decimal strings of USD per token; they are converted exactly (Decimal) to integer
pico-dollars per token, and estimates are rounded up to whole micro-dollars, so money never
passes through a float.
"""

import json
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal, InvalidOperation
from pathlib import Path

import apsw

from router.clock import utc_now_iso
from router.errors import RouterError

PICO_PER_USD = Decimal(10) ** 12
PICO_PER_MICRO = 10**6

DELETE_PRICES = "DELETE FROM model_prices"
INSERT_PRICE = """
INSERT INTO model_prices (model, name, prompt_picodollars_per_tok, completion_picodollars_per_tok,
                          request_picodollars, context_length, loaded_at)
VALUES (:model, :name, :prompt, :completion, :request, :context_length, :loaded_at)
"""
SELECT_PRICES = """
SELECT model, prompt_picodollars_per_tok, completion_picodollars_per_tok, request_picodollars
FROM model_prices
"""


class PriceError(RouterError):
    """A price file is invalid, or a model has no price in the catalog."""


@dataclass(frozen=True)
class ModelPrice:
    model: str
    prompt_pico: int
    completion_pico: int
    request_pico: int = 0

    def call_pico(self, prompt_tokens: int, completion_tokens: int) -> int:
        return prompt_tokens * self.prompt_pico + completion_tokens * self.completion_pico + self.request_pico


def pico_to_micro_ceil(pico: int) -> int:
    return -(-pico // PICO_PER_MICRO)


def usd_text_to_micro_ceil(value) -> int:
    """A provider's USD amount (number or string) → micro-dollars, rounded up."""
    amount = Decimal(str(value))
    if amount < 0:
        raise ValueError(f"negative amount {value!r}")
    return int((amount * 1_000_000).to_integral_value(rounding=ROUND_CEILING))


def _usd_per_token_to_pico(value, where: str) -> int:
    try:
        amount = Decimal(str(value))
    except InvalidOperation as exc:
        raise PriceError(f"{where}: not a decimal price: {value!r}") from exc
    if not amount.is_finite() or amount < 0:
        raise PriceError(f"{where}: price must be a non-negative number, got {value!r}")
    pico = amount * PICO_PER_USD
    if pico != pico.to_integral_value():
        raise PriceError(f"{where}: {value!r} is finer than a pico-dollar per token")
    return int(pico)


def parse_prices(path: Path) -> list[dict]:
    """Validate a /api/v1/models file completely before anything is written."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PriceError(f"{path}: cannot read: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise PriceError(f"{path}: line {exc.lineno}: not valid JSON: {exc.msg}") from exc
    if not isinstance(document, dict) or not isinstance(document.get("data"), list):
        raise PriceError(f"{path}: expected an object with a 'data' list (OpenRouter /api/v1/models)")
    rows, seen = [], set()
    for index, entry in enumerate(document["data"]):
        where = f"{path}: data[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or not entry["id"]:
            raise PriceError(f"{where}.id: missing or not a string")
        model = entry["id"]
        where = f"{path}: data[{index}] ({model})"
        if model in seen:
            raise PriceError(f"{where}.id: listed twice")
        seen.add(model)
        pricing = entry.get("pricing")
        if not isinstance(pricing, dict):
            raise PriceError(f"{where}.pricing: missing or not an object")
        for field in ("prompt", "completion"):
            if field not in pricing:
                raise PriceError(f"{where}.pricing.{field}: missing")
        context_length = entry.get("context_length")
        if context_length is not None and (not isinstance(context_length, int) or context_length <= 0):
            raise PriceError(f"{where}.context_length: must be a positive integer")
        rows.append(
            {
                "model": model,
                "name": str(entry.get("name", "")),
                "prompt": _usd_per_token_to_pico(pricing["prompt"], f"{where}.pricing.prompt"),
                "completion": _usd_per_token_to_pico(pricing["completion"], f"{where}.pricing.completion"),
                "request": _usd_per_token_to_pico(pricing.get("request", "0"), f"{where}.pricing.request"),
                "context_length": context_length,
            }
        )
    return rows


def load_prices(conn: apsw.Connection, path: Path) -> int:
    """Replace the catalog's model prices with the file's, in one transaction."""
    return write_prices(conn, parse_prices(path))


def write_prices(conn: apsw.Connection, rows: list[dict]) -> int:
    """Replace the catalog's model prices with already validated rows, in one transaction."""
    loaded_at = utc_now_iso()
    with conn:
        conn.execute(DELETE_PRICES)
        for row in rows:
            conn.execute(INSERT_PRICE, {**row, "loaded_at": loaded_at})
    return len(rows)


def read_prices(conn: apsw.Connection) -> dict[str, ModelPrice]:
    return {
        model: ModelPrice(model, prompt, completion, request)
        for model, prompt, completion, request in conn.execute(SELECT_PRICES)
    }


@dataclass(frozen=True)
class Estimate:
    """Expected and worst-case cost of one panel run, in micro-dollars."""

    prompt_tokens: int
    expected_micro: int
    worst_run_micro: int
    # the reservation: the worst case times the attempts a run may take
    worst_case_micro: int
    breakdown: dict[str, int]
    # worst case of each single call ('panel:<model>', 'judge:<model>'): what a call that may
    # have been billed without reporting usage is charged
    worst_calls: dict[str, int]


def estimate_run(
    prices: dict[str, ModelPrice],
    panel: list[str],
    judge: str,
    prompt_tokens: int,
    expected_output: int,
    output_cap: int,
    attempts: int,
) -> Estimate:
    """Panel members each read the prompt and write an answer; the judge reads the prompt plus
    every answer and writes ours. Expected uses the typical answer length, worst the cap."""
    missing = [m for m in [*panel, judge] if m not in prices]
    if missing:
        raise PriceError(
            f"no price in the catalog for {', '.join(sorted(set(missing)))}; "
            "add it to configs/openrouter-models.json and run `context-router catalog`"
        )

    def run_pico(output_tokens: int) -> tuple[int, dict[str, int]]:
        parts: dict[str, int] = {}
        for model in panel:
            parts[f"panel:{model}"] = parts.get(f"panel:{model}", 0) + prices[model].call_pico(
                prompt_tokens, output_tokens
            )
        judge_input = prompt_tokens + len(panel) * output_tokens
        parts[f"judge:{judge}"] = prices[judge].call_pico(judge_input, output_tokens)
        return sum(parts.values()), parts

    expected_pico, parts = run_pico(expected_output)
    worst_pico, worst_parts = run_pico(output_cap)
    worst_run = pico_to_micro_ceil(worst_pico)
    return Estimate(
        prompt_tokens=prompt_tokens,
        expected_micro=pico_to_micro_ceil(expected_pico),
        worst_run_micro=worst_run,
        worst_case_micro=worst_run * attempts,
        breakdown={k: pico_to_micro_ceil(v) for k, v in parts.items()},
        worst_calls={k: pico_to_micro_ceil(v) for k, v in worst_parts.items()},
    )
