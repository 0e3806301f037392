"""What the first search of a `serve` process needs, loaded in the background once the
client's handshake is over (initialize, initialized, tools/list) rather than by that search:
numpy and the search modules, the semantic model and the tokenizer that holds the page to its
budget (process-wide, in a worker thread, so the event loop keeps answering meanwhile), then
the catalog's indexes on the loop's own connection (a search's per-connection caches,
router/catalog/search.py), the file's write-ahead log, which the first search's audit row
would otherwise start, and the SDK's validator of a tools/call request.

Loading holds the interpreter's lock most of the time, so it waits for the client's tools/list
(or first call) rather than overlap, and slow, the handshake. A search that arrives before
the warm-up ends waits for it, so nothing is ever loaded twice (the loaders are plain caches,
not locks); a warm-up that fails is logged and the first search loads what it needs itself,
saying any error as before. CONTEXT_ROUTER_WARM_UP=off leaves everything to the first search
(how bench/warm_start.py measures the difference).
"""

import logging
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import anyio
import anyio.abc
import anyio.to_thread
import apsw

if TYPE_CHECKING:
    from router.facade.database import FacadeDatabase

logger = logging.getLogger(__name__)

SETTING = "CONTEXT_ROUTER_WARM_UP"
OFF = "off"
# Any words: the search only has to run once, on the catalog the router serves.
WARM_QUERY = "read a file"

# The warm-up starts once a client has asked for the tools or called one, or after this long
# without (an HTTP router waits for clients; a client that never lists tools is not waited for).
START_BY_S = 1.0

# Catalog servers that cannot be called here, and why (router/backends/availability.py).
Unavailable = Callable[[apsw.Connection], dict[str, str]]


def enabled(environ: Mapping[str, str] = os.environ) -> bool:
    return environ.get(SETTING, "").strip().lower() != OFF


def load_shared() -> None:
    """Process-wide: the modules, the model (one query encoded) and the tokenizer."""
    # imported here, like search imports them: loading them is the point
    from router.catalog import lexical_index, semantic_index  # noqa: F401
    from router.catalog.embeddings import catalog_model
    from router.tokens import count_tokens

    count_tokens(WARM_QUERY)
    model = catalog_model()
    if model is not None:
        model.encode([WARM_QUERY])


def warm_catalog(conn: apsw.Connection, unavailable: Unavailable) -> None:
    """On `conn`: what cannot be called here (its answer is kept a while), then one page,
    which builds what search keeps per connection and catalog version."""
    from router.backends.servers import SearchSettings
    from router.catalog.search import DEFAULT_LIMIT
    from router.facade.search_page import page_for_query

    found = unavailable(conn)
    page_for_query(conn, WARM_QUERY, limit=DEFAULT_LIMIT, unavailable=found, settings=SearchSettings())


def build_call_request_model() -> None:
    """The SDK's tools/call request model, whose validator pydantic builds on the first call
    (the SDK defers it) unless built now. On the event loop: the SDK validates requests there."""
    import mcp_types

    mcp_types.CallToolRequest.model_rebuild()


def open_write_ahead_log(conn: apsw.Connection) -> None:
    """One real write that changes nothing (serve's start-up check, router/db.py): the first
    write to a file no other process has open creates its write-ahead log, 10-20 ms that
    would otherwise fall on the first search's audit row."""
    from router.db import check_writable

    check_writable(conn)


class Warmup:
    """One process's warm-up: started once by the lifespan, begun once the client's handshake
    is over (client_arrived), awaited by each search."""

    def __init__(self) -> None:
        self._started = False
        self._client_arrived = anyio.Event()
        self._done = anyio.Event()

    def client_arrived(self) -> None:
        """The client asked for the tools (the handshake's last step) or called one: loading
        may start without slowing its handshake."""
        self._client_arrived.set()

    def start(self, task_group: anyio.abc.TaskGroup, db: "FacadeDatabase", unavailable: Unavailable) -> None:
        """`unavailable`: what a search asks of the router's own workspace (a FacadeContext's)."""
        self._started = True
        task_group.start_soon(self._run, db, unavailable)

    async def _run(self, db: "FacadeDatabase", unavailable: Unavailable) -> None:
        try:
            with anyio.move_on_after(START_BY_S):
                await self._client_arrived.wait()
            if enabled():
                build_call_request_model()
                await anyio.to_thread.run_sync(load_shared, abandon_on_cancel=True)
                await db.read(warm_catalog, unavailable)
                db.write_soon(open_write_ahead_log)
        except Exception as exc:  # the first search loads (and reports) it instead
            logger.warning("warming up search failed; the first search loads what it needs: %s", exc)
        finally:
            self._done.set()

    async def ready(self) -> None:
        """Once the warm-up has ended (at once when none was started)."""
        if self._started:
            await self._done.wait()
