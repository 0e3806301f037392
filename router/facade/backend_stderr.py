"""A stdio backend's stderr: passed through to the router's stderr, redacted, its last lines kept.

Why a backend failed is usually in its own stderr ("not a valid Git repository", a missing
key, a stack trace), which the router's client may never show. Its last lines, redacted
(router/redaction/redactor.py: token shapes, secret-named assignments, and the values of the backend's
and the router's secret-named environment variables), are added to the error a model reads
and the audit row keeps. The copy on the router's stderr gets the same redaction: that
stderr is a log, and a backend that prints its own key or a password must not put it there.
It is redacted a whole line at a time (a secret split across two writes is still one line).

A thread reads the pipe as fast as the backend writes, so a backend is never slowed by its
own stderr, and passes lines on within a budget (router/facade/stderr_lines.py: lines cut at
8 KiB, 64 KiB/s): what a flood writes beyond it is dropped and counted, and one line on the
router's stderr says how much. Redaction is linear in its input and runs on at most a few
kilobytes at a time, so the thread never holds the interpreter from the event loop for more
than a moment. It writes the router's stderr with ordinary blocking writes: a reader of the
router's stderr that falls behind slows that backend, as it did when the backend wrote there
itself, and never the router's event loop.
"""

import os
import re
import sys
import threading
import time
from collections import deque
from typing import BinaryIO

import anyio

from router.facade.stderr_lines import Budget, Dropped, LineCutter
from router.redaction.redactor import Redactor

TAIL_LINES = 5
TAIL_CHARS = 600
READ_CHUNK = 65536
# How long a failure report waits for a dead backend's last stderr bytes to arrive.
SETTLE_TIMEOUT_S = 0.5
# Lines redacted together: one redaction of a few kilobytes, then the interpreter is free.
REDACT_BATCH_BYTES = 8192
# While lines are being dropped, how often the count of them is reported.
DROP_REPORT_INTERVAL_S = 5.0
# Where a kept tail may start when it had to be cut: after a space (no half token).
SPACE = re.compile(rb"[ \t]")


class BackendStderr:
    """One backend process's stderr pipe: `child_end()` is handed to the spawn, then `close_child_end()`."""

    def __init__(self, backend: str, backend_env: dict[str, str]) -> None:
        self._backend = backend
        secret_env = os.environ | backend_env  # each Redactor keeps the secret-named ones
        self._redactor = Redactor(secret_env)
        self._copy_redactor = Redactor(secret_env)  # the copying thread's own: counts apart
        self._lines: deque[bytes] = deque(maxlen=TAIL_LINES)
        self._partial = b""
        self._lock = threading.Lock()
        self._eof = threading.Event()
        read_fd, write_fd = os.pipe()
        self._child_end: BinaryIO | None = os.fdopen(write_fd, "wb", buffering=0)
        self._reader = threading.Thread(
            target=self._copy, args=(read_fd,), name=f"stderr-{backend}", daemon=True
        )
        self._reader.start()

    def child_end(self) -> BinaryIO:
        assert self._child_end is not None, "child_end() after close_child_end()"
        return self._child_end

    def close_child_end(self) -> None:
        """After the spawn: the child holds its own copy, and EOF must come when it exits."""
        if self._child_end is not None:
            self._child_end.close()
            self._child_end = None

    def _copy(self, read_fd: int) -> None:
        dropped = Dropped()
        cutter = LineCutter(dropped)
        budget = Budget(time.monotonic())
        reported_at = time.monotonic()
        batch: list[bytes] = []
        with os.fdopen(read_fd, "rb", buffering=0) as pipe:
            while chunk := pipe.read(READ_CHUNK):
                self._keep(chunk)
                for line in cutter.feed(chunk):
                    if not budget.pay(len(line), time.monotonic()):
                        dropped.lines += 1
                        dropped.bytes += len(line)
                        continue
                    batch.append(line)
                    if sum(map(len, batch)) >= REDACT_BATCH_BYTES:
                        self._pass_on(b"".join(batch))
                        batch = []
                self._pass_on(b"".join(batch))
                batch = []
                if dropped and time.monotonic() - reported_at >= DROP_REPORT_INTERVAL_S:
                    self._report(dropped)
                    reported_at = time.monotonic()
        self._pass_on(b"".join(cutter.flush()))  # the last words of a backend that exited
        if dropped:
            self._report(dropped)
        self._eof.set()

    def _report(self, dropped: Dropped) -> None:
        self._write(dropped.report(self._backend).encode())
        dropped.lines = dropped.bytes = dropped.cut_lines = 0

    def _pass_on(self, data: bytes) -> None:
        """Whole lines onto the router's stderr, redacted; bytes that are not UTF-8 kept as they are."""
        if data:
            text = self._copy_redactor.text(data.decode("utf-8", errors="surrogateescape"))
            self._write(text.encode("utf-8", errors="surrogateescape"))

    @staticmethod
    def _write(data: bytes) -> None:
        try:
            sys.stderr.buffer.write(data)
            sys.stderr.buffer.flush()
        except (OSError, ValueError):
            pass  # the router's stderr is gone; the tail is still kept

    def _keep(self, chunk: bytes) -> None:
        with self._lock:
            *complete, self._partial = (self._partial + chunk).split(b"\n")
            self._lines.extend(_line_end(line) for line in complete[-TAIL_LINES:] if line.strip())
            self._partial = _line_end(self._partial)  # a line without end: its end only

    async def drained(self) -> None:
        """Once the copying thread has passed on everything the pipe held (the backend exited)."""
        while not self._eof.is_set():
            await anyio.sleep(0.02)

    async def tail(self) -> str:
        """The last lines written, redacted; waits briefly for a dying backend's last words."""
        if self._child_end is None:
            with anyio.move_on_after(SETTLE_TIMEOUT_S):
                await self.drained()
        with self._lock:
            lines = [*self._lines, *([self._partial] if self._partial.strip() else [])][-TAIL_LINES:]
        text = " | ".join(line.decode("utf-8", errors="replace").strip() for line in lines)
        return self._redactor.text(_last_words(text, TAIL_CHARS))


def _line_end(line: bytes) -> bytes:
    """A line's last TAIL_CHARS bytes at most, from a word's start (see _last_words)."""
    if len(line) <= TAIL_CHARS:
        return line
    tail = line[-TAIL_CHARS:]
    space = SPACE.search(tail)
    return tail[space.end() :] if space else b""


def _last_words(text: str, limit: int) -> str:
    """The end of `text`, at most `limit` characters, from a word's start: a token cut in two
    might no longer look like the secret it is."""
    if len(text) <= limit:
        return text
    tail = text[-limit:]
    space = re.search(r"\s", tail)
    return tail[space.end() :] if space else ""
