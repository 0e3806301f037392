"""A local stand-in for OpenRouter: an HTTP server on 127.0.0.1 speaking its wire format (the
one stand-in the project allows, for a paid remote API): `POST /api/v1/chat/completions`,
`GET /api/v1/generation?id=` (a generation's cost, as `data.total_cost`) and
`GET /api/v1/models` (the price list it was started with, in that endpoint's shape).

It checks each request's shape (path, bearer key, model, the fusion plugin and its panel,
response_format, provider.max_price against its own prices, refusing as OpenRouter does when
no provider is under the ceiling), records every request for the tests to inspect, and
answers as scripted: per route ('fusion', 'judge' for a direct call carrying
response_format, else the model id) a queue of behaviours, 'ok' once the queue is empty.
`charge_usd` bills every request one amount; `hold()` keeps requests waiting until `release()`.
"""

import itertools
import json
import math
import threading
import time
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

COMPLETIONS_PATH = "/api/v1/chat/completions"
GENERATION_PATH = "/api/v1/generation"
MODELS_PATH = "/api/v1/models"
BEHAVIOURS = {
    "ok",
    "malformed_answer",
    "malformed_json",
    "no_usage",
    "402",
    "429",
    "429_long",
    "502",
    "slow",
    # usage.cost that is not a cost, and a charge far above any worst case
    "cost_abc",
    "cost_negative",
    "overcharge",
    # no usage, and a generation whose cost the lookup does not know: until publish_generations()
    # ('no_usage_late': a process that dies before it is known), or never ('no_usage_unknown')
    "no_usage_late",
    "no_usage_unknown",
}
OVERCHARGE_USD = 4.0
# the longest a held request waits for release(): a test that forgets still ends
HOLD_LIMIT_S = 60.0


def _tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4))


class OpenRouterStub:
    def __init__(self, prices_path: Path, api_key: str, slow_seconds: float = 4.0):
        self.models_document = json.loads(prices_path.read_text())
        self.prices = {
            m["id"]: (Decimal(m["pricing"]["prompt"]), Decimal(m["pricing"]["completion"]))
            for m in self.models_document["data"]
        }
        # generation id -> the cost billed, for GET /api/v1/generation
        self.generations: dict[str, float] = {}
        # billed, but not known to the lookup yet (publish_generations) or ever
        self.unpublished: dict[str, float] = {}
        # each answer's generation id is its own, however many are answered at once
        self._generation_numbers = itertools.count(1)
        self.api_key = api_key
        self.slow_seconds = slow_seconds
        # added to every answer, so parallel callers overlap
        self.delay_seconds = 0.0
        self.requests: list[dict] = []
        # when set, every completion reports this cost: a provider billing above any worst case
        self.charge_usd: float | None = None
        # completions wait while this is clear (hold), so a test can keep a call in flight
        self._open = threading.Event()
        self._open.set()
        # completions being answered now, and the most there ever were at once
        self.in_flight = 0
        self.most_in_flight = 0
        self.script: dict[str, list[str]] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> "OpenRouterStub":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._open.set()  # a request still held answers, so its thread ends
        self._server.shutdown()
        self._server.server_close()

    def hold(self) -> None:
        """Completion requests are recorded, then wait for release() before they answer."""
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    def publish_generations(self) -> None:
        """The late generations' costs become known to GET /api/v1/generation."""
        with self._lock:
            self.generations.update(self.unpublished)
            self.unpublished.clear()

    def queue(self, route: str, *behaviours: str) -> None:
        unknown = set(behaviours) - BEHAVIOURS
        assert not unknown, f"unknown stub behaviours {unknown}"
        with self._lock:
            self.script.setdefault(route, []).extend(behaviours)

    def routes(self) -> list[str]:
        """The completion requests' routes, in order (lookups and price fetches left out)."""
        return [r["route"] for r in self.requests if r["route"] != "GET"]

    def completions(self) -> list[dict]:
        return [r for r in self.requests if r["route"] != "GET"]

    def all_text(self) -> str:
        """Every byte any request carried (headers and bodies), for secret checks."""
        return "\n".join(r["raw"] + "\n" + json.dumps(r["headers"]) for r in self.requests)

    # -- answering -------------------------------------------------------------------------

    def _next(self, route: str) -> str:
        with self._lock:
            queue = self.script.get(route, [])
            return queue.pop(0) if queue else "ok"

    def _cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> Decimal:
        prompt, completion = self.prices[model]
        return prompt * prompt_tokens + completion * completion_tokens

    def _answer(self, body: dict, route: str, behaviour: str) -> dict:
        prompt_text = "".join(m.get("content", "") for m in body["messages"])
        prompt_tokens = _tokens(prompt_text)
        if body.get("response_format"):
            answer = {
                "diagnosis": f"diagnosis by {route} after reading {prompt_tokens} prompt tokens",
                "solution": {
                    "approach": "split the lemma; prove the helper by native_decide",
                    "confidence": 0.8,
                    "files_to_change": ["src/Gap.lean"],
                    "code_snippets": [{"file": "src/Gap.lean", "code": "theorem helper : True := trivial"}],
                },
                "alternatives": ["a custom simp lemma"],
                "risks": ["simp slowdowns elsewhere"],
            }
            if behaviour == "malformed_answer":
                answer = {"diagnosis": "", "solution": {"approach": "x", "confidence": 7}}
            content = json.dumps(answer)
        else:
            content = f"analysis by {body['model']}: the root cause is the size of the simp term."
        completion_tokens = _tokens(content)
        if route == "fusion":
            plugin = body["plugins"][0]
            panel = plugin["analysis_models"]
            cost = sum(self._cost(m, prompt_tokens, completion_tokens) for m in panel)
            cost += self._cost(
                plugin["model"], prompt_tokens + len(panel) * completion_tokens, completion_tokens
            )
            model = plugin["model"]
        else:
            cost = self._cost(body["model"], prompt_tokens, completion_tokens)
            model = body["model"]
        response = {
            "id": f"gen-{next(self._generation_numbers)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "cost": float(cost),
            },
        }
        self.generations[response["id"]] = float(cost)
        if behaviour in ("no_usage", "no_usage_late", "no_usage_unknown"):
            del response["usage"]
            if behaviour != "no_usage":
                cost_billed = self.generations.pop(response["id"])
                if behaviour == "no_usage_late":
                    self.unpublished[response["id"]] = cost_billed
        elif behaviour == "cost_abc":
            response["usage"]["cost"] = "abc"
        elif behaviour == "cost_negative":
            response["usage"]["cost"] = -1
        elif behaviour == "overcharge" or self.charge_usd is not None:
            charged = OVERCHARGE_USD if self.charge_usd is None else self.charge_usd
            response["usage"]["cost"] = charged
            self.generations[response["id"]] = charged
        return response

    def _over_ceiling(self, body: dict) -> list[str]:
        """Models whose price is above the request's provider.max_price (USD per M tokens)."""
        ceiling = (body.get("provider") or {}).get("max_price")
        if not ceiling:
            return []
        if body["model"] == "openrouter/fusion":
            plugin = body["plugins"][0]
            models = [plugin["model"], *plugin["analysis_models"]]
        else:
            models = [body["model"]]
        million = Decimal(1_000_000)
        return [
            m
            for m in models
            if self.prices[m][0] * million > Decimal(str(ceiling["prompt"]))
            or self.prices[m][1] * million > Decimal(str(ceiling["completion"]))
        ]

    def _check(self, path: str, headers: dict, raw: str) -> tuple[int, str, dict | None]:
        if path != COMPLETIONS_PATH:
            return 404, f"no route {path}", None
        if headers.get("authorization") != f"Bearer {self.api_key}":
            return 401, "missing or wrong bearer key", None
        try:
            body = json.loads(raw)
        except ValueError:
            return 400, "body is not JSON", None
        if not isinstance(body.get("model"), str) or not isinstance(body.get("messages"), list):
            return 400, "model and messages are required", None
        if body["model"] == "openrouter/fusion":
            plugins = body.get("plugins") or []
            fusion = next((p for p in plugins if p.get("id") == "fusion"), None)
            if fusion is None or not fusion.get("analysis_models") or not fusion.get("model"):
                return 400, "openrouter/fusion needs the fusion plugin with model and analysis_models", body
            unknown = [m for m in [fusion["model"], *fusion["analysis_models"]] if m not in self.prices]
        else:
            unknown = [body["model"]] if body["model"] not in self.prices else []
        if unknown:
            return 400, f"unknown models {unknown}", body
        if over := self._over_ceiling(body):
            return 404, f"No endpoints found matching your max_price for {over}", body
        if body.get("response_format") is not None:
            rf = body["response_format"]
            if rf.get("type") != "json_schema" or "schema" not in rf.get("json_schema", {}):
                return 400, "response_format must be a json_schema", body
        return 200, "", body

    def _handler(self):
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def _send(self, status: int, payload: bytes, extra: dict | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in (extra or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _error(self, status: int, message: str, extra: dict | None = None) -> None:
                self._send(
                    status, json.dumps({"error": {"code": status, "message": message}}).encode(), extra
                )

            def do_GET(self):
                url = urlsplit(self.path)
                headers = {k.lower(): v for k, v in self.headers.items()}
                with stub._lock:
                    stub.requests.append(
                        {"path": url.path, "headers": headers, "raw": self.path, "body": None, "route": "GET"}
                    )
                if url.path == MODELS_PATH:
                    return self._send(200, json.dumps(stub.models_document).encode())
                if url.path != GENERATION_PATH:
                    return self._error(404, f"no route {url.path}")
                if headers.get("authorization") != f"Bearer {stub.api_key}":
                    return self._error(401, "missing or wrong bearer key")
                generation_id = parse_qs(url.query).get("id", [""])[0]
                if generation_id not in stub.generations:
                    return self._error(404, f"Generation {generation_id} not found")
                data = {
                    "id": generation_id,
                    "total_cost": stub.generations[generation_id],
                    "cancelled": False,
                }
                self._send(200, json.dumps({"data": data}).encode())

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode("utf-8")
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, problem, body = stub._check(self.path, headers, raw)
                route = "?"
                if body is not None:
                    route = (
                        "fusion"
                        if body["model"] == "openrouter/fusion"
                        else "judge"
                        if body.get("response_format")
                        else body["model"]
                    )
                behaviour = stub._next(route) if status == 200 else "rejected"
                record = {
                    "path": self.path,
                    "headers": headers,
                    "raw": raw,
                    "body": body,
                    "route": route,
                    "behaviour": behaviour,
                    "at": time.monotonic(),
                }
                with stub._lock:
                    stub.requests.append(record)
                if status != 200:
                    return self._error(status, problem)
                if behaviour == "402":
                    return self._error(402, "Insufficient credits")
                if behaviour == "429":
                    return self._error(429, "Rate limit exceeded", {"Retry-After": "1"})
                if behaviour == "429_long":
                    return self._error(429, "Rate limit exceeded", {"Retry-After": "120"})
                if behaviour == "502":
                    return self._error(502, "Upstream provider error")
                if behaviour == "malformed_json":
                    return self._send(200, b'{"choices": [{"message": {"content": "trunc')
                with stub._lock:
                    stub.in_flight += 1
                    stub.most_in_flight = max(stub.most_in_flight, stub.in_flight)
                try:
                    stub._open.wait(HOLD_LIMIT_S)
                    if behaviour == "slow":
                        time.sleep(stub.slow_seconds)
                    time.sleep(stub.delay_seconds)
                    answer = stub._answer(body, route, behaviour)
                    record["cost"] = answer.get("usage", {}).get("cost")
                    self._send(200, json.dumps(answer).encode())
                finally:
                    with stub._lock:
                        stub.in_flight -= 1

        return Handler
