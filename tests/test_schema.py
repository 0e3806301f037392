"""schema.sql applies to a fresh file, is idempotent, and guards against newer files."""

import subprocess
from pathlib import Path

import apsw
import pytest

from router import db
from router.catalog.load import load_catalog
from router.catalog.tool_schema import inspect_tool
from router.errors import SchemaVersionError
from router.paths import SCHEMA_FILE, SEEDS_DIR

# What the last version-1, -2, -3 and -11 routers created; real old files, not hand-made
# approximations.
SCHEMA_V1 = Path(__file__).parent / "golden" / "schema_v1.sql"
SCHEMA_V2 = Path(__file__).parent / "golden" / "schema_v2.sql"
SCHEMA_V3 = Path(__file__).parent / "golden" / "schema_v3.sql"
SCHEMA_V11 = Path(__file__).parent / "golden" / "schema_v11.sql"

PROMISED_VIEWS = {
    "v_catalog_per_profile",
    "v_recent_audit",
    "v_cost_per_session",
    "v_cost_per_day",
    "v_breaker_state",
    "v_skills",
    "v_tool_schema",
    "v_tool_embeddings",
}


def schema_objects(conn):
    return conn.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name"
    ).fetchall()


def test_fresh_file_gets_schema_and_version(db_path):
    conn = db.connect(db_path)
    assert db.schema_version(conn) == db.SCHEMA_VERSION
    names = {name for _, name, _ in schema_objects(conn)}
    assert {"tools", "tools_fts", "servers", "profiles", "audit", "breaker", "cost_ledger"} <= names
    assert PROMISED_VIEWS <= names
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_schema_script_is_idempotent(db_path):
    conn = db.connect(db_path)
    before = schema_objects(conn)
    with conn:
        conn.execute(SCHEMA_FILE.read_text())  # run the whole script a second time
    assert schema_objects(conn) == before
    conn.close()
    reopened = db.connect(db_path)
    assert schema_objects(reopened) == before


def test_newer_database_is_refused(db_path):
    conn = db.connect(db_path)
    conn.execute(f"PRAGMA user_version = {db.SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(SchemaVersionError, match="newer"):
        db.connect(db_path)


def test_failed_schema_apply_leaves_file_untouched(db_path, monkeypatch, tmp_path):
    broken = tmp_path / "broken.sql"
    broken.write_text("CREATE TABLE half_done(x);\nTHIS IS NOT SQL;\n")
    monkeypatch.setattr(db, "SCHEMA_FILE", broken)
    with pytest.raises(apsw.SQLError):
        db.connect(db_path)
    plain = apsw.Connection(str(db_path))
    assert plain.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
    assert plain.execute("PRAGMA user_version").fetchone()[0] == 0


@pytest.mark.parametrize("view", sorted(PROMISED_VIEWS))
def test_system_sqlite3_shell_reads_every_view(db_path, view):
    """People inspect the file with the sqlite3 they have (older than apsw's SQLite)."""
    db.connect(db_path).close()
    result = subprocess.run(
        ["sqlite3", str(db_path), f"SELECT * FROM {view} LIMIT 1;"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


OLD_AUDIT_ROWS = (
    "INSERT INTO audit(started_at, finished_at, session_id, role, meta_tool, target,"
    " args_hash, outcome, latency_ms, pid) VALUES"
    " ('2026-01-02T03:04:05.000Z', '2026-01-02T03:04:05.010Z', 's', 'manager',"
    "  'mcp_call_tool', 'whoami', 'b3:00', 'ok', 10.0, 1),"
    " ('2026-01-02T03:05:00.000Z', NULL, 's', 'manager',"
    "  'mcp_call_tool', 'hang_forever', 'b3:00', 'started', NULL, 2)"
)

# The servers columns before version 15 appended not_for.
OLD_SERVER_COLUMNS = "name, profile, source, origin_file"
# The tools columns of versions 1 and 2 (version 3 appended output_schema and title).
V2_TOOL_COLUMNS = (
    "name, backend_name, server, description, summary, input_schema, annotations,"
    " name_words, arg_text, triggers, boost, mutating, definition_hash"
)


def make_v1_file(path) -> None:
    """A file as a version-1 router left it, with one finished call and one whose process
    died mid-call."""
    conn = apsw.Connection(str(path))
    with conn:
        conn.execute(SCHEMA_V1.read_text(encoding="utf-8"))
        conn.execute("PRAGMA user_version = 1")
        conn.execute(OLD_AUDIT_ROWS)
    conn.close()


def make_v2_file(path, *, catalog_of=None) -> None:
    """A file as a version-2 router left it: the two audit rows and, given `catalog_of` (a
    file this router loaded), the same catalog without the version-3 columns. That is what a
    version-2 load of the same seeds wrote: every other column, definition_hash included,
    comes from code version 3 did not change."""
    conn = apsw.Connection(str(path))
    with conn:
        conn.execute(SCHEMA_V2.read_text(encoding="utf-8"))
        conn.execute("PRAGMA user_version = 2")
        conn.execute(OLD_AUDIT_ROWS)
    if catalog_of is not None:
        conn.execute("ATTACH DATABASE ? AS current", (str(catalog_of),))
        with conn:
            conn.execute("INSERT INTO profiles SELECT * FROM current.profiles")
            conn.execute(
                f"INSERT INTO servers({OLD_SERVER_COLUMNS}) SELECT {OLD_SERVER_COLUMNS} FROM current.servers"
            )
            conn.execute(
                f"INSERT INTO tools(id, {V2_TOOL_COLUMNS})"
                f" SELECT id, {V2_TOOL_COLUMNS} FROM current.tools ORDER BY id"
            )
            conn.execute("INSERT INTO catalog_loads SELECT * FROM current.catalog_loads")
        conn.execute("DETACH DATABASE current")
    conn.close()


OLD_BREAKGLASS_ROWS = (
    "INSERT INTO breakglass_invocations(id, session_id, started_at, finished_at, problem,"
    " problem_type, status, panel, judge, estimate_micro_usd, worst_case_micro_usd,"
    " actual_micro_usd, diagnosis, pid) VALUES"
    " (1, 's3', '2026-01-02T03:04:05.000Z', '2026-01-02T03:05:05.000Z',"
    "  'break glass: simp loops on the zip lemma', 'lean_proof', 'ok', '[\"m\"]', 'j',"
    "  100, 1000, 420, 'the simp set rewrites in a cycle', 7),"
    " (2, 's3', '2026-01-02T03:06:00.000Z', NULL, 'break glass: a second problem',"
    "  'code_bug', 'started', '[]', 'j', 100, 1000, NULL, '', 8);"
    "INSERT INTO cost_ledger(at, session_id, invocation_id, kind, micro_usd, detail) VALUES"
    " ('2026-01-02T03:04:05.000Z', 's3', 1, 'reservation', 1000, ''),"
    " ('2026-01-02T03:05:05.000Z', 's3', 1, 'settlement', 420, ''),"
    " ('2026-01-02T03:05:05.000Z', 's3', 1, 'release', 580, ''),"
    " ('2026-01-02T03:06:00.000Z', 's3', 2, 'reservation', 1000, '');"
    "INSERT INTO breakglass_tokens(token_hash, issued_for, fingerprint, estimate_micro_usd,"
    " issued_at, expires_at, used_at, used_by) VALUES"
    " ('b3:00', 1, 'b3:fp', 100, '2026-01-02T03:00:00.000Z', '2026-01-02T03:30:00.000Z',"
    "  '2026-01-02T03:04:05.000Z', 1)"
)


def make_v3_file(path) -> None:
    """A file as a version-3 router left it: the audit rows and break-glass rows, one call
    settled and one whose process died holding its reservation."""
    conn = apsw.Connection(str(path))
    with conn:
        conn.execute(SCHEMA_V3.read_text(encoding="utf-8"))
        conn.execute("PRAGMA user_version = 3")
        conn.execute(OLD_AUDIT_ROWS)
        conn.execute(OLD_BREAKGLASS_ROWS)
    conn.close()


def test_version_3_file_keeps_its_break_glass_rows_through_the_rebuild(db_path):
    make_v3_file(db_path)
    plain = apsw.Connection(str(db_path))
    before = {
        table: plain.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
        for table in ("breakglass_invocations", "cost_ledger", "breakglass_tokens")
    }
    plain.close()
    conn = db.connect(db_path)
    assert db.schema_version(conn) == db.SCHEMA_VERSION
    # every old column keeps its value; the new ones come after, empty
    invocations = conn.execute("SELECT * FROM breakglass_invocations ORDER BY id").fetchall()
    assert [row[: len(before["breakglass_invocations"][0])] for row in invocations] == before[
        "breakglass_invocations"
    ]
    assert conn.execute("SELECT * FROM cost_ledger ORDER BY id").fetchall() == before["cost_ledger"]
    tokens = conn.execute("SELECT * FROM breakglass_tokens").fetchall()
    assert [row[:-1] for row in tokens] == before["breakglass_tokens"] and tokens[0][-1] is None
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    # the foreign keys point at the rebuilt parent, under its own name
    assert {row[2] for row in conn.execute("PRAGMA foreign_key_list(cost_ledger)")} == {
        "breakglass_invocations"
    }
    # the FTS index over past problems still finds them, and follows new rows
    assert conn.execute(
        "SELECT rowid FROM breakglass_problems_fts WHERE breakglass_problems_fts MATCH 'zip'"
    ).fetchall() == [(1,)]
    # the call a dead version-3 process left 'started' has no lease: it reads as interrupted
    assert conn.execute("SELECT id, status FROM v_breakglass_recent ORDER BY id").fetchall() == [
        (1, "ok"),
        (2, "interrupted"),
    ]
    conn.execute("UPDATE breakglass_invocations SET status = 'interrupted' WHERE id = 2")
    conn.close()


def seeded_file(path):
    """A current file with the project's seeds loaded."""
    conn = db.connect(path)
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    conn.close()
    return path


def columns(conn, table) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def audit_columns(conn) -> list[str]:
    return columns(conn, "audit")


def test_version_1_file_goes_through_every_step_and_keeps_its_rows(db_path):
    make_v1_file(db_path)
    conn = db.connect(db_path)
    assert db.schema_version(conn) == db.SCHEMA_VERSION
    assert "deadline_at" in audit_columns(conn)
    assert columns(conn, "tools")[-7:] == [
        "output_schema",
        "title",
        "read_only_source",
        "arg_validator",
        "examples",
        "deprecated",
        "replaced_by",
    ]
    assert conn.execute("SELECT target, outcome, deadline_at FROM audit ORDER BY id").fetchall() == [
        ("whoami", "ok", None),
        ("hang_forever", "started", None),
    ]
    # a call left unfinished by a version-1 router has no deadline: its process is gone
    assert conn.execute("SELECT target, outcome FROM v_recent_audit ORDER BY id").fetchall() == [
        ("whoami", "ok"),
        ("hang_forever", "interrupted"),
    ]
    conn.close()


def test_version_2_file_gains_output_schema_and_title_and_keeps_its_rows(db_path, tmp_path):
    make_v2_file(db_path, catalog_of=seeded_file(tmp_path / "seeded.db"))
    plain = apsw.Connection(str(db_path))
    tools_before = plain.execute(f"SELECT id, {V2_TOOL_COLUMNS} FROM tools ORDER BY id").fetchall()
    audit_before = plain.execute("SELECT * FROM audit ORDER BY id").fetchall()
    plain.close()
    assert len(tools_before) > 100

    conn = db.connect(db_path)
    assert db.schema_version(conn) == db.SCHEMA_VERSION
    assert columns(conn, "tools")[-7:-5] == ["output_schema", "title"]
    assert conn.execute(f"SELECT id, {V2_TOOL_COLUMNS} FROM tools ORDER BY id").fetchall() == tools_before
    assert conn.execute(
        "SELECT count(*) FROM tools WHERE output_schema IS NOT NULL OR title IS NOT NULL"
    ).fetchone() == (0,)
    # the audit rows as they were, with the columns later versions appended left empty
    assert [
        row[: len(audit_before[0])] for row in conn.execute("SELECT * FROM audit ORDER BY id")
    ] == audit_before
    # the column added to an existing table keeps its check
    with pytest.raises(apsw.ConstraintError):
        conn.execute("UPDATE tools SET output_schema = 'not json' WHERE id = 1")
    # inspect works on the upgraded rows, and has nothing to say about the new fields yet
    shown = inspect_tool(conn, "read_graph")
    assert "outputSchema" not in shown and "title" not in shown
    conn.close()


def test_first_load_after_the_upgrade_fills_in_output_schema_and_title(db_path, tmp_path):
    """The upgraded rows hold NULL; the next `make catalog` rewrites exactly the tools whose
    seeds give an outputSchema or a title, and the load after it writes nothing."""
    seeded = seeded_file(tmp_path / "seeded.db")
    make_v2_file(db_path, catalog_of=seeded)
    conn = db.connect(db_path)
    with_either = {
        name
        for (name,) in apsw.Connection(str(seeded)).execute(
            "SELECT name FROM tools WHERE output_schema IS NOT NULL OR title IS NOT NULL"
        )
    }
    # version 7's reviewed read-only classifications are new to the file as well
    reviewed = {
        name
        for (name,) in apsw.Connection(str(seeded)).execute(
            "SELECT name FROM tools WHERE read_only_source = 'router-review'"
        )
    }
    assert len(reviewed) > 100
    # and version 12's examples and deprecation
    with_examples = {
        name
        for (name,) in apsw.Connection(str(seeded)).execute(
            "SELECT name FROM tools WHERE examples <> '' OR deprecated = 1"
        )
    }
    reviewed |= with_examples
    assert {"read_graph", "get_current_time", "read_text_file"} <= with_either
    hashes = dict(conn.execute("SELECT name, definition_hash FROM tools"))

    summary = load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    assert (summary.added, summary.changed, summary.removed) == (0, len(with_either | reviewed), 0)
    # the hash already covered outputSchema and title: the rows changed, not the identities
    assert dict(conn.execute("SELECT name, definition_hash FROM tools")) == hashes
    assert conn.execute(
        "SELECT title, json_extract(output_schema, '$.type') FROM tools WHERE name = 'read_graph'"
    ).fetchone() == ("Read Graph", "object")
    assert conn.execute("SELECT tools, changed FROM catalog_loads ORDER BY id DESC LIMIT 1").fetchone() == (
        len(hashes),
        len(with_either | reviewed),
    )

    loads = conn.execute("SELECT count(*) FROM catalog_loads").fetchone()
    again = load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    assert (again.added, again.changed, again.removed) == (0, 0, 0)
    assert conn.execute("SELECT count(*) FROM catalog_loads").fetchone() == loads
    conn.close()


def _shape(conn):
    tables = [
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
    views = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'view' ORDER BY name")
    return (
        {name: conn.execute(f"PRAGMA table_info({name})").fetchall() for name in tables},
        views.fetchall(),
    )


@pytest.mark.parametrize("make_old_file", [make_v1_file, make_v2_file, make_v3_file, "v3 with a catalog"])
def test_upgraded_file_has_the_same_tables_and_views_as_a_new_one(db_path, tmp_path, make_old_file):
    if make_old_file == "v3 with a catalog":
        make_v3_file_with_catalog(db_path, catalog_of=seeded_file(tmp_path / "seeded.db"))
    else:
        make_old_file(db_path)
    upgraded, fresh = db.connect(db_path), db.connect(tmp_path / "fresh.db")
    assert _shape(upgraded) == _shape(fresh)


@pytest.mark.parametrize("make_old_file, version", [(make_v1_file, 1), (make_v2_file, 2), (make_v3_file, 3)])
def test_failed_upgrade_leaves_an_old_file_as_it_was(db_path, monkeypatch, tmp_path, make_old_file, version):
    """The upgrade steps run, then the schema script fails: the steps are rolled back too."""
    make_old_file(db_path)
    plain = apsw.Connection(str(db_path))
    tables = ("audit", "tools", "breakglass_invocations", "model_prices")
    before = {table: columns(plain, table) for table in tables}
    plain.close()
    broken = tmp_path / "broken.sql"
    broken.write_text("THIS IS NOT SQL;\n")
    monkeypatch.setattr(db, "SCHEMA_FILE", broken)
    with pytest.raises(apsw.SQLError):
        db.connect(db_path)
    plain = apsw.Connection(str(db_path))
    assert plain.execute("PRAGMA user_version").fetchone()[0] == version
    assert {table: columns(plain, table) for table in tables} == before
    assert "lease_expires_at" not in before["breakglass_invocations"]
    assert version == 3 or "title" not in before["tools"]
    assert plain.execute("SELECT count(*) FROM audit").fetchone()[0] == 2


def test_a_file_another_process_upgrades_meanwhile_is_not_upgraded_twice(db_path):
    """Two routers open one old file at once: both read version 1, one takes the write lock
    and upgrades. The other, once it holds the lock, must find the current version and not
    add the columns again. Its busy handler runs exactly while it waits for that lock."""
    make_v1_file(db_path)
    waiting = db.connect(db_path, apply_schema=False)
    other = apsw.Connection(str(db_path))
    other.execute("BEGIN IMMEDIATE")
    for version in range(2, db.SCHEMA_VERSION + 1):
        if version in db.UPGRADES:  # sparse: a version may need nothing schema.sql cannot do
            other.execute(db.UPGRADES[version])
    other.execute(SCHEMA_FILE.read_text(encoding="utf-8"))
    other.execute(f"PRAGMA user_version = {db.SCHEMA_VERSION}")
    waits = []

    def other_commits_while_we_wait(attempts: int) -> bool:
        if not waits:
            other.execute("COMMIT")
        waits.append(attempts)
        return len(waits) < 3

    waiting.set_busy_handler(other_commits_while_we_wait)
    db.ensure_schema(waiting)
    assert waits, "the upgrade did not wait for the write lock"
    assert db.schema_version(waiting) == db.SCHEMA_VERSION
    assert audit_columns(waiting).count("deadline_at") == 1
    assert columns(waiting, "tools").count("output_schema") == 1
    assert columns(waiting, "tools").count("read_only_source") == 1
    waiting.close()
    other.close()


def make_v3_file_with_catalog(path, *, catalog_of) -> None:
    """A file as a version-3 router left it: the two audit rows and the catalog of
    `catalog_of` without the version-7 columns."""
    conn = apsw.Connection(str(path))
    with conn:
        conn.execute(SCHEMA_V3.read_text(encoding="utf-8"))
        conn.execute("PRAGMA user_version = 3")
        conn.execute(OLD_AUDIT_ROWS)
    conn.execute("ATTACH DATABASE ? AS current", (str(catalog_of),))
    v3_columns = f"{V2_TOOL_COLUMNS}, output_schema, title"
    with conn:
        conn.execute("INSERT INTO profiles SELECT * FROM current.profiles")
        conn.execute(
            f"INSERT INTO servers({OLD_SERVER_COLUMNS}) SELECT {OLD_SERVER_COLUMNS} FROM current.servers"
        )
        conn.execute(
            f"INSERT INTO tools(id, {v3_columns}) SELECT id, {v3_columns} FROM current.tools ORDER BY id"
        )
        # what a version-3 load decided: only readOnlyHint made a tool read-only
        conn.execute(
            "UPDATE tools SET mutating = CASE WHEN json_extract(annotations, '$.readOnlyHint') = 1 "
            "THEN 0 ELSE 1 END"
        )
    conn.execute("DETACH DATABASE current")
    conn.close()


def test_version_3_file_learns_who_decided_read_only_and_keeps_its_rows(db_path, tmp_path):
    make_v3_file_with_catalog(db_path, catalog_of=seeded_file(tmp_path / "seeded.db"))
    conn = db.connect(db_path)
    assert db.schema_version(conn) == db.SCHEMA_VERSION
    sources = dict(conn.execute("SELECT read_only_source, count(*) FROM tools GROUP BY 1").fetchall())
    with_hint = conn.execute(
        "SELECT count(*) FROM tools WHERE json_type(annotations, '$.readOnlyHint') IS NOT NULL"
    ).fetchone()[0]
    assert sources == {"server": with_hint, "default-mutating": 183 - with_hint}
    assert conn.execute("SELECT DISTINCT arg_validator FROM tools").fetchall() == [("draft2020-12",)]
    # version 7 appended read_only_source, version 13 the token accounting after it
    assert audit_columns(conn)[-3:] == ["read_only_source", "result_tokens", "page_tools"]
    assert conn.execute("SELECT target, read_only_source FROM audit ORDER BY id").fetchall() == [
        ("whoami", None),
        ("hang_forever", None),
    ]
    # the next load brings in the reviews: ghidra's decompiler becomes read-only
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    assert conn.execute(
        "SELECT mutating, read_only_source FROM tools WHERE name = 'ghidra_decompile_function'"
    ).fetchone() == (0, "router-review")
    conn.close()


V11_TOOL_COLUMNS = f"{V2_TOOL_COLUMNS}, output_schema, title, read_only_source, arg_validator"


def make_v11_file_with_catalog(path, *, catalog_of) -> None:
    """A file as a version-11 router left it: the catalog of `catalog_of` without the version-12
    columns, its five-column search index built, and its vectors."""
    conn = apsw.Connection(str(path))
    with conn:
        conn.execute(SCHEMA_V11.read_text(encoding="utf-8"))
        conn.execute("PRAGMA user_version = 11")
    conn.execute("ATTACH DATABASE ? AS current", (str(catalog_of),))
    with conn:
        conn.execute("INSERT INTO profiles SELECT * FROM current.profiles")
        conn.execute(
            f"INSERT INTO servers({OLD_SERVER_COLUMNS}) SELECT {OLD_SERVER_COLUMNS} FROM current.servers"
        )
        conn.execute(
            f"INSERT INTO tools(id, {V11_TOOL_COLUMNS}) SELECT id, {V11_TOOL_COLUMNS} FROM current.tools"
        )
        conn.execute("INSERT INTO tool_embeddings SELECT * FROM current.tool_embeddings")
    conn.execute("DETACH DATABASE current")
    conn.close()


def test_version_11_file_gets_the_examples_column_in_its_search_index(db_path, tmp_path):
    make_v11_file_with_catalog(db_path, catalog_of=seeded_file(tmp_path / "seeded.db"))
    plain = apsw.Connection(str(db_path))
    before = plain.execute(f"SELECT id, {V11_TOOL_COLUMNS} FROM tools ORDER BY id").fetchall()
    assert len(plain.execute("SELECT * FROM tools_fts LIMIT 1").fetchone()) == 5
    plain.close()

    conn = db.connect(db_path)
    assert db.schema_version(conn) == db.SCHEMA_VERSION
    assert conn.execute(f"SELECT id, {V11_TOOL_COLUMNS} FROM tools ORDER BY id").fetchall() == before
    assert columns(conn, "tools_fts")[-1] == "examples"
    # the index was rebuilt from the rows: every tool is found by its words again
    assert conn.execute("SELECT count(*) FROM tools_fts WHERE tools_fts MATCH 'decompile'").fetchone()[0] > 0
    conn.execute("INSERT INTO tools_fts(tools_fts, rank) VALUES ('integrity-check', 1)")
    assert conn.execute("SELECT doc FROM tools_fts_terms WHERE term = 'decompil'").fetchone()[0] > 0
    # the next load fills in the new columns: the deprecated tool, and the examples
    summary = load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    assert conn.execute("SELECT deprecated, replaced_by FROM tools WHERE name = 'read_file'").fetchone() == (
        1,
        "read_text_file",
    )
    with_examples = conn.execute("SELECT count(*) FROM tools WHERE examples <> ''").fetchone()[0]
    assert summary.changed >= with_examples + 1
    conn.close()
