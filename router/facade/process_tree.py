"""Every process a stdio backend starts, found and ended with it.

A backend is started as the leader of its own session and process group, so one signal to
the group reaches it and everything it starts. Two kinds of process escape that signal:
one that leaves the group (`setsid`, a daemon's double fork) and one whose parent exited
first. Both are still found:

- while its ancestors live, by walking the backend's process tree (psutil), whatever group
  or session a descendant moved to;
- once they are gone, because `serve` makes the router a child subreaper (Linux
  `PR_SET_CHILD_SUBREAPER`): an orphan of a backend becomes the router's child instead of
  init's. Each backend start carries its own tag in its environment (BACKEND_TAG_ENV), which
  every descendant inherits unless it clears its environment, so an orphan is ended with
  the backend it came from, and every orphan when the router exits.

Outside Linux, or for a descendant that both leaves the group and clears its environment
after its parent exited, only the group signal and the tree walk apply.
"""

import ctypes
import logging
import os
import signal
import sys
from collections.abc import Iterable

import psutil

logger = logging.getLogger(__name__)

# What reading a process's entry in /proc can raise: psutil's own errors, and an OSError
# such as EMFILE when the router has run out of file descriptors (a flood of connections):
# a look that fails finds nothing this time, it never ends the router.
PROCESS_LOOKUP_ERRORS = (psutil.Error, OSError)

# Set in each backend's environment: "<router pid>:<backend>:<start number>".
BACKEND_TAG_ENV = "CONTEXT_ROUTER_BACKEND_TAG"


def backend_tag(backend: str, start: int) -> str:
    return f"{os.getpid()}:{backend}:{start}"


def _any_backend_of_this_router(tag: str) -> bool:
    return tag.startswith(f"{os.getpid()}:")


PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Make orphaned descendants of this process its children (Linux); False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def tree(pid: int) -> list[psutil.Process]:
    """The process and all its living descendants (psutil guards each against pid reuse)."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except PROCESS_LOOKUP_ERRORS:
        return []


def signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def signal_all(processes: Iterable[psutil.Process], signum: int) -> None:
    for process in processes:
        try:
            process.send_signal(signum)  # refuses a pid that now names another process
        except PROCESS_LOOKUP_ERRORS:
            pass


def tagged_orphans(tag: str | None, exclude: set[int]) -> list[psutil.Process]:
    """The router's own children (orphans it adopted as subreaper) whose environment carries
    `tag` (any of this router's backends' tags when None), with their descendants; `exclude`
    are the backends it started itself."""
    found: list[psutil.Process] = []
    try:
        children = psutil.Process().children()
    except PROCESS_LOOKUP_ERRORS:
        return found
    for child in children:
        if child.pid in exclude:
            continue
        try:
            child_tag = child.environ().get(BACKEND_TAG_ENV)
        except PROCESS_LOOKUP_ERRORS:
            continue
        if child_tag is not None and (
            child_tag == tag if tag is not None else _any_backend_of_this_router(child_tag)
        ):
            found += tree(child.pid)
    return found


def kill_and_reap(processes: list[psutil.Process], exclude: set[int]) -> None:
    """SIGKILL each; reap the router's own children among them, but never one in `exclude`
    (asyncio reaps the processes it started; an adopted orphan would stay a zombie)."""
    signal_all(processes, signal.SIGKILL)
    mine = os.getpid()
    for process in processes:
        try:
            if process.pid not in exclude and process.ppid() == mine:
                process.wait(timeout=1.0)
        except PROCESS_LOOKUP_ERRORS:  # ChildProcessError is an OSError
            pass


def reap_adopted_zombies(exclude: set[int]) -> None:
    """Reap adopted orphans that exited on their own (never a process asyncio watches)."""
    try:
        children = psutil.Process().children()
    except PROCESS_LOOKUP_ERRORS:
        return
    for child in children:
        if child.pid in exclude:
            continue
        try:
            if child.status() == psutil.STATUS_ZOMBIE:
                os.waitpid(child.pid, os.WNOHANG)
        except PROCESS_LOOKUP_ERRORS:  # ChildProcessError is an OSError
            pass
