"""${WORKSPACE}, ${DATA_DIR} and ${env:NAME} in servers files, expanded when a backend starts."""

import os
import string
from dataclasses import dataclass
from pathlib import Path

from router import env_references
from router.backends.servers import ConfigError, ServerConfig
from router.facade.backend_errors import UnsetVariableError


@dataclass(frozen=True)
class Placeholders:
    """Values for ${WORKSPACE}, ${DATA_DIR} and ${env:NAME} in servers.toml args, env, url
    and headers. ${env:NAME} is how a secret stays a reference in the servers file (import
    writes them): its value is read from the router's environment when the backend starts."""

    workspace: Path
    data_dir: Path

    def expand(self, text: str, where: str) -> str:
        # the literal parts around ${env:...} are templates; an expanded value never is
        parts = env_references.ENV_REFERENCE.split(text)
        out = []
        for index, part in enumerate(parts):
            if index % 2:
                value = os.environ.get(part)
                if value is None:
                    raise UnsetVariableError(
                        f"{where}: ${{env:{part}}} is not set in the router's environment; export it"
                    )
                out.append(value)
                continue
            try:
                out.append(
                    string.Template(part).substitute(
                        WORKSPACE=str(self.workspace), DATA_DIR=str(self.data_dir)
                    )
                )
            except (KeyError, ValueError) as exc:
                raise ConfigError(
                    f"{where}: unknown placeholder {exc} in {text!r}; use ${{WORKSPACE}}, "
                    "${DATA_DIR} or ${env:NAME}"
                ) from None
        return "".join(out)

    def in_workspace(self, workspace: Path) -> "Placeholders":
        return Placeholders(workspace, self.data_dir)


def uses_workspace(config: ServerConfig) -> bool:
    """Whether the server's declaration names ${WORKSPACE}: such a server runs once per
    workspace (each client's), the others once per router."""
    for text in config.templated_texts:
        for index, part in enumerate(env_references.ENV_REFERENCE.split(text)):
            # (a malformed placeholder is said by Placeholders.expand; here it names nothing)
            if index % 2 == 0 and "WORKSPACE" in string.Template(part).get_identifiers():
                return True
    return False


def default_data_dir(db_path: Path) -> Path:
    """${DATA_DIR}: a directory beside the database for backends' own state."""
    return db_path.resolve().parent / f"{db_path.stem}-data"
