"""Reading a child's pipe with a deadline: a test that waits on a process never hangs the run."""

import os
import selectors
import time
from typing import IO, Any


def readline_within(pipe: IO[Any], timeout_s: float = 30.0) -> str:
    """The next line (text, newline stripped) written to `pipe`, read byte by byte from its file
    descriptor so nothing is left in a buffer; TimeoutError when none comes in time."""
    fd = pipe.fileno()
    deadline = time.monotonic() + timeout_s
    line = bytearray()
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(remaining):
                raise TimeoutError(f"no complete line within {timeout_s} s (got {bytes(line)!r})")
            byte = os.read(fd, 1)
            if not byte or byte == b"\n":
                return line.decode("utf-8")
            line += byte
