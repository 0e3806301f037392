"""`context-router eval QUERIES.jsonl`: how well the catalog answers a set of queries.

Each line is {"id", "query", "relevant": [tool names]}; the command prints recall@1,
recall@5, nDCG@10, MRR@10 and the median query time (see router/catalog/evaluation.py) of the
router's search (words and meaning: hybrid) beside the same search by the words alone
(lexical), so the semantic part's worth on the user's own catalog is one command away.
"""

import argparse
import json
import sys
from pathlib import Path

from router.catalog.evaluation import RANK_DEPTH, quality, read_query_file, router_ranker, run_ranker
from router.catalog.search import check_profile
from router.commands import add_db_option
from router.db import connect
from router.paths import resolve_db_path
from router.wording import counted

# Tool names in a query file that the catalog does not hold: shown, since they are usually
# typos or a catalog that was not loaded, and they silently cap every metric.
UNKNOWN_NAMES_SQL = "SELECT value FROM json_each(:names) WHERE value NOT IN (SELECT name FROM tools)"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="measure search quality on a queries file (recall@1/5, nDCG@10, MRR@10)",
        description=(
            'Rank every line {"id", "query", "relevant": [tool names]} of QUERIES.jsonl and '
            "print recall@1, recall@5, nDCG@10, MRR@10 and the median query time, for the "
            "router's search (hybrid: words and meaning) and by the words alone (lexical)."
        ),
    )
    add_db_option(parser)
    parser.add_argument("queries", metavar="QUERIES.jsonl", type=Path)
    parser.add_argument("--profile", help="only this profile")
    parser.add_argument("--json", action="store_true", help="JSON output")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    queries = read_query_file(args.queries, need_relevant=True)
    conn = connect(resolve_db_path(args.db), create=False)
    check_profile(conn, args.profile)
    names = sorted({name for line in queries for name in line.relevant})
    unknown = [row[0] for row in conn.execute(UNKNOWN_NAMES_SQL, {"names": json.dumps(names)})]
    if unknown:
        shown = ", ".join(unknown[:10]) + (" ..." if len(unknown) > 10 else "")
        print(
            f"warning: {counted(len(unknown), 'relevant tool name')} not in the catalog: {shown}",
            file=sys.stderr,
        )
    rows = {}
    for label, semantic in (("hybrid", True), ("lexical", False)):
        ranker = router_ranker(conn, profile=args.profile, limit=RANK_DEPTH, semantic=semantic)
        rankings, times = run_ranker(ranker, queries)
        rows[label] = quality(rankings, queries, times).as_row()
    if args.json:
        # the search agents get (hybrid) at the top level, the words alone under "lexical"
        print(json.dumps({**rows["hybrid"], "lexical": rows["lexical"]}))
    else:
        print(f"{'':>10}  {'hybrid':>8}  {'lexical':>8}")
        for key, value in rows["hybrid"].items():
            print(f"{key:>10}  {value:>8}  {rows['lexical'][key]:>8}")
    return 0
