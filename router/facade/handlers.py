"""The meta-tools as plain functions: `(ctx, args) -> result`; this module holds what they
share, mcp_search_tools and mcp_inspect_schema (mcp_call_tool: router/facade/call_handler.py).

Each reads one view from schema.sql; the MCP layer in router/facade/server.py only wraps them.
An error a model can act on is raised as ToolCallError (its message is what the model
reads, its `outcome` what the audit row says); the server turns it into an MCP tool error.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw
from pydantic import BaseModel, ValidationError

from router.agents.roles import Role
from router.backends.availability import Availability
from router.catalog.tool_schema import inspect_tool
from router.clock import unix_now, utc_now_iso
from router.db import catalog_size
from router.errors import QueryError, RouterError, UnknownToolError
from router.facade import audit, breaker
from router.facade.backends import BackendPool
from router.facade.database import FacadeDatabase
from router.facade.definitions import (
    INSPECT_SCHEMA,
    SEARCH_TOOLS,
    InspectSchemaArgs,
    SearchToolsArgs,
)
from router.facade.search_page import (
    compact_json,
    found_nothing,
    note_not_searched,
    page_for_query,
    page_tokens,
)
from router.redaction.redactor import redacted
from router.tokens import count_tokens
from router.validation import all_field_errors

# Validation errors listed back to the model; more is noise.
MAX_ARGUMENT_ERRORS = 5


class ToolCallError(RouterError):
    """A meta-tool call that failed in a way the model can act on.

    Its message may quote what a caller or a backend sent (a tool name, an argument, a
    backend's error): it is redacted here, the one place every such error is made, so
    neither the answer nor the audit row carries a secret (router/redaction/redactor.py)."""

    def __init__(self, message: str, outcome: str, audit_note: str | None = None) -> None:
        message = redacted(message)
        super().__init__(message)
        self.outcome = outcome
        # what the audit row stores: the message, unless it may quote argument values
        self.audit_note = redacted(audit_note) if audit_note else message


@dataclass
class FacadeContext:
    """What every meta-tool call needs: opened once per router process (or HTTP session)."""

    db: FacadeDatabase
    role: Role
    session_id: str
    pool: BackendPool
    # unix seconds; tests move it instead of sleeping through the breaker's open window
    now: Callable[[], float] = unix_now
    # start a sleeping backend when search returns its tools, so the call skips the cold start
    wake_on_search: bool = True
    # which servers cannot be called here (not installed, switched off, ...): one per process
    availability: Availability = field(default_factory=Availability)
    # the caller's workspace (router/facade/client_workspace.py); None: the router's own
    workspace: Path | None = None

    def unavailable(self, conn: apsw.Connection) -> dict[str, str]:
        """Catalog servers this caller cannot call here, and why."""
        return self.availability.unavailable(
            conn, self.pool.config, self.workspace or self.pool.placeholders.workspace
        )

    @property
    def breaker_policy(self) -> breaker.BreakerPolicy:
        """The servers config's breaker settings (it may change while the router runs)."""
        return self.pool.breaker_policy


def parse_arguments(model: type[BaseModel], meta_tool: str, args: Any) -> Any:
    try:
        return model.model_validate(args if args is not None else {})
    except ValidationError as exc:
        problems = all_field_errors(exc, whole="(arguments)", limit=MAX_ARGUMENT_ERRORS)
        raise ToolCallError(f"bad arguments to {meta_tool}: {problems}", audit.INVALID_ARGUMENTS) from None


def elapsed_ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


# --- mcp_search_tools ---------------------------------------------------------------------


@dataclass
class _CatalogCallRecord:
    """What a catalog-only call learns while it runs and its audit row needs."""

    target: str | None = None
    # servers to start in the background once the answer is given (search only)
    wake: list[str] = field(default_factory=list)
    # what the answer cost the model (its tokens as sent) and, for a search, the callable
    # tools on its page: the audit row's token accounting (v_tokens_per_session)
    result_tokens: int | None = None
    page_tools: int | None = None


Answer = Callable[[apsw.Connection, FacadeContext, Any, _CatalogCallRecord], dict[str, Any]]


async def _audited_catalog_call(
    ctx: FacadeContext, meta_tool: str, args: Any, answer: Answer, record: _CatalogCallRecord
) -> dict[str, Any]:
    """One finished audit row per search or inspect, whatever the outcome: these answer from
    the catalog alone, so there is nothing to interrupt and no 'started' row is needed, and
    the row is queued rather than waited for when another process holds the write lock."""
    started = time.perf_counter()
    outcome, error = audit.OK, None
    try:
        return await ctx.db.read(answer, ctx, args, record)
    except ToolCallError as exc:
        outcome, error = exc.outcome, exc.audit_note
        raise
    except Exception as exc:  # a bug: recorded as such
        outcome, error = audit.INTERNAL_ERROR, f"internal error: {type(exc).__name__}"
        raise
    finally:
        ctx.db.write_soon(
            audit.record,
            session_id=ctx.session_id,
            role=ctx.role.name,
            meta_tool=meta_tool,
            target=record.target,
            arguments=args,
            outcome=outcome,
            latency_ms=elapsed_ms(started),
            error=error,
            finished_at=utc_now_iso(),
            result_tokens=record.result_tokens,
            page_tools=record.page_tools,
        )


async def search_tools(ctx: FacadeContext, args: Any) -> dict[str, Any]:
    record = _CatalogCallRecord()
    result = await _audited_catalog_call(ctx, SEARCH_TOOLS, args, _search_answer, record)
    for server in record.wake:
        ctx.pool.wake_in_background(server, workspace=ctx.workspace)
    return result


def _search_answer(
    conn: apsw.Connection, ctx: FacadeContext, args: Any, record: _CatalogCallRecord
) -> dict[str, Any]:
    """The page (router/facade/search_page.py) of the hits the role may call, from the
    servers the user's [search] settings leave in; a tool whose breaker is open, or that
    cannot be called here for another reason, takes no slot among the callable ones."""
    parsed = parse_arguments(SearchToolsArgs, SEARCH_TOOLS, args)
    config = ctx.pool.config
    try:
        page = page_for_query(
            conn,
            parsed.query,
            limit=parsed.limit,
            unavailable=ctx.unavailable(conn),
            settings=config.search,
            profile=parsed.profile,
            may_call_mutating=ctx.role.may_call_mutating_tools,
            now=ctx.now(),
            breaker_open_s=ctx.breaker_policy.open_seconds,
        )
    except QueryError as exc:
        raise ToolCallError(str(exc), audit.INVALID_ARGUMENTS) from None
    if found_nothing(page) and catalog_size(conn) == 0:
        page.pop("note", None)  # not "nothing fits": there is nothing to fit
        page["warning"] = EMPTY_CATALOG_WARNING  # never a silent empty list
    if ctx.wake_on_search and page["tools"]:
        record.wake = _servers_to_wake(conn, page["tools"][0]["name"])
    record.result_tokens, record.page_tools = page_tokens(page), len(page["tools"])
    return page


EMPTY_CATALOG_WARNING = (
    "the router's catalog is empty: there are no tools to search. Tell the user to build it "
    "(context-router init, or make catalog in a checkout); the next search sees it without a restart."
)


# A server whose process failed last time (a failed start, a crash, a hang) is not woken by
# a search: only a call, admitted by its breaker, starts it again.
SERVERS_OF_TOOLS = """
SELECT DISTINCT c.server
FROM v_callable c
LEFT JOIN backend_breaker b ON b.server = c.server
WHERE c.name = :name AND coalesce(b.consecutive_failures, 0) = 0
"""


def _servers_to_wake(conn: apsw.Connection, best_hit: str) -> list[str]:
    """The best hit's backend only: waking every hit's server would start processes a
    model never calls."""
    return [str(server) for (server,) in conn.execute(SERVERS_OF_TOOLS, {"name": best_hit})]


# --- mcp_inspect_schema -------------------------------------------------------------------


async def inspect_schema(ctx: FacadeContext, args: Any) -> dict[str, Any]:
    return await _audited_catalog_call(ctx, INSPECT_SCHEMA, args, _inspect_answer, _CatalogCallRecord())


def _inspect_answer(
    conn: apsw.Connection, ctx: FacadeContext, args: Any, record: _CatalogCallRecord
) -> dict[str, Any]:
    parsed = parse_arguments(InspectSchemaArgs, INSPECT_SCHEMA, args)
    record.target = parsed.toolName
    try:
        definition = inspect_tool(conn, parsed.toolName)
    except UnknownToolError as exc:
        raise ToolCallError(str(exc), audit.UNKNOWN_TOOL) from None
    answer = note_not_searched(definition, ctx.pool.config.search, ctx.unavailable(conn))
    record.result_tokens = count_tokens(compact_json(answer))
    return answer
