"""Deterministic, explainable classification of a problem into one of the five types.

Each distinct configured keyword found in the problem scores 1 point; each context file with
one of the type's extensions scores 2. The highest score wins; ties go to the type listed
first in the config. The explanation lists the signals, so a person can see why.
"""

import re
from dataclasses import dataclass

from router.breakglass.settings import Settings

FILE_EXTENSION_POINTS = 2
# with no signal at all, the panel most used for ordinary defects
FALLBACK_TYPE = "code_bug"
WORD = re.compile(r"[a-z0-9_][a-z0-9_.\-]*")


@dataclass(frozen=True)
class Classification:
    problem_type: str
    explanation: str
    scores: dict[str, int]


def classify(settings: Settings, statement: str, files: list[str]) -> Classification:
    words = set(WORD.findall(statement.lower()))
    # keywords with a hyphen or dot are matched as words too; strip trailing punctuation
    words |= {w.rstrip(".-") for w in words}
    scores: dict[str, int] = {}
    signals: dict[str, list[str]] = {}
    for name, spec in settings.types.items():
        hits = [k for k in spec.keywords if k.lower() in words]
        file_hits = [f for f in files if any(f.lower().endswith(ext) for ext in spec.extensions)]
        scores[name] = len(hits) + FILE_EXTENSION_POINTS * len(file_hits)
        signals[name] = [f"keyword '{k}'" for k in hits] + [f"file {f}" for f in file_hits]
    best = max(scores.values())
    if best == 0:
        return Classification(FALLBACK_TYPE, f"no type signal found; default {FALLBACK_TYPE}", scores)
    winner = next(name for name in settings.types if scores[name] == best)
    runners = ", ".join(f"{n} {s}" for n, s in scores.items() if n != winner and s)
    explanation = f"{winner} (score {best}: {', '.join(signals[winner])})"
    if runners:
        explanation += f"; others: {runners}"
    return Classification(winner, explanation, scores)


def complexity(context_tokens: int, file_count: int) -> str:
    """A coarse size label for people reading the audit: how much the panel must read."""
    if context_tokens > 24_000 or file_count > 8:
        return "high"
    if context_tokens > 6_000 or file_count > 3:
        return "medium"
    return "low"
