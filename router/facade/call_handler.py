"""mcp_call_tool: look the tool up, check that it can be called here, by this role, with these
arguments, past its breakers and quarantine; start its backend if it sleeps; forward; audit.

Every refusal is a ToolCallError whose message a model can act on and whose outcome the audit
row records; the order of the checks is the order a model would want to hear about them
(not callable in this deployment before a wrong argument).
"""

import json
import time
from functools import lru_cache
from typing import Any

import apsw
import mcp_types as types
from jsonschema.protocols import Validator

from router.agents.roles import may_call
from router.catalog import quarantine, schema_drafts
from router.clock import utc_now_iso
from router.db import PerConnection, catalog_version, query_dicts
from router.errors import echo
from router.facade import audit, breaker
from router.facade.backend_errors import BackendError, BackendExitedError
from router.facade.database import DatabaseBusyError, DatabaseFullError, DatabaseUnusableError
from router.facade.definitions import (
    CALL_TOOL,
    INSPECT_SCHEMA,
    SEARCH_TOOLS,
    CallToolArgs,
)
from router.facade.handlers import (
    MAX_ARGUMENT_ERRORS,
    FacadeContext,
    ToolCallError,
    elapsed_ms,
    parse_arguments,
)

# Call targets kept per connection before the cache starts over (a model calls a few tools).
MAX_CACHED_TARGETS = 1024

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
    reason = ctx.unavailable(conn).get(server)
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
    backend = ctx.pool.get(server, ctx.workspace)
    if backend is None or backend.running:
        return
    await ctx.pool.session(server, ctx.workspace)
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


async def _forward(
    ctx: FacadeContext, row_id: int, tool: dict[str, Any], arguments: dict[str, Any]
) -> types.CallToolResult:
    """Start the backend if it sleeps, forward, and count the outcome on the breakers. A call
    the backend received and then exited cleanly (status 0) without answering is sent once
    more, to a new process, when the tool only reads (the row's deadline moves for it); a
    mutating one is not: it may have taken effect."""
    name, server = tool["name"], tool["server"]
    retried = False
    while True:
        try:
            await _start_and_recheck(ctx, name, server)
            result = await ctx.pool.call(server, tool["backend_name"], arguments, ctx.workspace)
        except BackendExitedError as exc:
            if not tool["mutating"] and not retried:
                retried = True
                ctx.db.write_soon(audit.extend_deadline, row_id, within_s=ctx.pool.longest_call_s)
                continue
            raise ToolCallError(f"{exc}{_NOT_RESENT if tool['mutating'] else _RESENT}", exc.outcome) from None
        except BackendError as exc:
            if exc.counted_by_call:
                ctx.db.write_soon(_record_outcome, ctx, name, server, exc)
            raise ToolCallError(str(exc), exc.outcome) from None
        ctx.db.write_soon(_record_outcome, ctx, name, server, None)
        return result


_NOT_RESENT = (
    "; it changes state, so it was not sent again: it may or may not have taken effect, "
    "check before repeating it"
)
_RESENT = "; it was sent once more, to a new process, which also exited without answering it"


async def call_tool(ctx: FacadeContext, args: Any) -> types.CallToolResult:
    """Validate, check role and breakers, forward, and return the backend's result unchanged.

    The 'started' audit row is written before anything else, waiting (off the event loop) at
    most database.CALL_AUDIT_WAIT_S for another process's write lock: a call is never
    forwarded unaudited ("database busy: retry" instead)."""
    started, started_at = time.perf_counter(), utc_now_iso()
    target = args.get("toolName") if isinstance(args, dict) else None
    who = {
        "session_id": ctx.session_id,
        "role": ctx.role.name,
        "meta_tool": CALL_TOOL,
        "target": target if isinstance(target, str) else None,
        "arguments": args,
    }
    try:
        # the tool (so its server) is not known yet: allow as long as the slowest server
        row_id = await ctx.db.write(audit.start, **who, within_s=ctx.pool.longest_call_s)
    except (DatabaseBusyError, DatabaseUnusableError) as exc:
        # refused unforwarded; its row is queued and written once the lock (or space) frees
        ctx.db.write_soon(
            audit.record,
            **who,
            outcome=_database_outcome(exc),
            latency_ms=elapsed_ms(started),
            error=str(exc),
            started_at=started_at,
            finished_at=utc_now_iso(),
        )
        raise
    outcome = audit.INTERRUPTED
    error: str | None = "cancelled before the backend answered"
    read_only_source: str | None = None
    try:
        parsed = parse_arguments(CallToolArgs, CALL_TOOL, args)
        tool = await ctx.db.read(_lookup, parsed.toolName)
        name, server = tool["name"], tool["server"]
        read_only_source = tool["read_only_source"]
        await ctx.db.read(_check_callable_here, ctx, tool)
        _check_role(ctx, name, bool(tool["mutating"]), tool["read_only_source"])
        _check_arguments(name, tool["input_schema"], tool["arg_validator"], parsed.args)
        await ctx.db.write(_admit, ctx, name, server)
        result = await _forward(ctx, row_id, tool, parsed.args)
        outcome = audit.TOOL_ERROR if result.is_error else audit.OK
        # The backend's own error text may quote the arguments: it is not stored.
        error = "the backend answered with isError: true" if result.is_error else None
        return result
    except ToolCallError as exc:
        outcome, error = exc.outcome, exc.audit_note
        raise
    except (DatabaseBusyError, DatabaseUnusableError) as exc:
        outcome, error = _database_outcome(exc), str(exc)
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
            latency_ms=elapsed_ms(started),
            error=error,
            read_only_source=read_only_source,
            finished_at=utc_now_iso(),
        )


def _database_outcome(exc: Exception) -> str:
    if isinstance(exc, DatabaseBusyError):
        return audit.DATABASE_BUSY
    return audit.DATABASE_FULL if isinstance(exc, DatabaseFullError) else audit.DATABASE_UNUSABLE
