"""A backend's stderr cut into lines of bounded length, let through at a bounded rate.

Every line a backend writes is redacted before the router's stderr shows it, and redaction
costs time (router/redaction/redactor.py: about a microsecond a byte, in a thread that shares the
interpreter with the event loop). A backend that writes without pause (a debug flood, a dump
without a newline) must cost the router no more than a small, fixed share of its time and
must never be slowed itself, so the reader takes everything from the pipe and passes on:
- each line up to MAX_LINE_BYTES, cut back to its last space (the word cut in two is not
  shown: half a token is not recognisable as one), the rest of the line dropped;
- lines while the budget lasts (COPY_RATE_BYTES_PER_S, with bursts up to COPY_BURST_BYTES):
  a line the budget cannot pay for is dropped whole.
What was dropped is counted and reported in one line (Dropped.report).
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass

# The longest line passed on; a longer one is cut (a stack trace's lines are far shorter).
MAX_LINE_BYTES = 8192
# What each backend's stderr may cost: redacting 64 KiB takes some tens of milliseconds.
COPY_RATE_BYTES_PER_S = 64 * 1024
COPY_BURST_BYTES = 256 * 1024
# Where a line ends: a newline, or a carriage return (progress output rewrites one line).
LINE_ENDS = re.compile(rb"[\r\n]")
# Where a cut line may end: after a space or a tab.
SPACE = re.compile(rb"[ \t]")
CUT_MARK = b" [line cut]\n"


@dataclass
class Dropped:
    """What was not passed on since the last report."""

    lines: int = 0
    bytes: int = 0
    cut_lines: int = 0

    def __bool__(self) -> bool:
        return bool(self.lines or self.bytes)

    def report(self, backend: str) -> str:
        parts = []
        if self.lines:
            rate = COPY_RATE_BYTES_PER_S // 1024
            parts.append(f"{_count(self.lines, 'line')} dropped (written faster than {rate} KiB/s)")
        if self.cut_lines:
            parts.append(f"{_count(self.cut_lines, 'line')} cut at {MAX_LINE_BYTES // 1024} KiB")
        return (
            f"context-router: backend {backend!r} stderr: {', '.join(parts)}; "
            f"{_count(self.bytes, 'byte')} not shown\n"
        )


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


class LineCutter:
    """Bytes in, whole lines out (each with its ending), none longer than MAX_LINE_BYTES."""

    def __init__(self, dropped: Dropped, max_line: int = MAX_LINE_BYTES) -> None:
        self._dropped = dropped
        self._max_line = max_line
        self._held = b""
        # the rest of a line already cut, skipped up to its end
        self._skipping = False

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        data, start = self._held + chunk, 0
        for end in LINE_ENDS.finditer(data):
            line = data[start : end.end()]
            start = end.end()
            if self._skipping:
                self._skipping = False
                self._dropped.bytes += len(line)
            elif len(line) > self._max_line:
                yield self._cut(line)
            else:
                yield line
        rest = data[start:]
        if self._skipping:
            self._dropped.bytes += len(rest)
            rest = b""
        elif len(rest) > self._max_line:
            yield self._cut(rest)
            self._skipping = True
            rest = b""
        self._held = rest

    def flush(self) -> Iterator[bytes]:
        """The last line, without its end (the backend exited)."""
        if self._held:
            yield self._held if len(self._held) <= self._max_line else self._cut(self._held)
        self._held, self._skipping = b"", False

    def _cut(self, line: bytes) -> bytes:
        head = line[: self._max_line]
        spaces = [m.start() for m in SPACE.finditer(head)]
        head = head[: spaces[-1]] if spaces else b""
        self._dropped.cut_lines += 1
        self._dropped.bytes += len(line) - len(head)
        return head + CUT_MARK


class Budget:
    """A token bucket of bytes: COPY_RATE_BYTES_PER_S, holding at most COPY_BURST_BYTES."""

    def __init__(self, now: float, rate: float = COPY_RATE_BYTES_PER_S, burst: float = COPY_BURST_BYTES):
        self._rate, self._burst = rate, burst
        self._tokens, self._at = burst, now

    def pay(self, size: int, now: float) -> bool:
        self._tokens = min(self._burst, self._tokens + (now - self._at) * self._rate)
        self._at = now
        if size > self._tokens:
            return False
        self._tokens -= size
        return True
