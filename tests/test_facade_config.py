"""Start-up checks of `context-router serve` and how backend commands are found."""

import os
from pathlib import Path

import pytest

from router.backends.programs import resolve_command
from router.backends.servers import ConfigError
from router.cli import main
from router.facade.placeholders import Placeholders


def test_serve_refuses_a_database_it_cannot_open(tmp_path, capsys):
    assert main(["serve", "--db", str(tmp_path / "missing-dir" / "x.db")]) == 2
    assert "--db" in capsys.readouterr().err


def test_serve_refuses_an_unknown_placeholder_naming_the_server(tmp_path, capsys):
    servers = tmp_path / "servers.toml"
    servers.write_text(
        '[servers.typo]\nprofile = "core"\ncommand = "x"\nargs = ["${WORKSPCE}"]\n', encoding="utf-8"
    )
    assert main(["serve", "--db", str(tmp_path / "r.db"), "--servers", str(servers)]) == 2
    err = capsys.readouterr().err
    assert "[servers.typo]" in err and "WORKSPCE" in err


def test_serve_refuses_an_unknown_role(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CONTEXT_ROUTER_ROLE", "overlord")
    assert main(["serve", "--db", str(tmp_path / "r.db")]) == 2
    assert "unknown role 'overlord'" in capsys.readouterr().err


def test_placeholders_expand_workspace_and_data_dir(tmp_path):
    values = Placeholders(tmp_path / "ws", tmp_path / "data")
    assert values.expand("${WORKSPACE}/x:${DATA_DIR}", "here") == f"{tmp_path}/ws/x:{tmp_path}/data"
    with pytest.raises(ConfigError, match="here: unknown placeholder"):
        values.expand("${HOME}", "here")


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_commands_are_found_in_the_project_dirs_before_path(tmp_path, monkeypatch):
    venv_bin, npm_bin, on_path = tmp_path / "venv", tmp_path / "npm", tmp_path / "path"
    _executable(on_path / "tool-a")
    _executable(npm_bin / "tool-a")
    _executable(venv_bin / "tool-a")
    _executable(on_path / "tool-b")
    monkeypatch.setenv("PATH", f"{on_path}{os.pathsep}{os.environ['PATH']}")
    dirs = (venv_bin, npm_bin)
    assert resolve_command("tool-a", dirs) == str(venv_bin / "tool-a")
    (venv_bin / "tool-a").unlink()
    assert resolve_command("tool-a", dirs) == str(npm_bin / "tool-a")
    assert resolve_command("tool-b", dirs).endswith("path/tool-b")
    assert resolve_command("tool-c", dirs) is None
    assert resolve_command(str(on_path / "tool-b"), dirs) == str(on_path / "tool-b")
    assert resolve_command(str(on_path / "absent"), dirs) is None
