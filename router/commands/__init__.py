"""One module per CLI subcommand group; see router.cli.COMMAND_MODULES."""

import argparse
import functools
from pathlib import Path

from router.errors import RouterError
from router.paths import DB_ENV_VAR, SERVERS_ENV_VAR, SHIPPED_SERVERS_FILE, default_db_path, user_servers_file


@functools.cache
def _db_help() -> str:
    # worked out once per process, though a dozen subcommands take --db
    return f"SQLite file (default: ${DB_ENV_VAR}, else {default_db_path()})"


@functools.cache
def _servers_help() -> str:
    return (
        f"a servers file; repeat to layer several, later winning (default: ${SERVERS_ENV_VAR}, "
        f"else {SHIPPED_SERVERS_FILE} then {user_servers_file()} if it exists)"
    )


def add_db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", metavar="PATH", help=_db_help())


def add_servers_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--servers", metavar="FILE", type=Path, action="append", help=_servers_help())


def workspace_dir(value: Path | None) -> Path:
    """--workspace DIR (default: the working directory), resolved; a path that is not a
    directory is refused, never taken as a workspace where nothing can work."""
    if value is None:
        return Path.cwd().resolve()
    workspace = value.expanduser().resolve()
    if not workspace.exists():
        raise RouterError(f"--workspace {value}: no such directory")
    if not workspace.is_dir():
        raise RouterError(f"--workspace {value}: not a directory")
    return workspace
