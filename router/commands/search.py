"""`context-router search` and `inspect`: the meta-tools at a terminal."""

import argparse
import json

from router.commands import add_db_option
from router.db import connect
from router.inspect import inspect_tool
from router.metatools import DEFAULT_LIMIT
from router.paths import resolve_db_path
from router.search import search


def register(subparsers: argparse._SubParsersAction) -> None:
    search_parser = subparsers.add_parser("search", help="search the catalog")
    add_db_option(search_parser)
    search_parser.add_argument("query", help="free text, as a model would ask")
    search_parser.add_argument("--profile", help="only this profile")
    search_parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help="hits, 1-50")
    search_parser.add_argument("--json", action="store_true", help="JSON output")
    search_parser.set_defaults(handler=run_search)

    inspect_parser = subparsers.add_parser("inspect", help="show one tool's full definition")
    add_db_option(inspect_parser)
    inspect_parser.add_argument("tool", help="catalog tool name")
    inspect_parser.set_defaults(handler=run_inspect)


def run_search(args: argparse.Namespace) -> int:
    conn = connect(resolve_db_path(args.db))
    hits = search(conn, args.query, profile=args.profile, limit=args.limit)
    if args.json:
        print(json.dumps([hit.__dict__ for hit in hits], ensure_ascii=False, indent=2))
    else:
        for rank, hit in enumerate(hits, start=1):
            print(f"{rank:2d}. {hit.name}  [{hit.profile}]  {hit.score:.2f}\n    {hit.summary}")
        if not hits:
            print("no matching tools")
    return 0


def run_inspect(args: argparse.Namespace) -> int:
    conn = connect(resolve_db_path(args.db))
    print(json.dumps(inspect_tool(conn, args.tool), ensure_ascii=False, indent=2))
    return 0
