"""Finding a backend's program: in the environment the router runs in, then PATH.

A router installed with pip, pipx or uvx has its own environment whose scripts directory may
not be on PATH: the reference servers installed beside it (mcp-server-time, ...) are found
there first. Then the npm backends the router installed (router/backends/node.py: .npm-tools
in a checkout, by `make install`; the user's data directory otherwise, by `context-router
init`). Nothing else is special: a user's own servers are found on PATH, or by absolute path.
"""

import functools
import os
import shutil
import sysconfig
from pathlib import Path

from router.backends.node import npm_bin_dir


@functools.cache  # neither changes while the process runs; resolve_command asks per server
def program_search_dirs() -> tuple[Path, ...]:
    """Directories looked in before PATH, in order."""
    return (Path(sysconfig.get_path("scripts")), npm_bin_dir())


def resolve_command(command: str, search_dirs: tuple[Path, ...] | None = None) -> str | None:
    """A command with a '/' is a path; a bare name is looked up in search_dirs, then PATH."""
    if os.sep in command:
        path = Path(command)
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    for directory in program_search_dirs() if search_dirs is None else search_dirs:
        candidate = directory / command
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which(command)
