"""`context-router configs`: generate the OpenCode and agentgateway configs."""

import argparse
from pathlib import Path

from router.configs.naming import DEFAULT_GATEWAY_DATA_DIR
from router.errors import RouterError
from router.paths import CONFIGS_DIR, SEEDS_DIR, SHIPPED_SERVERS_FILE


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "configs",
        help="generate configs/opencode.base.json and configs/agentgateway.yaml",
        description=(
            "Generate the OpenCode config and the agentgateway config from the role matrix, "
            "configs/servers.toml and seeds/. Same input, same bytes."
        ),
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=CONFIGS_DIR,
        metavar="DIR",
        help=f"directory to write to (default: {CONFIGS_DIR})",
    )
    parser.add_argument(
        "--seeds",
        type=Path,
        default=SEEDS_DIR,
        metavar="DIR",
        help="seed directory the catalog tools come from",
    )
    parser.add_argument(
        "--servers", type=Path, default=SHIPPED_SERVERS_FILE, metavar="FILE", help="backend declarations"
    )
    parser.add_argument(
        "--data-dir",
        default=DEFAULT_GATEWAY_DATA_DIR,
        metavar="DIR",
        help="${DATA_DIR} for backends started by agentgateway (absolute path)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if the files in --out are not what would be generated",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # imported here: the CEL library is only needed to generate, not to start the CLI
    from router.configs.generate import generate, stale_files, write
    from router.configs.inputs import read_inputs

    if not args.data_dir.startswith("/"):
        raise RouterError(f"--data-dir {args.data_dir!r}: must be an absolute path")
    configs = generate(read_inputs(args.seeds, args.servers), data_dir=args.data_dir)
    if args.check:
        stale = stale_files(configs, args.out)
        for name in stale:
            print(f"{args.out / name}: out of date; run `context-router configs`")
        return 1 if stale else 0
    for path in write(configs, args.out):
        print(f"wrote {path}")
    return 0
