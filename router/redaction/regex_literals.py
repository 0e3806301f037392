"""The literals one of which every match of a regular expression holds, read from its parse.

Redaction runs some fifty patterns over every text, and most of them may start at any
character: on a long text, trying each at every character and failing is nearly all of the
work. A pattern none of whose literals is in the text cannot match it, so it is not run at all
(the way grep and ripgrep pick a literal to look for first). Where no such literal can be told
(a pattern made of classes only, a construct this does not read), the pattern is always run.
"""

import re
from typing import Any

try:  # the parser of Python's own `re` (its module was `sre_parse` before 3.11)
    from re import _constants as sre_constants  # type: ignore[attr-defined]
    from re import _parser as sre_parser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - a Python whose `re` is laid out otherwise
    sre_parser = sre_constants = None

Literals = frozenset[str] | None
# a class of at most this many characters (`[=:]`) counts as a choice of literals
MAX_CLASS_LITERALS = 4


def required_literals(pattern: re.Pattern) -> Literals:
    """Casefolded literals one of which every match of `pattern` holds; None when unknown.
    Check them against the casefolded text (a case-insensitive match may differ in case)."""
    if sre_parser is None or not isinstance(pattern.pattern, str):
        return None
    try:
        parsed = sre_parser.parse(pattern.pattern, pattern.flags)
    except Exception:  # an unreadable parse only means no shortcut
        return None
    found = _sequence(list(parsed))
    return found if found and all(found) else None


def _sequence(items: list[tuple[Any, Any]]) -> Literals:
    """The best requirement of a sequence: one of its runs of literal characters, or one of
    its items' own, whichever's shortest literal is longest."""
    best: Literals = None
    run: list[str] = []
    candidates: list[Literals] = []
    for op, value in items:
        if op is sre_constants.LITERAL:
            run.append(chr(value))
            continue
        if run:
            candidates.append(frozenset({"".join(run).casefold()}))
            run = []
        candidates.append(_item(op, value))
    if run:
        candidates.append(frozenset({"".join(run).casefold()}))
    for literals in candidates:
        if literals and (best is None or min(map(len, literals)) > min(map(len, best))):
            best = literals
    return best


def _item(op: Any, value: Any) -> Literals:
    if op is sre_constants.SUBPATTERN:
        return _sequence(list(value[-1]))
    if op is sre_constants.ATOMIC_GROUP:
        return _sequence(list(value))
    if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT):
        low, _, body = value
        return _sequence(list(body)) if low >= 1 else None
    if op is sre_constants.ASSERT:  # a lookahead or lookbehind: its text is there too
        return _sequence(list(value[1]))
    if op is sre_constants.IN and len(value) <= MAX_CLASS_LITERALS:
        if all(member is sre_constants.LITERAL for member, _ in value):
            return frozenset(chr(code).casefold() for _, code in value)
        return None
    if op is sre_constants.BRANCH:
        union: set[str] = set()
        for branch in value[1]:
            literals = _sequence(list(branch))
            if not literals:
                return None  # a branch that needs no literal: the whole may match without one
            union |= literals
        return frozenset(union)
    return None
