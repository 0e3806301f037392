"""The `context-router` command line: argparse subcommands, no logic of its own.

Each subcommand lives in a module of router.commands that offers `register(subparsers)`;
the handler it sets returns the process exit code.
"""

import argparse
import importlib
import sys

import apsw

from router import __version__
from router.db import describe_database_error
from router.errors import RouterError, first_error
from router.paths import resolve_db_path

COMMAND_MODULES = (
    "router.commands.catalog",
    "router.commands.configs",
    "router.commands.search",
    "router.commands.evaluate",
    "router.commands.breakglass",
    "router.commands.prices",
    "router.commands.serve",
    "router.commands.harvest",
    "router.commands.skills",
    "router.commands.prompt",
    "router.commands.handoff",
    "router.commands.cards",
    "router.commands.setup",
    "router.commands.servers",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="context-router",
        description="Three cache-stable MCP meta-tools over one SQLite catalog of backend tools.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except Exception as exc:
        # also when a task group wrapped it (an MCP server's lifespan opening the database);
        # anything else is a bug, which keeps its traceback
        problem = first_error(exc, (RouterError, apsw.Error))
        if problem is None:
            raise
        message = str(problem)
        if isinstance(problem, apsw.Error):  # a read-only, full, damaged or locked file
            message = describe_database_error(problem, resolve_db_path(getattr(args, "db", None)))
        print(f"context-router {args.command}: error: {message}", file=sys.stderr)
        return 2
