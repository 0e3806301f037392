"""What the first search of a `serve` process needs, loaded once it serves rather than by that
search: numpy and the search modules, the semantic model, the tokenizer that holds the page
to its budget (process-wide, in a worker thread, so the event loop keeps answering the
handshake meanwhile), then the catalog's indexes on the loop's own connection (a search's
per-connection caches, router/catalog/search.py).

A search that arrives before the warm-up ends waits for it, so nothing is ever loaded twice
(the loaders are plain caches, not locks); a warm-up that fails is logged and the first
search loads what it needs itself, saying any error as before. CONTEXT_ROUTER_WARM_UP=off
leaves everything to the first search (how bench/warm_start.py measures the difference).
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


class Warmup:
    """One process's warm-up: started once by the lifespan, awaited by each search."""

    def __init__(self) -> None:
        self._started = False
        self._done = anyio.Event()

    def start(self, task_group: anyio.abc.TaskGroup, db: "FacadeDatabase", unavailable: Unavailable) -> None:
        """`unavailable`: what a search asks of the router's own workspace (a FacadeContext's)."""
        self._started = True
        task_group.start_soon(self._run, db, unavailable)

    async def _run(self, db: "FacadeDatabase", unavailable: Unavailable) -> None:
        try:
            if enabled():
                await anyio.to_thread.run_sync(load_shared, abandon_on_cancel=True)
                await db.read(warm_catalog, unavailable)
        except Exception as exc:  # the first search loads (and reports) it instead
            logger.warning("warming up search failed; the first search loads what it needs: %s", exc)
        finally:
            self._done.set()

    async def ready(self) -> None:
        """Once the warm-up has ended (at once when none was started)."""
        if self._started:
            await self._done.wait()
