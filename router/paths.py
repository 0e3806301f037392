"""Where the router's files are: its own shipped data, the database, the user's servers file.

The shipped data (`schema.sql`, `seeds/`, `roles/`, `configs/`) lives at the top of a
checkout, where the design puts it, and inside the package (`router/data/`) in a built wheel
(pyproject.toml copies it there at build time). A checkout, editable install included, reads
its own files; an installed router reads the wheel's.

Per-user state follows the platform's conventions (platformdirs: XDG on Linux): outside a
checkout the default database lives in the user's data directory, and the user's own servers
file (written by `context-router import` / `add` / `init`) in the user's config directory.
"""

import os
import shlex
from pathlib import Path

import platformdirs

APP_NAME = "context-router"
PACKAGE_DIR = Path(__file__).resolve().parent
# The wheel's copy of the top-level data (pyproject.toml: [tool.hatch.build...force-include]).
PACKAGED_DATA_DIR = PACKAGE_DIR / "data"


def _checkout_root() -> Path | None:
    """The checkout this package was imported from, if any: a source tree has schema.sql and
    pyproject.toml beside the package; an installed wheel has neither beside site-packages."""
    candidate = PACKAGE_DIR.parent
    if (candidate / "schema.sql").is_file() and (candidate / "pyproject.toml").is_file():
        return candidate
    return None


CHECKOUT_ROOT = _checkout_root()
DATA_ROOT = CHECKOUT_ROOT if CHECKOUT_ROOT is not None else PACKAGED_DATA_DIR

SCHEMA_FILE = DATA_ROOT / "schema.sql"
SEEDS_DIR = DATA_ROOT / "seeds"
ROLES_DIR = DATA_ROOT / "roles"
CONFIGS_DIR = DATA_ROOT / "configs"
SHIPPED_SERVERS_FILE = CONFIGS_DIR / "servers.toml"

DB_ENV_VAR = "CONTEXT_ROUTER_DB"
SERVERS_ENV_VAR = "CONTEXT_ROUTER_SERVERS"
DEFAULT_DB_NAME = "router.db"
USER_SERVERS_NAME = "servers.toml"


def user_data_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def user_config_dir() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def default_db_path() -> Path:
    """router.db at the top of a checkout (where `make catalog` builds it), else in the
    user's data directory: never a stray file in whatever directory a command runs in."""
    if CHECKOUT_ROOT is not None:
        return CHECKOUT_ROOT / DEFAULT_DB_NAME
    return user_data_dir() / DEFAULT_DB_NAME


def resolve_db_path(cli_value: str | os.PathLike[str] | None) -> Path:
    """--db PATH, else $CONTEXT_ROUTER_DB, else default_db_path()."""
    if cli_value:
        return Path(cli_value)
    env_value = os.environ.get(DB_ENV_VAR)
    if env_value:
        return Path(env_value)
    path = default_db_path()
    path.parent.mkdir(parents=True, exist_ok=True)  # a fresh user has no data directory yet
    return path


def build_command(db_path: Path) -> str:
    """The command that builds the catalog in db_path, as the user would type it here: `make
    catalog` builds a checkout's own router.db, and only when nothing points elsewhere."""
    env_value = os.environ.get(DB_ENV_VAR)
    if Path(db_path) == (Path(env_value) if env_value else default_db_path()):
        return "context-router catalog" if env_value or CHECKOUT_ROOT is None else "make catalog"
    return f"context-router catalog --db {shlex.quote(str(db_path))}"


def setup_command(db_path: Path) -> str:
    """The first set-up that builds the catalog in db_path, as the user would type it here:
    `make catalog` in a checkout (its Makefile installs the rest), else `context-router init`
    (the catalog, the user's servers file and the npm backends)."""
    command = build_command(db_path)
    if command.startswith("make "):
        return command
    return command.replace("context-router catalog", "context-router init", 1)


def user_servers_file() -> Path:
    """The user's own servers, layered over the shipped ones (may not exist yet)."""
    return user_config_dir() / USER_SERVERS_NAME


def user_seeds_dir() -> Path:
    """Seeds of the user's own servers (written by import, add and harvest), beside the user's
    servers file; `context-router catalog` loads them with the shipped seeds."""
    return user_config_dir() / "seeds"


def servers_files(cli_values: list[Path] | None = None) -> list[Path]:
    """The servers files in force, lowest layer first.

    --servers FILE (repeatable) or $CONTEXT_ROUTER_SERVERS (os.pathsep-separated) name the
    layers exactly; otherwise the shipped configs/servers.toml, then the user's servers file
    when there is one."""
    if cli_values:
        return list(cli_values)
    env_value = os.environ.get(SERVERS_ENV_VAR)
    if env_value:
        return [Path(part) for part in env_value.split(os.pathsep) if part]
    layers = [SHIPPED_SERVERS_FILE]
    if user_servers_file().is_file():
        layers.append(user_servers_file())
    return layers
