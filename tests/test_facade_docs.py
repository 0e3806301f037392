"""The README's serving section cannot drift: its OpenCode lines are run by the real
`opencode` binary, its .mcp.json parses and names the real command, and every `serve`
option is documented."""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from router.cli import build_parser
from tests.facade_support import NPM_BIN, PROJECT_ROOT

README = PROJECT_ROOT / "README.md"
PLACEHOLDER = "/path/to/context-router"


def serving_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Serving: attach an agent")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def json_block_after(heading: str) -> dict:
    section = serving_section()
    after = section[section.index(heading) :]
    return json.loads(re.search(r"```json\n(.*?)```", after, re.DOTALL).group(1))


def serve_options() -> set[str]:
    serve = build_parser()._subparsers._group_actions[0].choices["serve"]
    return {opt for action in serve._actions for opt in action.option_strings if opt.startswith("--")} - {
        "--help"
    }


def test_every_serve_option_is_documented():
    section = serving_section()
    assert serve_options() == {"--db", "--role", "--servers", "--workspace", "--http", "--no-wake-on-search"}
    for option in serve_options():
        assert f"`{option}" in section, f"{option} is not in the README's serving section"


def test_claude_code_mcp_json_names_the_real_command():
    config = json_block_after("### Claude Code")["mcpServers"]["context-router"]
    command = Path(config["command"].replace(PLACEHOLDER, str(PROJECT_ROOT)))
    assert command == PROJECT_ROOT / ".venv" / "bin" / "context-router" and command.exists()
    assert config["args"][0] == "serve"
    assert "claude mcp add context-router -e CONTEXT_ROUTER_ROLE=staff-backend --" in serving_section()


@pytest.mark.slow
def test_opencode_connects_with_the_readme_config(tmp_path, db_path):
    from router.db import connect

    connect(db_path).close()
    config = json.dumps(json_block_after("### OpenCode"))
    config = config.replace(f"{PLACEHOLDER}/router.db", str(db_path)).replace(PLACEHOLDER, str(PROJECT_ROOT))
    project = tmp_path / "project"
    project.mkdir()
    (project / "opencode.json").write_text(config, encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    env = dict(
        os.environ,
        HOME=str(home),
        OPENCODE_DISABLE_AUTOUPDATE="1",
        OPENCODE_DISABLE_MODELS_FETCH="1",
        OPENCODE_DISABLE_LSP_DOWNLOAD="1",
        OPENCODE_DISABLE_SHARE="1",
        OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
    )
    listed = subprocess.run(
        [str(NPM_BIN / "opencode"), "mcp", "list"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    output = re.sub(r"\x1b\[[0-9;]*m", "", listed.stdout + listed.stderr)
    assert re.search(r"✓ context-router\s+connected", output), output
