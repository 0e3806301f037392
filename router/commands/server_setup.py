"""Putting a user's server behind the router in one step: start it, read its tools/list, write
its seed into the user seeds directory, declare it in the user's servers file, reload the
catalog. `import` does it for every server of a client config, `add` for one; `remove`
undoes it.

Seeds of the user's servers live in router.paths.user_seeds_dir() (beside the user's servers
file), one `<server>.json` each in the format of the shipped seeds/, so `context-router
catalog` (and `make catalog`) loads them with the shipped ones and never drops them. A tool
whose name is already in the catalog from another server gets the server's name as a prefix
(`<server>_<tool>`, or `--tool-prefix`); the backend still gets its own name (backend_name).
"""

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from router.backends.servers import ServerConfig
from router.catalog.harvest import HarvestReport, merge, new_seed, write_checked_seed
from router.wording import counted

SERVER_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.\-]+")
CATALOG_TOOLS_SQL = "SELECT server, name FROM tools"


def server_name(client_name: str) -> str:
    """A client's name for a server, as a catalog server name (letters, digits, _ . -)."""
    return SERVER_NAME_CHARS.sub("-", client_name).strip("-")[:64] or "server"


@dataclass
class SetupOutcome:
    server: str
    tools: int = 0
    prefix: str = ""
    error: str | None = None
    messages: list[str] = field(default_factory=list)

    def line(self) -> str:
        if self.error is not None:
            return f"failed {self.server}: {self.error}"
        prefixed = f" (named {self.prefix}<tool>: their names were taken)" if self.prefix else ""
        return f"added {self.server}: {counted(self.tools, 'tool')}{prefixed}"

    def lines(self) -> list[str]:
        """What import and add print for it: the outcome, then each message indented."""
        return [self.line(), *(f"  {message}" for message in self.messages)]


def tool_names_by_server(conn: apsw.Connection, seed_dirs: list[Path]) -> dict[str, set[str]]:
    """Server → the catalog names its tools have, or will have on the next load: the
    catalog's rows and every seed's. Read once for all the servers an import sets up."""
    names: dict[str, set[str]] = {}
    for server, name in conn.execute(CATALOG_TOOLS_SQL):
        names.setdefault(str(server), set()).add(str(name))
    for directory in seed_dirs:
        for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
            try:
                seed = json.loads(path.read_text(encoding="utf-8"))
                prefix = seed.get("toolPrefix", "")
                names.setdefault(str(seed.get("server")), set()).update(
                    prefix + tool["name"] for tool in seed.get("tools", []) if isinstance(tool, dict)
                )
            except (OSError, ValueError, TypeError, KeyError, AttributeError):
                continue  # the catalog load reports an unreadable seed
    return names


def taken_tool_names(names_by_server: dict[str, set[str]], server: str) -> set[str]:
    """The names other servers' tools take (a seed of `server` itself is being replaced)."""
    return set().union(*(names for other, names in names_by_server.items() if other != server))


def choose_prefix(tool_names: list[str], taken: set[str], server: str, wanted: str | None) -> str:
    """--tool-prefix when given; else '' when none of the names is taken, else '<server>_'."""
    if wanted is not None:
        return wanted
    return f"{server}_" if taken & set(tool_names) else ""


def write_user_seed(
    seeds_dir: Path, server: ServerConfig, source: str, tools: list[dict[str, Any]], prefix: str
) -> Path:
    """seeds_dir/<server>.json with the live tools; a seed already there keeps its hand-written
    triggers, boosts and reviews (the live definitions are accepted: the user is importing)."""
    path = seeds_dir / f"{server.name}.json"
    seed = new_seed(server, source)
    if path.exists():
        try:
            seed = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            pass  # an unreadable seed of ours is replaced
    seed = merge(seed, tools, True, HarvestReport(path)) | {"profile": server.profile, "source": source}
    seed["toolPrefix"] = prefix
    write_checked_seed(path, seed)
    return path
