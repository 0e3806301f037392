"""`context-router serve`: the MCP facade over stdio (default) or Streamable HTTP."""

import argparse
import logging
import os
import sys
from pathlib import Path

import anyio
import apsw

from router.agents.roles import DEFAULT_ROLE, ROLE_ENV_VAR, ROLE_NAMES, get_role
from router.backends.availability import is_loopback
from router.backends.servers import load_servers
from router.commands import add_db_option, add_servers_option, workspace_dir
from router.errors import RouterError
from router.paths import resolve_db_path, servers_files, setup_command, user_servers_file
from router.wording import counted

DEFAULT_HTTP_HOST = "127.0.0.1"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve the three meta-tools over MCP (stdio, or --http)",
        description=(
            "Serve mcp_search_tools, mcp_inspect_schema and mcp_call_tool over MCP stdio "
            "(default) or Streamable HTTP, forwarding calls to the backends in servers.toml."
        ),
    )
    add_db_option(parser)
    parser.add_argument(
        "--role",
        choices=ROLE_NAMES,
        help=f"caller's role (default: ${ROLE_ENV_VAR}, else {DEFAULT_ROLE} over stdio); over "
        "HTTP the highest role a request may have: its X-Context-Router-Role header may only "
        "lower it, and without --role every request must send exactly one",
    )
    add_servers_option(parser)
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        type=Path,
        help="directory backends work in, ${WORKSPACE} in servers.toml, for a client that declares "
        "no MCP roots (default: working directory)",
    )
    parser.add_argument(
        "--http",
        metavar="[HOST:]PORT",
        help=f"serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio (HOST default {DEFAULT_HTTP_HOST})",
    )
    parser.add_argument(
        "--no-wake-on-search",
        action="store_true",
        help="do not start a sleeping backend when a search returns its tools",
    )
    parser.set_defaults(handler=run)


def parse_http_address(value: str) -> tuple[str, int]:
    host, _, port_text = value.rpartition(":")
    host = host.strip("[]") or DEFAULT_HTTP_HOST
    try:
        port = int(port_text)
    except ValueError:
        raise RouterError(f"--http {value!r}: expected [HOST:]PORT, e.g. 127.0.0.1:8765") from None
    if not 0 < port < 65536:
        raise RouterError(f"--http {value!r}: port must be 1-65535")
    return host, port


def _check_startup(options) -> None:
    """Fail before serving, with a clear message, on a servers.toml or database that cannot
    work: the database must exist (init builds it), open, be current, and take a write (every
    call writes the audit)."""
    from router.db import check_writable, connect, describe_database_error
    from router.facade.backends import BackendPool
    from router.facade.placeholders import Placeholders, default_data_dir

    BackendPool(options.servers, Placeholders(options.workspace, default_data_dir(options.db_path)))
    if not options.db_path.exists():  # never a new empty database, served as "0 of 0 servers"
        raise RouterError(
            f"no catalog at {options.db_path}: set up first with {setup_command(options.db_path)}, then serve"
        )
    try:
        conn = connect(options.db_path)
        try:
            check_writable(conn)
        finally:
            conn.close()
    except apsw.Error as exc:
        raise RouterError(
            f"--db: cannot serve: {describe_database_error(exc, options.db_path)} "
            "(every call writes an audit row)"
        ) from None


def ready_lines(options, listening: str) -> list[str]:
    """What serve says on stderr once it is about to serve: a first look for a new user. A
    server that only the workspace keeps from working here is said to depend on each
    client's root (MCP roots), which the router learns only when a client connects."""
    from router.backends.availability import (
        CATALOG_SERVERS_SQL,
        roots_decide,
        unavailable_servers,
        workspace_problem,
    )
    from router.db import catalog_size, connect

    conn = connect(options.db_path)
    try:
        tools = catalog_size(conn)
        servers = [name for (name,) in conn.execute(CATALOG_SERVERS_SQL)]
    finally:
        conn.close()
    unavailable = unavailable_servers(options.servers, servers, workspace=options.workspace)
    callable_servers = [name for name in servers if name not in unavailable]
    decided_by_roots = {}
    for name in servers:
        server = options.servers.servers.get(name)
        problem = workspace_problem(server, options.workspace) if server is not None else None
        if server is not None and problem is not None and unavailable.get(name) == problem:
            decided_by_roots[name] = roots_decide(server, options.workspace)
    per_root = "".join(f"; {name} per client root" for name in decided_by_roots)
    role = options.role.name if options.role is not None else "named by each request"
    catalog = (
        f"{counted(tools, 'tool')}; {len(callable_servers)} of {counted(len(servers), 'server')} "
        f"callable: {', '.join(callable_servers) or 'none'}{per_root}"
        if tools
        else f"an empty catalog; {counted(len(options.servers.servers), 'server')} declared"
    )
    lines = [f"context-router serve: ready on {listening}: {options.db_path} ({catalog}); role {role}"]
    # said before any call: what a client's root decides, and what a client without roots gets
    lines += [f"context-router serve: {name}: {note}" for name, note in decided_by_roots.items()]
    if tools == 0:
        lines.append(
            f"context-router serve: WARNING: the catalog in {options.db_path} is empty: every search "
            "will say so. Build it: context-router init (or make catalog in a checkout)."
        )
    return lines


def http_limits_line(settings, limits) -> str:
    """What serve --http says of its limits once it is about to serve ([http] in the servers file)."""
    return (
        f"context-router serve: at most {counted(limits.max_connections, 'connection')} "
        f"(request head within {limits.head_timeout_s:g} s, body within {limits.body_timeout_s:g} s) and "
        f"{counted(settings.max_sessions, 'session')} ({settings.max_sessions_per_client} per client, "
        f"closed after {settings.session_idle_s:g} s idle); [http] in the servers file changes them"
    )


def run(args: argparse.Namespace) -> int:
    # Local import: keeps `context-router --help` and the other commands free of the SDK.
    from router.facade.log_guard import limit_repeats
    from router.facade.process_tree import become_subreaper
    from router.facade.server import ServeOptions, clock_with_offset, serve_http, serve_stdio
    from router.facade.servers_reload import ServersSource
    from router.redaction.logs import prepare_redaction

    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    limit_repeats()  # a flood of one message must not fill the disk behind stderr
    prepare_redaction()  # a warning may quote a backend's words; added second, so what is dropped is not redacted
    start_role = args.role or os.environ.get(ROLE_ENV_VAR)
    # Over HTTP a router started without a role takes each request's header (failing closed:
    # router/facade/http_roles.py); over stdio the default role applies.
    role = get_role(start_role) if start_role else (None if args.http else get_role(DEFAULT_ROLE))
    workspace = workspace_dir(args.workspace)
    files = servers_files(args.servers)
    options = ServeOptions(
        db_path=resolve_db_path(args.db),
        servers=load_servers(files),
        # read again, through the same function, when a layer changes while serving (the
        # user's servers file is watched even before it exists: `import` may write it)
        servers_source=ServersSource(
            tuple(dict.fromkeys([*files, user_servers_file()])),
            lambda: load_servers(servers_files(args.servers)),
        ),
        role=role,
        workspace=workspace,
        wake_on_search=not args.no_wake_on_search,
        now=clock_with_offset(),
    )
    _check_startup(options)
    # what backends start and orphan becomes this process's child, so it can be ended too
    options.adopts_orphans = become_subreaper()
    if args.http:
        host, port = parse_http_address(args.http)
        if not is_loopback(host):
            print(
                f"context-router serve: warning: listening on {host}, not loopback; anyone who "
                "can reach it can call your backends",
                file=sys.stderr,
            )
        from router.facade.http_serve import connection_limits  # uvicorn and the HTTP app: HTTP only

        options.session_id = f"http-{os.getpid()}"
        limits = connection_limits(options.servers.http, len(options.servers.servers))
        lines = ready_lines(options, f"http://{host}:{port}/mcp") + [
            http_limits_line(options.servers.http, limits)
        ]
        print("\n".join(lines), file=sys.stderr, flush=True)
        anyio.run(serve_http, options, host, port, limits)
    else:
        print("\n".join(ready_lines(options, "stdio")), file=sys.stderr, flush=True)
        anyio.run(serve_stdio, options)
    return 0
