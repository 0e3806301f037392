"""JSON-RPC 2.0 as MCP's stdio transport frames it: one message per line, UTF-8, no embedded
newlines. The framing the backend session writes, what makes a message's id valid, and a
blocking client of one MCP server process for the tests and benchmarks (raw bytes of every
reply, no SDK in between).
"""

import json
import os
import selectors
import subprocess
import time
from collections.abc import Mapping, Sequence
from typing import IO, Any

from mcp_types.version import LATEST_HANDSHAKE_VERSION

# The handshake's protocol version, as the backend session asks for it; a client may ask for another.
PROTOCOL_VERSION = LATEST_HANDSHAKE_VERSION
# A blocking reader never waits longer than this for one line unless told otherwise.
DEFAULT_READ_TIMEOUT_S = 30.0
READ_CHUNK = 65536


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float):
        return "a number with a fraction or an exponent"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "an object"
    return "an array" if isinstance(value, list) else type(value).__name__


def valid_id(value: Any) -> bool:
    """An MCP request id: a string or an integer (not a boolean, not a float)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def shape_problem(message: Any) -> str | None:
    """Why a decoded message the SDK's types accept is still not a JSON-RPC 2.0 message an
    MCP peer may send, or None.

    The SDK's message union reads `{"id": {"a":1}, "method": "ping"}` as a notification (the
    id is dropped as an unknown field), a message with both `result` and `error` as an
    error, and a request that also carries `error` (or `result`) as a response: a server
    would answer none of them, and the client would wait for ever. MCP ids are a string or
    an integer (1.0, 1e400 and -0.0 are floats in JSON, so not integers); null is only the
    id of an error about a message whose id could not be read."""
    if not isinstance(message, dict):
        return None
    if "result" in message and "error" in message:
        return "Invalid Request: a response carries both result and error"
    if "method" in message and ("result" in message or "error" in message):
        member = "error" if "error" in message else "result"
        return f"Invalid Request: a request carries both method and {member}"
    if "id" not in message:
        return None
    request_id = message["id"]
    if valid_id(request_id):
        return None
    if request_id is None and "error" in message and "method" not in message:
        return None
    return f"Invalid Request: id must be a string or an integer, not {_kind_of(request_id)}"


def refusal_id(message: Any) -> int | str | None:
    """The id an error answer about `message` carries: a request's own id when it is valid,
    else null (a response's id names the client's request, not this one)."""
    if isinstance(message, dict) and "method" in message and valid_id(message.get("id")):
        return message["id"]
    return None


def is_notification(message: Any) -> bool:
    """A message JSON-RPC calls a notification: a method name and no id (and nothing a
    response has). It is never answered, however wrong its params are."""
    return (
        isinstance(message, dict)
        and isinstance(message.get("method"), str)
        and not {"id", "result", "error"} & message.keys()
    )


def encode(message: Mapping[str, Any]) -> bytes:
    """One message as one line: compact JSON (json.dumps escapes every newline inside strings)."""
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def request(request_id: int, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = dict(params)
    return message


def notification(method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = dict(params)
    return message


class JsonRpcError(Exception):
    """The server answered a request with a JSON-RPC error object."""

    def __init__(self, method: str, error: Any) -> None:
        super().__init__(f"{method}: {error}")
        self.error = error


class LineClient:
    """An MCP server process spoken to with raw JSON-RPC lines over its real pipes.

    Every read is bounded (DEFAULT_READ_TIMEOUT_S unless told): a server that never answers
    fails the caller with TimeoutError instead of hanging it."""

    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        *,
        protocol_version: str = PROTOCOL_VERSION,
        client_name: str = "context-router-line-client",
        stderr: int | IO[Any] | None = subprocess.DEVNULL,
        read_timeout_s: float = DEFAULT_READ_TIMEOUT_S,
        capabilities: Mapping[str, Any] | None = None,
    ) -> None:
        self.process = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=None if env is None else dict(env),
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._stdin = self.process.stdin
        self._stdout_fd = self.process.stdout.fileno()
        self._buffer = b""
        self._next_id = 0
        self.read_timeout_s = read_timeout_s
        self.initialize_result = self.request(
            "initialize",
            {
                "protocolVersion": protocol_version,
                "capabilities": dict(capabilities or {}),
                "clientInfo": {"name": client_name, "version": "0"},
            },
        )
        self.notify("notifications/initialized")

    def write_raw(self, data: bytes) -> None:
        """Bytes exactly as given: for what no well-behaved client would send."""
        self._stdin.write(data)
        self._stdin.flush()

    def send(self, method: str, params: Mapping[str, Any] | None = None) -> int:
        self._next_id += 1
        self.write_raw(encode(request(self._next_id, method, params)))
        return self._next_id

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        self.write_raw(encode(notification(method, params)))

    def read_line(self, timeout_s: float | None = None) -> bytes:
        """The next line the server writes (with its newline), or TimeoutError."""
        deadline = time.monotonic() + (self.read_timeout_s if timeout_s is None else timeout_s)
        with selectors.DefaultSelector() as selector:
            selector.register(self._stdout_fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not selector.select(remaining):
                    raise TimeoutError(f"no line from the server within {timeout_s or self.read_timeout_s} s")
                chunk = os.read(self._stdout_fd, READ_CHUNK)
                if not chunk:  # the server closed its stdout
                    line, self._buffer = self._buffer, b""
                    return line
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line + b"\n"

    def request_raw(self, method: str, params: Mapping[str, Any] | None = None) -> bytes:
        """The reply's exact bytes (the next line: requests are sent one at a time here)."""
        self.send(method, params)
        return self.read_line()

    def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        line = self.request_raw(method, params)
        if not line:
            raise ConnectionError(f"{method}: the server closed its stdout")
        reply = json.loads(line)
        if "error" in reply:
            raise JsonRpcError(method, reply["error"])
        return reply["result"]

    def call_tool(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": dict(arguments)})

    def close(self, timeout_s: float = 10.0) -> None:
        """Close stdin (MCP's stdio shutdown), then kill the server if it does not exit."""
        if self.process.poll() is None:
            try:
                self._stdin.close()
            except OSError:
                pass
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()

    def __enter__(self) -> "LineClient":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
