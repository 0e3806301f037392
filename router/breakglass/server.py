"""The break-glass MCP server: one tool, `break_glass`, never marked read-only.

Thin wrapper over prepare → ledger → panel. Two resolvers run before the body: `_prepare`
(settles calls whose process died, then gate, classify, context, estimate; it may run again on
an input round, and both halves are idempotent) and `_confirm` (asks a person when the worst
case needs it: as an input request answered within the call for a 2026-07-28 client, by
elicitation for an older one that has it; else the body returns a one-time token). The body
writes every row, reserves, calls OpenRouter while renewing its lease, and settles.
"""

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from router.breakglass import leases, ledger, openrouter
from router.breakglass.gate import EarlierTiers
from router.breakglass.openrouter import MissingKeyError, api_key
from router.breakglass.output import BreakGlassResult, CostReport, Status
from router.breakglass.panel import RunPlan, new_budget, run_panel
from router.breakglass.prepare import Prepared, Request, caps_of, prepare
from router.breakglass.settings import ProblemType, Settings, usd
from router.clock import utc_now_iso
from router.db import connect
from router.redaction.redactor import redacted

STAGES = {"classify": 1, "context": 2, "estimate": 3, "panel": 4, "judge": 5}
TOTAL_STAGES = 5
# what _confirm hands the body when no elicitation took place
NOT_NEEDED, TOKEN_GIVEN, TOKEN_NEEDED = "not_needed", "token_given", "token_needed"

TOOL_DESCRIPTION = (
    "Last resort: a multi-model panel (OpenRouter) attacks a problem that defeated a local model, "
    "a frontier model and the skill/tool system. Costs 3-5x a single model call, under a cost "
    "gate. The problem must start with 'break glass:' and earlier_tiers must say, for each of "
    "the three tiers, what was used, what was tried and how it failed. A worst case above $2 "
    "needs a person's confirmation (asked directly, or a one-time confirmation_token is returned)."
)


@dataclass
class State:
    conn: Any
    settings: Settings
    workspace: Path
    session_id: str


class Confirmation(BaseModel):
    approve: bool = Field(description="spend this much on the break-glass panel")


def new_session_id() -> str:
    return f"bg-{utc_now_iso()}-{secrets.token_hex(4)}"


def _state(ctx: Context) -> State:
    state = ctx.request_context.lifespan_context
    assert isinstance(state, State), "the lifespan yields the server's State"
    return state


def _error_text(exc: BaseException) -> str:
    """An exception in words; a task group's ExceptionGroup by its first real cause."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return redacted(f"{type(exc).__name__}: {exc}")


async def _resolve_dead_calls(state: State) -> None:
    """Settle calls whose process died; their generations' real costs first, where the key
    allows a lookup (without one they count at their worst case)."""
    conn = state.conn
    pending = leases.generations_to_look_up(conn)
    looked_up: dict[str, int] = {}
    if pending:
        try:
            looked_up = await openrouter.generation_costs(pending, api_key())
        except MissingKeyError:
            pass
    ledger.resolve_dead(conn, looked_up)


class _LedgerRecorder:
    """Each request written down before it is sent, and its answer."""

    def __init__(self, conn, invocation_id: int):
        self.conn, self.invocation_id = conn, invocation_id

    def sent(self, what: str, worst: int) -> int:
        return ledger.request_sent(self.conn, self.invocation_id, what, worst)

    def answered(self, request_id: int, generation_id: str | None, cost: int | None) -> None:
        ledger.request_answered(self.conn, request_id, generation_id, cost)


async def _renew_lease(state: State, invocation_id: int) -> None:
    seconds = state.settings.cost.lease_seconds
    while True:
        await anyio.sleep(seconds / 3)
        ledger.renew_lease(state.conn, invocation_id, seconds)


class _Progress:
    """Monotonic progress over the five stages, with a heartbeat while the panel thinks."""

    def __init__(self, ctx: Context, heartbeat_seconds: float = 10.0):
        self.ctx, self.value, self.heartbeat_seconds = ctx, 0.0, heartbeat_seconds

    async def stage(self, name: str, message: str = "") -> None:
        self.value = max(self.value + 0.001, float(STAGES[name]))
        await self.ctx.report_progress(self.value, TOTAL_STAGES, f"{name}: {message}".rstrip(": "))

    async def heartbeat(self) -> None:
        while True:
            await anyio.sleep(self.heartbeat_seconds)
            self.value += 0.01
            await self.ctx.report_progress(self.value, TOTAL_STAGES, "waiting for the panel")


async def _prepare(
    problem: str,
    context_files: list[str] | None,
    problem_type: ProblemType | None,
    budget: float | None,
    earlier_tiers: EarlierTiers | None,
    ctx: Context,
) -> Prepared:
    state = _state(ctx)
    progress = _Progress(ctx)
    req = Request(problem, list(context_files or []), problem_type, budget, earlier_tiers)

    def stage(name: str) -> None:
        anyio.from_thread.run(progress.stage, name)

    await _resolve_dead_calls(state)
    return await anyio.to_thread.run_sync(
        lambda: prepare(state.conn, state.settings, state.workspace, state.session_id, req, stage)
    )


async def _confirm(
    prepared: Annotated[Prepared, Resolve(_prepare)], confirmation_token: str | None, ctx: Context
) -> Elicit[Confirmation] | str:
    if prepared.refusal is not None or not prepared.needs_confirmation:
        return NOT_NEEDED
    if confirmation_token:
        return TOKEN_GIVEN
    capabilities = ctx.client_capabilities
    if capabilities is not None and capabilities.elicitation is not None:
        e = prepared.estimate
        assert e is not None, "a call needing confirmation has an estimate"
        return Elicit(
            f"break-glass may spend up to {usd(e.worst_case_micro)} (worst case; expected about "
            f"{usd(e.expected_micro)}) on a {prepared.problem_type} panel ({', '.join(prepared.panel)}; "
            f"judge {prepared.judge}). Problem: {prepared.problem[:300]}",
            Confirmation,
        )
    return TOKEN_NEEDED


def _cost(prepared: Prepared, reserved: int, actual: int | None, over_worst_case: bool = False) -> CostReport:
    e = prepared.estimate
    assert e is not None, "a call that reached the cost gate has an estimate"
    return CostReport(
        estimated_usd=usd(e.expected_micro),
        worst_case_usd=usd(e.worst_case_micro),
        actual_usd=None if actual is None else usd(actual),
        estimated_micro_usd=e.expected_micro,
        worst_case_micro_usd=e.worst_case_micro,
        reserved_micro_usd=reserved,
        actual_micro_usd=actual,
        over_threshold=prepared.over_threshold,
        max_tokens=e.output_cap,
        over_worst_case=over_worst_case,
    )


def _result(
    prepared: Prepared, invocation_id: int, status: Status, message: str, cost: CostReport, **extra
) -> BreakGlassResult:
    ctx = prepared.context
    return BreakGlassResult(
        status=status,
        invocation_id=invocation_id,
        message=message,
        problem_type=prepared.problem_type or "",
        classification=prepared.classification,
        complexity=prepared.complexity or "",
        panel=prepared.panel,
        judge=prepared.judge or "",
        cost=cost,
        context_files=[f.path for f in ctx.files] if ctx else [],
        context_notes=list(ctx.notes) if ctx else [],
        secrets_removed=prepared.secrets_removed,
        warnings=prepared.warnings,
        **extra,
    )


async def break_glass(
    problem: Annotated[str, Field(description="must start with 'break glass:' followed by the problem")],
    prepared: Annotated[Prepared, Resolve(_prepare)],
    confirmation: Annotated[ElicitationResult[Confirmation], Resolve(_confirm)],
    ctx: Context,
    earlier_tiers: EarlierTiers | None = None,
    context_files: Annotated[list[str] | None, Field(description="workspace files to include")] = None,
    problem_type: ProblemType | None = None,
    budget: Annotated[float | None, Field(description="maximum cost in USD (default 1.00)")] = None,
    confirmation_token: Annotated[
        str | None, Field(description="the one-time token a needs_confirmation answer gave")
    ] = None,
) -> BreakGlassResult:
    state = _state(ctx)
    conn, session = state.conn, state.session_id
    e = prepared.estimate
    invocation_id = ledger.open_invocation(
        conn,
        session,
        problem=prepared.problem,
        problem_type=prepared.problem_type or "",
        classification=prepared.classification,
        complexity=prepared.complexity,
        panel=prepared.panel,
        judge=prepared.judge,
        context_tokens=prepared.context_tokens,
        estimate=e.expected_micro if e else None,
        worst_case=e.worst_case_micro if e else None,
        output_cap=e.output_cap if e else None,
        lease_seconds=state.settings.cost.lease_seconds,
    )

    def refuse(reason: str, status: str = "refused") -> ToolError:
        ledger.refuse(conn, session, invocation_id, reason, status)
        return ToolError(reason)

    if prepared.refusal is not None or e is None:
        raise refuse(prepared.refusal or "no estimate")
    amounts = f"the worst case {usd(e.worst_case_micro)} (expected {usd(e.expected_micro)})"
    use_token = None
    if prepared.needs_confirmation:
        if not isinstance(confirmation, AcceptedElicitation):
            raise refuse(f"a person declined {amounts}; nothing was reserved or spent", "declined")
        answer = confirmation.data
        if isinstance(answer, Confirmation):
            if not answer.approve:
                raise refuse(f"a person did not approve {amounts}; nothing was reserved or spent", "declined")
            ledger.record_confirmation(conn, session, invocation_id, "approved by a person (elicitation)")
        elif answer == TOKEN_NEEDED:
            token = ledger.issue_token(
                conn,
                session,
                invocation_id,
                prepared.fingerprint,
                e.expected_micro,
                e.worst_case_micro,
                state.settings.cost.confirmation_token_minutes,
            )
            return _result(
                prepared,
                invocation_id,
                "needs_confirmation",
                f"{amounts} is above ${state.settings.cost.confirm_above_usd:.2f}: a person must "
                "confirm; call again with the same arguments and this confirmation_token",
                _cost(prepared, 0, None),
                confirmation_token=token,
            )
        elif answer == TOKEN_GIVEN:
            use_token = confirmation_token
    try:
        key = api_key()
    except MissingKeyError as exc:
        raise refuse(str(exc)) from None

    reserved = e.worst_case_micro
    refusal = ledger.reserve(
        conn,
        session,
        invocation_id,
        reserved,
        caps_of(state.settings),
        token=use_token,
        fingerprint=prepared.fingerprint,
    )
    if refusal is not None:
        raise ToolError(refusal + "; nothing was sent")

    router_cfg = state.settings.openrouter
    plan = RunPlan(
        panel=prepared.panel,
        judge=prepared.judge or "",
        fusion=router_cfg.fusion,
        user_message=prepared.user_message,
        output_cap=e.output_cap,
        reserved_micro=reserved,
        estimate=e,
        key=key,
        app_url=router_cfg.app_url,
        app_title=router_cfg.app_title,
        timeout_seconds=router_cfg.timeout_seconds,
        max_retry_after=router_cfg.max_retry_after_seconds,
        max_prices=prepared.max_prices,
        recorder=_LedgerRecorder(conn, invocation_id),
    )
    budget_tracker = new_budget(plan)
    progress = _Progress(ctx, router_cfg.heartbeat_seconds)
    progress.value = float(STAGES["estimate"])
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(progress.heartbeat)
            group.start_soon(_renew_lease, state, invocation_id)
            result = await run_panel(plan, progress.stage, budget_tracker)
            group.cancel_scope.cancel()
    except BaseException as exc:
        # cancelled by the client, or a bug: settle what is known to be spent, release the rest
        cancelled = isinstance(exc, anyio.get_cancelled_exc_class())
        ledger.settle(
            conn,
            session,
            invocation_id,
            status="cancelled" if cancelled else "failed",
            reserved=reserved,
            actual=budget_tracker.spent,
            reason="cancelled by the client" if cancelled else f"internal error: {_error_text(exc)}",
            overrun=budget_tracker.overrun,
            basis=budget_tracker.basis(),
        )
        if cancelled:
            raise
        raise ToolError(f"break-glass failed: {_error_text(exc)}") from exc

    panel_answer = result.answer
    over = result.spent_micro > reserved or budget_tracker.overrun is not None
    message = result.message
    if over:
        message += (
            f"; charged {usd(result.spent_micro)} against this call's {usd(prepared.budget_micro)} budget "
            f"and the {usd(reserved)} reserved: the provider billed above the worst case, so session "
            f"{session} is stopped and its next break-glass call is refused"
        )
    ledger.settle(
        conn,
        session,
        invocation_id,
        status=result.status,
        reserved=reserved,
        actual=result.spent_micro,
        reason=message + ("; " + "; ".join(result.events) if result.events else ""),
        mode=result.mode,
        diagnosis=panel_answer.diagnosis if panel_answer else None,
        overrun=budget_tracker.overrun,
        basis=budget_tracker.basis(),
    )
    extra: dict[str, Any] = {}
    if panel_answer is not None:
        extra = {
            "diagnosis": panel_answer.diagnosis,
            "solution": panel_answer.solution,
            "alternatives": panel_answer.alternatives,
            "risks": panel_answer.risks,
        }
    return _result(
        prepared,
        invocation_id,
        result.status,
        message,
        _cost(prepared, reserved, result.spent_micro, over),
        mode=result.mode,
        **extra,
    )


def build_server(
    db_path: Path, settings: Settings, workspace: Path, session_id: str | None = None
) -> MCPServer:
    @asynccontextmanager
    async def lifespan(_app: MCPServer) -> AsyncIterator[State]:
        conn = ledger.prepare_connection(connect(db_path))
        try:
            yield State(conn, settings, workspace, session_id or new_session_id())
        finally:
            conn.close()

    app = MCPServer("context-router-break-glass", lifespan=lifespan)
    app.tool(
        name="break_glass",
        description=TOOL_DESCRIPTION,
        # never read-only: clients skip approval for read-only tools, and this one spends money
        annotations=ToolAnnotations(
            title="Break glass: paid multi-model panel",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=True,
        ),
    )(break_glass)
    return app
