"""Write (or check) configs/opencode.base.json and configs/agentgateway.yaml.

The texts are built completely, and their CEL rules parsed, before anything is written; each
file is replaced atomically (temp file + rename), so a failed run leaves the old files whole.
"""

from dataclasses import dataclass
from pathlib import Path

from router.configs.cel_rules import compile_rules
from router.configs.gateway_config import gateway_config
from router.configs.inputs import ConfigInputs
from router.configs.naming import DEFAULT_GATEWAY_DATA_DIR
from router.configs.opencode_config import opencode_config
from router.configs.render import GENERATED_NOTE, render_json, render_yaml
from router.files import write_atomically

OPENCODE_FILE = "opencode.base.json"
GATEWAY_FILE = "agentgateway.yaml"

GATEWAY_HEADER = [
    GENERATED_NOTE,
    "agentgateway: MCP on port 3000. Callers send a JWT whose `role` claim names their role;",
    "each role reaches its own router target and the backend tools the role matrix allows.",
    "Start agentgateway in the workspace directory with .venv/bin and .npm-tools/node_modules/.bin",
    "on PATH (see docs/configs.md, 'agentgateway').",
]


@dataclass(frozen=True)
class GeneratedConfigs:
    files: dict[str, str]  # file name -> text


def generate(inputs: ConfigInputs, *, data_dir: str = DEFAULT_GATEWAY_DATA_DIR) -> GeneratedConfigs:
    gateway = gateway_config(inputs, data_dir=data_dir)
    compile_rules(_rules_of(gateway))  # refuse to write a rule agentgateway could not parse
    return GeneratedConfigs(
        files={
            OPENCODE_FILE: render_json(opencode_config(inputs)),
            GATEWAY_FILE: render_yaml(gateway, GATEWAY_HEADER),
        }
    )


def _rules_of(gateway: dict) -> list[str]:
    route = gateway["binds"][0]["listeners"][0]["routes"][0]
    return route["policies"]["mcpAuthorization"]["rules"]


def write(configs: GeneratedConfigs, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in configs.files.items():
        target = out_dir / name
        write_atomically(target, text)
        written.append(target)
    return written


def stale_files(configs: GeneratedConfigs, out_dir: Path) -> list[str]:
    """Names of files in out_dir that differ from (or are missing compared to) `configs`."""
    stale = []
    for name, text in configs.files.items():
        path = out_dir / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(name)
    return stale
