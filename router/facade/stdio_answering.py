"""Every request line answered, no line the end of the server: the layer between the stdio
pipes (router/facade/stdio_transport.py) and the SDK's server.

- A line that is not a JSON-RPC message is answered with a JSON-RPC error (-32700, or
  -32600 for JSON that is not a JSON-RPC message: among them an id that is an object, an
  array, a float, a boolean or a request's null, a response with both result and error, a
  request that also carries error or result, which the SDK's types would read as a
  notification or a response and leave unanswered) and reported to the caller's hook (the
  router audits it); the SDK's server would only log it, and the client would wait for ever.
- A notification (a method and no id) is never answered, valid or not (JSON-RPC 2.0): one
  the SDK's types refuse is logged and reported, one they take goes to the SDK, which ignores
  what it cannot use (a cancel for an id it does not know).
- Whatever goes wrong while one message is read, checked or refused is logged (without
  secrets) and costs that message only: the loop reads on. A request that could not be
  read because of such a fault is answered with -32603.
- The end of input is held back until every request read so far has been answered, or
  settled unanswered (cancelled by the client: the SDK tells its transport through the
  request's `on_request_unanswered`), since the SDK cancels whatever is still running when
  its input ends.
"""

import json
import logging
from collections import Counter
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from pydantic import ValidationError

from router.facade.jsonrpc_lines import is_notification, refusal_id, shape_problem, valid_id
from router.facade.log_guard import describe_failure

logger = logging.getLogger(__name__)

# Bytes whose presence in a request line means it may also carry a response's member, and
# is read again to see (the SDK's request type drops them): rare, so most lines skip it.
RESPONSE_MEMBERS = (b'"result"', b'"error"')


class UnreadableMessage(Exception):
    """A line that is not a JSON-RPC message: answered with a JSON-RPC error unless it is a
    notification (`answer` False), never dropped unsaid."""

    def __init__(
        self, code: int, message: str, request_id: int | str | None = None, *, answer: bool = True
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id
        self.answer = answer


def unreadable(error: Exception, message: Any = None) -> UnreadableMessage:
    """What the client is told about a line that did not parse: -32700 when it is not JSON
    (truncated, invalid UTF-8, a lone surrogate escape, nested past the parser's limit),
    -32600 when it is JSON but not a JSON-RPC message (then with its id, if it has one);
    `message` is the line decoded, if it is JSON."""
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
        problem = f"Invalid Request: not a JSON-RPC 2.0 message: {where}: {first.get('msg', 'invalid')}"
        if is_notification(message):
            return UnreadableMessage(types.INVALID_REQUEST, problem, answer=False)
        return UnreadableMessage(types.INVALID_REQUEST, problem, _echoed_id(message))
    return UnreadableMessage(types.PARSE_ERROR, f"Parse error: {type(error).__name__}")


def _echoed_id(message: Any) -> int | str | None:
    """The id of a message the SDK's types refused, if it has a readable one."""
    request_id = message.get("id") if isinstance(message, dict) else None
    return request_id if valid_id(request_id) else None


def _decoded(line: bytes) -> Any:
    try:
        return json.loads(line)
    except (ValueError, RecursionError):  # nested past Python's own limit: not read either
        return None


def read_message(line: bytes) -> SessionMessage | UnreadableMessage:
    """One line as the SDK's message, or why it is not one (answered by AnsweringReadStream)."""
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        return unreadable(exc, _decoded(line))
    # The SDK's types drop unknown members, so what they read as a request is read again
    # only if it may carry a response's member; anything else always (notifications and
    # responses are rare on this side).
    if not isinstance(message, types.JSONRPCRequest) or any(member in line for member in RESPONSE_MEMBERS):
        decoded = json.loads(line)
        problem = shape_problem(decoded)
        if problem is not None:
            return UnreadableMessage(types.INVALID_REQUEST, problem, refusal_id(decoded))
    return SessionMessage(message)


def internal_failure(exc: Exception, line: bytes) -> UnreadableMessage:
    """A fault of the router's own while reading one line: the client is told, by the
    request's id when it can be read, and the loop goes on."""
    logger.error("could not read a request line (%s); answered, serving on", describe_failure(exc))
    decoded = _decoded(line)
    answer = not is_notification(decoded)
    return UnreadableMessage(
        types.INTERNAL_ERROR,
        "Internal error: the router could not read this message; it was not run",
        refusal_id(decoded) if answer else None,
        answer=answer,
    )


class Unanswered:
    """The client's requests read and not yet settled, counted by id as the SDK correlates
    them ("7" and 7 are one id), duplicates included."""

    def __init__(self) -> None:
        self._open: Counter[Any] = Counter()
        self._none_left = anyio.Event()
        self._none_left.set()

    def read(self, item: SessionMessage) -> SessionMessage:
        """Count a request, and ask the SDK to say if it settles without an answer."""
        message = item.message
        if not isinstance(message, types.JSONRPCRequest):
            return item
        key = coerce_request_id(message.id)
        self._open[key] += 1
        if self._none_left.is_set():
            self._none_left = anyio.Event()

        async def settled_unanswered() -> None:  # cancelled by the client: no response comes
            self._settle(key)

        return SessionMessage(
            message, metadata=ServerMessageMetadata(on_request_unanswered=settled_unanswered)
        )

    def written(self, item: Any) -> None:
        message = item.message if isinstance(item, SessionMessage) else None
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None:
            self._settle(coerce_request_id(message.id))

    def _settle(self, key: Any) -> None:
        if self._open[key] > 1:
            self._open[key] -= 1
        else:
            self._open.pop(key, None)
        if not self._open:
            self._none_left.set()

    async def all_answered(self) -> None:
        await self._none_left.wait()


# Told about every line refused as unreadable (to log and audit it): (code, message).
OnUnreadable = Callable[[int, str], None]


class AnsweringReadStream:
    """The SDK's read stream, but its end waits until every request read has been settled,
    a line that is not a JSON-RPC message is answered here, and no single message's fault
    ends it."""

    def __init__(
        self, inner: Any, unanswered: Unanswered, reply: Any, on_unreadable: OnUnreadable | None
    ) -> None:
        # `reply` is the pipe's own write stream: a refusal's id names no request read, so
        # it must not settle one that has the same id
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
            try:
                if isinstance(item, SessionMessage):
                    return self._unanswered.read(item)
                await self._refuse(unreadable(item))
            except Exception as exc:  # one message's fault never ends the loop
                logger.error("a request line could not be handled (%s); serving on", describe_failure(exc))

    async def _refuse(self, problem: UnreadableMessage) -> None:
        verb = "refused a request line" if problem.answer else "ignored a notification"
        logger.warning("%s: %s", verb, problem.message)
        if self._on_unreadable is not None:
            try:
                self._on_unreadable(problem.code, problem.message)
            except Exception as exc:  # the audit's fault: the line is still answered
                logger.error("could not report a refused line (%s)", describe_failure(exc))
        if not problem.answer:
            return
        error = types.JSONRPCError(
            jsonrpc="2.0",
            id=problem.request_id,
            error=types.ErrorData(code=problem.code, message=problem.message),
        )
        try:
            await self._reply.send(SessionMessage(error))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            logger.debug("could not answer a refused line: the client closed the router's stdout")

    def __aiter__(self) -> "AnsweringReadStream":
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> "AnsweringReadStream":
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()


class AnsweringWriteStream:
    """The SDK's write stream, noting each response as it goes out."""

    def __init__(self, inner: Any, unanswered: Unanswered) -> None:
        self._inner = inner
        self._unanswered = unanswered

    async def send(self, item: Any) -> None:
        await self._inner.send(item)
        self._unanswered.written(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> "AnsweringWriteStream":
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()
