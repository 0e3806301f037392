"""`context-router catalog`: validate seeds and user catalogs, then replace the catalog."""

import argparse
import time
from pathlib import Path

from router.breakglass.prices import file_priced_at, parse_prices, write_prices
from router.breakglass.settings import DEFAULT_PRICES, SNAPSHOT_PRICED_AT
from router.catalog.load import load_catalog
from router.commands import add_db_option
from router.db import connect
from router.paths import SEEDS_DIR, resolve_db_path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "catalog",
        help="validate seeds (and --from catalogs) and replace the catalog in one transaction",
        description=(
            "Validate every seed file and user catalog, then replace the catalog in one "
            "transaction. With --from alone only those files are loaded; add --seeds to "
            "load both."
        ),
    )
    add_db_option(parser)
    parser.add_argument("--seeds", metavar="DIR", type=Path, help=f"seed directory (default {SEEDS_DIR})")
    parser.add_argument(
        "--from",
        dest="user_files",
        metavar="FILE",
        type=Path,
        action="append",
        default=[],
        help="a JSON Lines catalog of MCP tool objects (repeatable)",
    )
    parser.add_argument(
        "--prices",
        metavar="FILE",
        type=Path,
        default=DEFAULT_PRICES,
        help=f"break-glass model prices, OpenRouter /api/v1/models format (default {DEFAULT_PRICES})",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    seed_dir = args.seeds if args.seeds is not None else (None if args.user_files else SEEDS_DIR)
    print(build_catalog(resolve_db_path(args.db), seed_dir, args.user_files, args.prices))
    return 0


def build_catalog(db_path: Path, seed_dir: Path | None, user_files: list[Path], prices: Path) -> str:
    """Load seeds, user catalogs and prices into the database; one line saying what it did."""
    started = time.perf_counter()
    # break-glass model prices: validated before anything is written, so a bad price file
    # leaves the catalog as it was too; written in their own transaction
    price_rows = parse_prices(prices)
    # the committed snapshot is as old as it says; any other file as old as its writing
    priced_at = SNAPSHOT_PRICED_AT if prices == DEFAULT_PRICES else file_priced_at(prices)
    conn = connect(db_path)
    try:
        summary = load_catalog(conn, seed_dir=seed_dir, user_files=user_files)
        price_count = write_prices(conn, price_rows, priced_at)
    finally:
        conn.close()
    elapsed_ms = (time.perf_counter() - started) * 1000
    return f"{summary.one_line()}; {price_count} model prices in {elapsed_ms:.0f} ms"


def load_default_catalog(db_path: Path) -> str:
    """What `context-router catalog` does with no options: the shipped seeds and prices."""
    return build_catalog(db_path, SEEDS_DIR, [], DEFAULT_PRICES)
