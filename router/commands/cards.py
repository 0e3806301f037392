"""`context-router cards`: one A2A agent card per role."""

import argparse
from pathlib import Path

from router.agents.cards import write_cards


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "cards",
        help="write an A2A agent card (protocol 1.0) per role",
        description="Writes OUT/<role>/.well-known/agent-card.json; each agent is at BASE-URL/<role>.",
    )
    parser.add_argument("--base-url", required=True, metavar="URL")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    for path in write_cards(args.base_url, args.out):
        print(path)
    return 0
