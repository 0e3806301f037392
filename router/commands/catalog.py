"""`context-router catalog`: validate seeds and user catalogs, then replace the catalog."""

import argparse
import time
from pathlib import Path

from router.breakglass.pricing import load_prices
from router.breakglass.settings import DEFAULT_PRICES
from router.catalog import load_catalog
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
    started = time.perf_counter()
    conn = connect(resolve_db_path(args.db))
    summary = load_catalog(conn, seed_dir=seed_dir, user_files=args.user_files)
    # break-glass model prices, in their own transaction
    price_count = load_prices(conn, args.prices)
    elapsed_ms = (time.perf_counter() - started) * 1000
    print(f"{summary.one_line()}; {price_count} model prices in {elapsed_ms:.0f} ms")
    return 0
