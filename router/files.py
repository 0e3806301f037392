"""Writing a file so that readers see the old or the new one, never half of either."""

import os
import tempfile
from pathlib import Path


def write_atomically(path: Path, text: str) -> None:
    """Write beside the target, fsync, rename over it, fsync the directory: after a crash or
    power loss the file is whole, old or new. Keeps the mode an existing file had."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes the file private; keep the mode the file had (else rw-r--r--)
        os.chmod(temp_name, path.stat().st_mode & 0o777 if path.exists() else 0o644)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
    _fsync_directory(path.parent)


def _fsync_directory(directory: Path) -> None:
    # the rename is durable only once the directory entry is on disk
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # a platform without directory handles: the rename is still atomic
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
