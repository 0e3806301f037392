"""`context-router search` and `inspect`: the meta-tools at a terminal.

`search --batch QUERIES.jsonl` ranks a whole file of queries (one JSON line out per line in),
so users can measure the router on their own catalog with any tool they like.
"""

import argparse
import json
import sys
from pathlib import Path

from router.catalog.evaluation import read_query_file, router_ranker, run_ranker
from router.catalog.search import DEFAULT_LIMIT, search
from router.catalog.tool_schema import inspect_tool
from router.commands import add_db_option
from router.db import connect
from router.errors import QueryError
from router.paths import resolve_db_path


def register(subparsers: argparse._SubParsersAction) -> None:
    search_parser = subparsers.add_parser(
        "search",
        help="search the catalog",
        description="Rank catalog tools for a query, or for every line of --batch FILE.",
    )
    add_db_option(search_parser)
    search_parser.add_argument("query", nargs="?", help="free text, as a model would ask")
    search_parser.add_argument("--profile", help="only this profile")
    search_parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help="hits, 1-50")
    search_parser.add_argument("--json", action="store_true", help="JSON output")
    search_parser.add_argument(
        "--explain", action="store_true", help="show each hit's score parts (trigger, bm25, boost)"
    )
    search_parser.add_argument(
        "--batch",
        metavar="QUERIES.jsonl",
        type=Path,
        help='rank every line {"id", "query"}; writes lines {"id", "ranked": [names]}',
    )
    search_parser.set_defaults(handler=run_search)

    inspect_parser = subparsers.add_parser("inspect", help="show one tool's full definition")
    add_db_option(inspect_parser)
    inspect_parser.add_argument("tool", help="catalog tool name")
    inspect_parser.set_defaults(handler=run_inspect)


def run_search(args: argparse.Namespace) -> int:
    if (args.query is None) == (args.batch is None):
        raise QueryError("give either a query or --batch QUERIES.jsonl (not both)")
    conn = connect(resolve_db_path(args.db))
    if args.batch is not None:
        return run_batch(conn, args)
    hits = search(conn, args.query, profile=args.profile, limit=args.limit, explain=args.explain)
    if args.json:
        print(json.dumps([hit.to_dict() for hit in hits], ensure_ascii=False, indent=2))
        return 0
    for rank, hit in enumerate(hits, start=1):
        unavailable = "  (unavailable: breaker open)" if not hit.available else ""
        print(f"{rank:2d}. {hit.name}  [{hit.profile}]  {hit.score:.2f}{unavailable}\n    {hit.summary}")
        if hit.explain is not None:
            e = hit.explain
            print(f"    = trigger {e.trigger:.2f} + bm25 {e.bm25:.2f} + boost {e.boost:.2f}")
    if not hits:
        print("no matching tools")
    return 0


def run_batch(conn, args: argparse.Namespace) -> int:
    queries = read_query_file(args.batch, need_relevant=False)
    ranked, _ = run_ranker(router_ranker(conn, profile=args.profile, limit=args.limit), queries)
    out = sys.stdout
    for line, names in zip(queries, ranked):
        out.write(json.dumps({"id": line.id, "ranked": names}, ensure_ascii=False) + "\n")
    return 0


def run_inspect(args: argparse.Namespace) -> int:
    conn = connect(resolve_db_path(args.db))
    print(json.dumps(inspect_tool(conn, args.tool), ensure_ascii=False, indent=2))
    return 0
