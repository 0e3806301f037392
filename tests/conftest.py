"""Shared fixtures: every test gets its own SQLite file in a temp dir; nothing is written
into the working directory."""

import os
import shutil
from pathlib import Path

import pytest

from router.catalog.load import load_catalog
from router.db import connect
from router.paths import SEEDS_DIR

# the pinned wall clock for tests that read dates, and the real-backend fixtures every facade
# test module uses, registered once here
from tests.clock_support import pinned_clock  # noqa: F401
from tests.facade_support import anyio_backend, facade, harvested_catalog  # noqa: F401


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path, monkeypatch):
    """Point every default path at the test's temp dir."""
    monkeypatch.setenv("CONTEXT_ROUTER_DB", str(tmp_path / "env-default.db"))
    monkeypatch.delenv("CONTEXT_ROUTER_ROLE", raising=False)
    monkeypatch.delenv("CONTEXT_ROUTER_SERVERS", raising=False)
    # the user's data and config directories (platformdirs reads XDG_* on Linux): a test
    # never reads or writes the real user's servers file or database
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def db_path(tmp_path) -> Path:
    return tmp_path / "router.db"


@pytest.fixture
def conn(db_path):
    connection = connect(db_path)
    yield connection
    connection.close()


@pytest.fixture
def seeded_db(tmp_path) -> Path:
    """A database file holding the project's seeded catalog."""
    db = tmp_path / "seeded.db"
    conn = connect(db)
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    conn.close()
    return db


@pytest.fixture
def seed_copy(tmp_path) -> Path:
    """A private copy of the project's seeds that a test may break."""
    target = tmp_path / "seeds"
    shutil.copytree(SEEDS_DIR, target)
    return target


@pytest.fixture
def venv_bin() -> Path:
    """The bin directory of the interpreter running the tests (the project's .venv)."""
    import sys

    return Path(sys.executable).parent


def project_env(**extra: str) -> dict[str, str]:
    """Environment for subprocesses: the test's env plus the project's venv on PATH."""
    import sys

    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env
