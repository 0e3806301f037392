"""`context-router harvest SERVER`: a live backend's tools/list → seeds/SERVER.json."""

import argparse
from pathlib import Path

import anyio

from router.backends.servers import load_servers
from router.commands import add_servers_option, workspace_dir
from router.commands.catalog import load_default_catalog
from router.paths import SEEDS_DIR, resolve_db_path, servers_files, user_seeds_dir

# Exit status when a changed or vanished tool was flagged (and its seed entry kept).
EXIT_FLAGGED = 3


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "harvest",
        help="write a backend's live tools/list into its seed file, keeping triggers and boosts",
        description=(
            "Start the backend declared in servers.toml, read its tools/list and merge it into "
            "seeds/SERVER.json: new tools are added, hand-written triggers and boosts are kept, "
            "and a tool whose definition changed (or that is gone) is flagged and kept as it "
            f"was unless --accept-changed is given (exit status {EXIT_FLAGGED} when flagged)."
        ),
    )
    parser.add_argument("server", help="a [servers.NAME] of servers.toml")
    add_servers_option(parser)
    parser.add_argument(
        "--seeds",
        metavar="DIR",
        type=Path,
        help=f"where the seed is written (default: {SEEDS_DIR} for a server seeded there, else the user "
        "seeds directory); with the default, the catalog is reloaded too",
    )
    parser.add_argument(
        "--workspace", metavar="DIR", type=Path, help="${WORKSPACE} (default: working directory)"
    )
    parser.add_argument("--db", metavar="PATH", help="its directory holds ${DATA_DIR} (default as for serve)")
    parser.add_argument(
        "--accept-changed",
        action="store_true",
        help="take changed definitions and drop vanished tools (triggers, boost and reviews kept)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from router.catalog.harvest import harvest
    from router.facade.placeholders import Placeholders, default_data_dir

    placeholders = Placeholders(workspace_dir(args.workspace), default_data_dir(resolve_db_path(args.db)))
    seeds = args.seeds
    if seeds is None:  # a shipped server's seed is in seeds/, a user's in the user seeds directory
        shipped = SEEDS_DIR / f"{args.server}.json"
        user = user_seeds_dir() / f"{args.server}.json"
        seeds = SEEDS_DIR if shipped.exists() and not user.exists() else user_seeds_dir()
    report = anyio.run(
        lambda: harvest(
            args.server,
            load_servers(servers_files(args.servers)),
            seeds,
            placeholders,
            accept_changed=args.accept_changed,
        )
    )
    print("\n".join(report.lines()))
    if args.seeds is None:
        # the catalog follows at once: an accepted definition releases its quarantine
        db_path = resolve_db_path(args.db)
        print(f"{db_path}: {load_default_catalog(db_path, args.servers)}")
    return EXIT_FLAGGED if report.flagged else 0
