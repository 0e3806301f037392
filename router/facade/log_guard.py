"""The router's stderr under a flood: repeated log lines rate-limited, failures described
without secrets.

A client (or a flood of connections) can make one line repeat thousands of times a second:
"socket.accept() out of system resource", an ASGI traceback per request, a refused request
line. Each repeat costs a write to stderr, which a supervisor may keep forever. The filter
here lets the first REPEAT_BURST lines of each kind through per REPEAT_WINDOW_S, drops the
rest, and says how many it dropped on the next line of that kind it lets through. Lines are
told apart by logger and message template (the first line of it, before its arguments), so
one noisy kind never silences another.
"""

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from router.redaction.redactor import Redactor

# Lines of one kind let through per window before the rest are dropped (and counted).
REPEAT_BURST = 20
REPEAT_WINDOW_S = 60.0
# How much of a failure's own text a log line quotes (it may echo what a client sent).
FAILURE_TEXT_CHARS = 300
# Kinds tracked at once: a template is code, so this is never reached in practice; if it
# were, the oldest windows start over.
MAX_KINDS = 1024


@dataclass
class _Window:
    started: float
    passed: int = 0
    dropped: int = 0


class RepeatLimiter(logging.Filter):
    """A logging filter: at most `burst` records of one kind per `window_s` seconds."""

    def __init__(
        self,
        burst: int = REPEAT_BURST,
        window_s: float = REPEAT_WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.burst = burst
        self.window_s = window_s
        self._clock = clock
        self._windows: dict[tuple[str, str], _Window] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg).split("\n", 1)[0][:200])
        now = self._clock()
        window = self._windows.get(key)
        if window is None or now - window.started >= self.window_s:
            dropped = window.dropped if window is not None else 0
            if len(self._windows) >= MAX_KINDS:
                self._windows.clear()
            window = self._windows[key] = _Window(started=now)
            if dropped:
                _note_dropped(record, dropped, self.window_s)
        if window.passed >= self.burst:
            window.dropped += 1
            return False
        window.passed += 1
        return True


def _note_dropped(record: logging.LogRecord, dropped: int, window_s: float) -> None:
    record.msg = (
        f"{record.getMessage()} [{dropped} more like this were not logged in the last {window_s:g} s]"
    )
    record.args = ()


def limit_repeats(
    logger: logging.Logger | None = None, limiter: RepeatLimiter | None = None
) -> RepeatLimiter:
    """Put one limiter on every handler of `logger` (the root logger by default)."""
    target = logger or logging.getLogger()
    limiter = limiter or RepeatLimiter()
    for handler in target.handlers:
        handler.addFilter(limiter)
    return limiter


_redactor: Redactor | None = None


def describe_failure(exc: BaseException) -> str:
    """An exception as one short line for the log: its type and the start of its text, with
    secrets removed (its text may quote the message a client sent); a task group's failure
    by what failed in it."""
    global _redactor
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe_failure(inner) for inner in exc.exceptions)
    try:
        text = str(exc)[:FAILURE_TEXT_CHARS]
        if text:
            if _redactor is None:
                _redactor = Redactor()
            text = _redactor.text(text)
    except Exception:  # describing a failure must never be one: its text is left out
        text = ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
