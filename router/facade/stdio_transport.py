"""stdin/stdout for the MCP server, read and written on the event loop.

The SDK's stdio transport reads each line and writes each reply through a worker thread
and relays them to the server through memory streams and two tasks, which costs about half
a millisecond per round trip; the router's whole search costs less than that. Here the
server's own reading task reads the pipe and parses the line (with the SDK's message types),
and its sending task serializes and writes the reply: 0.2 ms per round trip
(bench/facade_bench.py measures both).

A client may close stdin right after its last request (`cat requests.jsonl | serve`): the
end of input is held back until every request read so far has been answered (or cancelled
by the client), since the SDK cancels whatever is still running when its input ends. The
router bounds every call by its backend's timeouts, so the wait is bounded too.

Like the SDK, it keeps the wire private while serving: fd 0 reads the null device and fd 1
points at stderr, so a stray print or a child process cannot write into the JSON-RPC
stream. Both are restored, with their original blocking mode, on exit. When stdin or stdout
is not something asyncio can watch (a regular file, as in `serve < requests.jsonl`, or any
pipe on Windows), the SDK's threaded transport is used.
"""

import asyncio
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

if sys.platform != "win32":  # Windows pipes are not selectable: the SDK's threads serve there
    import fcntl

STDIN_FD = 0
STDOUT_FD = 1
# One JSON-RPC message per line; a longer line is answered with a parse error, not a crash.
MAX_LINE_BYTES = 64 * 1024 * 1024


def _watchable(fd: int) -> bool:
    """asyncio's pipe transports accept pipes, sockets and character devices only."""
    if sys.platform == "win32":
        return False
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


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


async def _next_line(stream: asyncio.StreamReader) -> bytes | None:
    """The next message line, None at the end of input. An over-long line gives its head
    alone, which fails to parse: the client gets a parse error, the router keeps serving."""
    try:
        return await stream.readuntil(b"\n")
    except asyncio.IncompleteReadError as end:
        return end.partial or None  # a last message may lack its newline
    except asyncio.LimitOverrunError as too_long:
        return await _discard_line(stream, too_long.consumed)


async def _discard_line(stream: asyncio.StreamReader, buffered: int) -> bytes:
    head = await stream.read(min(buffered, 256))
    while True:
        try:
            await stream.readuntil(b"\n")
            return head
        except asyncio.LimitOverrunError as more:
            await stream.read(more.consumed)
        except asyncio.IncompleteReadError:
            return head


class _PipeReadStream:
    """What the SDK's server reads: each line parsed into a message (or the parse error, which
    the SDK answers), straight from the pipe in the reading task; no relay task between."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self._stream = stream

    async def receive(self) -> SessionMessage | Exception:
        line = await _next_line(self._stream)
        if line is None:
            raise anyio.EndOfStream
        try:
            return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
        except Exception as exc:  # the SDK turns it into a JSON-RPC parse error
            return exc

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
        line = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
        self._transport.write(line.encode("utf-8"))
        await self._flow.writable()

    async def aclose(self) -> None:
        pass


class _Unanswered:
    """Ids of the client's requests that have no response yet."""

    def __init__(self) -> None:
        self._ids: set[Any] = set()
        self._none_left = anyio.Event()
        self._none_left.set()

    def read(self, item: Any) -> None:
        message = item.message if isinstance(item, SessionMessage) else None
        if isinstance(message, types.JSONRPCRequest):
            self._ids.add(message.id)
            self._none_left = anyio.Event()
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            # a cancelled request gets no response
            self._settle((message.params or {}).get("requestId"))

    def written(self, item: Any) -> None:
        message = item.message if isinstance(item, SessionMessage) else None
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self._settle(message.id)

    def _settle(self, request_id: Any) -> None:
        self._ids.discard(request_id)
        if not self._ids:
            self._none_left.set()

    async def all_answered(self) -> None:
        await self._none_left.wait()


class _AnsweringReadStream:
    """The SDK's read stream, but its end waits until every request read has been answered."""

    def __init__(self, inner: Any, unanswered: _Unanswered) -> None:
        self._inner = inner
        self._unanswered = unanswered

    @property
    def last_context(self) -> Any:  # the SDK restores each sender's contextvars from this
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            item = await self._inner.receive()
        except anyio.EndOfStream:
            await self._unanswered.all_answered()
            raise
        self._unanswered.read(item)
        return item

    def __aiter__(self) -> "_AnsweringReadStream":
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> "_AnsweringReadStream":
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()


class _AnsweringWriteStream:
    """The SDK's write stream, noting each response as it goes out."""

    def __init__(self, inner: Any, unanswered: _Unanswered) -> None:
        self._inner = inner
        self._unanswered = unanswered

    async def send(self, item: Any) -> None:
        await self._inner.send(item)
        self._unanswered.written(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> "_AnsweringWriteStream":
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()


@asynccontextmanager
async def event_loop_stdio_server() -> AsyncIterator[tuple[Any, Any]]:
    """MCP over stdin/stdout, read and written on the event loop: yields the
    (read_stream, write_stream) pair the SDK's Server.run takes."""
    async with _pipes_or_threads() as (read_stream, write_stream):
        unanswered = _Unanswered()
        yield _AnsweringReadStream(read_stream, unanswered), _AnsweringWriteStream(write_stream, unanswered)


@asynccontextmanager
async def _pipes_or_threads() -> AsyncIterator[tuple[Any, Any]]:
    if not (_watchable(STDIN_FD) and _watchable(STDOUT_FD)):
        async with stdio_server() as streams:
            yield streams
        return
    loop = asyncio.get_running_loop()
    sys.stdout.flush()
    async with AsyncExitStack() as stack:
        devnull = os.open(os.devnull, os.O_RDONLY)
        try:
            wire_in = stack.enter_context(_private_wire(STDIN_FD, devnull))
            wire_out = stack.enter_context(_private_wire(STDOUT_FD, sys.stderr.fileno()))
        finally:
            os.close(devnull)
        reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0, closefd=False)
        )
        stack.callback(read_transport.close)
        write_transport, flow = await loop.connect_write_pipe(
            _FlowControl, os.fdopen(wire_out, "wb", buffering=0, closefd=False)
        )
        stack.callback(write_transport.close)
        yield _PipeReadStream(reader), _PipeWriteStream(write_transport, flow)
