"""GET /metrics beside /mcp on `serve --http`: the Prometheus text format of
router/metrics/collector.py, generated off the event loop (a first scrape of a long audit
reads it whole) so MCP requests never wait for a scrape."""

from collections.abc import Callable, Collection
from pathlib import Path

import anyio.to_thread
from prometheus_client import CONTENT_TYPE_PLAIN_0_0_4, CollectorRegistry, generate_latest
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from router.metrics.collector import RouterCollector

METRICS_PATH = "/metrics"
# The text format every Prometheus reads (the metric and label names here are all plain ASCII,
# so the output is the same as the newer format's).
CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4


class MetricsEndpoint:
    """ASGI middleware: answers METRICS_PATH itself, passes every other request on."""

    def __init__(self, app: ASGIApp, registry: CollectorRegistry) -> None:
        self._app = app
        self._registry = registry

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != METRICS_PATH:
            await self._app(scope, receive, send)
            return
        if scope["method"] not in ("GET", "HEAD"):
            answer: Response = PlainTextResponse("/metrics answers GET only", status_code=405)
        else:
            body = await anyio.to_thread.run_sync(generate_latest, self._registry)
            answer = Response(body, media_type=CONTENT_TYPE)
        await answer(scope, receive, send)


def with_metrics(app: ASGIApp, db_path: Path, servers: Callable[[], Collection[str]]) -> ASGIApp:
    """`app` with /metrics over the router's file; `servers()`: the configured server names."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(RouterCollector(db_path, servers))
    return MetricsEndpoint(app, registry)
