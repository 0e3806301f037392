"""`context-router servers`, `add`, `remove` and `import`: the user's own MCP servers.

`add` and `import` start each server, read its tools/list, write its seed into the user seeds
directory, declare it in the user's servers file and reload the catalog, in one command: a
running router searches and calls the new tools without a restart (it follows the catalog;
a new server's declaration is read when the router re-reads its servers files). `remove`
undoes that; a shipped server is switched off instead (`enabled = false` in the user's file).
"""

import argparse
import os
import sys
from pathlib import Path

import anyio

from router.backends.servers import SEARCH_ALL, SEARCH_CALLABLE, ServerConfig, load_servers
from router.backends.user_servers import UserServersFile
from router.clients import ClientServer
from router.clients.discover import read_client_config, usual_config_files
from router.clients.literal_secrets import move_out
from router.commands import add_db_option, add_servers_option, workspace_dir
from router.commands.server_setup import (
    SetupOutcome,
    choose_prefix,
    server_name,
    taken_tool_names,
    tool_names_by_server,
    write_user_seed,
)
from router.commands.servers_status import print_status
from router.commands.setup import STARTER_SERVERS
from router.db import connect
from router.errors import RouterError
from router.paths import (
    SEEDS_DIR,
    SERVERS_ENV_VAR,
    SHIPPED_SERVERS_FILE,
    resolve_db_path,
    servers_files,
    user_seeds_dir,
    user_servers_file,
)
from router.wording import counted

DEFAULT_PROFILE = "custom"


def register(subparsers: argparse._SubParsersAction) -> None:
    status = subparsers.add_parser(
        "servers",
        help="list every backend server: declared where, installed, running, tools, breaker",
        description="One line per declared (or switched-off, or catalogued) server.",
    )
    add_db_option(status)
    add_servers_option(status)
    status.add_argument("--json", action="store_true", help="JSON instead of lines")
    status.add_argument(
        "--workspace",
        metavar="DIR",
        type=Path,
        help="the workspace servers would run in, as serve --workspace (default: working directory)",
    )
    status.add_argument(
        "--search",
        choices=[SEARCH_ALL, SEARCH_CALLABLE],
        help=f"which servers search offers: {SEARCH_ALL} (the default: a better match that cannot be "
        f"called here is named, once per server, with why) or {SEARCH_CALLABLE} (only servers "
        "callable here); kept in your servers file",
    )
    status.add_argument(
        "--hide", metavar="NAME", nargs="+", default=[], help="never search these servers' tools"
    )
    status.add_argument("--show", metavar="NAME", nargs="+", default=[], help="search these servers again")
    status.set_defaults(handler=run_servers)

    add = subparsers.add_parser(
        "add",
        help="add one MCP server: start it, catalog its tools, declare it in your servers file",
        description="context-router add [OPTIONS] NAME -- COMMAND ARGS..., or add [OPTIONS] --http URL "
        "NAME: options go before NAME, everything after it is the server's command line.",
    )
    add.add_argument("name")
    add.add_argument("--http", metavar="URL", help="a Streamable HTTP server at URL")
    add.add_argument("--sse", action="store_true", help="the URL speaks the older HTTP+SSE transport")
    add.add_argument("--env", metavar="NAME=VALUE", action="append", default=[], help="repeatable")
    add.add_argument("--header", metavar="NAME=VALUE", action="append", default=[], help="repeatable")
    add.add_argument("--profile", default=DEFAULT_PROFILE, help=f"default {DEFAULT_PROFILE}")
    add.add_argument("--install", default="", help="how to install it, shown when its program is missing")
    _common_setup_options(add)
    add.add_argument("launch", nargs=argparse.REMAINDER, help="-- COMMAND ARGS...")
    add.set_defaults(handler=run_add)

    remove = subparsers.add_parser(
        "remove",
        help="remove a server from your servers file and its tools from the catalog",
        description="Your own server is taken out of your servers file and its seed deleted; a "
        "shipped one is switched off there (enabled = false). The catalog is reloaded.",
    )
    remove.add_argument("name")
    add_db_option(remove)
    add_servers_option(remove)
    remove.set_defaults(handler=run_remove)

    imported = subparsers.add_parser(
        "import",
        help="bring in the MCP servers of Claude, Claude Code, Cursor, VS Code or OpenCode",
        description=(
            "Read MCP server entries from client configs (default: the clients' usual files and "
            "the working directory's), and add each as `add` does. Literal secrets in env or "
            "headers are left out: ${env:NAME} references take their place and you are told "
            "what to export (--keep-secrets keeps them, in a file only you can read)."
        ),
    )
    imported.add_argument("files", nargs="*", type=Path, metavar="FILE")
    imported.add_argument("--only", metavar="NAME", action="append", help="import only these servers")
    _common_setup_options(imported)
    imported.set_defaults(handler=run_import)


def _common_setup_options(parser: argparse.ArgumentParser) -> None:
    add_db_option(parser)
    add_servers_option(parser)
    parser.add_argument(
        "--tool-prefix",
        metavar="PREFIX",
        help="name its tools PREFIX<tool> (default: <server>_ only when a name is taken)",
    )
    parser.add_argument(
        "--workspace", metavar="DIR", type=Path, help="${WORKSPACE} (default: working directory)"
    )
    parser.add_argument(
        "--keep-secrets",
        action="store_true",
        help="write literal secret values into your servers file (default: ${env:NAME} references)",
    )


# --- servers: the list, and which servers search offers -----------------------------------


def run_servers(args: argparse.Namespace) -> int:
    workspace = workspace_dir(args.workspace)  # before anything is written
    if args.search or args.hide or args.show:
        print(set_search(args.servers, args.search, args.hide, args.show))
    return print_status(args.db, args.servers, args.json, workspace)


def set_search(cli_servers: list[Path] | None, scope: str | None, hide: list[str], show: list[str]) -> str:
    """Write [search] into the user's servers file (a running router reads it within a
    second); what it now says."""
    target, lower = _writable_layer(cli_servers)
    file = UserServersFile(target, STARTER_SERVERS)
    config = load_servers([*lower, target] if target.exists() else lower)
    hidden = set(file.hidden())
    known = set(config.servers) | set(config.disabled) | hidden
    unknown = sorted(set(hide) - known) + sorted(set(show) - known)
    if unknown:
        raise RouterError(
            f"no server named {', '.join(map(repr, unknown))} in {target} or the shipped servers"
        )
    if scope is not None:
        file.set_search_scope(scope)
    file.set_hidden(sorted((hidden | set(hide)) - set(show)))
    file.save(lower)
    search = load_servers([*lower, target]).search
    return f"{target}: search offers {search.servers} servers; hidden: {', '.join(search.hidden) or 'none'}"


# --- add and import -----------------------------------------------------------------------


def _pairs(values: list[str], what: str) -> dict[str, str]:
    out = {}
    for value in values:
        name, sep, text = value.partition("=")
        if not sep or not name:
            raise RouterError(f"{what} {value!r}: expected NAME=VALUE")
        out[name] = text
    return out


def _writable_layer(cli_servers: list[Path] | None) -> tuple[Path, list[Path]]:
    """The file add/import/remove write (the user's servers file, or the top --servers layer
    that is not the shipped one) and the layers below it."""
    layers = servers_files(cli_servers)
    if cli_servers or os.environ.get(SERVERS_ENV_VAR):
        if layers[-1].resolve() == SHIPPED_SERVERS_FILE.resolve():
            raise RouterError(
                "the top servers layer is the shipped configs/servers.toml: name your own file last"
            )
        return layers[-1], layers[:-1]
    return user_servers_file(), [SHIPPED_SERVERS_FILE]


def progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def setup_servers(
    args: argparse.Namespace, candidates: list[tuple[ServerConfig, str, list[str]]]
) -> list[SetupOutcome]:
    """Start, list, seed and declare each candidate; reload the catalog once at the end."""
    # imported here: the MCP client (the SDK) and the catalog loader are what `servers` and
    # `--help` must not load
    from router.catalog.harvest import describe_launch
    from router.commands.catalog import load_default_catalog
    from router.facade.backend_watch import fetch_tool_list
    from router.facade.placeholders import Placeholders, default_data_dir

    target, lower = _writable_layer(args.servers)
    file = UserServersFile(target, STARTER_SERVERS)
    db_path = resolve_db_path(args.db)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    config = load_servers([*lower, target] if target.exists() else lower)
    placeholders = Placeholders(workspace_dir(args.workspace), default_data_dir(db_path))
    conn = connect(db_path)
    outcomes: list[SetupOutcome] = []
    taken: set[str] = set()
    try:
        names_by_server = tool_names_by_server(conn, [SEEDS_DIR, user_seeds_dir()])
        for number, (server, source, messages) in enumerate(candidates, start=1):
            outcome = SetupOutcome(server.name, messages=messages)
            outcomes.append(outcome)
            # progress on stderr: starting a server can take its whole start-up timeout, and
            # stdout stays the report a script reads. The program only: its arguments or URL
            # may carry a token
            how = f"starting {server.command}" if server.command else "connecting over HTTP"
            progress(f"[{number}/{len(candidates)}] {server.name}: {how} for its tools/list")
            try:
                tools = anyio.run(fetch_tool_list, server, config, placeholders)
            except RouterError as exc:
                outcome.error = f"{exc} (not added)"
                continue
            names = [str(tool.get("name")) for tool in tools]
            others = taken_tool_names(names_by_server, server.name) | taken
            outcome.prefix = choose_prefix(names, others, server.name, args.tool_prefix)
            try:
                write_user_seed(
                    user_seeds_dir(),
                    server,
                    f"imported from {source}: tools/list of {describe_launch(server)}",
                    tools,
                    outcome.prefix,
                )
            except RouterError as exc:  # a seed the catalog would refuse is not written
                outcome.error = f"{exc} (not added)"
                continue
            taken |= {outcome.prefix + name for name in names}
            file.declare(server, f"from {source}")
            outcome.tools = len(tools)
    finally:
        conn.close()
    if any(outcome.error is None for outcome in outcomes):
        if args.keep_secrets:
            file.keep_private()
        file.save(lower)
        print(f"{target}: {counted(sum(o.error is None for o in outcomes), 'server')} declared")
        progress(f"reloading the catalog in {db_path}")
        print(f"{db_path}: {load_default_catalog(db_path, [*lower, target])}")
    return outcomes


def run_add(args: argparse.Namespace) -> int:
    launch = args.launch[1:] if args.launch[:1] == ["--"] else args.launch
    if bool(args.http) == bool(launch):
        raise RouterError("add NAME needs either --http URL or -- COMMAND ARGS...")
    entry = ClientServer(name=args.name, source="the add command line")
    if args.http:
        entry.url, entry.headers = args.http, _pairs(args.header, "--header")
        entry.http_transport = "sse" if args.sse else "streamable-http"
    else:
        entry.command, entry.args, entry.env = launch[0], launch[1:], _pairs(args.env, "--env")
    # the same rule as import: a literal secret becomes a reference unless --keep-secrets
    messages = move_out(entry, keep=args.keep_secrets)
    try:
        server = _as_config(entry, profile=args.profile, install=args.install)
    except ValueError as exc:
        raise RouterError(f"add {args.name}: {exc}") from None
    if server.name != args.name:
        messages.insert(0, _declared_as(args.name, server.name))
    [outcome] = setup_servers(args, [(server, "context-router add", messages)])
    print("\n".join(outcome.lines()))
    return 0 if outcome.error is None else 1


def _as_config(entry: ClientServer, profile: str = DEFAULT_PROFILE, install: str = "") -> ServerConfig:
    fields: dict[str, object] = {"name": server_name(entry.name), "profile": profile, "install": install}
    if entry.url is not None:
        fields |= {"url": entry.url, "headers": entry.headers, "http_transport": entry.http_transport}
    else:
        fields |= {"command": entry.command, "args": entry.args, "env": entry.env}
    return ServerConfig.model_validate(fields)


def run_import(args: argparse.Namespace) -> int:
    files = args.files or usual_config_files(Path.home(), Path.cwd())
    if not files:
        raise RouterError("no client config found in the usual places; name one: context-router import FILE")
    candidates: list[tuple[ServerConfig, str, list[str]]] = []
    skipped: list[str] = []
    for path in files:
        kind, entries = read_client_config(path)
        print(f"{path}: {kind} config, {counted(len(entries), 'server')}")
        for entry in entries:
            if args.only and entry.name not in args.only:
                continue
            if entry.disabled or not (entry.command or entry.url):
                skipped.append(
                    f"skipped {entry.name}: {'switched off in ' + entry.source if entry.disabled else 'no command or url'}"
                )
                continue
            messages = [*entry.notes, *move_out(entry, keep=args.keep_secrets)]
            try:
                candidates.append((_as_config(entry), entry.source, messages))
            except ValueError as exc:
                skipped.append(f"skipped {entry.name}: {exc}")
    outcomes = setup_servers(args, candidates) if candidates else []
    for outcome in outcomes:
        print("\n".join(outcome.lines()))
    for line in skipped:
        print(line)
    return 0 if outcomes and all(o.error is None for o in outcomes) else 1


def _declared_as(given: str, declared: str) -> str:
    return (
        f"declared as {declared!r} ({given!r} is not a server name: a name keeps letters, digits "
        f"and _ . -); remove it with: context-router remove {declared}"
    )


# --- remove -------------------------------------------------------------------------------


def run_remove(args: argparse.Namespace) -> int:
    from router.commands.catalog import load_default_catalog

    target, lower = _writable_layer(args.servers)
    file = UserServersFile(target, STARTER_SERVERS)
    shipped = load_servers(lower)
    name = args.name
    seed = user_seeds_dir() / f"{name}.json"
    if name in shipped.servers:
        file.disable(name, "switched off by context-router remove; delete this table to switch it back on")
        what = f"switched off the shipped server {name} in {target}"
    elif file.declares(name):
        file.remove(name)
        what = f"removed {name} from {target}"
    elif server_name(name) != name and file.declares(server_name(name)):
        raise RouterError(
            f"no server named {name!r} in {target} or the shipped servers: "
            f"{_declared_as(name, server_name(name))}"
        )
    else:
        raise RouterError(f"no server named {name!r} in {target} or the shipped servers")
    file.save(lower)
    seed.unlink(missing_ok=True)
    db_path = resolve_db_path(args.db)
    print(what)
    print(f"{db_path}: {load_default_catalog(db_path, [*lower, target])}")
    return 0
