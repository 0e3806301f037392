"""stdin/stdout for the MCP server, read and written on the event loop.

The SDK's stdio transport reads each line and writes each reply through a worker thread
and relays them to the server through memory streams and two tasks, which costs about half
a millisecond per round trip; the router's whole search costs less than that. Here the
server's own reading task reads the pipe and parses the line (with the SDK's message types),
and its sending task serializes and writes the reply: 0.2 ms per round trip
(bench/facade_bench.py measures both).

A line longer than MAX_LINE_BYTES is refused by name without being kept. What is done with
each line read (answered if it is not a JSON-RPC message, never allowed to end the loop,
the end of input held back until every request is answered) is
router/facade/stdio_answering.py's.

Like the SDK, it keeps the wire private while serving: fd 0 reads the null device and fd 1
points at stderr, so a stray print or a child process cannot write into the JSON-RPC
stream. Both are restored, with their original blocking mode, on exit. When stdin or stdout
is not something asyncio can watch (a regular file, as in `serve < requests.jsonl`, or the
null device), that side is read a line at a time, or written, in a worker thread, and its
lines are checked the same way. On Windows, whose pipes no selector watches, the SDK's
threaded transport is used.
"""

import asyncio
import functools
import logging
import os
import selectors
import stat
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from router.facade.stdio_answering import (
    AnsweringReadStream,
    AnsweringWriteStream,
    OnUnreadable,
    Unanswered,
    UnreadableMessage,
    internal_failure,
    read_message,
)

if sys.platform != "win32":  # Windows pipes are not selectable: the SDK's threads serve there
    import fcntl

logger = logging.getLogger(__name__)

STDIN_FD = 0
STDOUT_FD = 1
# One JSON-RPC message per line; a longer line is answered with a parse error, not a crash.
# (JSON nested past pydantic's parser limit, 200 levels, is answered with a parse error too.)
MAX_LINE_BYTES = 64 * 1024 * 1024
# How much of an over-long line read from a file is dropped per read.
DISCARD_CHUNK = 65536


def _watchable(fd: int) -> bool:
    """asyncio's pipe transports accept pipes, sockets and character devices the selector can
    watch: a terminal can be, /dev/null cannot (epoll refuses it with EPERM)."""
    if sys.platform == "win32":
        return False
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return True
    if not stat.S_ISCHR(mode):
        return False
    with selectors.DefaultSelector() as probe:
        try:
            probe.register(fd, selectors.EVENT_READ | selectors.EVENT_WRITE)
        except (OSError, ValueError):
            return False
    return True


@contextmanager
def _private_wire(fd: int, diversion: int):
    """A private duplicate of `fd` for the wire, with `fd` itself pointed at `diversion`.

    Restores `fd` and the file's blocking mode on exit: the description may be shared with
    the parent (a terminal), which must not be left non-blocking."""
    wire = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    flags = fcntl.fcntl(wire, fcntl.F_GETFL)
    try:
        os.dup2(diversion, fd)
        try:
            yield wire
        finally:
            os.dup2(wire, fd)
            fcntl.fcntl(fd, fcntl.F_SETFL, flags)
    finally:
        os.close(wire)


async def _next_line(stream: asyncio.StreamReader) -> bytes | UnreadableMessage | None:
    """The next message line, None at the end of input. An over-long line is read to its end
    and refused (the client gets a parse error, the router keeps serving)."""
    try:
        return await stream.readuntil(b"\n")
    except asyncio.IncompleteReadError as end:
        return end.partial or None  # a last message may lack its newline
    except asyncio.LimitOverrunError:
        await _discard_line(stream)
        return _over_long()


def _over_long() -> UnreadableMessage:
    return UnreadableMessage(
        types.PARSE_ERROR,
        f"Parse error: request line longer than {MAX_LINE_BYTES} bytes (one JSON-RPC message per line); refused",
    )


async def _discard_line(stream: asyncio.StreamReader) -> None:
    """Read the rest of an over-long line, its newline included, without keeping it."""
    while True:
        try:
            await stream.readuntil(b"\n")
            return
        except asyncio.LimitOverrunError as more:
            await stream.read(more.consumed)
        except asyncio.IncompleteReadError:
            return


class _FileLines:
    """Lines of a file no selector watches (a regular file, the null device), one per call,
    each read in a worker thread (abandoned if the router stops first: nothing can interrupt
    a blocking read)."""

    def __init__(self, fd: int) -> None:
        self._file = os.fdopen(fd, "rb", closefd=False)

    async def next_line(self) -> bytes | UnreadableMessage | None:
        line = await anyio.to_thread.run_sync(self._file.readline, MAX_LINE_BYTES + 1, abandon_on_cancel=True)
        if not line:
            return None
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            await anyio.to_thread.run_sync(self._discard_line, abandon_on_cancel=True)
            return _over_long()
        return line

    def _discard_line(self) -> None:
        while (rest := self._file.readline(DISCARD_CHUNK)) and not rest.endswith(b"\n"):
            pass


NextLine = Callable[[], Awaitable[bytes | UnreadableMessage | None]]


class _PipeReadStream:
    """What the SDK's server reads: each line parsed into a message, or what made it unreadable
    (which _AnsweringReadStream answers), straight from the pipe (or file) in the reading
    task; no relay task between."""

    def __init__(self, next_line: NextLine) -> None:
        self._next_line = next_line

    async def receive(self) -> SessionMessage | UnreadableMessage:
        line = await self._next_line()  # an I/O error on stdin ends the transport
        if line is None:
            raise anyio.EndOfStream
        if isinstance(line, UnreadableMessage):
            return line
        try:
            return read_message(line)
        except Exception as exc:  # a fault of the router's own: this line only
            return internal_failure(exc, line)

    async def aclose(self) -> None:
        pass  # the pipe is closed when the transport exits


class _FlowControl(asyncio.Protocol):
    """Lets a send wait while the pipe to the client is full."""

    def __init__(self) -> None:
        self._writable = asyncio.Event()
        self._writable.set()
        self.lost = False

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    def connection_lost(self, exc: BaseException | None) -> None:
        self.lost = True
        self._writable.set()

    async def writable(self) -> None:
        await self._writable.wait()  # at once, unless the pipe is full


class _PipeWriteStream:
    """What the SDK's server writes: each message serialized and written in the sending task."""

    def __init__(self, transport: asyncio.WriteTransport, flow: _FlowControl) -> None:
        self._transport = transport
        self._flow = flow

    async def send(self, item: SessionMessage) -> None:
        if self._flow.lost:
            raise anyio.BrokenResourceError("the client closed the router's stdout")
        self._transport.write(_line_of(item))
        await self._flow.writable()

    async def aclose(self) -> None:
        pass


def _line_of(item: SessionMessage) -> bytes:
    return (item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n").encode("utf-8")


class _FileWriteStream:
    """What the SDK's server writes, to a file no selector watches: each line in a worker thread."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def send(self, item: SessionMessage) -> None:
        await anyio.to_thread.run_sync(self._write, _line_of(item))

    def _write(self, data: bytes) -> None:
        try:
            while data:
                data = data[os.write(self._fd, data) :]
        except OSError as exc:
            raise anyio.BrokenResourceError(f"the router's stdout cannot be written: {exc}") from exc

    async def aclose(self) -> None:
        pass


@asynccontextmanager
async def event_loop_stdio_server(
    on_unreadable: OnUnreadable | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """MCP over stdin/stdout, read and written on the event loop: yields the
    (read_stream, write_stream) pair the SDK's Server.run takes."""
    async with _pipes_or_threads() as (read_stream, write_stream):
        unanswered = Unanswered()
        write = AnsweringWriteStream(write_stream, unanswered)
        yield AnsweringReadStream(read_stream, unanswered, write_stream, on_unreadable), write


@asynccontextmanager
async def _pipes_or_threads() -> AsyncIterator[tuple[Any, Any]]:
    if sys.platform == "win32":
        async with stdio_server() as streams:
            yield streams
        return
    loop = asyncio.get_running_loop()
    watch_in, watch_out = _watchable(STDIN_FD), _watchable(STDOUT_FD)
    sys.stdout.flush()
    async with AsyncExitStack() as stack:
        devnull = os.open(os.devnull, os.O_RDONLY)
        try:
            wire_in = stack.enter_context(_private_wire(STDIN_FD, devnull))
            wire_out = stack.enter_context(_private_wire(STDOUT_FD, sys.stderr.fileno()))
        finally:
            os.close(devnull)
        if watch_in:
            reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
            read_transport, _ = await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader),
                os.fdopen(wire_in, "rb", buffering=0, closefd=False),
            )
            stack.callback(read_transport.close)
            next_line: NextLine = functools.partial(_next_line, reader)
        else:
            next_line = _FileLines(wire_in).next_line
        write: _PipeWriteStream | _FileWriteStream
        if watch_out:
            write_transport, flow = await loop.connect_write_pipe(
                _FlowControl, os.fdopen(wire_out, "wb", buffering=0, closefd=False)
            )
            stack.callback(write_transport.close)
            write = _PipeWriteStream(write_transport, flow)
        else:
            write = _FileWriteStream(wire_out)
        yield _PipeReadStream(next_line), write
