"""Whether the router's database file is still the file it opened.

A running router keeps its SQLite file open: deleted (or replaced by a `mv`) under it, the
file still takes every write, so every call answers ok while its audit rows, and the whole
audit of the session, go into an inode no path names and vanish when the router stops.
FileWatch holds a descriptor of the file it opened and tells: its link count fell to zero
(deleted), its path names nothing (moved or deleted) or another file (replaced).
"""

import os
from pathlib import Path

from router.paths import build_command


class FileWatch:
    """The database file as opened; `problem()` is None while it is still there."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        opened = os.fstat(self._fd)
        self._identity = (opened.st_dev, opened.st_ino)

    def problem(self) -> str | None:
        """What happened to the file, as the sentence a user is told, or None."""
        if self._fd is None:
            return None
        try:
            if os.fstat(self._fd).st_nlink == 0:
                return self._told("was deleted")
            named = os.stat(self.path)
        except FileNotFoundError:
            return self._told("was moved or deleted")
        except OSError:
            return None  # cannot tell (e.g. no descriptors left): not said to be gone
        if (named.st_dev, named.st_ino) != self._identity:
            return self._told("was replaced by another file")
        return None

    def _told(self, what: str) -> str:
        return (
            f"database {self.path} {what} while the router was running: nothing it records now "
            "(audit rows, breaker and cost rows) is kept once it stops. Stop the router, restore the "
            f"file from a backup or build a new one ({build_command(self.path)}), and start it again"
        )

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
