"""`context-router harvest SERVER`: a live backend's tools/list → seeds/SERVER.json."""

import argparse
import os
from pathlib import Path

import anyio

from router.commands.serve import SERVERS_ENV_VAR
from router.paths import SEEDS_DIR, resolve_db_path
from router.servers import SERVERS_FILE, load_servers

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
    parser.add_argument(
        "--servers", metavar="FILE", type=Path, help=f"default: ${SERVERS_ENV_VAR}, else {SERVERS_FILE}"
    )
    parser.add_argument("--seeds", metavar="DIR", type=Path, default=SEEDS_DIR, help=f"default {SEEDS_DIR}")
    parser.add_argument(
        "--workspace", metavar="DIR", type=Path, help="${WORKSPACE} (default: working directory)"
    )
    parser.add_argument("--db", metavar="PATH", help="its directory holds ${DATA_DIR} (default as for serve)")
    parser.add_argument(
        "--accept-changed",
        action="store_true",
        help="take changed definitions and drop vanished tools (triggers and boost kept)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from router.catalog.harvest import harvest
    from router.facade.backends import Placeholders, default_data_dir

    servers_file = args.servers or (
        Path(os.environ[SERVERS_ENV_VAR]) if os.environ.get(SERVERS_ENV_VAR) else SERVERS_FILE
    )
    placeholders = Placeholders(
        (args.workspace or Path.cwd()).resolve(), default_data_dir(resolve_db_path(args.db))
    )
    report = anyio.run(
        lambda: harvest(
            args.server,
            load_servers(servers_file),
            args.seeds,
            placeholders,
            accept_changed=args.accept_changed,
        )
    )
    print("\n".join(report.lines()))
    return EXIT_FLAGGED if report.flagged else 0
