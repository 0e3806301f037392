"""Shared set-up for the facade tests: a test-private servers.toml, a catalog harvested live
from the real backends, and a router started as a real `context-router serve` subprocess."""

import json
import os
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from router.backends.servers import load_servers
from router.catalog.load import load_catalog
from router.db import connect
from router.facade.backend_watch import fetch_tool_list
from router.facade.jsonrpc_lines import LineClient
from router.facade.placeholders import Placeholders
from router.process_start import process_running
from tests.clock_support import faked_clock_environment
from tests.db_rows import rows
from tests.project import NPM_BIN, PROJECT_ROOT  # noqa: F401 - re-exported to the facade tests

TESTS_DIR = Path(__file__).resolve().parent
VENV_BIN = Path(sys.executable).parent
CONTEXT_ROUTER = VENV_BIN / "context-router"
MISBEHAVING = TESTS_DIR / "servers" / "misbehaving.py"
LOOPBACK_ONLY = TESTS_DIR / "servers" / "loopback_only.cjs"

# Servers whose live tools/list makes up the test catalog.
HARVESTED = ("time", "git", "filesystem", "misbehaving")

# A tool whose server's program is not installed, and one whose server is not declared.
HAND_WRITTEN_TOOLS = [
    {
        "name": "absent_lookup",
        "server": "absent",
        "profile": "core",
        "description": "Look something up in a server that is not installed.",
        "inputSchema": {"type": "object", "properties": {"key": {"type": "string"}}},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "orphan_ping",
        "server": "orphan",
        "profile": "core",
        "description": "A tool whose server has no entry in servers.toml.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    },
]


def make_workspace(root: Path) -> Path:
    """A small git repository for mcp-server-git and mcp-server-filesystem to work in."""
    root.mkdir(parents=True, exist_ok=True)
    git = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.invalid"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / "hello.txt").write_text("hello from the workspace\n", encoding="utf-8")
    subprocess.run(git + ["-C", str(root), "add", "hello.txt"], check=True)
    subprocess.run(git + ["-C", str(root), "commit", "-q", "-m", "first"], check=True)
    return root


def write_servers_toml(
    path: Path,
    *,
    state_dir: Path,
    call_timeout_s: float = 10.0,
    idle_stop_s: float = 300.0,
    breaker_open_s: float = 60.0,
    breaker_failures: int = 3,
    extra: str = "",
) -> Path:
    """A servers.toml private to one test: the real servers, our misbehaving one, a missing one."""
    path.write_text(
        f"""
[defaults]
call_timeout_s = {call_timeout_s}
startup_timeout_s = 20.0
idle_stop_s = {idle_stop_s}
breaker_open_s = {breaker_open_s}
breaker_failures = {breaker_failures}

[servers.time]
profile = "core"
command = "mcp-server-time"
args = ["--local-timezone", "UTC"]

[servers.git]
profile = "core"
command = "mcp-server-git"
args = ["--repository", "${{WORKSPACE}}"]
needs_workspace = "git-repository"

[servers.filesystem]
profile = "core"
command = "mcp-server-filesystem"
args = ["${{WORKSPACE}}"]

[servers.misbehaving]
profile = "custom"
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(MISBEHAVING))}]
env = {{ FLAKY_FLAG_FILE = {json.dumps(str(state_dir / "flaky.flag"))}, CALL_LOG_FILE = {json.dumps(str(state_dir / "calls.log"))}, START_LOG_FILE = {json.dumps(str(state_dir / "starts.log"))}, NOTES_FILE = {json.dumps(str(state_dir / "notes.txt"))}, CHILD_LOG_FILE = {json.dumps(str(state_dir / "children.log"))} }}

[servers.absent]
profile = "core"
command = "mcp-server-absent-for-tests"
install = "npm install @example/absent-server (into .npm-tools)"
{extra}
""",
        encoding="utf-8",
    )
    return path


async def harvest(servers_file: Path, workspace: Path, data_dir: Path, names: tuple[str, ...]) -> list[dict]:
    """Each named backend's live tools/list, as user-catalog lines."""
    config = load_servers(servers_file)
    placeholders = Placeholders(workspace, data_dir)
    lines = []
    for name in names:
        server = config.servers[name]
        for tool in await fetch_tool_list(server, config, placeholders):
            lines.append(tool | {"server": name, "profile": server.profile})
    return lines


def write_catalog_file(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def load_test_catalog(db_path: Path, catalog_file: Path) -> None:
    conn = connect(db_path)
    try:
        load_catalog(conn, seed_dir=None, user_files=[catalog_file])
    finally:
        conn.close()


def router_params(
    db_path: Path,
    servers_file: Path,
    workspace: Path,
    *,
    role: str | None = None,
    env: dict[str, str] | None = None,
    extra_args: tuple[str, ...] = (),
) -> StdioServerParameters:
    args = ["serve", "--db", str(db_path), "--servers", str(servers_file), "--workspace", str(workspace)]
    if role:
        args += ["--role", role]
    env = faked_clock_environment() | (env or {})
    return StdioServerParameters(command=str(CONTEXT_ROUTER), args=args + list(extra_args), env=env)


@asynccontextmanager
async def running_router(*args: Any, **kwargs: Any):
    async with Client(router_params(*args, **kwargs)) as client:
        yield client


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def json_of(result: Any) -> Any:
    assert not result.is_error, text_of(result)
    return json.loads(text_of(result))


def audit_rows(db_path: Path) -> list[dict]:
    return rows(db_path, "SELECT * FROM audit ORDER BY id")


def breaker_row(db_path: Path, tool: str) -> dict | None:
    found = rows(db_path, "SELECT * FROM breaker WHERE tool = :tool", {"tool": tool})
    return found[0] if found else None


def call_log(state_dir: Path) -> list[str]:
    path = state_dir / "calls.log"
    return path.read_text(encoding="utf-8").split()[0::2] if path.exists() else []


# Is the process running? A zombie (exited, not yet reaped) counts as gone.
alive = process_running


HANGS_TOOL = {
    "name": "hangs_whoami",
    "server": "hangs",
    "profile": "custom",
    "description": "Report the process id of a backend that never finishes starting.",
    "inputSchema": {"type": "object", "properties": {}},
    "annotations": {"readOnlyHint": True},
}


def logged_pids(path) -> list[int]:
    return [int(word) for word in path.read_text(encoding="utf-8").split()] if path.exists() else []


def add_backend(facade, harvested_catalog, name: str, declaration: str, tools: list[dict]) -> None:
    """Declare server `name` (the body of its [servers.NAME] table) beside the test servers,
    and put its tools (as its tools/list gives them) in the catalog."""
    facade.reconfigure(extra=f"\n[servers.{name}]\n{declaration}\n")
    extra = facade.state_dir / f"{name}.jsonl"
    lines = [tool | {"server": name, "profile": "custom"} for tool in tools]
    write_catalog_file(extra, lines)
    conn = connect(facade.db)
    try:
        load_catalog(conn, seed_dir=None, user_files=[harvested_catalog, extra])
    finally:
        conn.close()


def add_hanging_backend(facade, harvested_catalog, startup_timeout_s: float = 1.0) -> None:
    """Declare `hangs` (never answers initialize, after starting a child of its own) and put
    its one tool in the catalog."""
    state = facade.state_dir
    declaration = f"""profile = "custom"
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(MISBEHAVING))}]
startup_timeout_s = {startup_timeout_s}
env = {{ HANG_AT_START = "1", START_LOG_FILE = {json.dumps(str(state / "hang-starts.log"))}, CHILD_LOG_FILE = {json.dumps(str(state / "hang-children.log"))} }}"""
    add_backend(facade, harvested_catalog, "hangs", declaration, [HANGS_TOOL])


async def wait_until(predicate, timeout_s: float = 10.0, interval_s: float = 0.05) -> bool:
    with anyio.move_on_after(timeout_s):
        while not predicate():
            await anyio.sleep(interval_s)
        return True
    return False


# --- fixtures (imported by the test_facade_* modules) ---------------------------------------

from dataclasses import dataclass  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def harvested_catalog(tmp_path_factory) -> Path:
    """The test catalog: the live tools/list of the real backends, plus hand-written lines."""
    root = tmp_path_factory.mktemp("facade-catalog")
    workspace = make_workspace(root / "workspace")
    servers_file = write_servers_toml(root / "servers.toml", state_dir=root)
    lines = anyio.run(harvest, servers_file, workspace, root / "data", HARVESTED)
    return write_catalog_file(root / "catalog.jsonl", lines + HAND_WRITTEN_TOOLS)


@dataclass
class Facade:
    db: Path
    servers_file: Path
    workspace: Path
    state_dir: Path

    def params(self, **kwargs: Any) -> StdioServerParameters:
        return router_params(self.db, self.servers_file, self.workspace, **kwargs)

    def router(self, **kwargs: Any):
        return running_router(self.db, self.servers_file, self.workspace, **kwargs)

    def reconfigure(self, **kwargs: Any) -> None:
        write_servers_toml(self.servers_file, state_dir=self.state_dir, **kwargs)


def make_facade(root: Path, harvested_catalog: Path) -> Facade:
    """The facade tests' set-up (real backends, harvested catalog) in `root`."""
    state_dir = root / "state"
    state_dir.mkdir(parents=True)
    db = root / "router.db"
    load_test_catalog(db, harvested_catalog)
    return Facade(
        db=db,
        servers_file=write_servers_toml(root / "servers.toml", state_dir=state_dir),
        workspace=make_workspace(root / "workspace"),
        state_dir=state_dir,
    )


@pytest.fixture
def facade(tmp_path, harvested_catalog) -> Facade:
    return make_facade(tmp_path, harvested_catalog)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class RawStdioClient(LineClient):
    """A minimal MCP client over real stdio: JSON-RPC lines in, raw response bytes out.

    For what the SDK client hides: the exact bytes of a result, and the router's pid."""

    def __init__(
        self,
        params: StdioServerParameters,
        protocol_version: str = "2025-11-25",
        stderr: Any = subprocess.DEVNULL,
    ) -> None:
        super().__init__(
            [params.command, *params.args],
            dict(os.environ) | (params.env or {}),
            protocol_version=protocol_version,
            client_name="raw-test-client",
            stderr=stderr,
        )
