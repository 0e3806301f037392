"""Another process holding the database's write lock: the system `sqlite3` shell inside
BEGIN IMMEDIATE, as a person inspecting the file would. Shared by bench/busy_bench.py and
tests/test_database_busy.py, which time searches while it holds the lock."""

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw

# how long the shell may take to get the lock before the caller is told it never did
TAKE_LOCK_WITHIN_S = 10.0


def write_lock_held(db: Path) -> bool:
    """Whether another connection holds the write lock right now (a probe that never waits)."""
    probe = apsw.Connection(str(db))
    try:
        probe.set_busy_timeout(0)
        probe.execute("BEGIN IMMEDIATE")
        probe.execute("ROLLBACK")
        return False
    except apsw.BusyError:
        return True
    finally:
        probe.close()


@contextmanager
def sqlite3_shell_holding_the_write_lock(db: Path) -> Iterator[subprocess.Popen[bytes]]:
    """The system sqlite3 shell inside BEGIN IMMEDIATE until the block ends."""
    shell = subprocess.Popen(
        ["sqlite3", str(db)], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        assert shell.stdin is not None
        shell.stdin.write(
            b".timeout 10000\nBEGIN IMMEDIATE;\nUPDATE catalog_version SET version = version;\n"
        )
        shell.stdin.flush()
        deadline = time.monotonic() + TAKE_LOCK_WITHIN_S
        while not write_lock_held(db):
            if time.monotonic() > deadline:
                raise TimeoutError("the sqlite3 shell never took the write lock")
            time.sleep(0.01)
        yield shell
    finally:
        if shell.stdin is not None:
            shell.stdin.close()  # the shell exits, its transaction rolled back
        shell.wait(timeout=10)
