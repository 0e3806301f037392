"""The only HTTP code: OpenRouter's endpoints, over httpx.

`POST {base}/api/v1/chat/completions` for the panel, `GET {base}/api/v1/generation?id=` for
the real cost of a generation whose caller died, `GET {base}/api/v1/models` for prices. The
key comes from OPENROUTER_API_KEY (environment only, never logged or stored). A 429 with a
short Retry-After is retried once; everything else that goes wrong becomes a ProviderError
whose kind the panel logic decides on.
"""

import json
import os
from dataclasses import dataclass, replace

import anyio
import httpx

from router.breakglass.pricing import usd_text_to_micro_ceil
from router.errors import RouterError
from router.redaction.redactor import redacted

BASE_URL_ENV = "OPENROUTER_BASE_URL"
API_KEY_ENV = "OPENROUTER_API_KEY"
DEFAULT_BASE_URL = "https://openrouter.ai"
COMPLETIONS_PATH = "/api/v1/chat/completions"
GENERATION_PATH = "/api/v1/generation"
MODELS_PATH = "/api/v1/models"
# a lookup or a price fetch is a few hundred bytes to a few hundred kilobytes
LOOKUP_TIMEOUT_SECONDS = 15.0
# A generation's cost may be recorded a moment after its answer: the pauses between the tries
# of a lookup made right after a response that carried no usable cost.
LOOKUP_RETRY_PAUSES_S = (0.5, 1.0)


class MissingKeyError(RouterError):
    """OPENROUTER_API_KEY is not set."""


class ProviderError(Exception):
    """A provider call failed. kind: payment | rate_limited | upstream | timeout | malformed | http.

    `charged_unknown` is True when the request may have been billed but no usage came back
    (a timeout after the request was sent): the caller charges its worst case.
    """

    def __init__(self, kind: str, message: str, *, charged_unknown: bool = False):
        # the provider's own words (an error that quotes the request) go into the ledger
        super().__init__(redacted(message))
        self.kind = kind
        self.charged_unknown = charged_unknown


@dataclass(frozen=True)
class Completion:
    model: str
    content: str
    # None when the response carried no usable usage.cost (then counted at the worst case)
    cost_micro: int | None
    prompt_tokens: int | None
    completion_tokens: int | None
    # OpenRouter's generation id ('gen-...'), by which its cost can be looked up later
    generation_id: str | None = None
    # why cost_micro is None although usage.cost was there ("abc", -1, ...)
    cost_problem: str | None = None
    # cost_micro came from the generation endpoint, the response having none that could be used
    cost_looked_up: bool = False


def base_url() -> str:
    return os.environ.get(BASE_URL_ENV, DEFAULT_BASE_URL).rstrip("/")


def api_key() -> str:
    key = os.environ.get(API_KEY_ENV, "")
    if not key:
        raise MissingKeyError(f"{API_KEY_ENV} is not set in the break-glass server's environment")
    return key


def headers(key: str, app_url: str, app_title: str) -> dict[str, str]:
    out = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    if app_url:
        out["HTTP-Referer"] = app_url
    if app_title:
        out["X-Title"] = app_title
    return out


def _retry_after_seconds(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _error_text(response: httpx.Response) -> str:
    try:
        body = response.json()
        message = body.get("error", {}).get("message") if isinstance(body, dict) else None
    except ValueError:
        message = None
    return message or response.text[:200] or response.reason_phrase


def parse_completion(response: httpx.Response) -> Completion:
    try:
        body = response.json()
    except ValueError as exc:
        raise ProviderError("malformed", "response body is not JSON", charged_unknown=True) from exc
    try:
        choice = body["choices"][0]
        content = choice["message"]["content"]
        if not isinstance(content, str):
            raise TypeError("message.content is not a string")
    except (KeyError, IndexError, TypeError) as exc:
        raise ProviderError(
            "malformed",
            f"response lacks choices[0].message.content: {exc}",
            charged_unknown="usage" not in body if isinstance(body, dict) else True,
        ) from exc
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    cost_micro, problem = None, None
    if "cost" in usage:
        try:
            cost_micro = usd_text_to_micro_ceil(usage["cost"])
        except ValueError:
            problem = f"usage.cost {str(usage['cost'])[:40]!r} is not a cost"
    generation_id = body.get("id")
    return Completion(
        model=str(body.get("model", "")),
        content=content,
        cost_micro=cost_micro,
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
        generation_id=generation_id if isinstance(generation_id, str) and generation_id else None,
        cost_problem=problem,
    )


async def chat(
    client: httpx.AsyncClient, body: dict, *, key: str, app_url: str, app_title: str, max_retry_after: float
) -> Completion:
    """One chat completion; a 429 whose Retry-After fits is waited out and retried once."""
    url = base_url() + COMPLETIONS_PATH
    for attempt in (1, 2):
        try:
            response = await client.post(
                url, content=json.dumps(body), headers=headers(key, app_url, app_title)
            )
        except httpx.TimeoutException as exc:
            raise ProviderError(
                "timeout", f"no answer within {client.timeout.read:g} s", charged_unknown=True
            ) from exc
        except httpx.TransportError as exc:
            raise ProviderError("upstream", f"connection failed: {type(exc).__name__}") from exc
        status = response.status_code
        if status == 200:
            return parse_completion(response)
        message = f"HTTP {status}: {_error_text(response)}"
        if status == 429:
            wait = _retry_after_seconds(response)
            if attempt == 1 and wait is not None and wait <= max_retry_after:
                await anyio.sleep(wait)
                continue
            raise ProviderError(
                "rate_limited", message + (f" (Retry-After {wait:g} s)" if wait is not None else "")
            )
        if status == 402:
            raise ProviderError("payment", message)
        if status >= 500 or status == 408:
            raise ProviderError("upstream", message)
        raise ProviderError("http", message)
    raise AssertionError("unreachable")


async def generation_cost(client: httpx.AsyncClient, generation_id: str, key: str) -> int | None:
    """The cost OpenRouter billed for a generation (data.total_cost), in micro-dollars; None
    when it cannot be known now (not found yet, an error, no usable number)."""
    try:
        response = await client.get(
            base_url() + GENERATION_PATH,
            params={"id": generation_id},
            headers={"Authorization": f"Bearer {key}"},
            timeout=LOOKUP_TIMEOUT_SECONDS,
        )
        if response.status_code != 200:
            return None
        data = response.json().get("data")
        return usd_text_to_micro_ceil(data["total_cost"])
    except (httpx.HTTPError, ValueError, TypeError, KeyError, AttributeError):
        return None


async def looked_up(client: httpx.AsyncClient, completion: Completion, key: str) -> Completion:
    """A completion that carried no usable cost, with the cost OpenRouter billed for its
    generation (GET /api/v1/generation), tried again after short pauses while it is not
    known yet; as it was when that never answers (then it counts at its worst case)."""
    if completion.cost_micro is not None or completion.generation_id is None:
        return completion
    for pause in (0.0, *LOOKUP_RETRY_PAUSES_S):
        await anyio.sleep(pause)
        cost = await generation_cost(client, completion.generation_id, key)
        if cost is not None:
            return replace(completion, cost_micro=cost, cost_looked_up=True)
    return completion


async def generation_costs(generation_ids: list[str], key: str) -> dict[str, int]:
    """Every lookup that answered; the others stay unknown (their requests count at worst)."""
    found: dict[str, int] = {}
    if not generation_ids:
        return found
    async with httpx.AsyncClient() as client:
        for generation_id in generation_ids:
            cost = await generation_cost(client, generation_id, key)
            if cost is not None:
                found[generation_id] = cost
    return found


def fetch_models() -> dict:
    """GET /api/v1/models: public, so no key is sent."""
    url = base_url() + MODELS_PATH
    try:
        response = httpx.get(url, timeout=LOOKUP_TIMEOUT_SECONDS)
    except httpx.HTTPError as exc:
        raise ProviderError("upstream", f"GET {url}: {type(exc).__name__}: {exc}") from exc
    if response.status_code != 200:
        raise ProviderError("http", f"GET {url}: HTTP {response.status_code}: {_error_text(response)}")
    try:
        return response.json()
    except ValueError as exc:
        raise ProviderError("malformed", f"GET {url}: the response is not JSON") from exc
