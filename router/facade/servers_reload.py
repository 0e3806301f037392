"""A running router picks up a changed servers config without a restart.

The config is read through one function (ServersSource.load: today `load_servers(file)`; the
layered shipped-plus-user files read through it the same way), and the files it comes from
are watched by their stat (modification time, size, inode): at most once a second, on a
call or a search, so checking costs a clock read almost every time. A changed config is
compared server by server (router/facade/backends.py BackendPool.apply): a new server is
callable at once, a removed one is stopped, a changed one is stopped and started again with
its new declaration on its next call. A config that does not load is logged and the one in
force is kept.
"""

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from router.backends.servers import ServersConfig

logger = logging.getLogger(__name__)

# How often, at most, the files are looked at again.
CHECK_INTERVAL_S = 1.0

Signature = tuple[tuple[str, int, int, int] | None, ...]


def files_signature(files: tuple[Path, ...]) -> Signature:
    """What changes when any of the files is written, replaced or removed."""
    signature: list[tuple[str, int, int, int] | None] = []
    for path in files:
        try:
            stat = os.stat(path)
        except OSError:
            signature.append(None)
            continue
        signature.append((str(path), stat.st_mtime_ns, stat.st_size, stat.st_ino))
    return tuple(signature)


@dataclass
class ServersSource:
    """The files the servers config comes from, and the one function that reads it."""

    files: tuple[Path, ...]
    load: Callable[[], ServersConfig]
    clock: Callable[[], float] = time.monotonic
    _signature: Signature = field(default=(), init=False)
    _checked_at: float = field(default=float("-inf"), init=False)

    def __post_init__(self) -> None:
        self._signature = files_signature(self.files)
        self._checked_at = self.clock()

    def changed(self) -> ServersConfig | None:
        """The config, read again, when its files changed since the last look; else None.
        A changed file that does not load raises (RouterError) and is not read again until
        it changes once more."""
        now = self.clock()
        if now - self._checked_at < CHECK_INTERVAL_S:
            return None
        self._checked_at = now
        signature = files_signature(self.files)
        if signature == self._signature:
            return None
        self._signature = signature  # a file that fails to load is not read again until it changes
        return self.load()
