"""${WORKSPACE}, ${DATA_DIR}, ${WORKSPACE_DATA_DIR} and ${env:NAME} in servers files, expanded
when a backend starts."""

import os
import string
from dataclasses import dataclass
from pathlib import Path

from router import env_references
from router.backends.servers import ConfigError, ServerConfig
from router.facade.backend_errors import UnsetVariableError
from router.hashing import HASH_PREFIX, b3_hex

# the placeholders that name the workspace: a server using one runs once per workspace
WORKSPACE_PLACEHOLDERS = frozenset({"WORKSPACE", "WORKSPACE_DATA_DIR"})
# ${WORKSPACE_DATA_DIR} is ${DATA_DIR}/workspaces/<workspace's name>-<this many hex digits of
# the hash of its path>: readable, and two projects of the same name never share one
WORKSPACE_KEY_HEX = 12


def workspace_data_dir(data_dir: Path, workspace: Path) -> Path:
    """A backend's state for one workspace, under ${DATA_DIR}: outside the project (nothing
    is written into the user's repository), one per project (no project reads another's)."""
    key = b3_hex(str(workspace).encode("utf-8", "surrogateescape")).removeprefix(HASH_PREFIX)[
        :WORKSPACE_KEY_HEX
    ]
    return data_dir / "workspaces" / f"{workspace.name or 'root'}-{key}"


@dataclass(frozen=True)
class Placeholders:
    """Values for ${WORKSPACE}, ${DATA_DIR}, ${WORKSPACE_DATA_DIR} and ${env:NAME} in
    servers.toml args, env, url and headers. ${env:NAME} is how a secret stays a reference in
    the servers file (import writes them): its value is read from the router's environment
    when the backend starts."""

    workspace: Path
    data_dir: Path

    @property
    def workspace_data_dir(self) -> Path:
        return workspace_data_dir(self.data_dir, self.workspace)

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
                        WORKSPACE=str(self.workspace),
                        DATA_DIR=str(self.data_dir),
                        WORKSPACE_DATA_DIR=str(self.workspace_data_dir),
                    )
                )
            except (KeyError, ValueError) as exc:
                raise ConfigError(
                    f"{where}: unknown placeholder {exc} in {text!r}; use ${{WORKSPACE}}, "
                    "${DATA_DIR}, ${WORKSPACE_DATA_DIR} or ${env:NAME}"
                ) from None
        return "".join(out)

    def in_workspace(self, workspace: Path) -> "Placeholders":
        return Placeholders(workspace, self.data_dir)


def uses_workspace(config: ServerConfig) -> bool:
    """Whether the server's declaration names ${WORKSPACE} or ${WORKSPACE_DATA_DIR}: such a
    server runs once per workspace (each client's), the others once per router."""
    return bool(_named_placeholders(config) & WORKSPACE_PLACEHOLDERS)


def uses_workspace_data_dir(config: ServerConfig) -> bool:
    return "WORKSPACE_DATA_DIR" in _named_placeholders(config)


def _named_placeholders(config: ServerConfig) -> set[str]:
    return set().union(*(_identifiers(text) for text in config.templated_texts))


def default_data_dir(db_path: Path) -> Path:
    """${DATA_DIR}: a directory beside the database for backends' own state."""
    return db_path.resolve().parent / f"{db_path.stem}-data"


# the placeholders that name where backends keep their own state
STATE_PLACEHOLDERS = frozenset({"DATA_DIR", "WORKSPACE_DATA_DIR"})


def state_paths(config: ServerConfig, placeholders: Placeholders) -> list[tuple[str, Path, bool]]:
    """Where the server keeps its state, as its declaration says: each env variable (by name)
    or argument (by position) that names ${DATA_DIR} or ${WORKSPACE_DATA_DIR}, expanded, and
    whether that path is the workspace's own. One that cannot be expanded here (an unset
    ${env:NAME}) is left out."""
    named = sorted(config.env.items())
    named += [(f"argument {number}", value) for number, value in enumerate(config.args, start=1)]
    out = []
    for label, text in named:
        names = _identifiers(text)
        if not names & STATE_PLACEHOLDERS:
            continue
        try:
            out.append(
                (label, Path(placeholders.expand(text, config.name)), bool(names & WORKSPACE_PLACEHOLDERS))
            )
        except (UnsetVariableError, ConfigError):
            continue
    return out


def _identifiers(text: str) -> set[str]:
    """The placeholders a text names, ${env:NAME} aside (a malformed one is said by
    Placeholders.expand; here it names nothing)."""
    names: set[str] = set()
    for index, part in enumerate(env_references.ENV_REFERENCE.split(text)):
        if index % 2 == 0:
            names.update(string.Template(part).get_identifiers())
    return names
