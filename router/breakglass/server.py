"""The break-glass MCP server: one tool, `break_glass`, never marked read-only.

Thin wrapper over prepare → ledger → panel. Two resolvers run before the body: `_prepare`
(gate, classify, context, estimate; side-effect free, so it may run again on an input round)
and `_confirm` (asks a person by elicitation when the estimate needs it and the client can be
asked). The body writes every row, reserves, calls OpenRouter and settles.
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

from router.breakglass import ledger
from router.breakglass.gate import EarlierTiers
from router.breakglass.openrouter import MissingKeyError, api_key
from router.breakglass.output import BreakGlassResult, CostReport, usd
from router.breakglass.panel import RunPlan, new_budget, run_panel
from router.breakglass.prepare import Prepared, Request, prepare, session_caps
from router.breakglass.settings import ProblemType, Settings
from router.clock import utc_now_iso
from router.db import connect

STAGES = {"classify": 1, "context": 2, "estimate": 3, "panel": 4, "judge": 5}
TOTAL_STAGES = 5
# what _confirm hands the body when no elicitation took place
NOT_NEEDED, TOKEN_GIVEN, TOKEN_NEEDED = "not_needed", "token_given", "token_needed"

TOOL_DESCRIPTION = (
    "Last resort: a multi-model panel (OpenRouter) attacks a problem that defeated a local model, "
    "a frontier model and the skill/tool system. Costs 3-5x a single model call, under a cost "
    "gate. The problem must start with 'break glass:' and earlier_tiers must say, for each of "
    "the three tiers, what was used, what was tried and how it failed. Estimates above $2 need "
    "a person's confirmation (asked directly, or a one-time confirmation_token is returned)."
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
    return ctx.request_context.lifespan_context


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
        return Elicit(
            f"break-glass wants to spend about {usd(e.expected_micro)} (worst case {usd(e.worst_case_micro)}) "
            f"on a {prepared.problem_type} panel ({', '.join(prepared.panel)}; judge {prepared.judge}). "
            f"Problem: {prepared.problem[:300]}",
            Confirmation,
        )
    return TOKEN_NEEDED


def _cost(prepared: Prepared, reserved: int, actual: int | None) -> CostReport:
    e = prepared.estimate
    return CostReport(
        estimated_usd=usd(e.expected_micro),
        worst_case_usd=usd(e.worst_case_micro),
        actual_usd=usd(actual),
        estimated_micro_usd=e.expected_micro,
        worst_case_micro_usd=e.worst_case_micro,
        reserved_micro_usd=reserved,
        actual_micro_usd=actual,
        over_threshold=prepared.over_threshold,
    )


def _result(
    prepared: Prepared, invocation_id: int, status: str, message: str, cost: CostReport, **extra
) -> BreakGlassResult:
    ctx = prepared.context
    return BreakGlassResult(
        status=status,
        invocation_id=invocation_id,
        message=message,
        problem_type=prepared.problem_type,
        classification=prepared.classification,
        complexity=prepared.complexity or "",
        panel=prepared.panel,
        judge=prepared.judge or "",
        cost=cost,
        context_files=[f.path for f in ctx.files] if ctx else [],
        context_notes=list(ctx.notes) if ctx else [],
        secrets_removed=prepared.secrets_removed,
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
        problem_type=prepared.problem_type,
        classification=prepared.classification,
        complexity=prepared.complexity,
        panel=prepared.panel,
        judge=prepared.judge,
        context_tokens=prepared.context_tokens,
        estimate=e.expected_micro if e else None,
        worst_case=e.worst_case_micro if e else None,
    )

    def refuse(reason: str, status: str = "refused") -> ToolError:
        ledger.refuse(conn, session, invocation_id, reason, status)
        return ToolError(reason)

    if prepared.refusal is not None:
        raise refuse(prepared.refusal)
    use_token = None
    if prepared.needs_confirmation:
        if not isinstance(confirmation, AcceptedElicitation):
            raise refuse(
                f"a person declined the estimate of {usd(e.expected_micro)}; nothing was reserved or spent",
                "declined",
            )
        answer = confirmation.data
        if isinstance(answer, Confirmation):
            if not answer.approve:
                raise refuse(
                    f"a person did not approve the estimate of {usd(e.expected_micro)}; nothing was "
                    "reserved or spent",
                    "declined",
                )
            ledger.record_confirmation(conn, session, invocation_id, "approved by a person (elicitation)")
        elif answer == TOKEN_NEEDED:
            token = ledger.issue_token(
                conn,
                session,
                invocation_id,
                prepared.fingerprint,
                e.expected_micro,
                state.settings.cost.confirmation_token_minutes,
            )
            return _result(
                prepared,
                invocation_id,
                "needs_confirmation",
                f"the estimate {usd(e.expected_micro)} is above "
                f"${state.settings.cost.confirm_above_usd:.2f}: a person must confirm; call again "
                "with the same arguments and this confirmation_token",
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
        session_caps(state.settings),
        token=use_token,
        fingerprint=prepared.fingerprint,
        estimate=e.expected_micro,
    )
    if refusal is not None:
        raise ToolError(refusal)

    router_cfg = state.settings.openrouter
    plan = RunPlan(
        panel=prepared.panel,
        judge=prepared.judge,
        fusion=router_cfg.fusion,
        user_message=prepared.user_message,
        output_cap=state.settings.cost.output_cap_tokens,
        reserved_micro=reserved,
        estimate=e,
        key=key,
        app_url=router_cfg.app_url,
        app_title=router_cfg.app_title,
        timeout_seconds=router_cfg.timeout_seconds,
        max_retry_after=router_cfg.max_retry_after_seconds,
    )
    budget_tracker = new_budget(plan)
    progress = _Progress(ctx, router_cfg.heartbeat_seconds)
    progress.value = float(STAGES["estimate"])
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(progress.heartbeat)
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
            reason="cancelled by the client" if cancelled else f"internal error: {type(exc).__name__}",
        )
        if cancelled:
            raise
        raise ToolError(f"break-glass failed: {type(exc).__name__}: {exc}") from exc

    answer = result.answer
    ledger.settle(
        conn,
        session,
        invocation_id,
        status=result.status,
        reserved=reserved,
        actual=result.spent_micro,
        reason=result.message + ("; " + "; ".join(result.events) if result.events else ""),
        mode=result.mode,
        diagnosis=answer.diagnosis if answer else None,
    )
    extra = {}
    if answer is not None:
        extra = {
            "diagnosis": answer.diagnosis,
            "solution": answer.solution,
            "alternatives": answer.alternatives,
            "risks": answer.risks,
        }
    return _result(
        prepared,
        invocation_id,
        result.status,
        result.message,
        _cost(prepared, reserved, result.spent_micro),
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
            readOnlyHint=False,
            destructiveHint=False,
            idempotentHint=False,
            openWorldHint=True,
        ),
    )(break_glass)
    return app
