"""`make run`'s first install says what it is doing (issue 20): pip runs quiet for minutes, so
each install step first echoes a line, which `make run` sends to stderr with the rest of
make's output (stdout is the MCP stream)."""

import shutil
import subprocess

import pytest

from router.paths import CHECKOUT_ROOT

pytestmark = pytest.mark.skipif(
    CHECKOUT_ROOT is None or shutil.which("make") is None, reason="needs a checkout"
)


def test_a_first_make_run_announces_each_install_step(tmp_path):
    for name in (
        "Makefile",
        "pyproject.toml",
        "requirements-core.lock",
        "requirements-dev.lock",
        "configs/npm-backends.txt",
    ):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        shutil.copy(CHECKOUT_ROOT / name, tmp_path / name)  # type: ignore[operator]
    # a dry run in a tree with no .venv: what a fresh clone's `make run` would do, in order
    done = subprocess.run(
        ["make", "-n", "--no-print-directory", "run"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    # the sub-make runs even under -n, with its output sent to stderr as `make run` sends it
    lines = done.stderr.splitlines()
    steps = [i for i, line in enumerate(lines) if line.startswith('echo "make: ')]
    assert [lines[i] for i in steps] == [
        'echo "make: creating .venv (first run only)"',
        'echo "make: installing the core Python packages into .venv (about a minute the first time)"',
        'echo "make: installing the core Node backends into .npm-tools"',
    ]
    pip = next(i for i, line in enumerate(lines) if "pip install --quiet -r requirements-core.lock" in line)
    assert steps[1] < pip  # said before the silent minute, not after
    assert "make: " not in done.stdout  # stdout stays the MCP stream's
