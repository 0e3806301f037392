"""`context-router doctor`: check Node, the workspace, every server, the database and the
clients' configs, saying for each what to do (router/backends/doctor.py does the checks)."""

import argparse
import json
from pathlib import Path

from router.commands import add_db_option, add_servers_option, workspace_dir
from router.wording import counted

MARKS = {"ok": "ok     ", "note": "note   ", "problem": "PROBLEM"}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check Node, the workspace, each server, the database and your clients' configs",
        description=(
            "Check what the router needs here: the Node version its npm backends need, whether "
            "the workspace is a git repository, each declared server's program and variables, "
            "the database, and the MCP client configs found; each finding says what to do. "
            "Exit status 1 when any is a PROBLEM."
        ),
    )
    add_db_option(parser)
    add_servers_option(parser)
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        type=Path,
        help="the directory backends work in (default: working directory)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON list of findings")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from router.backends.doctor import as_dicts, diagnose
    from router.backends.servers import load_servers
    from router.paths import resolve_db_path, servers_files

    findings = diagnose(
        load_servers(servers_files(args.servers)),
        resolve_db_path(args.db),
        workspace_dir(args.workspace),
        Path.home(),
    )
    if args.json:
        print(json.dumps(as_dicts(findings), indent=2))
    else:
        for finding in findings:
            print(f"{MARKS[finding.status]} {finding.area:<9} {finding.subject}: {finding.detail}")
            if finding.fix and finding.status != "ok":
                print(f"{'':17} → {finding.fix}")
        problems = sum(f.status == "problem" for f in findings)
        print(counted(problems, "problem"))
    return 1 if any(f.status == "problem" for f in findings) else 0
