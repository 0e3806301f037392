"""The messages sent to the panel and to the judge, built from the assembled (redacted)
context. The system prompt is the original design's, with the project's own AGENTS.md in
place of constraints written into code."""

import json

from router.breakglass.context import AssembledContext
from router.breakglass.gate import EarlierTiers

SYSTEM_PROMPT = """You are a specialist assembled to attack one novel problem that has resisted the
usual approaches: a local model, a frontier model and the project's skills and tools all failed.

You have: the relevant files, the project's operating constraints (AGENTS.md), the problem
statement, the earlier attempts and how they failed, and earlier break-glass calls on similar
problems.

Your task:
- Diagnose the root cause.
- Propose a concrete solution; if it needs changes, give exact file paths and code.
- If the problem cannot be decided with the information given, say why and what additional
  information or tools would be needed.
- Respect every constraint in AGENTS.md."""

ANSWER_INSTRUCTIONS = """Answer with JSON only, matching the response schema: diagnosis; solution
{approach, confidence 0..1, files_to_change, code_snippets [{file, code}]}; alternatives; risks."""

JUDGE_INSTRUCTIONS = (
    """You are the judge of a panel. Below are the problem and each panelist's
analysis. Identify the consensus, flag contradictions, keep unique insights, name blind spots,
then write the single best answer. """
    + ANSWER_INSTRUCTIONS
)


def user_message(
    statement: str, problem_type: str, tiers: EarlierTiers, ctx: AssembledContext, redact
) -> str:
    parts = [f"# Problem ({problem_type})\n{statement}", "# Earlier attempts"]
    for key in ("local_model", "frontier_model", "skill_system"):
        attempt = getattr(tiers, key)
        parts.append(
            f"- {key}: used {redact(attempt.used)}; tried: {redact(attempt.tried)}; "
            f"failed: {redact(attempt.failure)}"
        )
    if ctx.constraints:
        parts.append(f"# Constraints (AGENTS.md)\n{ctx.constraints}")
    for f in ctx.files:
        note = " (truncated)" if f.truncated else ""
        parts.append(f"# File {f.path}{note}\n```\n{f.text}\n```")
    if ctx.build_log:
        parts.append(f"# Build log (lake build)\n```\n{ctx.build_log}\n```")
    if ctx.similar:
        lines = [
            f"- #{s['id']} [{s['problem_type']}, {s['status']}] {s['problem'][:400]}"
            + (f" → {s['diagnosis'][:400]}" if s["diagnosis"] else "")
            for s in ctx.similar
        ]
        parts.append("# Earlier break-glass calls on similar problems\n" + "\n".join(lines))
    return "\n\n".join(parts)


def panel_messages(user: str) -> list[dict]:
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": user + "\n\n" + ANSWER_INSTRUCTIONS},
    ]


def judge_messages(user: str, analyses: dict[str, str]) -> list[dict]:
    panel_text = "\n\n".join(f"## Panelist {model}\n{text}" for model, text in analyses.items())
    return [
        {"role": "system", "content": SYSTEM_PROMPT + "\n\n" + JUDGE_INSTRUCTIONS},
        {"role": "user", "content": user + "\n\n# Panel analyses\n" + panel_text},
    ]


def answer_response_format(schema: dict) -> dict:
    return {
        "type": "json_schema",
        "json_schema": {"name": "break_glass_answer", "strict": True, "schema": schema},
    }


def compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
