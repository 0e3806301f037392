"""The three meta-tools as plain functions: `(ctx, args) -> result`.

Each reads one view from schema.sql; the MCP layer in router/facade/server.py only wraps them.
An error a model can act on is raised as ToolCallError (its message is what the model
reads, its `outcome` what the audit row says); the server turns it into an MCP tool error.
"""

import functools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import apsw
import mcp_types as types
from jsonschema.protocols import Validator
from pydantic import BaseModel, ValidationError

from router.agents.roles import Role, may_call
from router.availability import Availability
from router.catalog import quarantine, schema_drafts
from router.catalog.search import search
from router.catalog.tool_schema import inspect_tool
from router.clock import unix_now
from router.db import PerConnection, catalog_size, catalog_version, query_dicts
from router.errors import QueryError, RouterError, UnknownToolError, echo
from router.facade import audit, breaker
from router.facade.backend_errors import BackendError
from router.facade.backends import BackendPool
from router.facade.database import DatabaseBusyError, FacadeDatabase
from router.facade.definitions import (
    CALL_TOOL,
    INSPECT_SCHEMA,
    SEARCH_TOOLS,
    CallToolArgs,
    InspectSchemaArgs,
    SearchToolsArgs,
)
from router.validation import all_field_errors

# Validation errors listed back to the model; more is noise.
MAX_ARGUMENT_ERRORS = 5
# Call targets kept per connection before the cache starts over (a model calls a few tools).
MAX_CACHED_TARGETS = 1024


class ToolCallError(RouterError):
    """A meta-tool call that failed in a way the model can act on."""

    def __init__(self, message: str, outcome: str, audit_note: str | None = None) -> None:
        super().__init__(message)
        self.outcome = outcome
        # what the audit row stores: the message, unless it may quote argument values
        self.audit_note = audit_note or message


@dataclass
class FacadeContext:
    """What every meta-tool call needs: opened once per router process (or HTTP session)."""

    db: FacadeDatabase
    role: Role
    session_id: str
    pool: BackendPool
    breaker_policy: breaker.BreakerPolicy = field(default_factory=breaker.BreakerPolicy)
    # unix seconds; tests move it instead of sleeping through the breaker's open window
    now: Callable[[], float] = unix_now
    # start a sleeping backend when search returns its tools, so the call skips the cold start
    wake_on_search: bool = True
    # which servers cannot be called here (not installed, switched off, ...): one per process
    availability: Availability = field(default_factory=Availability)


def _parse(model: type[BaseModel], meta_tool: str, args: Any) -> Any:
    try:
        return model.model_validate(args if args is not None else {})
    except ValidationError as exc:
        problems = all_field_errors(exc, whole="(arguments)", limit=MAX_ARGUMENT_ERRORS)
        raise ToolCallError(f"bad arguments to {meta_tool}: {problems}", audit.INVALID_ARGUMENTS) from None


def _elapsed_ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


# --- mcp_search_tools ---------------------------------------------------------------------


@dataclass
class _CatalogCallRecord:
    """What a catalog-only call learns while it runs and its audit row needs."""

    target: str | None = None


Answer = Callable[[apsw.Connection, FacadeContext, Any, _CatalogCallRecord], dict[str, Any]]


async def _audited_catalog_call(
    ctx: FacadeContext, meta_tool: str, args: Any, answer: Answer
) -> dict[str, Any]:
    """One finished audit row per search or inspect, whatever the outcome: these answer from
    the catalog alone, so there is nothing to interrupt and no 'started' row is needed, and
    the row is queued rather than waited for when another process holds the write lock."""
    started = time.perf_counter()
    record = _CatalogCallRecord()
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
            latency_ms=_elapsed_ms(started),
            error=error,
        )


async def search_tools(ctx: FacadeContext, args: Any) -> dict[str, Any]:
    result = await _audited_catalog_call(ctx, SEARCH_TOOLS, args, _search_answer)
    for server in result.pop(_WAKE_KEY, []):
        ctx.pool.wake_in_background(server, on_failure=functools.partial(record_process_failure, ctx, server))
    return result


_WAKE_KEY = "_wake"


def _search_answer(
    conn: apsw.Connection, ctx: FacadeContext, args: Any, _record: _CatalogCallRecord
) -> dict[str, Any]:
    parsed = _parse(SearchToolsArgs, SEARCH_TOOLS, args)
    try:
        hits = _run_search(conn, ctx, parsed)
    except QueryError as exc:
        raise ToolCallError(str(exc), audit.INVALID_ARGUMENTS) from None
    held = quarantine.quarantined_tools(conn)
    tools = []
    for hit in hits:
        entry: dict[str, Any] = {"name": hit.name, "profile": hit.profile, "summary": hit.summary}
        reason = quarantine.reason(held[hit.name]) if hit.name in held else hit.unavailable_reason
        if not hit.available or reason is not None:
            entry["available"] = False
        if reason is not None:
            entry["unavailable_reason"] = reason
        tools.append(entry)
    result: dict[str, Any] = {"tools": tools}
    if not hits and catalog_size(conn) == 0:
        result["warning"] = EMPTY_CATALOG_WARNING  # never a silent empty list
    callable_hits = [entry["name"] for entry in tools if entry.get("available", True)]
    if ctx.wake_on_search and callable_hits:
        result[_WAKE_KEY] = _servers_to_wake(conn, callable_hits)
    return result


EMPTY_CATALOG_WARNING = (
    "the router's catalog is empty: there are no tools to search. Tell the user to build it "
    "(context-router init, or make catalog in a checkout); the next search sees it without a restart."
)


def _run_search(conn: apsw.Connection, ctx: FacadeContext, parsed: SearchToolsArgs) -> list[Any]:
    """Hits the role may call; a tool whose breaker is open comes back with available=False."""
    return search(
        conn,
        parsed.query,
        profile=parsed.profile,
        limit=parsed.limit,
        may_call_mutating=ctx.role.may_call_mutating_tools,
        now=ctx.now(),
        breaker_open_s=ctx.breaker_policy.open_seconds,
        unavailable=ctx.availability.unavailable(conn, ctx.pool.config),
    )


# A server whose process failed last time (a failed start, a crash, a hang) is not woken by
# a search: only a call, admitted by its breaker, starts it again.
SERVERS_OF_TOOLS = """
SELECT DISTINCT c.server
FROM v_callable c
LEFT JOIN backend_breaker b ON b.server = c.server
WHERE c.name IN (SELECT value FROM json_each(:names)) AND coalesce(b.consecutive_failures, 0) = 0
"""


def _servers_to_wake(conn: apsw.Connection, names: list[str]) -> list[str]:
    """The best hit's backend only: waking every hit's server would start processes a
    model never calls."""
    rows = conn.execute(SERVERS_OF_TOOLS, {"names": json.dumps(names[:1])}).fetchall()
    return [str(server) for (server,) in rows]


# --- mcp_inspect_schema -------------------------------------------------------------------


async def inspect_schema(ctx: FacadeContext, args: Any) -> dict[str, Any]:
    return await _audited_catalog_call(ctx, INSPECT_SCHEMA, args, _inspect_answer)


def _inspect_answer(
    conn: apsw.Connection, _ctx: FacadeContext, args: Any, record: _CatalogCallRecord
) -> dict[str, Any]:
    parsed = _parse(InspectSchemaArgs, INSPECT_SCHEMA, args)
    record.target = parsed.toolName
    try:
        return inspect_tool(conn, parsed.toolName)
    except UnknownToolError as exc:
        raise ToolCallError(str(exc), audit.UNKNOWN_TOOL) from None


# --- mcp_call_tool ------------------------------------------------------------------------

CALL_TARGET = """
SELECT name, server, backend_name, input_schema, mutating, read_only_source, arg_validator,
       quarantined_fields
FROM v_callable WHERE name = :name
"""


@lru_cache(maxsize=1024)
def _validator(input_schema_json: str, draft: str) -> Validator | None:
    # Keyed by the schema text itself, so a reloaded catalog can never use a stale validator;
    # checked under the draft the schema is written in (router/catalog/schema_drafts.py)
    return schema_drafts.validator(draft, json.loads(input_schema_json))


def _check_arguments(tool: str, input_schema_json: str, draft: str, arguments: dict[str, Any]) -> None:
    validator = _validator(input_schema_json, draft)
    if validator is None:  # no draft accepts its schema: the backend checks its own arguments
        return
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
    if not errors:
        return
    listed = "; ".join(
        f"at {'/'.join(str(p) for p in e.path) or '(top level)'}: {e.message}"
        for e in errors[:MAX_ARGUMENT_ERRORS]
    )
    more = f" (and {len(errors) - MAX_ARGUMENT_ERRORS} more)" if len(errors) > MAX_ARGUMENT_ERRORS else ""
    # jsonschema's messages quote the offending values; the audit keeps only where and which rule
    where = ", ".join(f"{'/'.join(str(p) for p in e.path) or '(top level)'} ({e.validator})" for e in errors)
    raise ToolCallError(
        f"args for {tool!r} do not match its inputSchema: {listed}{more}. "
        f"Call {INSPECT_SCHEMA} with toolName {tool!r} to see the schema.",
        audit.INVALID_ARGUMENTS,
        audit_note=f"args for {tool!r} do not match its inputSchema at: {where}",
    )


class _CallTargets:
    """v_callable rows by tool name, per connection, kept until the catalog changes: a tool's
    row is read once, not on every call to it (the breaker is read fresh by _admit)."""

    def __init__(self, conn: apsw.Connection) -> None:
        self._conn = conn
        self._version: int | None = None
        self._rows: dict[str, dict[str, Any] | None] = {}

    def get(self, name: str) -> dict[str, Any] | None:
        version = catalog_version(self._conn)
        if version != self._version:
            self._version, self._rows = version, {}
        if name not in self._rows:
            rows = query_dicts(self._conn, CALL_TARGET, {"name": name})
            if len(self._rows) >= MAX_CACHED_TARGETS:
                self._rows.clear()
            self._rows[name] = rows[0] if rows else None
        return self._rows[name]


_call_targets = PerConnection(_CallTargets)


def _lookup(conn: apsw.Connection, name: str) -> dict[str, Any]:
    row = _call_targets(conn).get(name)
    if row is None:
        raise ToolCallError(
            f"no tool named {echo(name)} in the catalog; use {SEARCH_TOOLS} to find one",
            audit.UNKNOWN_TOOL,
        )
    return row


def _check_callable_here(conn: apsw.Connection, ctx: FacadeContext, tool: dict[str, Any]) -> None:
    """A tool this deployment cannot call is refused before anything else is looked at: the
    model learns at once to look elsewhere, not to fix its arguments."""
    name, server = tool["name"], tool["server"]
    if tool["quarantined_fields"] is not None:
        raise _quarantined(name, tool["quarantined_fields"])
    reason = ctx.availability.unavailable(conn, ctx.pool.config).get(server)
    if reason is not None or ctx.pool.get(server) is None:
        reason = reason or "not set up in this router"
        raise ToolCallError(
            f"{name!r} is not available in this deployment: its server {server!r} is {reason}. "
            f"Do not retry it; use {SEARCH_TOOLS} to find another tool for the task, or tell the "
            "user what it needs.",
            audit.UNAVAILABLE,
        )


def _quarantined(name: str, changed: str) -> ToolCallError:
    return ToolCallError(
        f"{name!r} is not available: {quarantine.reason(changed)}. "
        f"Do not retry it; use {SEARCH_TOOLS} for another tool, or tell the user.",
        audit.QUARANTINED,
    )


async def _start_and_recheck(ctx: FacadeContext, name: str, server: str) -> None:
    """A sleeping backend is started first: its tools/list is checked against the catalog as
    it starts (router/facade/backend_watch.py), and a tool it now lists differently is refused
    before its first call, not after."""
    backend = ctx.pool.get(server)
    if backend is None or backend.running:
        return
    await ctx.pool.session(server)
    changed = (await ctx.db.read(quarantine.quarantined_tools)).get(name)
    if changed is not None:
        raise _quarantined(name, changed)


def _check_role(ctx: FacadeContext, name: str, mutating: bool, source: str) -> None:
    if not may_call(ctx.role, mutating):
        why = {
            "server": "its server marks it as changing state",
            "router-review": "the router's review of it found that it changes state",
        }.get(source, "nothing marks it read-only, so it is treated as changing state")
        raise ToolCallError(
            f"role {ctx.role.name!r} may not call {name!r}: {why}. Use a read-only tool, or "
            "hand this step to a role that may make changes.",
            audit.DENIED,
        )


def _admit(conn: apsw.Connection, ctx: FacadeContext, name: str, server: str) -> None:
    """The backend server's breaker (its process failing), then the tool's own."""
    now, policy = ctx.now(), ctx.breaker_policy
    admission = breaker.check(conn, server, now, policy, breaker.BACKEND_ROWS)
    if not admission.allowed:
        raise ToolCallError(
            f"{name!r} is unavailable: its backend server {server!r} failed to start, crashed or "
            f"hung {policy.failure_threshold} times in a row (circuit open for all its tools). "
            f"Retry in {admission.retry_after_s:.0f} s or use another tool.",
            audit.BREAKER_OPEN,
        )
    admission = breaker.check(conn, name, now, policy)
    if not admission.allowed:
        raise ToolCallError(
            f"{name!r} is unavailable: its backend failed "
            f"{policy.failure_threshold} times in a row (circuit open). "
            f"Retry in {admission.retry_after_s:.0f} s or use another tool.",
            audit.BREAKER_OPEN,
        )


def _record_outcome(
    conn: apsw.Connection, ctx: FacadeContext, name: str, server: str, failure: BackendError | None
) -> None:
    """The tool's breaker counts every failure; the server's only its process failing (any
    answer from the process, even a JSON-RPC error, shows the process works)."""
    now, policy = ctx.now(), ctx.breaker_policy
    error = str(failure) if failure is not None else None
    breaker.record(conn, name, failure is None, now, policy, error)
    process_failed = failure is not None and failure.process_failure
    breaker.record(conn, server, not process_failed, now, policy, error, breaker.BACKEND_ROWS)


def record_process_failure(ctx: FacadeContext, server: str, failure: BackendError) -> None:
    """A backend that failed to start in the background counts against its server."""
    ctx.db.write_soon(
        breaker.record, server, False, ctx.now(), ctx.breaker_policy, str(failure), breaker.BACKEND_ROWS
    )


async def call_tool(ctx: FacadeContext, args: Any) -> types.CallToolResult:
    """Validate, check role and breakers, forward, and return the backend's result unchanged.

    The 'started' audit row is written before anything else, waiting (off the event loop) at
    most database.CALL_AUDIT_WAIT_S for another process's write lock: a call is never
    forwarded unaudited ("database busy: retry" instead)."""
    started = time.perf_counter()
    target = args.get("toolName") if isinstance(args, dict) else None
    row_id = await ctx.db.write(
        audit.start,
        session_id=ctx.session_id,
        role=ctx.role.name,
        meta_tool=CALL_TOOL,
        target=target if isinstance(target, str) else None,
        arguments=args,
        # the tool (so its server) is not known yet: allow as long as the slowest server
        within_s=ctx.pool.longest_call_s,
    )
    outcome = audit.INTERRUPTED
    error: str | None = "cancelled before the backend answered"
    read_only_source: str | None = None
    try:
        parsed = _parse(CallToolArgs, CALL_TOOL, args)
        tool = await ctx.db.read(_lookup, parsed.toolName)
        name, server = tool["name"], tool["server"]
        read_only_source = tool["read_only_source"]
        await ctx.db.read(_check_callable_here, ctx, tool)
        _check_role(ctx, name, bool(tool["mutating"]), tool["read_only_source"])
        _check_arguments(name, tool["input_schema"], tool["arg_validator"], parsed.args)
        await ctx.db.write(_admit, ctx, name, server)
        try:
            await _start_and_recheck(ctx, name, server)
            result = await ctx.pool.call(server, tool["backend_name"], parsed.args)
        except BackendError as exc:
            ctx.db.write_soon(_record_outcome, ctx, name, server, exc)
            raise ToolCallError(str(exc), exc.outcome) from None
        ctx.db.write_soon(_record_outcome, ctx, name, server, None)
        outcome = audit.TOOL_ERROR if result.is_error else audit.OK
        # The backend's own error text may quote the arguments: it is not stored.
        error = "the backend answered with isError: true" if result.is_error else None
        return result
    except ToolCallError as exc:
        outcome, error = exc.outcome, exc.audit_note
        raise
    except DatabaseBusyError as exc:
        outcome, error = audit.DATABASE_BUSY, str(exc)
        raise
    except Exception as exc:  # a bug: recorded as such, never as a cancellation
        outcome, error = audit.INTERNAL_ERROR, f"internal error: {type(exc).__name__}"
        raise
    finally:
        # Not awaited, so a cancelled call still finishes its row ('interrupted'): no
        # cancellation can land between here and the commit (or the queueing, if busy).
        ctx.db.write_soon(
            audit.finish,
            row_id,
            outcome=outcome,
            latency_ms=_elapsed_ms(started),
            error=error,
            read_only_source=read_only_source,
        )
