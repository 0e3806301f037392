"""What the generated configs are made of, read only from files in the repository.

The catalog comes from seeds/*.json (not from a database) and the backends from
configs/servers.toml, so the same checkout always generates the same bytes.
"""

from dataclasses import dataclass
from pathlib import Path

from router.agents.roles import ROLE_MATRIX, Role
from router.backends.servers import ServersConfig, load_servers
from router.catalog.load import build_catalog_input
from router.catalog.sources import read_seed_dir
from router.paths import SEEDS_DIR, SHIPPED_SERVERS_FILE


@dataclass(frozen=True)
class CatalogEntry:
    """One backend tool as a gateway sees it: the backend's own name on its server."""

    catalog_name: str
    server: str
    backend_name: str
    mutating: bool


@dataclass(frozen=True)
class ConfigInputs:
    roles: tuple[Role, ...]
    servers: ServersConfig
    tools: tuple[CatalogEntry, ...]  # sorted by catalog name


def read_inputs(seed_dir: Path = SEEDS_DIR, servers_file: Path = SHIPPED_SERVERS_FILE) -> ConfigInputs:
    """Validate the seeds and servers.toml (errors name file and field) and combine them."""
    catalog = build_catalog_input(read_seed_dir(seed_dir), [])
    tools = tuple(CatalogEntry(t.name, t.server, t.backend_name, bool(t.mutating)) for t in catalog.tools)
    return ConfigInputs(roles=ROLE_MATRIX, servers=load_servers(servers_file), tools=tools)
