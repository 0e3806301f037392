"""`context-router prices`: load break-glass model prices from OpenRouter's /api/v1/models."""

import argparse
from datetime import UTC, datetime
from pathlib import Path

from router.breakglass.prices import PriceError, file_priced_at, parse_models, parse_prices, write_prices
from router.clock import utc_iso, utc_now_iso
from router.commands import add_db_option
from router.db import connect
from router.paths import resolve_db_path
from router.wording import counted


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "prices",
        help="load break-glass model prices from OpenRouter's /api/v1/models (a saved file or a fetch)",
        description=(
            "Replace the catalog's model prices, in one transaction, with every model of an "
            "OpenRouter GET /api/v1/models response: a saved one (--from FILE) or a fresh one "
            "(--fetch; OPENROUTER_BASE_URL overrides https://openrouter.ai). Models with a "
            "variable price (openrouter/auto) are skipped and named."
        ),
    )
    add_db_option(parser)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--from", dest="from_file", metavar="FILE", type=Path, help="a saved response")
    source.add_argument("--fetch", action="store_true", help="GET /api/v1/models now")
    parser.add_argument(
        "--as-of",
        metavar="DATE",
        help="when a saved response was taken (YYYY-MM-DD, UTC; default the file's modification time)",
    )
    parser.set_defaults(handler=run)


def _as_of(text: str) -> str:
    try:
        day = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        raise PriceError(f"--as-of {text!r}: expected a date as YYYY-MM-DD") from None
    return utc_iso(day)


def run(args: argparse.Namespace) -> int:
    if args.fetch:
        from router.breakglass import openrouter

        if args.as_of:
            raise PriceError("--as-of applies to --from FILE; a fetch is priced now")
        source = openrouter.base_url() + openrouter.MODELS_PATH
        try:
            document = openrouter.fetch_models()
        except openrouter.ProviderError as exc:
            raise PriceError(f"--fetch: {exc}") from None
        prices = parse_models(document, source)
        priced_at = utc_now_iso()
    else:
        source = str(args.from_file)
        prices = parse_prices(args.from_file)
        priced_at = _as_of(args.as_of) if args.as_of else file_priced_at(args.from_file)
    count = write_prices(connect(resolve_db_path(args.db)), prices, priced_at)
    print(f"{counted(count, 'model price')} from {source} (priced {priced_at})")
    if prices.skipped:
        print(f"skipped {len(prices.skipped)}: {', '.join(prices.skipped)}")
    return 0
