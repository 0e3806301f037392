"""`context-router servers`: every server the router knows, one line each.

A server that needs a particular workspace (git: a git repository) is not judged by the
directory this command runs in: each client's root decides where it works (MCP roots), so its
row says that, and what a client without roots would get (`workspace`), instead of a problem.

Running is known across processes from `backend_runs`: each router records the stdio
backends it starts (pid and the process's start time), and a row counts while that process
still runs. An HTTP server is not the router's process: its column says so.
"""

import json
from pathlib import Path
from typing import Any

from router.backends.availability import roots_decide, server_problem
from router.backends.programs import resolve_command
from router.backends.servers import load_servers
from router.db import connect
from router.facade.placeholders import Placeholders, default_data_dir, state_paths
from router.paths import resolve_db_path, servers_files
from router.process_start import still_running
from router.wording import counted

TOOLS_PER_SERVER_SQL = "SELECT server, count(*) FROM tools GROUP BY server"
QUARANTINED_PER_SERVER_SQL = "SELECT server, count(*) FROM tool_quarantine GROUP BY server"
OPEN_BREAKERS_PER_SERVER_SQL = """
SELECT t.server, count(*) FROM breaker b JOIN tools t ON t.name = b.tool
WHERE b.state <> 'closed' GROUP BY t.server
"""
# the breaker of the backend itself (its process failing to start or dying), not of a tool
SERVER_BREAKERS_SQL = """
SELECT server, state, opened_at, last_error FROM v_backend_breaker_state WHERE state <> 'closed'
"""
RUNS_SQL = "SELECT server, router_pid, backend_pid, backend_start FROM backend_runs"
PROFILE_OF_SERVERS_SQL = "SELECT name, profile FROM servers ORDER BY name"
# the profile whose servers a fresh install must be able to call, listed first
CORE_PROFILE = "core"


def server_rows(db: str | None, servers: list[Path] | None, workspace: Path) -> list[dict[str, Any]]:
    config = load_servers(servers_files(servers))
    db_path = resolve_db_path(db)
    placeholders = Placeholders(workspace, default_data_dir(db_path))
    conn = connect(db_path, create=False)
    try:
        profiles = dict(conn.execute(PROFILE_OF_SERVERS_SQL))
        tools = _counts(conn, TOOLS_PER_SERVER_SQL)
        quarantined = _counts(conn, QUARANTINED_PER_SERVER_SQL)
        breakers = _counts(conn, OPEN_BREAKERS_PER_SERVER_SQL)
        server_breakers = {str(row[0]): row[1:] for row in conn.execute(SERVER_BREAKERS_SQL)}
        runs: dict[str, list[str]] = {}
        for server, router_pid, backend_pid, backend_start in conn.execute(RUNS_SQL):
            if still_running(backend_pid, backend_start):
                runs.setdefault(server, []).append(f"pid {backend_pid} (router pid {router_pid})")
    finally:
        conn.close()
    names = sorted(set(config.servers) | set(config.disabled) | set(tools))
    rows = []
    # the workspace is judged per client root, where it is used (row["workspace"])
    problems = {name: server_problem(server) for name, server in config.servers.items()}
    uncallable = {name for name in names if problems.get(name, "not declared") is not None}
    for name in names:
        server = config.servers.get(name)
        row: dict[str, Any] = {"server": name, "tools": tools.get(name, 0), "data": []}
        if server is None:
            row["profile"] = profiles.get(name)
            off = config.disabled.get(name)
            row["declared"] = f"switched off in {off}" if off else "not declared (catalog only)"
            row |= {"program": None, "installed": False, "running": "no", "problem": row["declared"]}
            row["workspace"] = None
        else:
            row["declared"] = str(config.origin(name))
            row["profile"] = server.profile
            if server.command is not None:
                row["program"] = resolve_command(server.command) or f"{server.command} (not found)"
                row["running"] = "; ".join(runs.get(name, [])) or "no"
            else:
                row["program"] = f"{server.url} (HTTP)"
                row["running"] = "n/a (an HTTP server runs on its own)"
            row["problem"] = problems[name]
            row["installed"] = row["problem"] is None
            row["workspace"] = roots_decide(server, workspace)
            row["data"] = [
                {
                    "name": label,
                    "path": str(path),
                    "per_workspace": own,
                    "earlier": _earlier(path, own, placeholders),
                }
                for label, path, own in state_paths(server, placeholders)
            ]
        row["quarantined"] = quarantined.get(name, 0)
        row["breaker"] = f"open for {counted(breakers[name], 'tool')}" if name in breakers else "closed"
        state, opened_at, last_error = server_breakers.get(name, ("closed", None, None))
        row["server_breaker"] = state if opened_at is None else f"{state} since {opened_at}"
        row["server_breaker_error"] = last_error
        row["searched"] = config.search.why_not_searched(name, uncallable) or "yes"
        rows.append(row)
    return rows


def _counts(conn: Any, sql: str) -> dict[str, int]:
    return {str(server): int(count) for server, count in conn.execute(sql)}


def print_status(db: str | None, servers: list[Path] | None, as_json: bool, workspace: Path) -> int:
    rows = server_rows(db, servers, workspace)
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        state = "installed" if row["installed"] else "NOT AVAILABLE"
        data = [_data_line(d) for d in row["data"]]
        print(
            f"{row['server']}: {state}; {counted(row['tools'], 'tool')}; running: {row['running']}; "
            f"breaker {row['breaker']}; server breaker {row['server_breaker']}"
        )
        print(f"    declared: {row['declared']}")
        print(f"    searched: {row['searched']}")
        if row["program"]:
            print(f"    program:  {row['program']}")
        for line in data:
            print(f"    data:     {line}")
        if row["problem"]:
            print(f"    why:      {row['problem']}")
        if row["workspace"]:
            print(f"    workspace: {row['workspace']}")
        if row["server_breaker_error"]:
            print(f"    last failure: {row['server_breaker_error']}")
        if row["quarantined"]:
            print(
                f"    quarantined tools: {row['quarantined']} (context-router harvest {row['server']} --accept-changed)"
            )
    print(f"callable here ({workspace}): {callable_counts(rows)}")
    return 0


def _earlier(path: Path, per_workspace: bool, placeholders: Placeholders) -> str | None:
    """The file of the same name in ${DATA_DIR} while this workspace has none: where the
    shipped memory server kept one graph for every workspace before it kept one each."""
    shared = placeholders.data_dir / path.name
    if per_workspace and shared.is_file() and not path.exists():
        return str(shared)
    return None


def _data_line(data: dict[str, Any]) -> str:
    whose = "this workspace's own" if data["per_workspace"] else "shared by every workspace"
    line = f"{data['path']} ({data['name']}; {whose})"
    if data["earlier"]:
        line += (
            f"; the one every workspace shared before is {data['earlier']}: copy it there to keep using it"
        )
    return line


def callable_counts(rows: list[dict[str, Any]]) -> str:
    """'core 5 of 5, appsec 0 of 2, ...; 5 of 14 servers': the catalogued or declared servers
    of each profile that can be called here (core first, then by name)."""
    per_profile: dict[str, list[bool]] = {}
    for row in rows:
        if row["declared"].startswith("switched off"):
            continue  # the user's choice, not a server that fails to work
        per_profile.setdefault(row.get("profile") or "(no profile)", []).append(row["problem"] is None)
    order = sorted(per_profile, key=lambda profile: (profile != CORE_PROFILE, profile))
    parts = [f"{p} {sum(per_profile[p])} of {len(per_profile[p])}" for p in order]
    everything = [ok for oks in per_profile.values() for ok in oks]
    return f"{', '.join(parts)}; {sum(everything)} of {counted(len(everything), 'server')}"


def core_unavailable(rows: list[dict[str, Any]]) -> list[str]:
    """'NAME: why' for each core server that cannot be called here."""
    return [
        f"{row['server']}: {row['problem']}"
        for row in rows
        if row.get("profile") == CORE_PROFILE and row["problem"] is not None
    ]


def data_lines(rows: list[dict[str, Any]]) -> list[str]:
    """Where each server keeps its state here, one line each."""
    return [f"{row['server']} keeps its data in {_data_line(d)}" for row in rows for d in row["data"]]
