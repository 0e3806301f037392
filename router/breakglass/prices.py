"""Model prices: OpenRouter's `GET /api/v1/models` JSON → model_prices rows, and back.

Prices are decimal strings of USD per token; they are converted exactly (Decimal) to integer
pico-dollars per token, rounded up, so money never passes through a float and a price is
never read as cheaper than quoted. A model whose price is variable (OpenRouter quotes "-1"
for its routers, e.g. openrouter/auto) has no price to estimate with: it is skipped and named.
"""

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import ROUND_CEILING, Decimal, InvalidOperation
from pathlib import Path

import apsw

from router.clock import utc_iso, utc_now_iso
from router.errors import RouterError

PICO_PER_USD = Decimal(10) ** 12
# OpenRouter's marker for a price that depends on the model a router picks
VARIABLE_PRICE = Decimal(-1)

DELETE_PRICES = "DELETE FROM model_prices"
INSERT_PRICE = """
INSERT INTO model_prices (model, name, prompt_picodollars_per_tok, completion_picodollars_per_tok,
                          request_picodollars, context_length, loaded_at, priced_at,
                          reasoning_picodollars_per_tok)
VALUES (:model, :name, :prompt, :completion, :request, :context_length, :loaded_at, :priced_at,
        :reasoning)
"""
SELECT_PRICES = """
SELECT model, prompt_picodollars_per_tok, completion_picodollars_per_tok, request_picodollars,
       reasoning_picodollars_per_tok, coalesce(priced_at, loaded_at)
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
    reasoning_pico: int = 0
    priced_at: str = ""

    @property
    def output_pico_worst(self) -> int:
        """What one output token may cost: reasoning tokens count against max_tokens too, and
        some models bill them at their own price."""
        return max(self.completion_pico, self.reasoning_pico)


@dataclass
class PriceFile:
    rows: list[dict]
    # models left out, with why (variable price)
    skipped: list[str] = field(default_factory=list)


def decimal_amount(value) -> Decimal:
    """A number or decimal text (as OpenRouter writes amounts) as a Decimal; ValueError for
    anything else (a bool, "abc", a list)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError(f"not an amount: {value!r}")
    try:
        return Decimal(str(value))
    except InvalidOperation:
        raise ValueError(f"not an amount: {value!r}") from None


def _pico(value, where: str, *, allow_variable: bool = False) -> int | None:
    """USD per token (decimal text) → pico-dollars per token rounded up; None for "-1"."""
    try:
        amount = decimal_amount(value)
    except ValueError:
        raise PriceError(f"{where}: not a decimal price: {value!r}") from None
    if allow_variable and amount == VARIABLE_PRICE:
        return None
    if not amount.is_finite() or amount < 0:
        raise PriceError(f"{where}: price must be a non-negative number, got {value!r}")
    return int((amount * PICO_PER_USD).to_integral_value(rounding=ROUND_CEILING))


def parse_models(document, source: str) -> PriceFile:
    """Validate a whole /api/v1/models document before anything is written."""
    if not isinstance(document, dict) or not isinstance(document.get("data"), list):
        raise PriceError(f"{source}: expected an object with a 'data' list (OpenRouter /api/v1/models)")
    out, seen = PriceFile([]), set()
    for index, entry in enumerate(document["data"]):
        where = f"{source}: data[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or not entry["id"]:
            raise PriceError(f"{where}.id: missing or not a string")
        model = entry["id"]
        where = f"{source}: data[{index}] ({model})"
        if model in seen:
            raise PriceError(f"{where}.id: listed twice")
        seen.add(model)
        pricing = entry.get("pricing")
        if not isinstance(pricing, dict):
            raise PriceError(f"{where}.pricing: missing or not an object")
        for name in ("prompt", "completion"):
            if name not in pricing:
                raise PriceError(f"{where}.pricing.{name}: missing")
        prompt = _pico(pricing["prompt"], f"{where}.pricing.prompt", allow_variable=True)
        completion = _pico(pricing["completion"], f"{where}.pricing.completion", allow_variable=True)
        if prompt is None or completion is None:
            out.skipped.append(f"{model} (variable price)")
            continue
        context_length = entry.get("context_length")
        if context_length is not None and (
            isinstance(context_length, bool) or not isinstance(context_length, int) or context_length <= 0
        ):
            raise PriceError(f"{where}.context_length: must be a positive integer")
        out.rows.append(
            {
                "model": model,
                "name": str(entry.get("name", "")),
                "prompt": prompt,
                "completion": completion,
                "request": _pico(pricing.get("request", "0"), f"{where}.pricing.request") or 0,
                "reasoning": _pico(
                    pricing.get("internal_reasoning", "0"), f"{where}.pricing.internal_reasoning"
                )
                or 0,
                "context_length": context_length,
            }
        )
    return out


def parse_prices(path: Path) -> PriceFile:
    """A saved /api/v1/models response, validated completely."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PriceError(f"{path}: cannot read: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise PriceError(f"{path}: line {exc.lineno}: not valid JSON: {exc.msg}") from exc
    return parse_models(document, str(path))


def file_priced_at(path: Path) -> str:
    """A saved response is as old as the file: when it was written."""
    return utc_iso(datetime.fromtimestamp(path.stat().st_mtime, UTC))


def write_prices(conn: apsw.Connection, prices: PriceFile, priced_at: str | None = None) -> int:
    """Replace the catalog's model prices with already validated rows, in one transaction."""
    loaded_at = utc_now_iso()
    with conn:
        conn.execute(DELETE_PRICES)
        for row in prices.rows:
            conn.execute(INSERT_PRICE, {**row, "loaded_at": loaded_at, "priced_at": priced_at or loaded_at})
    return len(prices.rows)


def load_prices(conn: apsw.Connection, path: Path) -> int:
    """Replace the catalog's model prices with the file's (priced when the file was written)."""
    return write_prices(conn, parse_prices(path), file_priced_at(path))


def read_prices(conn: apsw.Connection) -> dict[str, ModelPrice]:
    return {
        model: ModelPrice(model, prompt, completion, request, reasoning, priced_at)
        for model, prompt, completion, request, reasoning, priced_at in conn.execute(SELECT_PRICES)
    }
