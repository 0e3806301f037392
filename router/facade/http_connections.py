"""How many HTTP connections the router keeps, and for how long one may take to send its
request: uvicorn's h11 protocol with a deadline on the request head and body and a bound
on open connections below the open-file limit.

uvicorn closes a connection that sits idle after a response (`timeout_keep_alive`) and
bounds the bytes of an incomplete head (`h11_max_incomplete_event_size`), but a connection
that sends half a head and stops is kept for ever, and its `limit_concurrency` is checked
only once a head is complete (and counts the half-sent ones, so it answers 503 to the good
clients). A few hundred such connections used up every file descriptor: `accept()` failed
in a loop that logged each failure, the lifespan's backend bookkeeping failed on EMFILE and
every request after that got 500. Here:

- a connection has REQUEST_HEAD_TIMEOUT_S to send a whole request head, counted from when it
  is ready for one (opened, or its previous response sent), and REQUEST_BODY_TIMEOUT_S from
  the head for the body; past either it is answered 408 (head) or closed (body);
- open connections are bounded by `max_connections`, derived from RLIMIT_NOFILE with room
  left for the database, the backends' pipes and a burst of accepts (uvicorn's `backlog` is
  both the listen queue and how many connections are accepted per turn of the loop). One
  more connection closes the oldest that is still waiting for its request head (a slow or
  idle one): a new client is served rather than refused; only when every connection is in
  the middle of a request is the new one answered 503.
"""

import asyncio
import logging
import os
import resource
from dataclasses import dataclass
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

logger = logging.getLogger(__name__)

# uvicorn's own knobs, given explicitly: idle seconds between requests on one connection,
# and the bytes one incomplete request head may hold (h11's default).
KEEP_ALIVE_S = 5
MAX_INCOMPLETE_HEAD_BYTES = 16 * 1024
# Connections accepted per turn of the event loop, which is also the listen queue (asyncio
# uses uvicorn's `backlog` for both): a 16th of the open-file limit, within these bounds.
# Several turns of accepts can be open before the protocol counts them, so the bound leaves
# room for ACCEPT_TURNS batches.
MIN_ACCEPT_BATCH = 16
MAX_ACCEPT_BATCH = 128
ACCEPT_BATCH_SHARE = 16
ACCEPT_TURNS = 4
# Descriptors kept for everything else: the database's connections and their -wal and -shm
# files, the event loop, the listener, and per declared backend its pipes (stdin, stdout,
# stderr) or its HTTP client's sockets.
RESERVED_DESCRIPTORS = 64
DESCRIPTORS_PER_BACKEND = 4
# Fewer than this and the router cannot serve even a few clients: refuse to start instead.
MIN_CONNECTIONS = 8
# Each open connection may buffer an incomplete head; above this many the memory, not the
# descriptors, is what runs out first.
MAX_CONNECTIONS_CEILING = 4096

REQUEST_TIMEOUT = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
UNAVAILABLE = b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


@dataclass(frozen=True)
class ConnectionLimits:
    max_connections: int
    head_timeout_s: float
    body_timeout_s: float
    # uvicorn's backlog: the listen queue, and connections accepted per turn of the loop
    backlog: int


@dataclass(frozen=True)
class DescriptorRoom:
    """What the open-file limit leaves for HTTP connections."""

    max_connections: int
    accept_batch: int
    soft_limit: int


def open_descriptors() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:  # not Linux: count what can be seen
        return 3


def descriptor_room(backends: int, soft_limit: int | None = None) -> DescriptorRoom:
    """Open connections the open-file limit leaves room for, after what is open now and
    what the database, the backends and a burst of accepts may need."""
    if soft_limit is None:
        soft_limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft_limit == resource.RLIM_INFINITY:
        return DescriptorRoom(MAX_CONNECTIONS_CEILING, MAX_ACCEPT_BATCH, soft_limit)
    batch = max(MIN_ACCEPT_BATCH, min(MAX_ACCEPT_BATCH, soft_limit // ACCEPT_BATCH_SHARE))
    reserved = RESERVED_DESCRIPTORS + DESCRIPTORS_PER_BACKEND * backends + batch * ACCEPT_TURNS
    room = min(MAX_CONNECTIONS_CEILING, soft_limit - open_descriptors() - reserved)
    return DescriptorRoom(room, batch, soft_limit)


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with request deadlines and a bound on open connections; use
    `bounded_protocol(limits)` for a class bound to one server's limits."""

    limits: ClassVar[ConnectionLimits]
    # connections waiting for a request head, oldest first (a dict keeps insertion order)
    waiting: ClassVar[dict["BoundedH11Protocol", None]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._reading_body = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_head()
        if len(self.connections) > self.limits.max_connections:
            self._make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        self._follow_request()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._await_head()  # keep-alive: the next request's head is due

    # --- the request's deadlines ----------------------------------------------------------

    def _await_head(self) -> None:
        self._stop_waiting()
        self.waiting[self] = None
        self._deadline = self.loop.call_later(self.limits.head_timeout_s, self._head_timed_out)

    def _follow_request(self) -> None:
        """After each read: once the head is in, the head's deadline gives way to the body's,
        and once the body is in, to none (the response is the app's to time)."""
        theirs = self.conn.their_state
        if theirs is h11.IDLE or self.transport.is_closing():
            return
        if theirs is h11.SEND_BODY:
            if not self._reading_body:
                self._stop_waiting()
                self._reading_body = True
                self._deadline = self.loop.call_later(self.limits.body_timeout_s, self._body_timed_out)
            return
        self._stop_waiting()

    def _stop_waiting(self) -> None:
        self.waiting.pop(self, None)
        self._reading_body = False
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _head_timed_out(self) -> None:
        self._deadline = None
        if self.conn.their_state is not h11.IDLE or self.transport.is_closing():
            return
        if self._head_started():
            logger.warning(
                "closed an HTTP connection that sent no whole request head within %g s",
                self.limits.head_timeout_s,
            )
            self._close(REQUEST_TIMEOUT)
        else:  # a port probe, or a client that connected and said nothing
            logger.info("closed an HTTP connection that sent nothing for %g s", self.limits.head_timeout_s)
            self._close(None)

    def _body_timed_out(self) -> None:
        self._deadline = None
        if self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing():
            logger.warning(
                "closed an HTTP connection whose request body did not arrive within %g s",
                self.limits.body_timeout_s,
            )
            self._close(None)  # the app, reading the body, sees the client gone

    def _head_started(self) -> bool:
        return bool(self.conn.trailing_data[0])

    # --- the bound on open connections ----------------------------------------------------

    def _make_room(self) -> None:
        """Close the oldest connection still waiting for a request head, or this one."""
        for oldest in self.waiting:
            if oldest is not self:
                logger.warning(
                    "%d HTTP connections open (the limit): closed the oldest one still waiting "
                    "for its request head",
                    len(self.connections),
                )
                oldest._close(REQUEST_TIMEOUT if oldest._head_started() else None)
                return
        logger.warning(
            "%d HTTP connections open (the limit), each mid-request: refused one more", len(self.connections)
        )
        self._close(UNAVAILABLE)

    def _close(self, answer: bytes | None) -> None:
        self._stop_waiting()
        if answer is not None:
            self.transport.write(answer)
        self.transport.close()


def bounded_protocol(limits: ConnectionLimits) -> type[BoundedH11Protocol]:
    """The protocol class uvicorn builds each connection with, bound to these limits."""

    class RouterH11Protocol(BoundedH11Protocol):
        pass

    RouterH11Protocol.limits = limits
    RouterH11Protocol.waiting = {}
    return RouterH11Protocol
