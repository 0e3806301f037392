"""One module per CLI subcommand group; see router.cli.COMMAND_MODULES."""

import argparse

from router.paths import DB_ENV_VAR


def add_db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        metavar="PATH",
        help=f"SQLite file (default: ${DB_ENV_VAR}, else router.db in the working directory)",
    )
