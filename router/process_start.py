"""Is a process still running, and still the same process? A pid alone can be recycled.

Read from /proc/PID/stat where there is one: its state (a zombie, exited but not yet reaped,
is not running) and its start time; elsewhere only whether the pid exists is known.
"""

import os
from pathlib import Path

PROC_SELF_STAT = Path("/proc/self/stat")


def _stat(pid: int) -> tuple[str, str | None] | None:
    """(state, start time in clock ticks since boot) from /proc/PID/stat, or None if unreadable."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            # the fields follow the parenthesised command name, which may itself hold spaces;
            # fields[0] is field 3 (state), field 22 (start time) is at index 19
            fields = stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if not fields:
        return None
    return fields[0], fields[19] if len(fields) > 19 else None


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: it exists
    return True


def process_start_time(pid: int) -> str | None:
    """The process's start time (/proc/PID/stat field 22), or None where there is no /proc."""
    stat = _stat(pid)
    return stat[1] if stat is not None else None


def process_running(pid: int) -> bool:
    """The pid exists and is not a zombie. With /proc, a stat that cannot be read means the
    process is gone; without it, the pid's existence is all there is."""
    if not _pid_exists(pid):
        return False
    stat = _stat(pid)
    if stat is None:
        return not PROC_SELF_STAT.exists()
    return stat[0] != "Z"


def still_running(pid: int, recorded_start: str) -> bool:
    """The pid exists (not a zombie) and, where /proc says, started when it was recorded."""
    if not _pid_exists(pid):
        return False
    stat = _stat(pid)
    if stat is None:
        return True
    state, started = stat
    if state == "Z":
        return False
    return not recorded_start or started is None or started == recorded_start
