"""stdin/stdout for the MCP server, read and written on the event loop.

The SDK's stdio transport reads each line and writes each reply through a worker thread
and relays them to the server through memory streams and two tasks, which costs about half
a millisecond per round trip; the router's whole search costs less than that. Here the
server's own reading task reads the pipe and parses the line (with the SDK's message types),
and its sending task serializes and writes the reply: 0.2 ms per round trip
(bench/facade_bench.py measures both).

A line that is not a JSON-RPC message (truncated, invalid UTF-8, a lone surrogate escape,
nested past the parser's 200 levels, longer than MAX_LINE_BYTES) is answered with a
JSON-RPC error (-32700, or -32600 for JSON that is not a JSON-RPC message: among them an id
that is an object, an array, a float, a boolean or a request's null, and a response with
both result and error, which the SDK's types would read as a notification or an error and
leave unanswered) and reported to the caller's hook (the router audits it); the SDK's server
would only log it, and the client would wait for ever.

A client may close stdin right after its last request (`cat requests.jsonl | serve`): the
end of input is held back until every request read so far has been answered (or cancelled
by the client), since the SDK cancels whatever is still running when its input ends. The
router bounds every call by its backend's timeouts, so the wait is bounded too.

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
import json
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
from pydantic import ValidationError

from router.facade.jsonrpc_lines import shape_problem

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


class UnreadableMessage(Exception):
    """A line that is not a JSON-RPC message: answered with a JSON-RPC error, never dropped."""

    def __init__(self, code: int, message: str, request_id: int | str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id


def unreadable(error: Exception, line: bytes | None = None) -> UnreadableMessage:
    """What the client is told about a line that did not parse: -32700 when it is not JSON
    (truncated, invalid UTF-8, a lone surrogate escape, nested past the parser's limit),
    -32600 when it is JSON but not a JSON-RPC message (then with its id, if it has one)."""
    if isinstance(error, UnreadableMessage):
        return error
    if isinstance(error, ValidationError):
        first: dict[str, Any] = dict(error.errors(include_url=False)[0]) if error.error_count() else {}
        if first.get("type") == "json_invalid":
            detail = str(first.get("msg", "invalid JSON"))
            if "recursion limit" in detail:
                detail = f"JSON nested deeper than the parser allows ({detail})"
            return UnreadableMessage(types.PARSE_ERROR, f"Parse error: {detail}")
        where = ".".join(str(part) for part in first.get("loc", ())) or "(message)"
        return UnreadableMessage(
            types.INVALID_REQUEST,
            f"Invalid Request: not a JSON-RPC 2.0 message: {where}: {first.get('msg', 'invalid')}",
            _request_id(line),
        )
    return UnreadableMessage(types.PARSE_ERROR, f"Parse error: {type(error).__name__}")


def _request_id(line: bytes | None) -> int | str | None:
    try:
        message = json.loads(line) if line is not None else None
    except ValueError:
        return None
    request_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool)):
        return request_id
    return None


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

    async def receive(self) -> SessionMessage | Exception:
        line = await self._next_line()
        if line is None:
            raise anyio.EndOfStream
        if isinstance(line, UnreadableMessage):
            return line
        try:
            message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except Exception as exc:  # answered by _AnsweringReadStream
            return unreadable(exc, line)
        # A request's id is checked by the SDK's types; anything else is read again to see
        # the ids and members they drop (notifications and responses are rare on this side).
        if not isinstance(message, types.JSONRPCRequest):
            problem = shape_problem(json.loads(line))
            if problem is not None:
                return UnreadableMessage(types.INVALID_REQUEST, problem)
        return SessionMessage(message)

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


# Told about every line refused as unreadable (to log and audit it): (code, message).
OnUnreadable = Callable[[int, str], None]


class _AnsweringReadStream:
    """The SDK's read stream, but its end waits until every request read has been answered,
    and a line that is not a JSON-RPC message is answered here with a JSON-RPC error (the
    SDK's server would only log it, and the client would wait for ever)."""

    def __init__(
        self, inner: Any, unanswered: _Unanswered, reply: Any, on_unreadable: OnUnreadable | None
    ) -> None:
        self._inner = inner
        self._unanswered = unanswered
        self._reply = reply
        self._on_unreadable = on_unreadable

    @property
    def last_context(self) -> Any:  # the SDK restores each sender's contextvars from this
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            try:
                item = await self._inner.receive()
            except anyio.EndOfStream:
                await self._unanswered.all_answered()
                raise
            if not isinstance(item, Exception):
                self._unanswered.read(item)
                return item
            await self._refuse(unreadable(item))

    async def _refuse(self, problem: UnreadableMessage) -> None:
        logger.warning("refused a request line: %s", problem.message)
        if self._on_unreadable is not None:
            self._on_unreadable(problem.code, problem.message)
        error = types.JSONRPCError(
            jsonrpc="2.0",
            id=problem.request_id,
            error=types.ErrorData(code=problem.code, message=problem.message),
        )
        await self._reply.send(SessionMessage(error))

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
async def event_loop_stdio_server(
    on_unreadable: OnUnreadable | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """MCP over stdin/stdout, read and written on the event loop: yields the
    (read_stream, write_stream) pair the SDK's Server.run takes."""
    async with _pipes_or_threads() as (read_stream, write_stream):
        unanswered = _Unanswered()
        write = _AnsweringWriteStream(write_stream, unanswered)
        yield _AnsweringReadStream(read_stream, unanswered, write, on_unreadable), write


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
