"""A stdio backend's stderr: passed through to the router's stderr, redacted, its last lines kept.

Why a backend failed is usually in its own stderr ("not a valid Git repository", a missing
key, a stack trace), which the router's client may never show. Its last lines, redacted
(router/redact.py: token shapes, secret-named assignments, and the values of the backend's
and the router's secret-named environment variables), are added to the error a model reads
and the audit row keeps. The copy on the router's stderr gets the same redaction: that
stderr is a log, and a backend that prints its own key or a password must not put it there.
It is redacted a whole line at a time (a secret split across two writes is still one line),
so a line is held until its end, or until MAX_HELD_BYTES of it have come (a line that never
ends), or the backend exits. Redaction costs about 0.2-0.4 ms per short line (router/redact.py
runs some forty patterns), so the copy keeps up with roughly 0.4 MB/s: a backend that writes
faster is slowed to that pace by its full pipe, as by a slow reader, never the event loop.

The copy runs in a thread that reads a pipe and writes the router's stderr with ordinary
blocking writes: a reader of the router's stderr that falls behind slows that backend, as
it did when the backend wrote there itself, and never the router's event loop.
"""

import os
import re
import sys
import threading
from collections import deque
from typing import BinaryIO

import anyio

from router.redact import Redactor

TAIL_LINES = 5
TAIL_CHARS = 600
READ_CHUNK = 65536
# How long a failure report waits for a dead backend's last stderr bytes to arrive.
SETTLE_TIMEOUT_S = 0.5
# The most of an unended line held back for redaction before it is copied anyway.
MAX_HELD_BYTES = 65536
# Where a line ends: a newline, or a carriage return (progress output rewrites one line).
LINE_ENDS = re.compile(rb"[\r\n]")


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
        held = b""
        with os.fdopen(read_fd, "rb", buffering=0) as pipe:
            while chunk := pipe.read(READ_CHUNK):
                self._keep(chunk)
                held += chunk
                ends = [m.end() for m in LINE_ENDS.finditer(held, max(0, len(held) - len(chunk)))]
                cut = ends[-1] if ends else (len(held) if len(held) >= MAX_HELD_BYTES else 0)
                if cut:
                    self._pass_on(held[:cut])
                    held = held[cut:]
        if held:
            self._pass_on(held)
        self._eof.set()

    def _pass_on(self, data: bytes) -> None:
        """Whole lines onto the router's stderr, redacted; bytes that are not UTF-8 kept as they are."""
        text = self._copy_redactor.text(data.decode("utf-8", errors="surrogateescape"))
        try:
            sys.stderr.buffer.write(text.encode("utf-8", errors="surrogateescape"))
            sys.stderr.buffer.flush()
        except (OSError, ValueError):
            pass  # the router's stderr is gone; the tail is still kept

    def _keep(self, chunk: bytes) -> None:
        with self._lock:
            *complete, self._partial = (self._partial + chunk).split(b"\n")
            self._lines.extend(line for line in complete if line.strip())
            if len(self._partial) > TAIL_CHARS:  # a line without end: keep its tail only
                self._partial = self._partial[-TAIL_CHARS:]

    async def tail(self) -> str:
        """The last lines written, redacted; waits briefly for a dying backend's last words."""
        if self._child_end is None:
            with anyio.move_on_after(SETTLE_TIMEOUT_S):
                while not self._eof.is_set():
                    await anyio.sleep(0.02)
        with self._lock:
            lines = [*self._lines, *([self._partial] if self._partial.strip() else [])][-TAIL_LINES:]
        text = " | ".join(line.decode("utf-8", errors="replace").strip() for line in lines)
        return self._redactor.text(text[-TAIL_CHARS:])
