"""Datasette over the router's SQLite file, read-only, with the router's metadata and charts.

The router keeps writing the file while the dashboard is open, so the file is never opened
immutable (that reads a WAL file as if nothing wrote it) nor for writing: every connection is
`mode=ro` with `PRAGMA query_only`, a reader in WAL mode that never blocks a writer, and
Datasette's own checks refuse any statement but a SELECT before it reaches SQLite. Bound to a
loopback address, requests must name a loopback host (a page rebinding a name to 127.0.0.1
cannot read the audit).
"""

import sqlite3
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml

from router.backends.availability import is_loopback
from router.extras import require

# The name the database has in every dashboard URL (/router/...), whatever the file is called.
DATABASE_NAME = "router"
METADATA_FILE = "metadata.yaml"
DASHBOARD_PATH = f"/-/dashboards/{DATABASE_NAME}"

# Datasette settings (`datasette --setting`): nothing that hands out the file, long queries
# stopped (a chart query over a long audit must not hold a reader for minutes).
SETTINGS: dict[str, Any] = {
    "allow_download": False,
    "sql_time_limit_ms": 5_000,
    "default_allow_sql": True,
}


def load_metadata() -> dict[str, Any]:
    text = resources.files("router.dashboard").joinpath(METADATA_FILE).read_text(encoding="utf-8")
    return yaml.safe_load(text)


def read_only_uri(path: Path) -> str:
    """The SQLite URI of `path` opened read-only (its characters quoted: a '?' or '#' in a
    file name must not end the path)."""
    return f"file:{quote(str(path.resolve()))}?mode=ro"


def build_datasette(db_path: Path) -> Any:
    """A Datasette instance over `db_path` (which must exist) and nothing else."""
    app_module = require("datasette.app", extra="dashboard", feature="context-router dashboard")
    database_module = require("datasette.database", extra="dashboard", feature="context-router dashboard")

    base: Any = database_module.Database

    class ReadOnlyDatabase(base):
        """Every connection read-only, including the one Datasette would write through."""

        def connect(self, write: bool = False) -> sqlite3.Connection:
            if write:
                raise PermissionError("the context-router dashboard never writes to the router's database")
            conn = sqlite3.connect(read_only_uri(db_path), uri=True, check_same_thread=False)
            conn.execute("PRAGMA query_only = 1")
            return conn

    datasette = app_module.Datasette(metadata=load_metadata(), settings=SETTINGS)
    datasette.add_database(
        ReadOnlyDatabase(datasette, path=str(db_path), is_mutable=True), name=DATABASE_NAME
    )
    return datasette


def asgi_app(db_path: Path, host: str) -> Any:
    """The dashboard's ASGI app; on a loopback address, only for loopback Host headers."""
    app = build_datasette(db_path).app()
    if not is_loopback(host):
        return app
    from starlette.middleware.trustedhost import TrustedHostMiddleware

    return TrustedHostMiddleware(app, allowed_hosts=sorted({"127.0.0.1", "localhost", host}))
