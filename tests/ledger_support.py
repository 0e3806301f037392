"""Ledger rows for tests that drive router.breakglass.ledger directly: caps that never bind,
and an invocation opened with small fixed figures."""

from router.breakglass import caps as capsmod
from router.breakglass import ledger

ROOMY = capsmod.Caps(
    session_max_invocations=100, session_max_micro=10**9, day_max_invocations=100, day_max_micro=10**9
)


def invocation(conn, session="s1", output_cap: int | None = 4000, lease_seconds: float = 30.0) -> int:
    return ledger.open_invocation(
        conn,
        session,
        problem="p",
        problem_type="code_bug",
        classification="",
        complexity="low",
        panel=["m"],
        judge="j",
        context_tokens=1,
        estimate=100,
        worst_case=1_000,
        output_cap=output_cap,
        lease_seconds=lease_seconds,
    )
