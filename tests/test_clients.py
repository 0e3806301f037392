"""Reading other clients' MCP configs: each format family, its variables, and secrets moved out."""

import json

import pytest

from router.cli import main
from router.clients.discover import ClientConfigError, read_client_config, usual_config_files
from router.clients.literal_secrets import move_out


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_claude_code_project_file_and_per_project_servers(tmp_path):
    path = write(
        tmp_path / ".claude.json",
        json.dumps(
            {
                "mcpServers": {
                    "github": {"type": "http", "url": "https://api.example/mcp", "headers": {"X-Team": "a"}}
                },
                "projects": {
                    "/src/app": {
                        "mcpServers": {
                            "db": {
                                "command": "db-mcp",
                                "args": ["--url", "${DB_URL:-sqlite://}"],
                                "env": {"MODE": "ro"},
                            }
                        }
                    }
                },
            }
        ),
    )
    kind, servers = read_client_config(path)
    assert kind == "claude"
    github, db = servers
    assert (github.url, github.headers, github.command) == ("https://api.example/mcp", {"X-Team": "a"}, None)
    assert (db.command, db.args, db.env) == ("db-mcp", ["--url", "${env:DB_URL}"], {"MODE": "ro"})
    assert db.source.endswith("projects./src/app.mcpServers.db")
    assert db.notes == ["${DB_URL:-...}: its default is not carried over; set DB_URL"]


def test_vscode_jsonc_with_inputs_env_and_workspace_folder(tmp_path):
    path = write(
        tmp_path / ".vscode" / "mcp.json",
        """{
          // VS Code allows comments and trailing commas
          "inputs": [{"type": "promptString", "id": "gh-token", "password": true}],
          "servers": {
            "gh": {"type": "stdio", "command": "gh-mcp", "args": ["${workspaceFolder}"],
                   "env": {"GITHUB_TOKEN": "${input:gh-token}", "HOME_HINT": "${env:HOME}"},},
            "remote": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
          },
        }""",
    )
    kind, (gh, remote) = read_client_config(path)
    assert kind == "vscode"
    assert gh.args == ["${WORKSPACE}"]
    assert gh.env == {"GITHUB_TOKEN": "${env:GH_TOKEN}", "HOME_HINT": "${env:HOME}"}
    assert "export it" in gh.notes[0]
    assert (remote.url, remote.http_transport) == ("http://127.0.0.1:9/sse", "sse")


def test_opencode_local_and_remote(tmp_path):
    path = write(
        tmp_path / "opencode.json",
        json.dumps(
            {
                "mcp": {
                    "local": {
                        "type": "local",
                        "command": ["npx", "-y", "pkg"],
                        "environment": {"K": "{env:K}"},
                    },
                    "remote": {
                        "type": "remote",
                        "url": "https://x.example/mcp",
                        "headers": {"A": "b"},
                        "enabled": False,
                    },
                }
            }
        ),
    )
    kind, (local, remote) = read_client_config(path)
    assert kind == "opencode"
    assert (local.command, local.args, local.env) == ("npx", ["-y", "pkg"], {"K": "${env:K}"})
    assert remote.disabled is True and remote.url == "https://x.example/mcp"


def test_a_file_that_is_no_client_config_says_what_was_looked_for(tmp_path):
    with pytest.raises(ClientConfigError, match="looked for mcpServers, servers and mcp"):
        read_client_config(write(tmp_path / "x.json", "{}"))
    with pytest.raises(ClientConfigError, match="not JSON"):
        read_client_config(write(tmp_path / "y.json", "{nope"))


def test_a_broken_file_is_named_with_its_line_not_as_a_string(tmp_path, capsys):
    broken = write(tmp_path / ".mcp.json", '{\n  "mcpServers": {\n\n    "a": {"command": "x",,}\n  }\n}\n')
    with pytest.raises(ClientConfigError) as refused:
        read_client_config(broken)
    assert str(refused.value).startswith(f"{broken}: not JSON (or JSON with comments): line 4: Unexpected")
    assert "<string>" not in str(refused.value)
    assert main(["import", str(broken)]) == 2
    assert f"error: {broken}: not JSON (or JSON with comments): line 4: " in capsys.readouterr().err


def test_literal_secrets_become_references_and_no_message_quotes_them(tmp_path):
    secret = "ghp_" + "a" * 36
    path = write(
        tmp_path / ".mcp.json",
        json.dumps(
            {
                "mcpServers": {
                    "gh": {
                        "command": "gh-mcp",
                        "args": ["--token", secret],
                        "env": {"GITHUB_TOKEN": secret, "LOG": "info"},
                    },
                    "api": {
                        "type": "http",
                        "url": "https://a.example/mcp",
                        "headers": {"Authorization": "Bearer abc123"},
                    },
                }
            }
        ),
    )
    _, (gh, api) = read_client_config(path)
    messages = move_out(gh, keep=False) + move_out(api, keep=False)
    assert gh.env == {"GITHUB_TOKEN": "${env:GITHUB_TOKEN}", "LOG": "info"}
    assert gh.args == ["--token", "${env:GH_ARG1}"]
    assert api.headers == {"Authorization": "Bearer ${env:API_AUTHORIZATION}"}
    assert any("export GITHUB_TOKEN=" in m for m in messages)
    assert any("export API_AUTHORIZATION=" in m for m in messages)
    assert not any(secret in m or "abc123" in m for m in messages)


def test_keep_secrets_keeps_the_value_and_says_so(tmp_path):
    path = write(
        tmp_path / ".mcp.json",
        json.dumps({"mcpServers": {"s": {"command": "x", "env": {"API_KEY": "k" * 12}}}}),
    )
    _, (server,) = read_client_config(path)
    assert move_out(server, keep=True) == [
        "env API_KEY: a literal secret, kept as you asked (--keep-secrets)"
    ]
    assert server.env == {"API_KEY": "k" * 12}


def test_usual_places_are_found(tmp_path):
    home, cwd = tmp_path / "home", tmp_path / "work"
    desktop = write(home / ".config" / "Claude" / "claude_desktop_config.json", "{}")
    project = write(cwd / ".mcp.json", "{}")
    write(cwd / "unrelated.json", "{}")
    assert usual_config_files(home, cwd) == [desktop, project]
