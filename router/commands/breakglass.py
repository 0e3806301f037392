"""`context-router break-glass`: the break-glass MCP server over stdio."""

import argparse
from pathlib import Path

from router.breakglass.settings import DEFAULT_CONFIG, load_settings
from router.commands import add_db_option
from router.errors import RouterError
from router.paths import resolve_db_path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "break-glass",
        help="run the break-glass MCP server (stdio): the last-resort multi-model panel",
        description=(
            "The break-glass MCP server over stdio. Needs OPENROUTER_API_KEY in the environment; "
            "OPENROUTER_BASE_URL overrides https://openrouter.ai. Model prices come from the "
            "catalog (run `context-router catalog` first)."
        ),
    )
    add_db_option(parser)
    parser.add_argument(
        "--config",
        type=Path,
        default=DEFAULT_CONFIG,
        metavar="FILE",
        help=f"break-glass settings (default {DEFAULT_CONFIG})",
    )
    parser.add_argument(
        "--workspace",
        type=Path,
        default=Path.cwd(),
        metavar="DIR",
        help="where context files are read from (default: the working directory)",
    )
    parser.add_argument(
        "--session",
        metavar="ID",
        help="session id the caps apply to (default: one new id per server process); "
        "several processes given the same id share one session's caps",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # imported here: the MCP SDK costs most of a second, which every other subcommand
    # would otherwise pay at start-up
    from router.breakglass.server import build_server

    settings = load_settings(args.config)
    if not args.workspace.is_dir():
        raise RouterError(f"--workspace {args.workspace}: not a directory")
    build_server(resolve_db_path(args.db), settings, args.workspace, args.session).run()
    return 0
