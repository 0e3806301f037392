"""Is a process that was recorded still the same process? A pid alone can be recycled."""

import os


def process_start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22), or None
    where there is no /proc (then only whether the pid exists is known)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # fields[0] is field 3 (state); field 22 is at index 19
    return fields[19] if len(fields) > 19 else None


def still_running(pid: int, recorded_start: str) -> bool:
    """The pid exists (not a zombie) and, where /proc says, started when it was recorded."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
        if state == "Z":
            return False
    except (OSError, IndexError):
        return True
    started = process_start_time(pid)
    return not recorded_start or started is None or started == recorded_start
