"""`context-router dashboard`: Datasette over the router's database, read-only
(router/dashboard/app.py), on a loopback address unless told otherwise."""

import argparse
import socket
import sys
from pathlib import Path

from router.commands import add_db_option
from router.errors import RouterError

DEFAULT_HOST = "127.0.0.1"
# Datasette's own default port
DEFAULT_PORT = 8001


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "dashboard",
        help="open a read-only web dashboard (Datasette) over the database",
        description=(
            "Serve Datasette over the router's database, read-only: its views, canned queries for "
            "failing backends, slow calls, spend against the caps, tokens saved and searches with "
            "nothing callable, and charts at /-/dashboards/router. Needs the 'dashboard' extra."
        ),
    )
    add_db_option(parser)
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port to listen on (default {DEFAULT_PORT})"
    )
    parser.add_argument(
        "--host",
        default=DEFAULT_HOST,
        help=f"address to listen on (default {DEFAULT_HOST}; anything else lets others read the audit)",
    )
    parser.set_defaults(handler=run)


def check_database(path: Path) -> None:
    """The file must exist and have this router's views; it is only read (an older file is
    upgraded by the router, which writes, never by the dashboard)."""
    import apsw

    from router.db import SCHEMA_VERSION, scalar
    from router.paths import build_command

    if not path.is_file():
        raise RouterError(f"--db: database {path} does not exist; build it with {build_command(path)}")
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        version = scalar(conn, "PRAGMA user_version")
    finally:
        conn.close()
    if version < SCHEMA_VERSION:
        raise RouterError(
            f"--db: database {path} is at schema version {version}, older than this router's "
            f"{SCHEMA_VERSION}, and the dashboard never writes: run the router on it once "
            f"(context-router serve, or {build_command(path)}) to upgrade it"
        )


def check_port(host: str, port: int) -> None:
    if not 0 < port < 65536:
        raise RouterError(f"--port {port}: must be 1-65535")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise RouterError(f"--port {port}: cannot listen on {host}:{port}: {exc.strerror}") from None


def run(args: argparse.Namespace) -> int:
    from router.backends.availability import is_loopback
    from router.dashboard.app import DASHBOARD_PATH, asgi_app
    from router.paths import resolve_db_path

    db_path = resolve_db_path(args.db)
    check_database(db_path)
    check_port(args.host, args.port)
    app = asgi_app(db_path, args.host)  # says which extra is missing before anything listens
    import uvicorn

    if not is_loopback(args.host):
        print(
            f"context-router dashboard: warning: listening on {args.host}, not loopback; anyone who "
            "can reach it can read the audit and the spend",
            file=sys.stderr,
        )
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(
        f"context-router dashboard: {db_path} (read-only) at http://{shown}:{args.port}/ "
        f"(charts: http://{shown}:{args.port}{DASHBOARD_PATH})",
        file=sys.stderr,
        flush=True,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", lifespan="on")
    return 0
