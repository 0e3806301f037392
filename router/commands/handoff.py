"""`context-router schemas` and `context-router handoff validate`: the typed envelopes."""

import argparse
from pathlib import Path

from router.agents.handoff import parse_envelope, read_json_file, write_json_schemas
from router.agents.taskdag import validate_plan


def register(subparsers: argparse._SubParsersAction) -> None:
    schemas = subparsers.add_parser("schemas", help="export the handoff envelopes' JSON Schemas (2020-12)")
    schemas.add_argument("--out", type=Path, required=True, metavar="DIR")
    schemas.set_defaults(handler=run_schemas)

    handoff = subparsers.add_parser("handoff", help="handoff envelopes")
    actions = handoff.add_subparsers(dest="action", required=True, metavar="ACTION")
    validate = actions.add_parser(
        "validate",
        help="validate a TaskBrief / WorkerReceipt / QaVerdict file, or a JSON array of "
        "TaskBriefs forming a DAG (exit 2 if invalid)",
    )
    validate.add_argument("file", type=Path, metavar="FILE")
    validate.set_defaults(handler=run_validate)


def run_schemas(args: argparse.Namespace) -> int:
    for path in write_json_schemas(args.out):
        print(path)
    return 0


def run_validate(args: argparse.Namespace) -> int:
    raw = read_json_file(args.file)
    if isinstance(raw, list):
        order = validate_plan(raw, source=str(args.file))
        print(
            f"{args.file}: valid plan of {len(order)} TaskBriefs; dependency order: "
            + ", ".join(brief.taskId for brief in order)
        )
        return 0
    envelope = parse_envelope(raw, source=str(args.file))
    print(f"{args.file}: valid {envelope.kind} (task {envelope.taskId})")
    return 0
