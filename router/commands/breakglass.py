"""`context-router break-glass`: the break-glass MCP server over stdio."""

import argparse
import math
from pathlib import Path

from router.breakglass.settings import DEFAULT_CONFIG, Settings, load_settings
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
            "catalog (`context-router prices --fetch`, or the snapshot `context-router catalog` "
            "loads)."
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
        "several processes given the same id, and restarts, share one session's caps",
    )
    parser.add_argument(
        "--session-max-usd",
        type=float,
        metavar="USD",
        help="this session's money cap (default: cost.session_max_usd in the config)",
    )
    parser.add_argument(
        "--session-max-calls",
        type=int,
        metavar="N",
        help="this session's call cap (default: cost.session_max_invocations in the config)",
    )
    parser.set_defaults(handler=run)


def _with_session_caps(settings: Settings, args: argparse.Namespace) -> Settings:
    update: dict[str, float | int] = {}
    if args.session_max_usd is not None:
        if not math.isfinite(args.session_max_usd) or args.session_max_usd < 0:
            raise RouterError(f"--session-max-usd {args.session_max_usd}: must be a non-negative amount")
        update["session_max_usd"] = args.session_max_usd
    if args.session_max_calls is not None:
        if args.session_max_calls < 0:
            raise RouterError(f"--session-max-calls {args.session_max_calls}: must be 0 or more")
        update["session_max_invocations"] = args.session_max_calls
    if not update:
        return settings
    return settings.model_copy(update={"cost": settings.cost.model_copy(update=update)})


def run(args: argparse.Namespace) -> int:
    # imported here: the MCP SDK costs most of a second, which every other subcommand
    # would otherwise pay at start-up
    from router.breakglass.server import build_server

    settings = _with_session_caps(load_settings(args.config), args)
    if not args.workspace.is_dir():
        raise RouterError(f"--workspace {args.workspace}: not a directory")
    build_server(resolve_db_path(args.db), settings, args.workspace, args.session).run()
    return 0
