"""The router's SQLite file, used from the event loop without ever waiting there for a lock.

Every statement first runs on the event loop, on a connection whose busy timeout is zero:
the usual case (no other writer) costs no thread hop. When another process holds the write
lock (a big `catalog` load, a `sqlite3` shell inside a transaction), SQLite answers BUSY at
once and the work moves to a worker thread with its own connection, which waits there, so
other sessions keep being served. Reads rarely get that far: in WAL mode a reader never
waits for a writer.

Three kinds of work:
- `read`: awaited; waits in the worker for as long as it takes (reads hardly ever do).
- `write`: awaited, bounded: a forwarded call's 'started' audit row must be written before
  the call goes out, so a lock held past `wait_s` refuses the call ("database busy: retry").
  Its worker connection is its own, so it never queues behind `write_soon`'s queued rows
  (each waits for the lock for as long as it takes), and the wait for that worker counts
  toward `wait_s`: the bound holds whatever is queued.
- `write_soon`: not awaited; a search's audit row, a call's finished row: written at once
  when the lock is free, else queued and written by the worker as soon as it is. A write
  that meets a full disk is queued the same way, and tried again every FULL_RETRY_S until
  space frees (at most MAX_QUEUED_WRITES wait; past that they are dropped and counted).

Every unit of work must be one statement or one transaction: work that met BUSY on the
loop is run again, whole, in the worker.

The file deleted (or replaced) under the running router is noticed (router/facade/
database_file.py): said on stderr at once, and by `check_file`, which every meta-tool call
runs first, in its answer.
"""

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.abc
import anyio.to_thread
import apsw

from router.db import connect, describe_database_error
from router.errors import RouterError
from router.facade.database_file import FileWatch
from router.facade.log_guard import describe_failure

logger = logging.getLogger(__name__)

# How long a forwarded call's 'started' row may wait for the write lock before the call is
# refused: a call is never forwarded unaudited.
CALL_AUDIT_WAIT_S = 5.0
# A queued write waits this long per attempt, and is retried until the router stops.
QUEUED_WRITE_WAIT_S = 10.0
# How long the router, stopping, waits for queued writes.
QUEUED_WRITE_GRACE_S = 5.0
# A write queued by a full disk is tried again this often until it succeeds.
FULL_RETRY_S = 1.0
# Writes waiting at once (for a lock or for space); one more is dropped, and counted.
MAX_QUEUED_WRITES = 10_000
# How often the file is checked for having been deleted under the router.
FILE_CHECK_INTERVAL_S = 2.0

Result = TypeVar("Result")

# The worker lanes, each a connection used by one thread at a time.
READS = "reads"
QUEUED_WRITES = "queued writes"
BOUNDED_WRITES = "bounded writes"
LANES = (READS, QUEUED_WRITES, BOUNDED_WRITES)


# What no retry cures: the file is full, read-only, unreadable, cannot be opened or is damaged.
UNUSABLE_FILE_ERRORS = (
    apsw.FullError,
    apsw.ReadOnlyError,
    apsw.IOError,
    apsw.CantOpenError,
    apsw.CorruptError,
)


class DatabaseBusyError(RouterError):
    """Another process held the write lock for longer than this work may wait."""


class DatabaseUnusableError(RouterError):
    """The file cannot be written: a full disk, a read-only file, an I/O error."""


class DatabaseFullError(DatabaseUnusableError):
    """The disk (or the file's size limit) is full: a queued write is tried again later."""


class DatabaseGoneError(DatabaseUnusableError):
    """The file was deleted or replaced while the router ran."""


def _unusable(exc: apsw.Error, path: Path) -> DatabaseUnusableError:
    kind = DatabaseFullError if isinstance(exc, apsw.FullError) else DatabaseUnusableError
    return kind(describe_database_error(exc, path))


class FacadeDatabase:
    """The loop's connection (busy timeout 0) and a worker thread's (waits for locks); an async
    context manager that owns the queued writes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn = _open(path)
        self.conn.set_busy_timeout(0)
        # worker connections, each used by one thread at a time, one per lane: a read never
        # queues behind a write that waits for another process's lock, nor a bounded write
        # behind the queued ones
        self._workers: dict[str, apsw.Connection] = {}
        self._limiters = {lane: anyio.CapacityLimiter(1) for lane in LANES}
        self._task_group: anyio.abc.TaskGroup | None = None
        self._queued = 0
        self._dropped = 0
        # set once the router stops: a worker waiting for a lock or for space gives up
        self._closing = False
        self._file = FileWatch(path)
        self._file_problem: str | None = None

    async def __aenter__(self) -> "FacadeDatabase":
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self._task_group.start_soon(self._watch_file)
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        assert self._task_group is not None
        with anyio.move_on_after(QUEUED_WRITE_GRACE_S, shield=True):
            while self._queued:
                await anyio.sleep(0.01)
        if self._queued:
            logger.warning(
                "%d queued database writes were not written: the lock stayed busy or the disk full",
                self._queued,
            )
        self._closing = True
        self._task_group.cancel_scope.cancel()
        await self._task_group.__aexit__(*exc_info)
        for lane, limiter in self._limiters.items():
            await anyio.to_thread.run_sync(self._close_worker, lane, limiter=limiter)
        self.conn.close()
        self._file.close()

    # --- the file itself -----------------------------------------------------------------

    def check_file(self) -> None:
        """DatabaseGoneError when the file was deleted or replaced under the router."""
        problem = self._file_problem or self._file.problem()
        if problem is not None:
            self._noticed(problem)
            raise DatabaseGoneError(problem)

    def _noticed(self, problem: str) -> None:
        if self._file_problem is None:
            self._file_problem = problem
            logger.error("%s", problem)

    async def _watch_file(self) -> None:
        while self._file_problem is None:
            await anyio.sleep(FILE_CHECK_INTERVAL_S)
            problem = self._file.problem()
            if problem is not None:
                self._noticed(problem)

    # --- the three kinds of work ---------------------------------------------------------

    async def read(self, work: Callable[..., Result], /, *args: Any, **kwargs: Any) -> Result:
        try:
            return self._on_loop(work, args, kwargs)
        except apsw.BusyError:
            return await self._in_worker(work, args, kwargs, READS)

    async def write(
        self, work: Callable[..., Result], /, *args: Any, wait_s: float = CALL_AUDIT_WAIT_S, **kwargs: Any
    ) -> Result:
        try:
            return self._on_loop(work, args, kwargs)
        except apsw.BusyError:
            return await self._bounded(work, args, kwargs, wait_s)

    def write_soon(self, work: Callable[..., Any], /, *args: Any, **kwargs: Any) -> None:
        try:
            self._on_loop(work, args, kwargs)
        except apsw.BusyError:
            if self._task_group is None:
                raise DatabaseBusyError(self._busy_message(0.0)) from None
            self._queue(work, args, kwargs)
        except DatabaseFullError as exc:  # written once space frees
            logger.warning("%s: the write is queued until there is room", exc)
            self._queue(work, args, kwargs)
        except RouterError as exc:  # a write that cannot happen (read-only file): logged, not raised
            logger.warning("could not write to the database: %s", exc)

    def _queue(self, work: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if self._task_group is None or self._queued >= MAX_QUEUED_WRITES:
            self._dropped += 1
            logger.error(
                "%d database writes dropped: %d already wait for the lock or for space",
                self._dropped,
                MAX_QUEUED_WRITES,
            )
            return
        self._queued += 1
        self._task_group.start_soon(self._write_queued, work, args, kwargs)

    # --- where it runs -------------------------------------------------------------------

    def _on_loop(self, work: Callable[..., Result], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Result:
        try:
            return work(self.conn, *args, **kwargs)
        except UNUSABLE_FILE_ERRORS as exc:
            raise _unusable(exc, self.path) from exc

    async def _in_worker(
        self, work: Callable[..., Result], args: tuple[Any, ...], kwargs: dict[str, Any], lane: str
    ) -> Result:
        """Until it is done (or the router stops): each attempt waits QUEUED_WRITE_WAIT_S for
        the lock, then again; a full disk is tried again every FULL_RETRY_S."""

        def run() -> Result:
            while True:
                try:
                    conn = self._worker(lane)
                    conn.set_busy_timeout(int(QUEUED_WRITE_WAIT_S * 1000))
                    return self._run(conn, work, args, kwargs)
                except (apsw.BusyError, DatabaseFullError) as exc:
                    if self._closing:
                        raise
                    if isinstance(exc, DatabaseFullError):
                        time.sleep(FULL_RETRY_S)

        return await anyio.to_thread.run_sync(run, limiter=self._limiters[lane])

    async def _bounded(
        self, work: Callable[..., Result], args: tuple[Any, ...], kwargs: dict[str, Any], wait_s: float
    ) -> Result:
        """Done within `wait_s`, counting the wait for the lane's worker, or DatabaseBusyError.

        Only the wait for the worker is cancelled at the deadline: once in the thread, the
        work's own busy timeout is what is left, so its outcome is never lost to a
        cancellation after it committed."""
        deadline = anyio.current_time() + wait_s
        limiter = self._limiters[BOUNDED_WRITES]
        acquired = False
        with anyio.move_on_after(wait_s):
            await limiter.acquire()
            acquired = True
        if not acquired:
            raise DatabaseBusyError(self._busy_message(wait_s))
        left_ms = max(1, int((deadline - anyio.current_time()) * 1000))

        def run() -> Result:
            conn = self._worker(BOUNDED_WRITES)
            conn.set_busy_timeout(left_ms)
            return self._run(conn, work, args, kwargs)

        try:
            return await anyio.to_thread.run_sync(run)
        except apsw.BusyError:
            raise DatabaseBusyError(self._busy_message(wait_s)) from None
        finally:
            limiter.release()

    def _run(
        self,
        conn: apsw.Connection,
        work: Callable[..., Result],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Result:
        try:
            return work(conn, *args, **kwargs)
        except UNUSABLE_FILE_ERRORS as exc:
            raise _unusable(exc, self.path) from exc

    async def _write_queued(
        self, work: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        try:
            await self._in_worker(work, args, kwargs, QUEUED_WRITES)
        except (RouterError, apsw.BusyError) as exc:
            logger.warning("a queued database write failed: %s", exc)
        except Exception as exc:  # a queued write never takes the router with it
            logger.error("a queued database write failed: %s", describe_failure(exc))
        finally:
            self._queued -= 1

    def _worker(self, lane: str) -> apsw.Connection:
        if lane not in self._workers:
            problem = self._file.problem()
            if problem is not None:  # opening the path now would make a new, empty file
                raise DatabaseGoneError(problem)
            try:
                self._workers[lane] = _open(self.path)
            except UNUSABLE_FILE_ERRORS as exc:
                raise _unusable(exc, self.path) from exc
        return self._workers[lane]

    def _close_worker(self, lane: str) -> None:
        conn = self._workers.pop(lane, None)
        if conn is not None:
            conn.close()

    def _busy_message(self, waited_s: float) -> str:
        return (
            f"database busy: retry (another process has held the write lock on {self.path} "
            f"for over {waited_s:g} s, e.g. a catalog load or a sqlite3 shell in a transaction)"
        )


def _open(path: Path) -> apsw.Connection:
    conn = connect(path)
    # WAL with synchronous=NORMAL: a commit is not fsynced, yet survives a crash of this
    # process (only an OS crash can lose the last commits). Two audit writes per call at
    # FULL would cost more than the whole call.
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn
