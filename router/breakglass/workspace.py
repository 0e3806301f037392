"""Which workspace files may be sent at all: credential files never, encrypted files never,
and what git ignores only when the caller names it.

- Credential files (`.netrc`, `.pgpass`, `*.asc`, `*.gpg`, `*.p12`, `*.kdbx`, `id_*`,
  `*credentials*`, ...) are never picked by relevance and left out even when named: nothing
  in them helps a panel. Dotenv files (`.env`, `.env.*`, `.envrc`) are never picked either;
  named, they are sent with every value removed (the names say what is configured).
- Files git-crypt or sops keep encrypted (by `.gitattributes` filter=git-crypt, the
  git-crypt header, or sops metadata) are never sent: decrypted in a work tree they are
  plaintext secrets, and encrypted they are noise.
- What `.gitignore` (each directory's, with git's own pattern rules via pathspec) or
  `.git/info/exclude` ignores is never picked by relevance; a caller may still name it.
"""

import re
from pathlib import Path
from typing import Any

from router.extras import require
from router.redaction.redactor import is_dotenv

CREDENTIAL_FILE = re.compile(
    r"(?ix)^(?:"
    r"[._]netrc|\.pgpass|\.npmrc|\.pypirc|\.git-credentials|\.htpasswd|\.dockercfg"
    r"|id_[a-z0-9_]+(?:\.pub)?"
    r"|.*credentials.*"
    r"|.*\.(?:asc|gpg|pgp|p12|pfx|kdbx|kdb|pem|key|jks|keystore|ppk|keychain|ovpn)"
    r")$"
)
GIT_CRYPT_HEADER = b"\x00GITCRYPT\x00"
# sops writes its metadata beside the encrypted values, in every format it supports
SOPS_MARKERS = (b"ENC[AES256_GCM,", b'"sops":', b"sops:\n", b"[sops]")


def _spec(lines: list[str]) -> Any:
    pathspec = require("pathspec", extra="breakglass", feature="break-glass's .gitignore rules")
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


class WorkspacePolicy:
    """The rules for one workspace; .gitignore files are read once per directory."""

    def __init__(self, root: Path):
        self.root = root.resolve()
        self._ignores: dict[Path, Any | None] = {}
        exclude = _read_lines(self.root / ".git" / "info" / "exclude")
        self._exclude = _spec(exclude) if exclude else None
        crypt = [
            line.split()[0]
            for line in _read_lines(self.root / ".gitattributes")
            if line.strip() and not line.startswith("#") and "filter=git-crypt" in line.split()[1:]
        ]
        self._git_crypt = _spec(crypt) if crypt else None

    def _ignore_spec(self, directory: Path) -> Any | None:
        if directory not in self._ignores:
            lines = _read_lines(directory / ".gitignore")
            self._ignores[directory] = _spec(lines) if lines else None
        return self._ignores[directory]

    def ignored(self, path: Path, is_dir: bool = False) -> bool:
        """Whether git would ignore the path (each ancestor's .gitignore, relative to it)."""
        rel = path.relative_to(self.root)
        suffix = "/" if is_dir else ""
        if self._exclude is not None and self._exclude.match_file(rel.as_posix() + suffix):
            return True
        for ancestor in [self.root, *(self.root / p for p in rel.parents[::-1][1:])]:
            spec = self._ignore_spec(ancestor)
            if spec is not None and spec.match_file(path.relative_to(ancestor).as_posix() + suffix):
                return True
        return False

    def encrypted(self, path: Path) -> str | None:
        rel = path.relative_to(self.root).as_posix()
        if self._git_crypt is not None and self._git_crypt.match_file(rel):
            return "git-crypt encrypted (.gitattributes)"
        try:
            with path.open("rb") as handle:
                head = handle.read(65536)
        except OSError:
            return None
        if head.startswith(GIT_CRYPT_HEADER):
            return "git-crypt encrypted"
        if any(marker in head for marker in SOPS_MARKERS):
            return "sops encrypted"
        return None

    def never_sent(self, path: Path) -> str | None:
        """Why this file is never sent, even when named; None when it may be."""
        name = path.name
        if CREDENTIAL_FILE.match(name) and not is_dotenv(name):
            return "a credential file is never sent"
        return self.encrypted(path)

    def not_picked(self, path: Path) -> bool:
        """Whether a relevance scan must pass this file by (a caller may still name it)."""
        # never_sent reads the file's head (encryption markers): asked last, of what is left
        return is_dotenv(path.name) or self.ignored(path) or self.never_sent(path) is not None
