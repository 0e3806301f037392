"""`context-router catalog`: validate seeds and user catalogs, then replace the catalog."""

import argparse
import time
from collections.abc import Collection
from pathlib import Path

from router.backends.servers import load_servers
from router.breakglass.prices import file_priced_at, parse_prices, write_prices
from router.breakglass.settings import DEFAULT_PRICES, SNAPSHOT_PRICED_AT
from router.catalog.load import load_catalog
from router.commands import add_db_option, add_servers_option
from router.db import connect
from router.errors import RouterError
from router.paths import SEEDS_DIR, resolve_db_path, servers_files, user_seeds_dir
from router.wording import counted


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "catalog",
        help="validate seeds (and --from catalogs) and replace the catalog in one transaction",
        description=(
            "Validate every seed file and user catalog, then replace the catalog in one "
            "transaction. By default: the shipped seeds and the user's own (those import, add and "
            "harvest wrote), less the servers a servers file switches off (enabled = false). "
            "With --from alone only those files are loaded; add --seeds to load both. User "
            "catalogs load leniently: a bad tool is skipped and listed (--strict: refused)."
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
        "--strict", action="store_true", help="refuse a user catalog with any bad tool instead of skipping it"
    )
    add_servers_option(parser)
    parser.add_argument(
        "--prices",
        metavar="FILE",
        type=Path,
        default=DEFAULT_PRICES,
        help=f"break-glass model prices, OpenRouter /api/v1/models format (default {DEFAULT_PRICES})",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    default = args.seeds is None and not args.user_files
    seed_dir = args.seeds if args.seeds is not None else (None if args.user_files else SEEDS_DIR)
    print(
        build_catalog(
            resolve_db_path(args.db),
            seed_dir,
            args.user_files,
            args.prices,
            user_seed_dir=user_seeds_dir() if default else None,
            disabled=load_servers(servers_files(args.servers)).disabled,
            strict=args.strict,
        )
    )
    return 0


def build_catalog(
    db_path: Path,
    seed_dir: Path | None,
    user_files: list[Path],
    prices: Path,
    *,
    user_seed_dir: Path | None = None,
    disabled: Collection[str] = (),
    strict: bool = False,
) -> str:
    """Load seeds, user catalogs and prices into the database; what it did, and each tool a
    lenient input skipped or loaded unchecked."""
    started = time.perf_counter()
    # break-glass model prices: validated before anything is written, so a bad price file
    # leaves the catalog as it was too; written in their own transaction
    price_rows = parse_prices(prices)
    # the committed snapshot is as old as it says; any other file as old as its writing
    priced_at = SNAPSHOT_PRICED_AT if prices == DEFAULT_PRICES else file_priced_at(prices)
    # building a catalog is what every "does not exist" error suggests: it makes the directory
    try:
        db_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RouterError(
            f"database {db_path} cannot be created: its directory {db_path.parent} cannot be made "
            f"({exc.strerror or exc})"
        ) from None
    conn = connect(db_path)
    try:
        summary = load_catalog(
            conn,
            seed_dir=seed_dir,
            user_files=user_files,
            user_seed_dir=user_seed_dir,
            disabled=disabled,
            strict_user_files=strict,
        )
        price_count = write_prices(conn, price_rows, priced_at)
    finally:
        conn.close()
    elapsed_ms = (time.perf_counter() - started) * 1000
    notes = "".join(f"\n  {note}" for note in summary.notes)
    return f"{summary.one_line()}; {counted(price_count, 'model price')} in {elapsed_ms:.0f} ms{notes}"


def load_default_catalog(db_path: Path, servers: list[Path] | None = None) -> str:
    """What `context-router catalog` does with no options: the shipped seeds, the user's own,
    less the switched-off servers, and the prices."""
    return build_catalog(
        db_path,
        SEEDS_DIR,
        [],
        DEFAULT_PRICES,
        user_seed_dir=user_seeds_dir(),
        disabled=load_servers(servers_files(servers)).disabled,
    )
