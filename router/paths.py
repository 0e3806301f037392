"""Where the project's data files live and which database file to use."""

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SCHEMA_FILE = PROJECT_ROOT / "schema.sql"
SEEDS_DIR = PROJECT_ROOT / "seeds"
ROLES_DIR = PROJECT_ROOT / "roles"
CONFIGS_DIR = PROJECT_ROOT / "configs"

DB_ENV_VAR = "CONTEXT_ROUTER_DB"
DEFAULT_DB_NAME = "router.db"


def resolve_db_path(cli_value: str | None) -> Path:
    """--db PATH, else $CONTEXT_ROUTER_DB, else router.db in the working directory."""
    if cli_value:
        return Path(cli_value)
    env_value = os.environ.get(DB_ENV_VAR)
    if env_value:
        return Path(env_value)
    return Path.cwd() / DEFAULT_DB_NAME
