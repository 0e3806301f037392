"""Remove secrets from text before it leaves the machine (or reaches the database).

Three layers, because no single pattern list catches everything: known token shapes
(provider keys, private-key blocks, JWTs), `name = value` assignments whose name says
secret, and the literal values of this process's own secret-named environment variables.
A `.env` file loses every value.
"""

import os
import re
from dataclasses import dataclass

REDACTED = "[REDACTED]"

# Known shapes of credentials. Order matters only for readability: every match is replaced.
TOKEN_PATTERNS: tuple[tuple[str, re.Pattern], ...] = (
    (
        "private key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.S
        ),
    ),
    ("openrouter key", re.compile(r"\bsk-or-(?:v\d+-)?[A-Za-z0-9]{20,}")),
    ("anthropic key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}")),
    ("openai-style key", re.compile(r"\bsk-(?:proj-|live-|test-)?[A-Za-z0-9_\-]{20,}")),
    ("aws access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})")),
    ("gitlab token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}")),
    ("slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}")),
    ("google api key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    ("stripe key", re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ("bearer token", re.compile(r"(?i)(?<=\bbearer )[A-Za-z0-9._~+/\-]{16,}=*")),
    ("url password", re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)")),
)

SECRET_NAME = r"[A-Za-z0-9_.\-]*(?:api[_\-]?key|apikey|secret|token|passw(?:or)?d|pwd|credential|private[_\-]?key|auth)[A-Za-z0-9_.\-]*"
# `NAME = value`, `NAME: value`, `"name": "value"` where NAME looks like a secret.
ASSIGNMENT = re.compile(
    rf"(?i)(?P<name>[\"']?{SECRET_NAME}[\"']?\s*[:=]\s*)(?P<quote>[\"']?)(?P<value>[^\s\"',;]{{4,}})"
)
ENV_LINE = re.compile(r"(?m)^(?P<name>\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*\s*=\s*)(?P<value>.+)$")
SECRET_ENV_NAME = re.compile(r"(?i)(key|secret|token|passw|credential|auth)")
# values shorter than this are too common to replace literally
MIN_ENV_SECRET_LENGTH = 8


@dataclass
class Redactor:
    """Counts what it removed, by kind, so the caller can report it (never the values)."""

    removed: dict[str, int]

    def __init__(self, environ: dict[str, str] | None = None):
        self.removed = {}
        env = os.environ if environ is None else environ
        self._env_values = sorted(
            {v for k, v in env.items() if SECRET_ENV_NAME.search(k) and len(v) >= MIN_ENV_SECRET_LENGTH},
            key=len,
            reverse=True,
        )

    def _count(self, kind: str, n: int) -> None:
        if n:
            self.removed[kind] = self.removed.get(kind, 0) + n

    def text(self, text: str) -> str:
        for value in self._env_values:
            if value in text:
                self._count("environment secret", text.count(value))
                text = text.replace(value, REDACTED)
        for kind, pattern in TOKEN_PATTERNS:
            text, n = pattern.subn(REDACTED, text)
            self._count(kind, n)
        text, n = ASSIGNMENT.subn(
            lambda m: (
                m.group("name")
                + m.group("quote")
                + (m.group("value") if m.group("value") == REDACTED else REDACTED)
            ),
            text,
        )
        self._count("secret assignment", n)
        return text

    def dotenv(self, text: str) -> str:
        """A .env file: keep the names (they say what is configured), drop every value."""
        text, n = ENV_LINE.subn(lambda m: m.group("name") + REDACTED, text)
        self._count(".env value", n)
        return self.text(text)

    def file(self, name: str, text: str) -> str:
        return self.dotenv(text) if is_dotenv(name) else self.text(text)


def is_dotenv(name: str) -> bool:
    base = os.path.basename(name)
    return base == ".env" or base.startswith(".env.") or base.endswith(".env")
