"""Open the one SQLite file and bring it to the schema in schema.sql.

Connection set-up is apsw's own best practice (WAL, busy timeout, foreign keys, no
double-quoted string literals), applied once per process rather than a hand-made pragma list.
"""

import logging
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Generic, TypeVar

import apsw
import apsw.bestpractice
import apsw.ext

from router.errors import MissingDatabaseError, SchemaVersionError
from router.paths import SCHEMA_FILE, build_command

# Bump when schema.sql changes in a way an existing file must be migrated for.
SCHEMA_VERSION = 15

# Version 2: audit.deadline_at, which tells a call still running from one whose process died.
ADD_AUDIT_DEADLINE = "ALTER TABLE audit ADD COLUMN deadline_at TEXT"

# Version 3: tools.output_schema and tools.title, so mcp_inspect_schema shows a tool's result
# shape and title. Existing rows hold NULL until the next catalog load: their columns then
# differ from the seeds' rows, so that load rewrites exactly the tools that have either.
ADD_TOOL_OUTPUT_SCHEMA_AND_TITLE = """
ALTER TABLE tools ADD COLUMN output_schema TEXT
    CHECK (output_schema IS NULL OR json_valid(output_schema));
ALTER TABLE tools ADD COLUMN title TEXT;
"""

# Version 5: break-glass leases and hard caps. A new status ('interrupted') and ledger kind
# ('overrun') widen CHECK constraints, which SQLite can only do by rebuilding a table; the
# invocations are the parent of the ledger and the tokens, so all three are rebuilt under
# their new names first (children pointing at the new parent), the old ones dropped (children
# before parent, so no foreign key is ever broken), and then renamed into place, which also
# renames the references. The views over them are dropped first (a rename re-reads every
# view) and schema.sql re-creates them with the indexes and triggers; rowids are kept, so
# the external-content FTS index only needs a rebuild. model_prices gains two columns.
REBUILD_BREAKGLASS_TABLES = """
DROP VIEW IF EXISTS v_cost_per_session;
DROP VIEW IF EXISTS v_cost_per_day;
DROP VIEW IF EXISTS v_breakglass_recent;
DROP TRIGGER IF EXISTS breakglass_invocations_ai;
DROP TRIGGER IF EXISTS breakglass_invocations_ad;
DROP TRIGGER IF EXISTS breakglass_invocations_au;
CREATE TABLE breakglass_invocations_v5 (
    id                   INTEGER PRIMARY KEY,
    session_id           TEXT NOT NULL,
    started_at           TEXT NOT NULL,
    finished_at          TEXT,
    problem              TEXT NOT NULL,
    problem_type         TEXT,
    classification       TEXT NOT NULL DEFAULT '',
    complexity           TEXT,
    status               TEXT NOT NULL CHECK (status IN
        ('started', 'refused', 'needs_confirmation', 'declined', 'ok', 'failed', 'cancelled',
         'interrupted')),
    reason               TEXT NOT NULL DEFAULT '',
    mode                 TEXT,
    panel                TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(panel)),
    judge                TEXT,
    context_tokens       INTEGER,
    estimate_micro_usd   INTEGER,
    worst_case_micro_usd INTEGER,
    actual_micro_usd     INTEGER,
    diagnosis            TEXT NOT NULL DEFAULT '',
    pid                  INTEGER NOT NULL,
    host                 TEXT NOT NULL DEFAULT '',
    lease_expires_at     TEXT,
    output_cap_tokens    INTEGER
) STRICT;
INSERT INTO breakglass_invocations_v5 (id, session_id, started_at, finished_at, problem,
    problem_type, classification, complexity, status, reason, mode, panel, judge, context_tokens,
    estimate_micro_usd, worst_case_micro_usd, actual_micro_usd, diagnosis, pid)
SELECT id, session_id, started_at, finished_at, problem, problem_type, classification, complexity,
    status, reason, mode, panel, judge, context_tokens, estimate_micro_usd, worst_case_micro_usd,
    actual_micro_usd, diagnosis, pid
FROM breakglass_invocations;
CREATE TABLE breakglass_tokens_v5 (
    token_hash           TEXT PRIMARY KEY,
    issued_for           INTEGER NOT NULL REFERENCES breakglass_invocations_v5(id),
    fingerprint          TEXT NOT NULL,
    estimate_micro_usd   INTEGER NOT NULL,
    issued_at            TEXT NOT NULL,
    expires_at           TEXT NOT NULL,
    used_at              TEXT,
    used_by              INTEGER REFERENCES breakglass_invocations_v5(id),
    worst_case_micro_usd INTEGER
) STRICT;
INSERT INTO breakglass_tokens_v5 (token_hash, issued_for, fingerprint, estimate_micro_usd,
    issued_at, expires_at, used_at, used_by)
SELECT token_hash, issued_for, fingerprint, estimate_micro_usd, issued_at, expires_at, used_at,
    used_by
FROM breakglass_tokens;
CREATE TABLE cost_ledger_v5 (
    id            INTEGER PRIMARY KEY,
    at            TEXT NOT NULL,
    session_id    TEXT NOT NULL,
    invocation_id INTEGER NOT NULL REFERENCES breakglass_invocations_v5(id),
    kind          TEXT NOT NULL CHECK (kind IN ('estimate', 'refusal', 'confirmation',
                                                'reservation', 'settlement', 'release', 'overrun',
                                                'outcome')),
    micro_usd     INTEGER NOT NULL DEFAULT 0,
    detail        TEXT NOT NULL DEFAULT ''
) STRICT;
INSERT INTO cost_ledger_v5 (id, at, session_id, invocation_id, kind, micro_usd, detail)
SELECT id, at, session_id, invocation_id, kind, micro_usd, detail FROM cost_ledger;
DROP TABLE cost_ledger;
DROP TABLE breakglass_tokens;
DROP TABLE breakglass_invocations;
ALTER TABLE breakglass_invocations_v5 RENAME TO breakglass_invocations;
ALTER TABLE breakglass_tokens_v5 RENAME TO breakglass_tokens;
ALTER TABLE cost_ledger_v5 RENAME TO cost_ledger;
INSERT INTO breakglass_problems_fts(breakglass_problems_fts) VALUES ('rebuild');
ALTER TABLE model_prices ADD COLUMN priced_at TEXT;
ALTER TABLE model_prices ADD COLUMN reasoning_picodollars_per_tok INTEGER NOT NULL DEFAULT 0
    CHECK (reasoning_picodollars_per_tok >= 0);
"""
# Version 6: backend_breaker and v_backend_breaker_state, the circuit breaker per backend
# server; v_search reads it too. New objects only: schema.sql creates them, no step needed.

# Version 7: who decided a tool is read-only (tools.read_only_source, and the audit's copy for
# each call) and the draft its args are checked under (tools.arg_validator). Existing rows get
# 'server' where their annotations carry a readOnlyHint, else 'default-mutating' (what decided
# them before); the next catalog load adds the seeds' reviewed classifications.
# (tool_quarantine and backend_runs are new tables: schema.sql creates them.)
ADD_READ_ONLY_SOURCE_AND_ARG_VALIDATOR = """
ALTER TABLE tools ADD COLUMN read_only_source TEXT NOT NULL DEFAULT 'default-mutating'
    CHECK (read_only_source IN ('server', 'router-review', 'default-mutating'));
ALTER TABLE tools ADD COLUMN arg_validator TEXT NOT NULL DEFAULT 'draft2020-12';
UPDATE tools SET read_only_source = 'server'
WHERE json_type(annotations, '$.readOnlyHint') IN ('true', 'false');
ALTER TABLE audit ADD COLUMN read_only_source TEXT;
"""

# Version 8: v_search carries a tool's quarantine, so search demotes a quarantined tool like
# one that cannot be called. A view only: schema.sql re-creates it, no step needed.

# Version 9: tool_embeddings and v_tool_embeddings, each tool's vector from the local
# semantic model. New objects only: schema.sql creates them; the next catalog load embeds.

# Version 10: vector_centroids and vector_groups, a large catalog's grouping of its vectors
# for search. New tables only; until a catalog load stores the grouping, search computes it.

# Version 11: tools_fts_instances, the FTS5 vocabulary table of every term's hits, which
# search reads postings from. A virtual table over the existing index: nothing to rebuild.

# Version 12: tools.examples (how people ask for a tool), indexed in a column of its own in
# tools_fts, and tools.deprecated / replaced_by; example_embeddings, one vector per example.
# An FTS5 table cannot gain a column: the index, its triggers and its two vocabulary tables
# are dropped here, schema.sql creates them in their new shape, and the index is rebuilt from
# tools after it (REBUILDS). The new columns start empty; the next catalog load fills them in.
ADD_TOOL_EXAMPLES_AND_DEPRECATION = """
ALTER TABLE tools ADD COLUMN examples TEXT NOT NULL DEFAULT '';
ALTER TABLE tools ADD COLUMN deprecated INTEGER NOT NULL DEFAULT 0 CHECK (deprecated IN (0, 1));
ALTER TABLE tools ADD COLUMN replaced_by TEXT;
DROP TRIGGER IF EXISTS tools_ai;
DROP TRIGGER IF EXISTS tools_ad;
DROP TRIGGER IF EXISTS tools_au;
DROP TABLE IF EXISTS tools_fts_terms;
DROP TABLE IF EXISTS tools_fts_instances;
DROP TABLE IF EXISTS tools_fts;
"""
REBUILD_SEARCH_INDEX = "INSERT INTO tools_fts(tools_fts) VALUES ('rebuild')"
# Version 13: what the dashboard and /metrics read. The audit's result_tokens and page_tools
# (a search's page tokens and callable tools); breaker_openings (with triggers on the breaker
# tables), breakglass_caps, tool_tokens and surface_tokens are new tables, and the views over
# them new views: schema.sql creates them.
ADD_AUDIT_RESULT_TOKENS = """
ALTER TABLE audit ADD COLUMN result_tokens INTEGER;
ALTER TABLE audit ADD COLUMN page_tools INTEGER;
"""
# Version 14: breakglass_invocations.process_started, lease_beats and lease_seconds: a lease is
# judged by its owner's process and its renewals, not by comparing another process's wall
# clock with the owner's (an hour's clock step made a live call look dead).
ADD_LEASE_HEARTBEAT = """
ALTER TABLE breakglass_invocations ADD COLUMN process_started TEXT;
ALTER TABLE breakglass_invocations ADD COLUMN lease_beats INTEGER NOT NULL DEFAULT 0;
ALTER TABLE breakglass_invocations ADD COLUMN lease_seconds REAL;
"""
# Version 15: servers.not_for, the requests a server's tools look fit for but do not do.
ADD_SERVER_NOT_FOR = "ALTER TABLE servers ADD COLUMN not_for TEXT NOT NULL DEFAULT ''"

# What schema.sql cannot do to a file an older router made (CREATE TABLE IF NOT EXISTS leaves
# an existing table as it is): the statements bringing a file from version N-1 to N, keyed
# by N. They run before schema.sql, whose views may already read what they add.
UPGRADES: dict[int, str] = {
    2: ADD_AUDIT_DEADLINE,
    3: ADD_TOOL_OUTPUT_SCHEMA_AND_TITLE,
    5: REBUILD_BREAKGLASS_TABLES,
    7: ADD_READ_ONLY_SOURCE_AND_ARG_VALIDATOR,
    12: ADD_TOOL_EXAMPLES_AND_DEPRECATION,
    13: ADD_AUDIT_RESULT_TOKENS,
    14: ADD_LEASE_HEARTBEAT,
    15: ADD_SERVER_NOT_FOR,
}
# The statements bringing a file to version N that need schema.sql's objects, run after it.
REBUILDS: dict[int, str] = {12: REBUILD_SEARCH_INDEX}

# apsw's recommended busy timeout is 100 ms; several router, break-glass and CLI processes
# share one file, and the set-up pragmas themselves (WAL, optimize) need a lock, so a
# process opening the file while another writes must wait longer than that.
BUSY_TIMEOUT_MS = 10_000

_best_practice_applied = False


def connection_busy_timeout_shared(connection: apsw.Connection) -> None:
    # named connection_* because apsw.bestpractice.apply dispatches on that prefix
    apsw.bestpractice.connection_busy_timeout(connection, duration_ms=BUSY_TIMEOUT_MS)


def connection_optimize_unless_busy(connection: apsw.Connection) -> None:
    """apsw's PRAGMA optimize at open, but never waiting for a lock: it may want to write its
    statistics, and a file another process is writing (a catalog load, a sqlite3 shell in a
    transaction) must still open at once. It runs again at the next open."""
    connection.set_busy_timeout(0)
    try:
        apsw.bestpractice.connection_optimize(connection)
    except apsw.BusyError:
        pass
    finally:
        connection.set_busy_timeout(BUSY_TIMEOUT_MS)


# SQLite's own log (a file that cannot be opened, a damaged page), as apsw's best practice
# forwards it to logging, under this logger, which keeps it to itself: every such failure
# also raises an apsw error that the router reports in words (describe_database_error), and
# the raw "SQLITE_LOG: ... SQLITE_CANTOPEN" lines printed before that message only repeat it
# worse. Attach a handler to router.sqlite to see them.
SQLITE_LOGGER = logging.getLogger("router.sqlite")
SQLITE_LOGGER.addHandler(logging.NullHandler())
SQLITE_LOGGER.propagate = False


def library_logging_named() -> None:
    apsw.ext.log_sqlite(logger=SQLITE_LOGGER)


def _apply_best_practice() -> None:
    global _best_practice_applied
    if not _best_practice_applied:
        # the longer busy timeout goes first: the later hooks already take locks
        replaced: dict[Callable[..., Any], Callable[..., Any]] = {
            apsw.bestpractice.connection_optimize: connection_optimize_unless_busy,
            apsw.bestpractice.library_logging: library_logging_named,
        }
        hooks = (connection_busy_timeout_shared,) + tuple(
            replaced.get(hook, hook)
            for hook in apsw.bestpractice.recommended
            if hook is not apsw.bestpractice.connection_busy_timeout
        )
        apsw.bestpractice.apply(hooks)
        _best_practice_applied = True


def connect(path: Path | str, *, apply_schema: bool = True, create: bool = True) -> apsw.Connection:
    """Open the database (creating it if needed, unless create is False) and make sure its
    schema is current.

    What builds a catalog (catalog, init, import, add) or writes rows of its own (skills,
    prices, the servers) creates the file; a command that only reads one (search, inspect,
    eval, servers, doctor) passes create=False: given a mistyped --db it must say the file is
    not there, not leave a new empty database behind and answer from it."""
    _apply_best_practice()
    if not create and not Path(path).exists():
        raise MissingDatabaseError(
            f"database {path} does not exist; build it with {build_command(Path(path))}"
        )
    # without SQLITE_OPEN_CREATE: a file removed since the check is still not created
    flags = apsw.SQLITE_OPEN_READWRITE | (apsw.SQLITE_OPEN_CREATE if create else 0)
    conn = apsw.Connection(str(path), flags=flags)
    if apply_schema:
        ensure_schema(conn)
    return conn


def one_row(conn: apsw.Connection, sql: str, bindings: "apsw.Bindings | None" = None) -> tuple[Any, ...]:
    """The one row a statement always returns (an aggregate, a pragma, an INSERT ... RETURNING)."""
    row = conn.execute(sql, bindings).fetchone()
    if row is None:
        raise LookupError(f"expected one row from: {' '.join(sql.split())[:80]}")
    return row


def scalar(conn: apsw.Connection, sql: str, bindings: "apsw.Bindings | None" = None) -> Any:
    """The first column of one_row."""
    return one_row(conn, sql, bindings)[0]


def schema_version(conn: apsw.Connection) -> int:
    return scalar(conn, "PRAGMA user_version")


def ensure_schema(conn: apsw.Connection) -> None:
    """Bring a file older than this router to SCHEMA_VERSION in one transaction.

    schema.sql is idempotent (IF NOT EXISTS throughout, views dropped and re-created), so a
    file at any older version is brought up to date by running it again, after the UPGRADES
    steps from its version on. A new file (version 0) has no tables yet: schema.sql creates
    them in their current shape.
    """
    if schema_version(conn) == SCHEMA_VERSION:
        return  # the usual case, without taking the write lock
    script = SCHEMA_FILE.read_text(encoding="utf-8")
    with immediate(conn):  # one transaction: a failure leaves the file as it was
        # read again under the write lock: another process opening the same file may have
        # upgraded it meanwhile, and an upgrade step (ALTER TABLE) must not run twice
        current = schema_version(conn)
        if current > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"database schema version {current} is newer than this router's "
                f"{SCHEMA_VERSION}; upgrade context-router"
            )
        if current == SCHEMA_VERSION:
            return
        upgraded = range(current + 1, SCHEMA_VERSION + 1) if current > 0 else range(0)
        for version in upgraded:
            if version in UPGRADES:
                conn.execute(UPGRADES[version])
        conn.execute(script)
        for version in upgraded:
            if version in REBUILDS:
                conn.execute(REBUILDS[version])
        conn.execute(f"PRAGMA user_version = {int(SCHEMA_VERSION)}")


@contextmanager
def immediate(conn: apsw.Connection) -> Iterator[apsw.Connection]:
    """BEGIN IMMEDIATE ... COMMIT: takes the write lock up front, so check-then-write
    sequences cannot interleave with another process."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def check_writable(conn: apsw.Connection) -> None:
    """Commit one real write (the schema version, rewritten as it is): a read-only file, a full
    disk or an unwritable directory fail here, when the router starts, not on a caller's call."""
    with immediate(conn):
        conn.execute(f"PRAGMA user_version = {int(schema_version(conn))}")


def describe_database_error(exc: BaseException, path: Path | str) -> str:
    """An SQLite failure as a sentence naming the file and what to do, never a traceback."""
    if isinstance(exc, apsw.FullError):
        return f"database {path}: the disk is full (or the file reached its size limit); free space and retry"
    if isinstance(exc, apsw.ReadOnlyError):
        return (
            f"database {path} is read-only; it needs write access to the file and its directory "
            "(for its -wal and -shm files)"
        )
    if isinstance(exc, apsw.BusyError):
        return f"database {path} is busy: another process holds its write lock; retry"
    if isinstance(exc, apsw.NotADBError | apsw.CorruptError):
        return (
            f"database {path} is not an SQLite database or is damaged ({exc}); move it aside and "
            f"build a new one ({build_command(Path(path))})"
        )
    if isinstance(exc, apsw.CantOpenError) and Path(path).is_dir():
        return f"database {path} is a directory: --db names the database file"
    if isinstance(exc, apsw.CantOpenError):
        return f"database {path} cannot be opened ({exc}); check the path and its permissions"
    if isinstance(exc, apsw.IOError):
        return f"database {path}: disk I/O error ({exc}); check the disk, its free space and the file"
    return f"database {path}: {exc}"


def query_dicts(conn: apsw.Connection, sql: str, bindings=None) -> list[dict]:
    """Run one statement and return its rows as dicts keyed by column name."""
    cursor = conn.execute(sql, bindings) if bindings is not None else conn.execute(sql)
    names: list[str] | None = None
    out = []
    for row in cursor:
        if names is None:
            names = [d[0] for d in cursor.getdescription()]
        out.append(dict(zip(names, row)))
    return out


CATALOG_VERSION_SQL = "SELECT version FROM catalog_version WHERE id = 1"
CATALOG_SIZE_SQL = "SELECT count(*) FROM tools"
DATA_VERSION_SQL = "PRAGMA data_version"


def catalog_size(conn: apsw.Connection) -> int:
    """Tools in the catalog: 0 is an empty (or never built) catalog, said loudly where it shows."""
    return int(scalar(conn, CATALOG_SIZE_SQL))


def write_mark(conn: apsw.Connection) -> tuple[int, int]:
    """What changes whenever anything is written to the file: PRAGMA data_version with every
    other connection's commit, total_changes with this connection's own rows. Read it before
    what it guards: equal marks mean nothing was written in between."""
    return int(scalar(conn, DATA_VERSION_SQL)), conn.total_changes()


def catalog_version(conn: apsw.Connection) -> int:
    """A counter schema.sql's triggers bump with every change to tools, from any process, and
    with nothing else: what the catalog caches below key on (the audit and breaker rows
    every call writes must not empty them)."""
    return scalar(conn, CATALOG_VERSION_SQL)


Cached = TypeVar("Cached")


class PerConnection(Generic[Cached]):
    """One object per open connection, made on first use and dropped with the connection."""

    def __init__(self, make: Callable[[apsw.Connection], Cached]) -> None:
        self._make = make
        self._made: weakref.WeakKeyDictionary[apsw.Connection, Cached] = weakref.WeakKeyDictionary()

    def __call__(self, conn: apsw.Connection) -> Cached:
        made = self._made.get(conn)
        if made is None:
            made = self._made[conn] = self._make(conn)
        return made
