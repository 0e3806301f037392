"""`context-router schemas` and `context-router handoff validate`: the typed envelopes."""

import argparse
from pathlib import Path

from router.handoff import read_envelope, write_json_schemas


def register(subparsers: argparse._SubParsersAction) -> None:
    schemas = subparsers.add_parser(
        "schemas", help="export the handoff envelopes' JSON Schemas (2020-12)"
    )
    schemas.add_argument("--out", type=Path, required=True, metavar="DIR")
    schemas.set_defaults(handler=run_schemas)

    handoff = subparsers.add_parser("handoff", help="handoff envelopes")
    actions = handoff.add_subparsers(dest="action", required=True, metavar="ACTION")
    validate = actions.add_parser(
        "validate", help="validate a TaskBrief / WorkerReceipt / QaVerdict file (exit 2 if invalid)"
    )
    validate.add_argument("file", type=Path, metavar="FILE")
    validate.set_defaults(handler=run_validate)


def run_schemas(args: argparse.Namespace) -> int:
    for path in write_json_schemas(args.out):
        print(path)
    return 0


def run_validate(args: argparse.Namespace) -> int:
    envelope = read_envelope(args.file)
    print(f"{args.file}: valid {envelope.kind} (task {envelope.taskId})")
    return 0
