"""Where the checkout under test is: the tests always run from one."""

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
NPM_BIN = PROJECT_ROOT / ".npm-tools" / "node_modules" / ".bin"
