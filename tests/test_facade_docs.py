"""The serving and client docs cannot drift: every `serve` option is in docs/serving.md, the
Claude Code .mcp.json in docs/clients.md names the real command, and the OpenCode configs of
docs/clients.md and the README are run by the real `opencode` binary."""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from router.cli import build_parser
from tests.docs_support import doc_text
from tests.facade_support import NPM_BIN, PROJECT_ROOT

PLACEHOLDER = "/path/to/context-router"
SERVING = doc_text("docs/serving.md")
CLIENTS = doc_text("docs/clients.md")


def json_block_after(text: str, heading: str) -> dict:
    after = text[text.index(heading) :]
    return json.loads(re.search(r"```json\n(.*?)```", after, re.DOTALL).group(1))


# the OpenCode configs the pages show, each run by the real opencode below
OPENCODE_CONFIGS = {
    "docs/clients.md": lambda: json_block_after(CLIENTS, "## OpenCode"),
    "README.md": lambda: json_block_after(doc_text("README.md"), "OpenCode, `opencode.json`"),
}


def serve_options() -> set[str]:
    serve = build_parser()._subparsers._group_actions[0].choices["serve"]
    return {opt for action in serve._actions for opt in action.option_strings if opt.startswith("--")} - {
        "--help"
    }


def test_every_serve_option_is_documented():
    section = SERVING[SERVING.index("## Options") :]
    assert serve_options() == {"--db", "--role", "--servers", "--workspace", "--http", "--no-wake-on-search"}
    for option in serve_options():
        assert f"`{option}" in section, f"{option} is not in docs/serving.md's options"


def test_claude_code_mcp_json_names_the_real_command():
    config = json_block_after(CLIENTS, "## Claude Code")["mcpServers"]["context-router"]
    command = Path(config["command"].replace(PLACEHOLDER, str(PROJECT_ROOT)))
    assert command == PROJECT_ROOT / ".venv" / "bin" / "context-router" and command.exists()
    assert config["args"][0] == "serve"
    assert "claude mcp add context-router -e CONTEXT_ROUTER_ROLE=staff-backend --" in CLIENTS


@pytest.mark.slow
@pytest.mark.parametrize("shown_in", sorted(OPENCODE_CONFIGS))
def test_opencode_connects_with_the_config_the_docs_show(tmp_path, db_path, shown_in):
    from router.db import connect

    connect(db_path).close()
    config = json.dumps(OPENCODE_CONFIGS[shown_in]())
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
