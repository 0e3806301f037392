"""The `context-router` command line: argparse subcommands, no logic of its own.

Each subcommand lives in a module of router.commands that offers `register(subparsers)`;
the handler it sets returns the process exit code. Only the module of the command being run
is imported (COMMANDS says which): the MCP SDK, the schema validators and the break-glass
settings cost seconds on a busy machine, which `--version`, `paths` or `search` must not pay
(bench/startup.py measures it, tests/test_cli_startup.py keeps the SDK out).
"""

import argparse
import difflib
import importlib
import sys

from router import __version__
from router.errors import RouterError, first_error

# Every command, in the order `--help` lists them, and the module that registers it.
COMMANDS: dict[str, str] = {
    "catalog": "router.commands.catalog",
    "configs": "router.commands.configs",
    "search": "router.commands.search",
    "inspect": "router.commands.search",
    "eval": "router.commands.evaluate",
    "break-glass": "router.commands.breakglass",
    "prices": "router.commands.prices",
    "serve": "router.commands.serve",
    "dashboard": "router.commands.dashboard",
    "harvest": "router.commands.harvest",
    "skills": "router.commands.skills",
    "prompt": "router.commands.prompt",
    "schemas": "router.commands.handoff",
    "handoff": "router.commands.handoff",
    "cards": "router.commands.cards",
    "paths": "router.commands.setup",
    "init": "router.commands.setup",
    "doctor": "router.commands.doctor",
    "servers": "router.commands.servers",
    "add": "router.commands.servers",
    "remove": "router.commands.servers",
    "import": "router.commands.servers",
}
COMMAND_MODULES = tuple(dict.fromkeys(COMMANDS.values()))


def build_parser(modules: tuple[str, ...] = COMMAND_MODULES) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="context-router",
        description="Three cache-stable MCP meta-tools over one SQLite catalog of backend tools.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in modules:
        importlib.import_module(module_name).register(subparsers)
    return parser


TOP_LEVEL_OPTIONS = {"-h", "--help", "--version"}


def _command_word(argv: list[str]) -> str | None:
    """The command a command line names: its first word after the top-level options (none of
    which takes a value). None when there is none, or when an option the top level does not
    know comes first (argparse then says what is wrong with it)."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg
        if arg not in TOP_LEVEL_OPTIONS:
            return None
    return None


def _modules_for(argv: list[str]) -> tuple[str, ...]:
    """The command modules a command line needs."""
    word = _command_word(argv)
    if word in COMMANDS:
        return (COMMANDS[word],)
    if word is None and "--version" in argv and not {"-h", "--help"} & set(argv):
        return ()  # argparse prints the version and exits before it asks for a command
    return COMMAND_MODULES  # --help lists every command; argparse's own errors name them too


def _unknown_command(argv: list[str]) -> str | None:
    """A mistyped command, said with the commands it is close to (argparse 3.11 only lists
    all 20 of them)."""
    word = _command_word(argv)
    if word is None or word in COMMANDS:
        return None
    close = difflib.get_close_matches(word, COMMANDS, n=3, cutoff=0.6)
    if not close:
        return f"unknown command {word!r}; `context-router --help` lists the commands"
    return f"unknown command {word!r}; did you mean {' or '.join(close)}?"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    unknown = _unknown_command(argv)
    if unknown is not None:
        build_parser(()).error(unknown)
    args = build_parser(_modules_for(argv)).parse_args(argv)
    try:
        return args.handler(args)
    except Exception as exc:
        # imported here, like the commands: SQLite's bindings and best-practice set-up are only
        # needed once a command has opened a database
        import apsw

        from router.db import describe_database_error
        from router.paths import resolve_db_path

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
